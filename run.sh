#!/usr/bin/env bash
# run.sh: encore's one entry point for people and CI.  Installs the Debian packages the
# project needs (only those missing), configures and builds, then runs the main job or the
# whole test suite.
#
#   ./run.sh demo     set up, build, record the token ring example until its bug shows,
#                     find the first global state with two token holders and replay to it
#   ./run.sh test     set up, build, and run every test: unit, end-to-end and fuzz suites
#                     with warnings as errors, then the unit tests again under ASan+UBSan,
#                     then a short libFuzzer run of the trace reader
#   ./run.sh build    set up and build only
#   ./run.sh soak     set up, build, install real servers and their load tools, and run the
#                     soak benchmark (bench/soak.sh; options after `soak` are passed on)
#   ./run.sh corpus   set up, build, install the real servers of the corpus (only those
#                     missing) and record, replay and halt each with its clients
#                     (tests/corpus/); prints the table and writes tests/corpus/RESULTS.md.
#                     Not part of `test`: it installs servers and takes minutes
#
# Build directories: build/ (normal), build-asan/ (sanitizers), build-fuzz/ (clang, libFuzzer).
set -euo pipefail
cd "$(dirname "$0")"

# The last line: programs nobody here wrote that the real_* end-to-end tests record and replay
# (each test skips cleanly without its program).
PACKAGES=(meson ninja-build pkg-config gcc libc6-dev libunwind-dev libzstd-dev libsqlite3-dev
          libedit-dev libdw-dev
          check python3 clang libclang-rt-14-dev iproute2 strace gdb
          perl socat make scdoc libuv1-dev tcl netcat-openbsd)
# Real servers and their load tools, recorded under load by tests/e2e/soak_short.sh (each is
# skipped when missing; none starts a daemon in a container; the test uses its own ports).
PACKAGES+=(redis-server redis-tools nginx lighttpd apache2-utils memcached libmemcached-tools)
# CPython's test suite for the system python3 (corpus_pyregrtest), named after its version:
# added when this Debian has it (libpython3.11-testsuite on Debian 12), skipped otherwise.
if [ -x /usr/bin/python3 ]; then
	pyts=libpython$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' \
	                2>/dev/null)-testsuite
	apt-cache show "$pyts" >/dev/null 2>&1 && PACKAGES+=("$pyts")
fi

# The programs of the corpus (tests/corpus/), for `./run.sh corpus` only.
CORPUS_PACKAGES=(nginx lighttpd haproxy redis-server redis-tools memcached mosquitto
                 mosquitto-clients beanstalkd dnsmasq-base bind9-dnsutils postgresql-15
                 postgresql-client-15 rsync git openssh-server openssh-client socat curl
                 python3 util-linux nodejs libhttp-daemon-perl tinyproxy unbound vsftpd
                 apache2-utils openssl swaks apache2 php-cli exim4-daemon-light iperf3
                 gunicorn python3-gunicorn nghttp2-server nghttp2-client h2o busybox
                 dovecot-imapd ncat netcat-openbsd squid)

say() { printf '==> %s\n' "$*"; }

install_deps() {
	local missing=() p
	for p in "${PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	say "installing ${missing[*]}"
	local sudo=()
	[ "$(id -u)" -eq 0 ] || sudo=(sudo)
	"${sudo[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" >/dev/null
}

# configure DIR [meson options...]: set up DIR once, reconfigure when options change.
configure() {
	local dir=$1; shift
	if [ -f "$dir/build.ninja" ]; then
		meson configure "$dir" "$@" >/dev/null
	else
		meson setup "$dir" "$@" >/dev/null
	fi
}

# quiet_ninja DIR [targets...]: build, showing the compiler's output only when it fails.
quiet_ninja() {
	local log
	log=$(mktemp /tmp/encore-build.XXXXXX)
	if ! ninja -C "$@" >"$log" 2>&1; then
		grep -v '^\[' "$log" | tail -60 >&2
		rm -f "$log"
		echo "run.sh: the build in $1 failed (output above)" >&2
		return 1
	fi
	rm -f "$log"
}

build() {
	install_deps
	say "building (build/)"
	configure build -Dwerror=true
	quiet_ninja build
}

# The counts of a meson test log: prints "PASSED FAILED".
count_log() {
	python3 - "$1" <<'PY'
import json, sys
ok = bad = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("result") in ("OK", "EXPECTEDFAIL"):
        ok += 1
    elif r.get("result") != "SKIP":
        bad += 1
print(ok, bad)
PY
}

run_tests() {
	local passed=0 failed=0 p f status=0
	build
	say "unit, e2e and fuzz suites (build/)"
	meson test -C build --no-rebuild --print-errorlogs --num-processes 2 || status=1
	read -r p f < <(count_log build/meson-logs/testlog.json)
	passed=$((passed + p)); failed=$((failed + f))

	say "unit suite under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)"
	configure build-asan -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false
	quiet_ninja build-asan
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
		meson test -C build-asan --no-rebuild --print-errorlogs --suite unit --suite fuzz || status=1
	read -r p f < <(count_log build-asan/meson-logs/testlog.json)
	passed=$((passed + p)); failed=$((failed + f))

	if command -v clang >/dev/null; then
		say "libFuzzer: the trace reader for 20 s (build-fuzz/)"
		if [ ! -f build-fuzz/build.ninja ]; then
			CC=clang meson setup build-fuzz -Dfuzz=enabled \
				-Db_sanitize=address,undefined -Db_lundef=false >/dev/null
		fi
		quiet_ninja build-fuzz tests/fuzz/fuzz_reader
		local corpus
		corpus=$(mktemp -d /tmp/encore-fuzz-corpus.XXXXXX)
		build/tests/fuzz/fuzz_reader_driver --seeds "$corpus"
		if build-fuzz/tests/fuzz/fuzz_reader -max_total_time=20 -seed=1 -rss_limit_mb=2048 \
			"$corpus" >"$corpus.log" 2>&1; then
			passed=$((passed + 1))
			say "libFuzzer: $(grep -Eo 'Done [0-9]+ runs' "$corpus.log" || echo done)"
		else
			failed=$((failed + 1)); status=1
			tail -40 "$corpus.log"
		fi
		rm -rf "$corpus" "$corpus.log"
	fi
	say "the demo (./run.sh demo): the token ring's bug caught and replayed"
	if (demo) >/tmp/encore-demo-$$.log 2>&1 && grep -q "halted" /tmp/encore-demo-$$.log; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1)); status=1
		tail -40 /tmp/encore-demo-$$.log
	fi
	rm -f /tmp/encore-demo-$$.log
	echo "tests: $passed passed, $failed failed"
	return $status
}

DEMO_DIR=
# record_ring_bug DIR: record the token ring into DIR/run until its bug shows; prints P.
record_ring_bug() {
	local dir=$1 encore=build/cli/encore try holders
	for try in $(seq 1 20); do
		rm -rf "$dir/run"
		if ! "$encore" record -q -o "$dir/run" -- build/examples/ring --bug >"$dir/ring.out" 2>&1 &&
		   grep -q "BUG" "$dir/ring.out"; then
			break
		fi
	done
	if ! grep -q "BUG" "$dir/ring.out"; then
		echo "run.sh: the ring's bug did not show in $try recorded runs; run ./run.sh demo again" >&2
		return 1
	fi
	# "ring: BUG: ring.2 and ring.3 held the token at once" names the two holders.
	holders=$(sed -n 's/.*BUG: \(ring\.[0-9]*\) and \(ring\.[0-9]*\) held.*/\1 \2/p' "$dir/ring.out")
	set -- $holders
	echo "$1: mark.holding == 1 && $2: mark.holding == 1"
}

demo() {
	build
	DEMO_DIR=$(mktemp -d /tmp/encore-demo.XXXXXX)
	trap 'rm -rf "$DEMO_DIR"' EXIT
	local dir=$DEMO_DIR encore=build/cli/encore pred
	say "the token ring example (examples/ring.c): recording until its bug shows"
	pred=$(record_ring_bug "$dir") || return 1
	grep "BUG" "$dir/ring.out"
	say "recorded: $(ls "$dir/run" | grep -c '\.trace$') processes"
	say "encore analyze"
	"$encore" analyze "$dir/run" | sed -n 1,7p
	say "encore inf '$pred'"
	"$encore" inf "$dir/run" "$pred"
	say "encore replay --stop '$pred'   (every process re-executed and halted there)"
	"$encore" replay --then kill --stop "$pred" "$dir/run"
}

corpus() {
	build
	local PACKAGES=("${CORPUS_PACKAGES[@]}")   # install_deps installs these now
	install_deps
	say "the corpus: real servers recorded with their clients, replayed, halted (tests/corpus/)"
	ENCORE=build/cli/encore tests/corpus/run_all.sh
}

case "${1:-}" in
	demo) demo ;;
	corpus) corpus ;;
	test) run_tests ;;
	build) build ;;
	soak) build; shift; exec bench/soak.sh --install --encore build/cli/encore "$@" ;;
	-h|--help|"")
		sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
		[ -n "${1:-}" ] ;;
	*) echo "run.sh: unknown command '$1' (demo, test, build, soak, corpus)" >&2; exit 2 ;;
esac
