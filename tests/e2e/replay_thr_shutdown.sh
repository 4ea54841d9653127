#!/bin/sh
# replay_thr_shutdown.sh: a threaded server whose request threads shut connections down, the client connecting again at each end of stream
# (tests/e2e/progs/thr_shutdown.c): recorded, then replayed to the end with the same output
# (the poll that saw the next connection was logged before the shutdown that caused it,
# and the replay waited there for ever).  Three recordings.
# Usage: replay_thr_shutdown.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_thr_shutdown.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for run in 1 2 3; do
	rm -rf "$tmp/s"
	rc=0
	"$encore" record -q -o "$tmp/s" -- "$prog" > "$tmp/rec.out" 2> "$tmp/rec.err" || rc=$?
	if [ $rc != 0 ] || ! grep -q "^served 150" "$tmp/rec.out"; then
		echo "FAIL: recording $run (exit $rc):"; cat "$tmp/rec.out" "$tmp/rec.err"; exit 1
	fi
	rc=0
	timeout 120 "$encore" replay --stall-timeout 10 "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
	if [ $rc != 0 ] || ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
		echo "FAIL: replay $run (exit $rc):"; cat "$tmp/rep.out" "$tmp/rep.err"; exit 1
	fi
done
echo "ok: 3 recordings of request threads shutting connections down replayed"
