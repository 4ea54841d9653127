#!/bin/sh
# replay_sig_owned.sh: signal handlers against owned mutexes (tests/e2e/progs/sig_owned.c).
# late: 3 recordings, each replayed to the end with the same output (a handler run between
# two acquisitions without events stopped the replay at a divergence); lock: the recording
# of handlers that take a mutex ends (it could hang for ever), 3 times.
# Usage: replay_sig_owned.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_sig_owned.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for run in 1 2 3; do
	rm -rf "$tmp/s"
	"$encore" record -q --owned-mutexes -o "$tmp/s" -- "$prog" late > "$tmp/rec.out"
	rc=0
	timeout 120 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
	if [ $rc != 0 ] || ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
		echo "FAIL: late, run $run: replay exited $rc:"; cat "$tmp/rep.err"; exit 1
	fi
	rm -rf "$tmp/s"
	rc=0
	timeout 60 "$encore" record -q --owned-mutexes -o "$tmp/s" -- "$prog" lock > "$tmp/rec.out" 2> "$tmp/rec.err" || rc=$?
	if [ $rc != 0 ] || ! grep -q "signals handled" "$tmp/rec.out"; then
		echo "FAIL: lock, run $run: the recording exited $rc (124: it hung)"; cat "$tmp/rec.err"; exit 1
	fi
done
echo "ok: handlers between acquisitions without events replay; handlers that lock do not hang the recording"
