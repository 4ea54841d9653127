#!/bin/sh
# record_sigterm.sh: SIGTERM sent to `encore record` itself (timeout(1), a service manager)
# goes on to the recorded program, and encore waits for it and exits with its status: the
# program is never left running recorded after encore is gone.  SIGHUP likewise.
# Usage: record_sigterm.sh ENCORE
set -eu
encore=$1
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_sigterm.XXXXXX")
epid=""
cleanup() {
	[ -z "$epid" ] || kill -KILL "$epid" 2>/dev/null || true
	# (the shell and its sleep, by pid)
	[ ! -s "$tmp/ready" ] || kill -KILL $(cat "$tmp/ready") 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
for sig in TERM HUP; do
	rm -rf "$tmp/s" "$tmp/ready"
	# the program: on the signal it says so and exits 3; else it waits for ever
	"$encore" record -q -o "$tmp/s" -- sh -c \
		'trap "kill \$c; echo got-$0; exit 3" '$sig'; sleep 1000 & c=$!; echo $$ $c > "$1.tmp"; mv "$1.tmp" "$1"; wait $c' \
		"$sig" "$tmp/ready" > "$tmp/out" 2> "$tmp/err" &
	epid=$!
	n=0
	while [ ! -s "$tmp/ready" ] && [ $n -lt 2000000 ]; do n=$((n + 1)); done
	[ -s "$tmp/ready" ] || { echo "FAIL: the program never started"; cat "$tmp/err"; exit 1; }
	kill -$sig "$epid"
	rc=0
	wait "$epid" || rc=$?
	epid=""
	if [ "$rc" != 3 ] || ! grep -q "got-$sig" "$tmp/out"; then
		echo "FAIL: SIG$sig to encore record: it exited $rc (the program's 3 expected), the program printed:"
		cat "$tmp/out"; cat "$tmp/err"; exit 1
	fi
	if kill -0 "$(cut -d' ' -f1 "$tmp/ready")" 2>/dev/null; then
		echo "FAIL: SIG$sig: the program still runs after encore record exited"; exit 1
	fi
done
echo "ok: SIGTERM and SIGHUP passed on to the program, its status returned"
