#!/bin/sh
# replay_early.sh: a library's constructor, run before the preload's, reads the pid and the
# wall clock; the program compares them with its own reads (tests/e2e/progs/early_main.c).
# Recorded, then replayed directly (a root: the GD's ENCORE_REPLAY) and under a shell that
# execs it (an LC's, across exec): the replays print what the recording printed (the same
# pid, time going on), where live values would say the pid changed and time went back.
# Usage: replay_early.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_early.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for how in direct exec; do
    rm -rf "$tmp/s"
    if [ "$how" = direct ]; then
        "$encore" record -q -o "$tmp/s" -- "$prog" > "$tmp/rec.out" 2> "$tmp/rec.err"
    else
        "$encore" record -q -o "$tmp/s" -- /bin/sh -c "exec $prog" > "$tmp/rec.out" 2> "$tmp/rec.err"
    fi
    grep -q "pid same" "$tmp/rec.out" ||
        { echo "FAIL ($how): the recorded run saw its pid change:"; cat "$tmp/rec.out"; exit 1; }
    # the recorded pid is gone by now: a replayed pid is always another
    timeout 60 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
        { echo "FAIL ($how): replay failed:"; cat "$tmp/rep.err"; exit 1; }
    if ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
        echo "FAIL ($how): the replay printed something else:"
        diff "$tmp/rec.out" "$tmp/rep.out" || true
        exit 1
    fi
done
echo "ok: the constructor's pid and clock agree in replay, run directly and after exec"
