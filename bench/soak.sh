#!/usr/bin/env bash
# soak.sh: real servers under load, bare and recorded alternating in one run, bare first in
# odd pairs and last in even ones (the run made last in a pair does better on a small
# machine: use an even --pairs; see bench/README.md).  For each server installed: redis-server under redis-benchmark (-P 1 and
# -P 16), nginx and lighttpd under wrk (ab when wrk is missing), memcached under memaslap,
# PostgreSQL under pgbench.  Each server runs on loopback on a free port from a temp dir,
# started and stopped by pid; only the server is recorded (`encore record -o DIR -- SERVER`),
# never the load tool.  Printed per server: throughput bare and recorded, the median of the
# pair ratios recorded/bare, crashes (the server died before it was stopped, ended by a
# signal, or logged a crashed worker), errors the load tool saw, and trace bytes per request
# (on disk while the server ran, and at the end, once `encore record` compressed the traces).
#
#   soak.sh [--encore PATH] [--pairs N] [--seconds S] [--quick] [--install]
#           [--compress after|inline] [--against PATH [--against-lib SO]] [SERVER...]
#   soak.sh --check [--encore PATH] [--keep DIR [--perf]] [SERVER...]
#
# SERVER: redis redis-p16 nginx lighttpd memcached postgres (default: all), and nginx-close
# lighttpd-close (not in the default: the same servers, a connection per request; the
# recorder's cost per connection, which the others' long connections hide) and memcached-t4
# (not in the default: memcached with 4 worker threads, the cost of logging its locks).  --quick: 3 s per
# run and 2 pairs.  --install: apt-get install each server's Debian packages first; a server
# whose packages cannot be installed is skipped, saying so.  --check (the CI test
# tests/e2e/soak_short.sh): each server recorded once under a bounded number of requests;
# exit 1 on any crash or client-visible error, never on timing; 77 when no server is
# installed; --keep DIR keeps each recorded session as DIR/SERVER (and the number of requests
# in DIR/SERVER.requests), for `encore sql` (see bench/README.md), and with --perf a CPU
# profile of the recorded server in DIR/SERVER.perf (perf record) and of a bare run of the
# same load in DIR/SERVER.bare.perf.  --compress: `encore record --compress` (default: its
# own, inline).  --against PATH: a second encore (another build, the recorder before a change;
# --against-lib: its libencore-record.so, default beside it or in its build tree) recorded in
# each pair too, bare, recorded and recorded by it alternating, and printed as a second row
# per server ("SERVER vs"): two recorders compared under the same load.  Servers that refuse
# to run as root (postgres, memcached) run as nobody.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ENCORE=${ENCORE:-$here/../build/cli/encore}
PAIRS=3
SECS=20
CHECK=0
INSTALL=0
KEEP=
PERF=()
REC_OPTS=()
AGAINST=
AGAINST_LIB=
SERVERS=()
ALL=(redis redis-p16 nginx lighttpd memcached postgres)
EXTRA=(nginx-close lighttpd-close memcached-t4)

usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; }
while [ $# -gt 0 ]; do
	case $1 in
	--encore) ENCORE=$2; shift ;;
	--pairs) PAIRS=$2; shift ;;
	--seconds) SECS=$2; shift ;;
	--quick) SECS=3; PAIRS=2 ;;
	--check) CHECK=1 ;;
	--install) INSTALL=1 ;;
	--keep) KEEP=$2; shift ;;
	--perf) PERF=(perf record -q -F 9999 -o) ;;
	--compress) REC_OPTS=(--compress "$2"); shift ;;
	--against) AGAINST=$2; shift ;;
	--against-lib) AGAINST_LIB=$2; shift ;;
	-h|--help) usage; exit 0 ;;
	-*) echo "soak.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	*) SERVERS+=("$1") ;;
	esac
	shift
done
[ ${#SERVERS[@]} -gt 0 ] || SERVERS=("${ALL[@]}")
for s in "${SERVERS[@]}"; do
	case " ${ALL[*]} ${EXTRA[*]} " in *" $s "*) ;; *)
		echo "soak.sh: unknown server '$s' (one of: ${ALL[*]} ${EXTRA[*]})" >&2; exit 2 ;;
	esac
done
case "$PAIRS$SECS" in *[!0-9]*) echo "soak.sh: --pairs and --seconds take whole numbers" >&2; exit 2 ;; esac
[ -x "$ENCORE" ] || { echo "soak.sh: no encore at $ENCORE; build first or pass --encore PATH" >&2; exit 2; }
ENCORE=$(cd "$(dirname "$ENCORE")" && pwd)/$(basename "$ENCORE")
MODES="bare rec"
if [ -n "$AGAINST" ]; then
	[ -x "$AGAINST" ] || { echo "soak.sh: no encore at $AGAINST (--against)" >&2; exit 2; }
	AGAINST=$(cd "$(dirname "$AGAINST")" && pwd)/$(basename "$AGAINST")
	for l in "$AGAINST_LIB" "$(dirname "$AGAINST")/libencore-record.so" \
		"$(dirname "$AGAINST")/../recorder/libencore-record.so"; do
		[ -n "$l" ] && [ -r "$l" ] && { AGAINST_LIB=$(cd "$(dirname "$l")" && pwd)/$(basename "$l"); break; }
	done
	[ -r "$AGAINST_LIB" ] || { echo "soak.sh: no libencore-record.so for $AGAINST (--against-lib)" >&2; exit 2; }
	[ $CHECK = 0 ] || { echo "soak.sh: --against compares throughput, not with --check" >&2; exit 2; }
	MODES="bare rec vs"
fi
if [ -n "$KEEP" ]; then
	mkdir -p "$KEEP" || exit 2
	KEEP=$(cd "$KEEP" && pwd)
fi
if [ ${#PERF[@]} -gt 0 ]; then
	{ [ -n "$KEEP" ] && [ $CHECK = 1 ]; } || { echo "soak.sh: --perf goes with --check --keep DIR" >&2; exit 2; }
	command -v perf >/dev/null || { echo "soak.sh: --perf needs perf (Debian: linux-perf)" >&2; exit 2; }
fi

PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
# The throwaway user for servers that refuse root (postgres) or drop privileges (memcached).
AS_USER=()
if [ "$(id -u)" -eq 0 ]; then
	AS_USER=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
fi

WORK=$(mktemp -d "${ENCORE_TEST_TMPDIR:-${TMPDIR:-/tmp}}/encore-soak.XXXXXX")
chmod 755 "$WORK"
LIVE=()  # pids this script started and has not reaped, each leading its process group
cleanup() {
	local p
	for p in "${LIVE[@]}"; do
		[ -n "$p" ] || continue
		# under encore record, the server is its child: that first
		# shellcheck disable=SC2046 # a list of pids
		kill -KILL $(cat "/proc/$p/task/$p/children" 2>/dev/null) "$p" 2>/dev/null
		kill -KILL -- "-$p" 2>/dev/null
	done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { printf '%s\n' "$*"; }
# base SERVER: the server a variant runs (nginx-close: nginx; memcached-t4: memcached).
base() { local b=${1%-close}; echo "${b%-t4}"; }

# ---- what each server needs -----------------------------------------------------------------

# packages SERVER: its Debian packages and its load tool's; have SERVER: true when both run
# here (under --check the HTTP servers need ab, which takes a request count).
packages() {
	local http=wrk
	[ $CHECK = 1 ] && http=apache2-utils
	case $(base "$1") in
	redis|redis-p16) echo redis-server redis-tools ;;
	nginx) echo nginx $http ;;
	lighttpd) echo lighttpd $http ;;
	memcached) echo memcached libmemcached-tools ;;
	postgres) echo postgresql ;;
	esac
}
have() {
	local b; b=$(base "$1")
	case $b in
	redis|redis-p16) command -v redis-server && command -v redis-benchmark ;;
	nginx|lighttpd) command -v "$b" && command -v ab ||
		{ [ $CHECK = 0 ] && command -v "$b" && command -v wrk; } ;;
	memcached) command -v memcached && { command -v memcaslap || command -v memaslap; } &&
		as_user_ok ;;
	postgres) [ -n "$PGBIN" ] && [ -x "$PGBIN/postgres" ] && [ -x "$PGBIN/pgbench" ] && as_user_ok ;;
	esac >/dev/null 2>&1
}
# as_user_ok: not root, or nobody can run encore, read the recorder and write under WORK (a
# build tree under a private home directory is out of its reach).
as_user_ok() {
	[ ${#AS_USER[@]} -eq 0 ] && return 0
	command -v setpriv >/dev/null &&
		"${AS_USER[@]}" "$ENCORE" --help >/dev/null 2>&1 &&
		"${AS_USER[@]}" test -r "${ENCORE_RECORD_LIB:-$ENCORE}" &&
		"${AS_USER[@]}" test -x "$WORK"
}

# missing SERVER: its Debian packages not installed.
missing() {
	local p
	for p in $(packages "$1"); do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
	done
}

UPDATED=0
# install_for PACKAGE...: apt-get install them (apt-get update first, once per run).
install_for() {
	local sudo=()
	[ "$(id -u)" -eq 0 ] || sudo=(sudo)
	if [ $UPDATED = 0 ]; then
		"${sudo[@]}" apt-get update -qq >"$WORK/apt.log" 2>&1
		UPDATED=1
	fi
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
		"$@" >"$WORK/apt.log" 2>&1
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# setup SERVER DIR PORT: write the server's files into DIR; sets CMD (the server's command
# line, in the foreground) and RUNAS (a prefix that drops root, or empty).
setup() {
	local srv=$1 dir=$2 port=$3
	RUNAS=()
	case $(base "$srv") in
	redis|redis-p16)
		CMD=(redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no
		     --daemonize no --dir "$dir" --logfile "$dir/server.log") ;;
	nginx)
		mkdir -p "$dir/www" "$dir/tmp"
		head -c 612 /dev/zero | tr '\0' x >"$dir/www/index.html"
		cat >"$dir/nginx.conf" <<-EOF
		daemon off;
		master_process on;
		worker_processes 1;
		pid $dir/nginx.pid;
		error_log $dir/server.log;
		events { worker_connections 256; }
		http {
		    access_log off;
		    client_body_temp_path $dir/tmp; proxy_temp_path $dir/tmp;
		    fastcgi_temp_path $dir/tmp; uwsgi_temp_path $dir/tmp; scgi_temp_path $dir/tmp;
		    server { listen 127.0.0.1:$port; root $dir/www; }
		}
		EOF
		CMD=(nginx -c "$dir/nginx.conf" -e "$dir/server.log") ;;
	lighttpd)
		mkdir -p "$dir/www"
		head -c 612 /dev/zero | tr '\0' x >"$dir/www/index.html"
		cat >"$dir/lighttpd.conf" <<-EOF
		server.document-root = "$dir/www"
		server.bind = "127.0.0.1"
		server.port = $port
		server.errorlog = "$dir/server.log"
		index-file.names = ("index.html")
		EOF
		CMD=(lighttpd -D -f "$dir/lighttpd.conf") ;;
	memcached)
		local nt=1
		[ "$srv" = memcached-t4 ] && nt=4
		CMD=(memcached -l 127.0.0.1 -p "$port" -U 0 -t $nt)
		RUNAS=("${AS_USER[@]}") ;;
	postgres)
		cp -a "$WORK/pgtemplate" "$dir/pg"
		CMD=("$PGBIN/postgres" -D "$dir/pg" -p "$port" -k "$dir"
		     -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off
		     -c full_page_writes=off -c max_connections=20)
		RUNAS=("${AS_USER[@]}") ;;
	esac
	[ ${#RUNAS[@]} -eq 0 ] || chown -R 65534:65534 "$dir"
}

# prepare SERVER: once per server before its runs (postgres: initdb and pgbench -i into a
# template that every run copies, so that neither is part of a measured run).
prepare() {
	[ "$1" = postgres ] || return 0
	local t=$WORK/pgtemplate port pid ok=0
	mkdir -p "$t" "$WORK/pgsock" && chmod 700 "$t"
	[ ${#AS_USER[@]} -eq 0 ] || chown 65534:65534 "$t" "$WORK/pgsock"
	"${AS_USER[@]}" "$PGBIN/initdb" -D "$t" -A trust -U postgres --no-sync >"$WORK/initdb.log" 2>&1 ||
		{ tail -5 "$WORK/initdb.log"; return 1; }
	port=$(free_port)
	"${AS_USER[@]}" "$PGBIN/postgres" -D "$t" -p "$port" -k "$WORK/pgsock" -c listen_addresses=127.0.0.1 \
		-c fsync=off >"$WORK/pginit.log" 2>&1 &
	pid=$!
	for _ in $(seq 1 300); do
		"$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$port" && { ok=1; break; }
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	[ $ok = 1 ] && "$PGBIN/pgbench" -i -q -s 4 -h 127.0.0.1 -p "$port" -U postgres postgres \
		>>"$WORK/pginit.log" 2>&1 || ok=0
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	[ $ok = 1 ] || { tail -5 "$WORK/pginit.log"; return 1; }
}

# ready SERVER PORT PID: wait until the server accepts (polling, up to 30 s); 1 if it died.
ready() {
	for _ in $(seq 1 300); do
		kill -0 "$3" 2>/dev/null || return 1
		if [ "$1" = postgres ]; then
			"$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$2" && return 0
		elif timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$2" 2>/dev/null; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# load SERVER PORT OUT: drive the server (8 clients); the tool's output goes to OUT.
# Bounded by time in a benchmark, by request count under --check.  SERVER-close: a new
# connection per request (wrk: "Connection: close"; ab: no keep-alive).
load() {
	local srv=$1 port=$2 n ka=(-k) close=()
	case $srv in *-close) ka=() close=(-H "Connection: close") ;; esac
	case $(base "$srv") in
	redis|redis-p16)
		local pipe=1
		[ "$srv" = redis-p16 ] && pipe=16
		if [ $CHECK = 1 ]; then n=50000; else n=$((SECS * (pipe == 1 ? 15000 : 100000))); fi
		LOADN=$n
		timeout $((SECS * 20 + 120)) redis-benchmark -h 127.0.0.1 -p "$port" -c 8 -n "$n" \
			-P "$pipe" -t set,get --csv ;;
	nginx|lighttpd)
		if [ $CHECK = 0 ] && command -v wrk >/dev/null; then
			timeout $((SECS + 60)) wrk -t 2 -c 8 -d "${SECS}s" "${close[@]}" \
				"http://127.0.0.1:$port/index.html"
		elif [ $CHECK = 1 ]; then
			timeout 300 ab "${ka[@]}" -c 8 -n 20000 "http://127.0.0.1:$port/index.html"
		else
			timeout $((SECS + 60)) ab "${ka[@]}" -c 8 -t "$SECS" -n 100000000 \
				"http://127.0.0.1:$port/index.html"
		fi ;;
	memcached)
		local slap=memcaslap
		command -v memcaslap >/dev/null || slap=memaslap
		# its default workload (64-byte keys, 1 KiB values, 1 set for 9 gets) given as a file:
		# it would write one to the user's passwd home, which a CI user may not have
		printf 'key\n64 64 1\nvalue\n1024 1024 1\ncmd\n0 0.1\n1 0.9\n' > "$WORK/memslap.cnf"
		if [ $CHECK = 1 ]; then
			timeout 300 $slap -s "127.0.0.1:$port" -T 2 -c 8 -x 20000 -F "$WORK/memslap.cnf"
		else
			timeout $((SECS + 60)) $slap -s "127.0.0.1:$port" -T 2 -c 8 -t "${SECS}s" \
				-F "$WORK/memslap.cnf"
		fi ;;
	postgres)
		if [ $CHECK = 1 ]; then
			timeout 300 "$PGBIN/pgbench" -h 127.0.0.1 -p "$port" -U postgres -c 8 -j 2 -t 100 postgres
		else
			timeout $((SECS + 60)) "$PGBIN/pgbench" -h 127.0.0.1 -p "$port" -U postgres -c 8 -j 2 \
				-T "$SECS" postgres
		fi ;;
	esac >"$3" 2>&1
}

# parse SERVER OUT: sets REQS (requests done), RPS (their throughput) and ERRS (errors the
# load tool reported) from its output.
parse() {
	local out=$2
	REQS=0 RPS=0 ERRS=0
	case $(base "$1") in
	redis|redis-p16)
		# --csv: "SET","rps",...: the same N requests per test, so the combined throughput
		# is the harmonic mean of the tests'.
		read -r REQS RPS < <(awk -F'"' -v n="$LOADN" '
			/^"[A-Z]/ && $4 > 0 { t += 1 / $4; k++ }
			END { if (k) printf "%d %.0f\n", n * k, k / t; else print "0 0" }' "$out")
		ERRS=$(grep -Eic 'error|refused|reset|closed' "$out") ;;
	nginx|lighttpd)
		if grep -q '^Requests/sec' "$out"; then  # wrk
			REQS=$(awk '/requests in/ { print $1 }' "$out")
			RPS=$(awk '/^Requests\/sec/ { printf "%.0f", $2 }' "$out")
			ERRS=$(awk '/Socket errors/ { gsub(/,/, ""); s += $4 + $6 + $8 + $10 }
			            /Non-2xx/ { s += $NF } END { print s + 0 }' "$out")
		else  # ab
			REQS=$(awk '/^Complete requests/ { print $3 }' "$out")
			RPS=$(awk '/^Requests per second/ { printf "%.0f", $4 }' "$out")
			ERRS=$(awk '/^Failed requests/ || /^Non-2xx/ || /^Write errors/ { s += $3 }
			            END { print s + 0 }' "$out")
		fi ;;
	memcached)
		REQS=$(awk '/^Run time:/ { print $5 }' "$out" | tail -1)
		RPS=$(awk '/^Run time:/ { print $7 }' "$out" | tail -1)
		ERRS=$(grep -Eic 'error|fail|refused|reset' "$out") ;;
	postgres)
		REQS=$(awk -F': ' '/actually processed/ { split($2, a, "/"); print a[1] }' "$out")
		RPS=$(awk '/^tps =/ { printf "%.0f", $3 }' "$out" | tail -1)
		ERRS=$(awk -F': ' '/number of failed transactions/ { split($2, a, " "); s += a[1] }
		                   END { print s + 0 }' "$out")
		ERRS=$((ERRS + $(grep -Ec 'ERROR|FATAL|error:' "$out"))) ;;
	esac
	REQS=${REQS:-0} RPS=${RPS:-0} ERRS=${ERRS:-0}
}

# cputicks PID: CPU time (clock ticks) of PID and every descendant, alive or reaped (a
# reaped child's time is in its parent's cutime/cstime: postgres's backends end with their
# client).  Unlike throughput, the CPU a server spends per request hardly moves with the
# machine's other load.
cputicks() {
	local p=$1 t c
	t=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | awk '{ print $12 + $13 + $14 + $15 }')
	t=${t:-0}
	for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do
		t=$((t + $(cputicks "$c")))
	done
	echo "$t"
}

# child PID: the first child of PID (none: empty).
child() { [ -n "$1" ] && awk '{ print $1 }' "/proc/$1/task/$1/children" 2>/dev/null; }

# run_one SERVER bare|rec: one run; sets RPS REQS ERRS CRASH (0/1, and WHY) BYTES (the
# session's size at the end) LBYTES (its size while the server ran, before compression) CPU
# (the server's CPU microseconds per request).
run_one() {
	local srv=$1 mode=$2 dir port pid spid status=0 lrc early sig
	dir=$(mktemp -d "$WORK/$srv-$mode.XXXXXX")
	chmod 755 "$dir"
	port=$(free_port)
	setup "$srv" "$dir" "$port"
	CRASH=0 WHY='' BYTES=0 LBYTES=0 CPU=0
	# setsid: the server (and its workers) in a process group of their own, led by $pid, so
	# that a worker its master left behind (crashed, or killed as hung) is ended with it
	if [ "$mode" = rec ]; then
		[ ${#PERF[@]} -eq 0 ] || PERF[6]="$KEEP/$srv.perf"
		setsid "${PERF[@]}" "${RUNAS[@]}" "$ENCORE" record -q "${REC_OPTS[@]}" -o "$dir/session" -- "${CMD[@]}" \
			>>"$dir/server.out" 2>&1 </dev/null &
	elif [ "$mode" = vs ]; then
		setsid "${RUNAS[@]}" env ENCORE_RECORD_LIB="$AGAINST_LIB" "$AGAINST" record -q \
			-o "$dir/session" -- "${CMD[@]}" >>"$dir/server.out" 2>&1 </dev/null &
	else
		[ ${#PERF[@]} -eq 0 ] || PERF[6]="$KEEP/$srv.bare.perf"
		setsid "${PERF[@]}" "${RUNAS[@]}" "${CMD[@]}" >>"$dir/server.out" 2>&1 </dev/null &
	fi
	pid=$!
	LIVE+=("$pid")
	spid=$pid
	if ! ready "$srv" "$port" "$pid"; then
		kill -KILL -- "-$pid" 2>/dev/null
		wait "$pid"; status=$?
		LIVE=("${LIVE[@]/$pid}")
		CRASH=1 WHY="never accepted connections (status $status)"
		REQS=0 RPS=0 ERRS=1
		tail -5 "$dir/server.out" "$dir/server.log" 2>/dev/null | sed 's/^/    /'
		return
	fi
	# the server is encore record's child (and encore perf's under --perf); it is running (it
	# accepted), so it is there at once unless the machine is slow
	if [ "$mode" != bare ] || [ ${#PERF[@]} -gt 0 ]; then
		for _ in $(seq 1 300); do
			spid=$pid
			[ "$mode" = bare ] || spid=$(child "$spid")
			[ ${#PERF[@]} -eq 0 ] || spid=$(child "$spid")
			[ -n "$spid" ] && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
	fi
	load "$srv" "$port" "$dir/load.out"
	lrc=$?
	parse "$srv" "$dir/load.out"
	if [ $lrc -ne 0 ]; then
		ERRS=$((ERRS + 1))
		[ $lrc -eq 124 ] && ERRS=$((ERRS + 1)) && echo "    the load tool timed out" >&2
	fi
	# Whether the server still runs is asked of $pid, this shell's own child (encore record,
	# perf, or the bare server): its pid stays ours until this shell reaps it, and kill -0 on it
	# fails once it has ended and been reaped.  Never of /proc/SERVER: the server is encore
	# record's child, reaped by it at any moment, so two reads of it (kill -0, then its state)
	# can see a zombie and then nothing, a hang that was not.  The server itself is signalled
	# by pid only while $pid still runs, i.e. while encore record has not yet reaped it.
	early=1
	if [ -n "$spid" ] && kill -0 "$pid" 2>/dev/null; then
		CPU=$(awk -v t="$(cputicks "$spid")" -v hz="$(getconf CLK_TCK)" -v n="$REQS" \
			'BEGIN { if (n > 0) printf "%.2f", t * 1e6 / hz / n; else print 0 }')
		[ "$mode" = bare ] || LBYTES=$(du -sb "$dir/session" 2>/dev/null | awk '{ print $1 }')
		# fails when the server has ended already and been reaped (encore record reporting)
		kill -TERM "$spid" 2>/dev/null && early=0
		# a server that does not end within 30 s of SIGTERM hangs: killed, and counted
		for _ in $(seq 1 300); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			# shellcheck disable=SC2046 # a list of pids
			kill -KILL "$spid" $(cat "/proc/$pid/task/$pid/children" 2>/dev/null) "$pid" 2>/dev/null
			kill -KILL -- "-$pid" 2>/dev/null
			WHY="still running 30 s after SIGTERM"
		fi
	elif [ -z "$spid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -KILL -- "-$pid" 2>/dev/null
		WHY="no server process under encore record's pid $pid"
	fi
	wait "$pid"; status=$?
	# what is left of its process group: workers whose master crashed or was killed
	kill -KILL -- "-$pid" 2>/dev/null
	sig=$([ $status -gt 128 ] && echo ", signal $((status - 128))")
	# a server stopped by SIGTERM exits 0 (or 143 where it keeps the default action)
	if [ -n "$WHY" ]; then
		CRASH=1
	elif [ $early = 1 ]; then
		CRASH=1 WHY="died under load (status $status$sig)"
	elif [ $status -ne 0 ] && [ $status -ne 143 ]; then
		CRASH=1 WHY="exit status $status after SIGTERM$sig"
	fi
	LIVE=("${LIVE[@]/$pid}")
	# a crashed worker or backend, restarted by its master
	if grep -Eqi 'exited on signal|terminated by signal|crashed by signal|Segmentation fault' \
		"$dir/server.out" "$dir/server.log" 2>/dev/null; then
		CRASH=1 WHY="${WHY:+$WHY; }the server logged a crash: $(grep -Ehi -m1 'signal|Segmentation' \
			"$dir/server.out" "$dir/server.log" 2>/dev/null | head -1 | cut -c1-100)"
	fi
	if [ "$mode" != bare ] && [ -d "$dir/session" ]; then
		BYTES=$(du -sb "$dir/session" | awk '{ print $1 }')
		if [ -n "$KEEP" ]; then
			rm -rf "${KEEP:?}/$srv"
			mv "$dir/session" "$KEEP/$srv" && chown -R "$(id -u):$(id -g)" "$KEEP/$srv"
			echo "$REQS" >"$KEEP/$srv.requests"
		fi
	fi
	if [ $CRASH = 1 ] || [ "$ERRS" != 0 ]; then
		tail -3 "$dir/load.out" | sed 's/^/    load: /' >&2
		grep -Ehi -m3 'signal|crash|error' "$dir/server.out" "$dir/server.log" 2>/dev/null |
			head -3 | sed 's/^/    server: /' >&2
	fi
	rm -rf "$dir"
}

# median FORMAT VALUE...: the median, printed with printf's FORMAT ("n/a" when none).
median() {
	local f=$1; shift
	[ $# -gt 0 ] || { echo n/a; return; }
	printf '%s\n' "$@" | sort -g | awk -v f="$f" '{ a[NR] = $1 } END {
		printf f "\n", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

label() {
	case $1 in redis) echo "redis -P 1" ;; redis-p16) echo "redis -P 16" ;; *-close) echo "$1" ;;
	*) echo "$1" ;; esac
}

# ---- the runs -------------------------------------------------------------------------------

ROWS=()
FAILED=0
RAN=0
for srv in "${SERVERS[@]}"; do
	if [ $INSTALL = 1 ] && command -v dpkg-query >/dev/null && [ -n "$(missing "$srv")" ]; then
		# shellcheck disable=SC2046 # a list of package names
		set -- $(missing "$srv")
		say "== $(label "$srv"): installing $*"
		install_for "$@" || say "   apt-get install failed: $(tail -1 "$WORK/apt.log")"
		PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
	fi
	if ! have "$srv" && [ ${#AS_USER[@]} -gt 0 ] && [ -z "$(missing "$srv" 2>/dev/null)" ] &&
		! as_user_ok; then
		say "== $(label "$srv"): SKIP, it runs as nobody, who cannot run $ENCORE or use $WORK"
		ROWS+=("$(printf '%-14s %s' "$(label "$srv")" "skipped: nobody cannot run encore")")
		continue
	fi
	if ! have "$srv"; then
		say "== $(label "$srv"): SKIP, not installed (Debian packages: $(packages "$srv"))"
		ROWS+=("$(printf '%-14s %s' "$(label "$srv")" "skipped: not installed")")
		continue
	fi
	if ! prepare "$srv"; then
		say "== $(label "$srv"): SKIP, could not prepare its data (initdb/pgbench -i failed)"
		ROWS+=("$(printf '%-14s %s' "$(label "$srv")" "skipped: setup failed")")
		continue
	fi
	RAN=$((RAN + 1))
	if [ $CHECK = 1 ]; then
		# --perf: a bare run too, the baseline of the profile
		[ ${#PERF[@]} -eq 0 ] || { run_one "$srv" bare; echo "$REQS" >"$KEEP/$srv.bare.requests"; }
		run_one "$srv" rec
		if [ $CRASH = 1 ] || [ "$ERRS" != 0 ] || [ "$REQS" = 0 ]; then
			say "== $(label "$srv") recorded: FAIL: $REQS requests, $ERRS errors${WHY:+, crash: $WHY}"
			FAILED=$((FAILED + 1))
		else
			say "== $(label "$srv") recorded: ok, $REQS requests, no error, no crash"
		fi
		continue
	fi
	say "== $(label "$srv"): $PAIRS pairs, bare and recorded alternating, ${SECS}s each${AGAINST:+ (and recorded by $AGAINST)}"
	cpub=() bares=() crash_b=0 err_b=0
	for m in rec vs; do
		eval "${m}_ratios=() ${m}_cratios=() ${m}_cpu=() ${m}_rps=() ${m}_bpr=() ${m}_lbpr=() ${m}_crash=0 ${m}_err=0"
	done
	for p in $(seq 1 "$PAIRS"); do
		# Odd pairs run bare first, even ones last: a run does better after another on this
		# machine (memcached -t 4: by about 0.1 of the ratio), which one order alone would
		# give to one side.  The ratios are taken once the pair's runs are all made.
		order=$MODES
		[ $((p % 2)) = 0 ] && order=$(printf '%s\n' $MODES | tac | tr '\n' ' ')
		declare -A P_RPS=() P_REQS=() P_ERRS=() P_CPU=() P_CRASH=() P_BYTES=() P_LBYTES=()
		for mode in $order; do
			run_one "$srv" "$mode"
			say "   pair $p $mode: $RPS req/s, $REQS requests, $ERRS errors, $CPU us CPU/req$([ $CRASH = 1 ] && echo ", CRASH: $WHY")$([ "$mode" != bare ] && echo ", trace $BYTES bytes ($LBYTES while running)")"
			P_RPS[$mode]=$RPS P_REQS[$mode]=$REQS P_ERRS[$mode]=$ERRS P_CPU[$mode]=$CPU
			P_CRASH[$mode]=$CRASH P_BYTES[$mode]=$BYTES P_LBYTES[$mode]=${LBYTES:-0}
		done
		for mode in $MODES; do
			RPS=${P_RPS[$mode]} REQS=${P_REQS[$mode]} ERRS=${P_ERRS[$mode]} CPU=${P_CPU[$mode]}
			CRASH=${P_CRASH[$mode]} BYTES=${P_BYTES[$mode]} LBYTES=${P_LBYTES[$mode]}
			if [ $mode = bare ]; then
				b_rps=$RPS b_crash=$CRASH b_cpu=$CPU
				[ $CRASH = 0 ] && cpub+=("$CPU")
				crash_b=$((crash_b + CRASH)); err_b=$((err_b + ERRS))
				[ $CRASH = 0 ] && bares+=("$RPS")
				continue
			fi
			declare -n a_ratios=${mode}_ratios a_cratios=${mode}_cratios a_cpu=${mode}_cpu \
				a_rps=${mode}_rps a_bpr=${mode}_bpr a_lbpr=${mode}_lbpr a_crash=${mode}_crash \
				a_err=${mode}_err
			a_crash=$((a_crash + CRASH)); a_err=$((a_err + ERRS))
			[ $CRASH = 0 ] && a_rps+=("$RPS") && a_cpu+=("$CPU")
			[ "$REQS" -gt 0 ] && a_bpr+=("$(awk -v b="$BYTES" -v n="$REQS" 'BEGIN { printf "%.0f", b / n }')")
			[ "$REQS" -gt 0 ] && a_lbpr+=("$(awk -v b="${LBYTES:-0}" -v n="$REQS" 'BEGIN { printf "%.0f", b / n }')")
			if [ $CRASH = 0 ] && [ "$b_crash" = 0 ] && [ "$b_rps" != 0 ]; then
				a_ratios+=("$(awk -v r="$RPS" -v b="$b_rps" 'BEGIN { printf "%.3f", r / b }')")
				[ "$CPU" = 0 ] || a_cratios+=("$(awk -v r="$CPU" -v b="$b_cpu" 'BEGIN { printf "%.3f", b / r }')")
			fi
			unset -n a_ratios a_cratios a_cpu a_rps a_bpr a_lbpr a_crash a_err
		done
	done
	for m in $MODES; do
		[ "$m" != bare ] || continue
		declare -n a_ratios=${m}_ratios a_cratios=${m}_cratios a_cpu=${m}_cpu a_rps=${m}_rps \
			a_bpr=${m}_bpr a_lbpr=${m}_lbpr a_crash=${m}_crash a_err=${m}_err
		ROWS+=("$(printf '%-14s %10s %10s %6s %9s %9s %6s %9s %9s %11s %8s %8s' \
			"$(label "$srv")$([ "$m" = vs ] && echo " vs")" \
			"$(median %.0f "${bares[@]}")" "$(median %.0f "${a_rps[@]}")" "$(median %.3f "${a_ratios[@]}")" \
			"$(median %.2f "${cpub[@]}")" "$(median %.2f "${a_cpu[@]}")" "$(median %.3f "${a_cratios[@]}")" \
			"$crash_b/$PAIRS" "$a_crash/$PAIRS" "$err_b/$a_err" "$(median %.0f "${a_lbpr[@]}")" \
			"$(median %.0f "${a_bpr[@]}")")")
		FAILED=$((FAILED + a_crash + (a_err > 0)))
		unset -n a_ratios a_cratios a_cpu a_rps a_bpr a_lbpr a_crash a_err
	done
	FAILED=$((FAILED + crash_b + (err_b > 0)))
done

if [ $CHECK = 1 ]; then
	[ $RAN -gt 0 ] || { say "soak: no server could run here (see the SKIP lines); nothing to check"; exit 77; }
	[ $FAILED -eq 0 ] || { say "soak: $FAILED of $RAN servers crashed or saw errors"; exit 1; }
	exit 0
fi
say ""
say "soak: $(date -u '+%F %H:%M UTC'), $PAIRS pairs of ${SECS}s runs${REC_OPTS[*]:+, ${REC_OPTS[*]}}, load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
printf '%-14s %10s %10s %6s %9s %9s %6s %9s %9s %11s %8s %8s\n' server "bare/s" "rec/s" ratio \
	"us/req b" "us/req r" "cpu" "crash b" "crash r" "errors b/r" "run B/r" "B/req"
printf '%s\n' "${ROWS[@]}"
say "(req/s: throughput, medians of the runs; ratio: median of the pair ratios recorded/bare,"
say " pairs with a crash left out; us/req: the server's CPU time per request, b bare, r recorded;"
say " cpu: median of the pair ratios bare/recorded CPU per request, what the throughput ratio"
say " would be if the server were CPU-bound; run B/r: trace bytes per request on disk while the"
say " server ran (uncompressed with --compress after); B/req: trace bytes per request at the end;"
say " a row \"SERVER vs\": the same pairs recorded by the --against encore)"
[ $FAILED -eq 0 ]
