#!/bin/sh
# replay_early.sh: a library's constructor, run before the preload's, reads the pid and the
# wall clock; the program compares them with its own reads (tests/e2e/progs/early_main.c).
# Its random bytes (getrandom, getentropy, syscall(SYS_getrandom)) are printed, with bytes
# the program gets later.  Recorded, then replayed (three times) directly (a root: the GD's ENCORE_REPLAY) and under a shell that
# execs it (an LC's, across exec): the replays print what the recording printed (the same
# pid, time going on, the same bytes), where live values would say the pid changed, time
# went back, and print other bytes.
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
    grep -q "^early random [0-9a-f]\{96\}$" "$tmp/rec.out" ||
        { echo "FAIL ($how): the recorded run printed no early bytes:"; cat "$tmp/rec.out"; exit 1; }
    # the recorded pid is gone by now: a replayed pid is always another
    for i in 1 2 3; do
        timeout 60 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
            { echo "FAIL ($how, replay $i): replay failed:"; cat "$tmp/rep.err"; exit 1; }
        if ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
            echo "FAIL ($how, replay $i): the replay printed something else:"
            diff "$tmp/rec.out" "$tmp/rep.out" || true
            exit 1
        fi
    done
    if [ "$how" = direct ]; then
        # the constructor asks for more bytes in replay than it did when recorded: real ones
        # past the recorded, and a warning
        timeout 60 "$encore" replay --setenv EARLY_MORE=1 "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
            { echo "FAIL (more bytes): replay failed:"; cat "$tmp/rep.err"; exit 1; }
        cmp -s "$tmp/rec.out" "$tmp/rep.out" ||
            { echo "FAIL (more bytes): the recorded bytes were not given first:";
              diff "$tmp/rec.out" "$tmp/rep.out" || true; exit 1; }
        grep -q "warning: .*asked for 64 random bytes, 48 were recorded then: real bytes" \
            "$tmp/rep.err" ||
            { echo "FAIL (more bytes): no warning:"; cat "$tmp/rep.err"; exit 1; }
        # the same variable in the replaying environment only: a root starts with its
        # recorded environment, so the constructor (run before the replay controller's) does
        # not see it (replayer/README.md, "Environment")
        EARLY_MORE=1 timeout 60 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
            { echo "FAIL (replaying environment): replay failed:"; cat "$tmp/rep.err"; exit 1; }
        if ! cmp -s "$tmp/rec.out" "$tmp/rep.out" || grep -q warning "$tmp/rep.err"; then
            echo "FAIL (replaying environment): the constructor saw the replay's EARLY_MORE:"
            cat "$tmp/rep.err"; exit 1
        fi
    fi
done
echo "ok: the constructor's pid, clock and random bytes agree in replay, run directly and after exec"
