#!/bin/sh
# replay_interrupt.sh: no process is left behind when `encore replay` is interrupted (issue
# #6, "Rules"): a replay halted with --then stop waits for Enter; SIGINT ends it, and every
# pid of its halt report must be gone.  The halt report is read from a FIFO (a blocking read,
# no sleep).
# Usage: replay_interrupt.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_intr.XXXXXX")
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
"$encore" record -q -o "$tmp/s" --name pp -- "$prog" 3 6 > /dev/null
mkfifo "$tmp/out" "$tmp/in"
"$encore" replay --json --then stop --stop 'pp: mark.got >= 3' "$tmp/s" \
    < "$tmp/in" > "$tmp/out" 2> "$tmp/err" &
pid=$!
exec 3> "$tmp/in"            # keep stdin open: encore waits for Enter
IFS= read -r line < "$tmp/out"
pids=$(echo "$line" | grep -o '"pid":[0-9]*' | cut -d: -f2)
[ -n "$pids" ] || { echo "FAIL: no halt report: $line"; exit 1; }
for p in $pids; do
    [ "$p" -eq 0 ] || kill -0 "$p" || { echo "FAIL: halted process $p is not there"; exit 1; }
done
kill -INT "$pid"
rc=0; wait "$pid" || rc=$?
pid=""
exec 3>&-
[ "$rc" -eq 130 ] || { echo "FAIL: exit status $rc, expected 130"; cat "$tmp/err"; exit 1; }
for p in $pids; do
    if [ "$p" -gt 0 ] && kill -0 "$p" 2>/dev/null; then
        echo "FAIL: process $p left behind"; exit 1
    fi
done
grep -q "interrupted" "$tmp/err" || { echo "FAIL: no message"; exit 1; }
echo "ok: interrupted, $(echo $pids | wc -w) processes gone"
