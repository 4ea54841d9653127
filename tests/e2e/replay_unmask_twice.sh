#!/bin/sh
# replay_unmask_twice.sh: the handler of a signal a mask change unblocked runs, in replay, at
# the mask change that unblocked it when recorded, not at an earlier one that left it blocked
# (progs/unmask_twice.c; replayer/lc_pids.c, lc_unmask_next).  Three recordings.
# Usage: replay_unmask_twice.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_unmask_twice.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
printf 'between: 0\nhandler\nafter: 1\n' > "$tmp/want"
for i in 1 2 3; do
    rm -rf "$tmp/s"
    "$encore" record -q -o "$tmp/s" -- "$prog" > "$tmp/rec.out" 2> "$tmp/rec.err" ||
        { echo "FAIL: recording:"; cat "$tmp/rec.err"; exit 1; }
    cmp -s "$tmp/want" "$tmp/rec.out" || { echo "FAIL: recorded output:"; cat "$tmp/rec.out"; exit 1; }
    rc=0
    timeout 60 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
    if [ $rc != 0 ] || ! cmp -s "$tmp/want" "$tmp/rep.out"; then
        echo "FAIL: replay $i exited $rc, output:"; cat "$tmp/rep.out"; cat "$tmp/rep.err"; exit 1
    fi
done
echo "ok: the handler ran at the mask change that unblocked it, 3 recordings"
