#!/bin/sh
# replay_pace.sh: a process whose readiness wait timed out when recorded, then read a flag
# another process set meanwhile in shared memory (progs/pace_flag.c, PostgreSQL's background
# writer and the end of recovery), recorded 3 times; each replays to the end twice, printing
# what it printed: replay waits the timeout out too (replayer/README.md, "Readiness"), where it
# gave the result back at once and the waiter read the flag before the setter had run.
# Usage: replay_pace.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_pace.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

n=0
for rec in 1 2 3 4 5 6; do
    s=$tmp/s$rec
    "$encore" record -q -o "$s" --name pace -- "$prog" > "$tmp/rec.out"
    # (a machine so loaded that the setter did not run in 300 ms: that recording is not the
    # pattern)
    grep -q 'saw the flag: yes' "$tmp/rec.out" || continue
    n=$((n + 1))
    for run in 1 2; do
        if ! timeout 120 "$encore" replay --stall-timeout 10 "$s" > "$tmp/rep.out" 2> "$tmp/rep.err"; then
            echo "FAIL: recording $rec, replay $run did not replay to the end:"; cat "$tmp/rep.err"; exit 1
        fi
        cmp -s "$tmp/rec.out" "$tmp/rep.out" || {
            echo "FAIL: recording $rec, replay $run printed:"; cat "$tmp/rep.out"; exit 1; }
    done
    [ "$n" -lt 3 ] || break
done
[ "$n" -gt 0 ] || { echo "SKIP: the setter never ran within the waiter's 300 ms when recorded"; exit 77; }
echo "ok: $n recordings of a timed-out wait followed by a shared flag replayed twice each"
