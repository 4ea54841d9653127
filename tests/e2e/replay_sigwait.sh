#!/bin/sh
# replay_sigwait.sh: signals taken by waiting for them (sigwait, sigwaitinfo, sigtimedwait)
# are replayed from the trace (recorder/README.md and replayer/README.md, "Signals"), with
# tests/e2e/progs/replay_sigwait.c:
#   timer    an interval timer polled with sigtimedwait: over 5 recordings, each replays its
#            own output exactly (replay arms no timer);
#   peer     sigqueue and kill from a recorded child, taken with sigwaitinfo: the values and
#            senders replay, and the analyzer orders each send before its receipt;
#   outside  SIGUSR2 from this script, taken after some sigtimedwait timeouts: the replay
#            (nobody sends it) prints the same count.
# Usage: replay_sigwait.sh ENCORE MODE PROG
set -eu
encore=$1 mode=$2 prog=$3
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_sigwait.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/replay_same.sh"

receipts() { # signals taken by a wait in session $1
    "$encore" dump "$1" 2>/dev/null | grep -c "handler  *sig\(wait\|waitinfo\|timedwait\) " || true
}

case $mode in
timer)
    for i in 1 2 3 4 5; do
        s=$tmp/t$i
        "$encore" record -q -o "$s" --name timer -- "$prog" timer > "$s.out"
        grep -q "^last 14 after" "$s.out" || { echo "FAIL: recording $i:"; cat "$s.out"; exit 1; }
        [ "$(receipts "$s")" -gt 0 ] || { echo "FAIL: recording $i logged no receipt"; exit 1; }
        replay_same "$s"
    done
    diff=0
    for i in 2 3 4 5; do cmp -s "$tmp/t1.out" "$tmp/t$i.out" || diff=1; done
    [ $diff = 1 ] || { echo "FAIL: 5 recordings printed the same: the timer changed nothing"; exit 1; }
    echo "ok: 5 recordings taking timer signals with sigtimedwait replay their own output";;
peer)
    s=$tmp/p
    "$encore" record -q -o "$s" --name peer -- "$prog" peer > "$s.out"
    for w in "rtmin value 1 from child" "rtmin value 3 from child" "usr2 value 0 from child" \
             "child exit 0"; do
        grep -q "$w" "$s.out" || { echo "FAIL: the recording lacks '$w':"; cat "$s.out"; exit 1; }
    done
    replay_same "$s"
    # Inf(P) holding the parent's first receipt holds the child's first sigqueue
    r1=$("$encore" dump "$s" | awk '$1 == "process" { p = $2 } p == "peer" && $2 == "handler" { print $1; exit }')
    [ -n "$r1" ] || { echo "FAIL: no receipt in the parent's trace"; exit 1; }
    pred="peer: events >= $r1"
    "$encore" inf --json "$s" "$pred" > "$tmp/inf"
    c1=$(grep -o '"cuts":\[{[^}]*}' "$tmp/inf" | head -1 | grep -o '"peer.1":[0-9]*' | cut -d: -f2)
    k1=$("$encore" dump "$s" | awk '$1 == "process" { p = $2 } p == "peer.1" && $2 == "kill" { print $1; exit }')
    [ -n "$c1" ] && [ -n "$k1" ] && [ "$c1" -ge "$k1" ] || {
        echo "FAIL: '$pred': the cut does not hold peer.1's first send (event $k1):"; cat "$tmp/inf"; exit 1; }
    echo "ok: signals from a recorded process taken with sigwaitinfo replay; '$pred' holds the send";;
outside)
    s=$tmp/o
    "$encore" record -q -o "$s" --name outside -- "$prog" outside "$tmp/pid" > "$s.out" &
    rec=$!
    i=0
    while [ ! -s "$tmp/pid" ]; do
        i=$((i + 1)); [ $i -lt 3000 ] || { echo "FAIL: never started"; kill "$rec"; exit 1; }
        sleep 0.01
    done
    sleep 0.2 # (a few timeouts first: the count printed depends on when the signal came)
    kill -USR2 "$(cat "$tmp/pid")"
    wait "$rec" || { echo "FAIL: the recording failed"; exit 1; }
    grep -q "^signal 12 after [0-9]* timeouts, from a process" "$s.out" || {
        echo "FAIL: the recording printed:"; cat "$s.out"; exit 1; }
    replay_same "$s"
    echo "ok: SIGUSR2 from outside taken with sigtimedwait replays: $(cat "$s.out")";;
*) echo "usage: replay_sigwait.sh ENCORE timer|peer|outside PROG"; exit 2;;
esac
