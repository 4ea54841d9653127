#!/bin/sh
# record_wait_signal.sh: a signal handler the recorder deferred runs by the end of a wait it
# does not log (tests/e2e/progs/wait_signal.c; recorder/signals.c rec_sig_flush_late), as it
# would have run without the recorder: the program finds it run after every waitpid, and
# the replay prints the same.
# Usage: record_wait_signal.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_wait_signal.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$prog" 5 > "$tmp/bare"
grep -qx "rounds 5, handler late 0" "$tmp/bare" || { echo "SKIP: bare run: $(cat "$tmp/bare")"; exit 77; }
"$encore" record -q -o "$tmp/s" -- "$prog" 20 > "$tmp/rec.out" 2> "$tmp/rec.err"
cat "$tmp/rec.out"
grep -qx "rounds 20, handler late 0" "$tmp/rec.out" ||
    { echo "FAIL: recorded, the handler had not run when waitpid returned"; cat "$tmp/rec.err"; exit 1; }
timeout 120 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || true
grep -q "replayed to the end" "$tmp/rep.err" || { echo "FAIL: replay:"; cat "$tmp/rep.err"; exit 1; }
cmp -s "$tmp/rec.out" "$tmp/rep.out" || { echo "FAIL: replay printed"; cat "$tmp/rep.out"; exit 1; }
echo ok
