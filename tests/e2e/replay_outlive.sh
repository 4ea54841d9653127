#!/bin/sh
# replay_outlive.sh: a SIGTERM the parent sent to a child that had exited already when
# recorded (progs/outlive.c, as Python's Pool terminates its workers at its end), replayed
# with the child slower (OUTLIVE_SLOW: it computes 1 s before its last call), so that the
# signal comes while it runs: the child still exits as recorded and the replay reaches the end
# with the recorded output, 3 recordings (replayer/README.md, "Signals"); before, the child
# died of it ("the replay ended early").
# Usage: replay_outlive.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_outlive.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

for rec in 1 2 3; do
    s=$tmp/s$rec
    "$encore" record -q -o "$s" --name ol -- "$prog" > "$tmp/rec.out"
    grep -qx 'child exited 0' "$tmp/rec.out" || { echo "FAIL: recording $rec printed:"; cat "$tmp/rec.out"; exit 1; }
    if ! timeout 120 "$encore" replay --setenv OUTLIVE_SLOW=1 --stall-timeout 10 "$s" > "$tmp/rep.out" 2> "$tmp/rep.err"; then
        echo "FAIL: recording $rec did not replay to the end:"; cat "$tmp/rep.err"; exit 1
    fi
    cmp -s "$tmp/rec.out" "$tmp/rep.out" || { echo "FAIL: recording $rec, the replay printed:"; cat "$tmp/rep.out"; exit 1; }
done
echo "ok: 3 recordings of a SIGTERM to a child that had exited replayed with the child slower"
