#!/bin/sh
# record_kill_midsend.sh: a writer killed by SIGTERM while it writes a pipe, 20 times: every
# byte its reader got is in the writer's trace (the death waits for the event of a write
# whose bytes went: recorder/rec.h, REC_DATA_CALL), and each trace ends in the death, its
# last send complete (a write the signal interrupted, which moved nothing, is not logged).  Before, a SIGTERM landing between a write's real call and its event lost the
# event in some of the runs.
# Usage: record_kill_midsend.sh ENCORE PROG   (PROG is tests/e2e/progs/kill_midsend.c)
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_kill_midsend.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for run in $(seq 1 20); do
    rm -rf "$tmp/s"
    "$encore" record -q -o "$tmp/s" --name km -- "$prog" > "$tmp/out"
    grep -q 'child killed by SIGTERM' "$tmp/out" || { echo "FAIL: run $run:"; cat "$tmp/out"; exit 1; }
    got=$(sed -n 's/^read \([0-9]*\) bytes.*/\1/p' "$tmp/out")
    sent=$("$encore" sql --csv "$tmp/s" \
        "SELECT coalesce(sum(e.result), 0) FROM event e JOIN process p ON p.id = e.proc
         WHERE p.name = 'km.1' AND e.kind = 'send' AND e.result > 0" | sed -n 2p)
    if [ "$got" != "$sent" ]; then
        echo "FAIL: run $run: the reader got $got bytes, the writer's trace sends $sent"
        "$encore" dump "$tmp/s" | tail -5
        exit 1
    fi
    if [ "$run" -le 3 ]; then
        # and the replay ends the writer where it died, with the recorded output
        rc=0
        timeout 120 "$encore" replay --stall-timeout 10 "$tmp/s" > "$tmp/rep.out" \
            2> "$tmp/rep.err" || rc=$?
        if [ $rc != 0 ] || ! cmp -s "$tmp/out" "$tmp/rep.out"; then
            echo "FAIL: replay of run $run (exit $rc):"; cat "$tmp/rep.out" "$tmp/rep.err"
            exit 1
        fi
    fi
done
echo "ok: 20 runs, every byte read is in the killed writer's trace; 3 replayed"
