#!/usr/bin/env bash
# callgrind_req.sh: instructions a server executes per request, bare and recorded, counted by
# callgrind (see bench/README.md).  Unlike time, an instruction count does not move with the
# machine's other load, so two recorders (before and after a change) compare on a busy
# machine.  The server runs under valgrind --tool=callgrind (recorded: under `encore record`,
# the recorder preloaded into the server inside valgrind); after a warm-up of W requests the
# counters are zeroed (callgrind_control -z), N requests are made, and the counters dumped
# (callgrind_control -d): the dump's instruction total divided by N is printed.  Only the
# server is counted, never the load tool; the server's own threads are.
#
#   callgrind_req.sh [--encore PATH] [-n N] [-w W] [--bare-only|--rec-only] [--close]
#                    [--keep DIR] SERVER...
#
# SERVER: redis (redis-benchmark -c 8 -P 1, SET then GET), redis-p16 (the same with -P 16),
# nginx, lighttpd (ab -k -c 8 on a 612-byte file), memcached and memcached-t4 (memaslap -T 2
# -c 8, 90% get; memcached -t 1 or -t 4 with -c 1012 under a descriptor limit of 1024: the
# only one valgrind lets it set, 12 below its own, which it keeps; as nobody, encore included,
# when run as root: memcached refuses root).
# Defaults: N 20000 (redis-p16: 100000), W 2000.  --close: the HTTP load opens a connection
# per request (ab without -k).  --keep DIR keeps each run's files (the
# callgrind dump SERVER.MODE/cg.out.1, for callgrind_annotate; the recorded session) in DIR.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ENCORE=${ENCORE:-$here/../build/cli/encore}
N= W=2000 MODES="bare rec" SERVERS=() KEEP= KA=-k
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; }
while [ $# -gt 0 ]; do
	case $1 in
	--encore) ENCORE=$2; shift ;;
	-n) N=$2; shift ;;
	-w) W=$2; shift ;;
	--bare-only) MODES=bare ;;
	--rec-only) MODES=rec ;;
	--keep) KEEP=$2; shift ;;
	--close) KA= ;;
	-h|--help) usage; exit 0 ;;
	-*) echo "callgrind_req.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	*) SERVERS+=("$1") ;;
	esac
	shift
done
[ ${#SERVERS[@]} -gt 0 ] || SERVERS=(redis redis-p16 nginx)
command -v valgrind >/dev/null && command -v callgrind_control >/dev/null ||
	{ echo "callgrind_req.sh: needs valgrind (Debian: valgrind)" >&2; exit 2; }
[ -x "$ENCORE" ] || { echo "callgrind_req.sh: no encore at $ENCORE; build first or pass --encore PATH" >&2; exit 2; }
ENCORE=$(cd "$(dirname "$ENCORE")" && pwd)/$(basename "$ENCORE")

if [ -n "$KEEP" ]; then
	mkdir -p "$KEEP" || exit 2
	WORK=$(cd "$KEEP" && pwd)
else
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/encore-cg.XXXXXX")
fi
chmod 755 "$WORK"
LIVE=
cleanup() {
	# shellcheck disable=SC2046 # a list of pids
	[ -n "$LIVE" ] && kill -KILL $(cat "/proc/$LIVE/task/$LIVE/children" 2>/dev/null) "$LIVE" 2>/dev/null
	[ -n "$KEEP" ] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# setup SERVER DIR PORT: sets CMD.
setup() {
	local srv=$1 dir=$2 port=$3
	mkdir -p "$dir/www" "$dir/tmp"
	head -c 612 /dev/zero | tr '\0' x >"$dir/www/index.html"
	case $srv in
	redis|redis-p16)
		CMD=(redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no
		     --daemonize no --dir "$dir" --logfile "$dir/server.log") ;;
	nginx)
		cat >"$dir/nginx.conf" <<-EOF2
		daemon off;
		master_process off;
		pid $dir/nginx.pid;
		error_log $dir/server.log;
		events { worker_connections 256; }
		http {
		    access_log off;
		    client_body_temp_path $dir/tmp; proxy_temp_path $dir/tmp;
		    fastcgi_temp_path $dir/tmp; uwsgi_temp_path $dir/tmp; scgi_temp_path $dir/tmp;
		    server { listen 127.0.0.1:$port; root $dir/www; }
		}
		EOF2
		CMD=(nginx -c "$dir/nginx.conf" -e "$dir/server.log") ;;
	lighttpd)
		cat >"$dir/lighttpd.conf" <<-EOF2
		server.document-root = "$dir/www"
		server.bind = "127.0.0.1"
		server.port = $port
		server.errorlog = "$dir/server.log"
		index-file.names = ("index.html")
		EOF2
		CMD=(lighttpd -D -f "$dir/lighttpd.conf") ;;
	memcached|memcached-t4)
		CMD=(memcached -l 127.0.0.1 -p "$port" -U 0 -c 1012
		     -t "$([ "$srv" = memcached ] && echo 1 || echo 4)") ;;
	esac
}

# load SERVER PORT N
load() {
	local srv=$1 port=$2 n=$3
	case $srv in
	redis) redis-benchmark -h 127.0.0.1 -p "$port" -c 8 -n "$((n / 2))" -P 1 -t set,get -q ;;
	redis-p16) redis-benchmark -h 127.0.0.1 -p "$port" -c 8 -n "$((n / 2))" -P 16 -t set,get -q ;;
	nginx|lighttpd) ab $KA -c 8 -n "$n" "http://127.0.0.1:$port/index.html" ;;
	memcached|memcached-t4)
		"$(command -v memcaslap || command -v memaslap)" -s "127.0.0.1:$port" -T 2 -c 8 -x "$n" ;;
	esac >>"$WORK/load.log" 2>&1
}

# fdlimit SERVER: in the server's subshell, memcached's descriptor limit (see the top)
fdlimit() {
	case $1 in memcached*) ulimit -Sn 1024 && ulimit -Hn 1024 ;; esac
}
# runas SERVER: the prefix that runs it as nobody (memcached, as root), else nothing
runas() {
	case $1 in memcached*) [ "$(id -u)" -eq 0 ] && echo setpriv --reuid=65534 --regid=65534 --clear-groups -- ;; esac
}

# the pid of the process running under valgrind (a child of encore when recorded)
server_pid() {
	local p=$1 c
	[ "$2" = bare ] && { echo "$p"; return; }
	c=$(cat "/proc/$p/task/$p/children" 2>/dev/null)
	echo "${c%% *}"
}

run() {
	local srv=$1 mode=$2 dir=$WORK/$1.$2 port pid vp out ok=0 ir n
	n=${N:-$([ "$srv" = redis-p16 ] && echo 100000 || echo 20000)}
	rm -rf "$dir"
	mkdir -p "$dir"
	port=$(free_port)
	setup "$srv" "$dir" "$port"
	out=$dir/cg.out
	local vg=(valgrind --tool=callgrind --callgrind-out-file="$out" --dump-instr=no
	          --separate-threads=no "${CMD[@]}")
	local as
	as=$(runas "$srv")
	[ -z "$as" ] || chown -R 65534:65534 "$dir"
	if [ "$mode" = rec ]; then
		# shellcheck disable=SC2086 # the prefix's words
		(fdlimit "$srv"; exec $as "$ENCORE" record -o "$dir/session" -- "${vg[@]}") >"$dir/server.out" 2>&1 &
	else
		# shellcheck disable=SC2086
		(fdlimit "$srv"; exec $as "${vg[@]}") >"$dir/server.out" 2>&1 &
	fi
	pid=$!
	LIVE=$pid
	for _ in $(seq 1 600); do
		kill -0 "$pid" 2>/dev/null || break
		if timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null; then ok=1; break; fi
		sleep 0.1
	done
	[ $ok = 1 ] || { echo "$srv $mode: the server did not start (see below)"; tail -5 "$dir/server.out"; return 1; }
	vp=$(server_pid "$pid" "$mode")
	load "$srv" "$port" "$W"
	# (as the server's user: vgdb finds a valgrind by its user's name)
	# shellcheck disable=SC2086
	$as callgrind_control -z "$vp" >/dev/null 2>&1
	load "$srv" "$port" "$n"
	# shellcheck disable=SC2086
	$as callgrind_control -d "$vp" >/dev/null 2>&1
	kill -TERM "$vp" 2>/dev/null
	wait "$pid"
	LIVE=
	# the dump made by -d is OUT.1 (OUT itself is written at exit)
	ir=$(awk '/^(summary|totals):/ { print $2; exit }' "$out.1" 2>/dev/null)
	[ -n "$ir" ] || { echo "$srv $mode: no callgrind dump"; return 1; }
	printf '%-10s %-4s %8d requests %14d instructions %10.0f per request\n' \
		"$srv" "$mode" "$n" "$ir" "$(awk -v a="$ir" -v b="$n" 'BEGIN { print a / b }')"
}

for s in "${SERVERS[@]}"; do
	case $s in redis|redis-p16|nginx|lighttpd|memcached|memcached-t4) ;; *)
		echo "callgrind_req.sh: unknown server '$s' (one of: redis redis-p16 nginx lighttpd memcached memcached-t4)" >&2; exit 2 ;;
	esac
done
for s in "${SERVERS[@]}"; do
	for m in $MODES; do
		run "$s" "$m"
	done
done
