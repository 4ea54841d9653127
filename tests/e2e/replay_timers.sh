#!/bin/sh
# replay_timers.sh: timers read through a descriptor replay from the trace (recorder/README.md
# and replayer/README.md, "Signals"), with tests/e2e/progs/replay_timers.c:
#   timerfd  a timerfd polled during a computation: over 5 recordings, each replays its own
#            output exactly (replay arms no timer: reads and readiness come from the trace);
#   signalfd a signalfd taking a timer's SIGALRM and a child's SIGUSR1, polled likewise;
#   posix    a POSIX timer's signal (timer_create) interrupting a computation: the handler
#            runs and the timer calls' values replay, and no timer is made in replay.
# Usage: replay_timers.sh ENCORE MODE PROG
set -eu
encore=$1 mode=$2 prog=$3
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_timers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/replay_same.sh"

case $mode in
timerfd|signalfd|posix)
    for i in 1 2 3 4 5; do
        s=$tmp/t$i
        "$encore" record -q -o "$s" --name "$mode" -- "$prog" "$mode" > "$s.out"
        # (posix: two ticks may come between two looks at the count, so it may end past 5)
        grep -q "^last read: [0-9]* expirations after 5 ticks\|^usr1 at step [0-9]* value 7 from child\|^deleted after [5-9] ticks" "$s.out" || {
            echo "FAIL: recording $i:"; cat "$s.out"; exit 1; }
        [ $mode = posix ] || "$encore" dump "$s" | grep -q " input .* read " || {
            echo "FAIL: recording $i logged no input read of the $mode"; exit 1; }
        replay_same "$s"
    done
    diff=0
    for i in 2 3 4 5; do cmp -s "$tmp/t1.out" "$tmp/t$i.out" || diff=1; done
    [ $diff = 1 ] || { echo "FAIL: 5 recordings printed the same: the timer changed nothing"; exit 1; }
    echo "ok: 5 recordings reading a $mode replay their own output";;
*) echo "usage: replay_timers.sh ENCORE timerfd|signalfd|posix PROG"; exit 2;;
esac
