#!/bin/sh
# replay_signals.sh: asynchronous signals recorded and replayed (recorder/README.md and
# replayer/README.md, "Signals"), with tests/e2e/progs/replay_signals.c:
#   timer1, timer0  an interval timer interrupting reads and a computation (SA_RESTART, or
#                   not: EINTR): over 10 recordings, each replays its own output exactly;
#   kill            kill and sigqueue between recorded processes, a nested handler, handlers
#                   that send messages; the analyzer orders each send before its handler run;
#   term            SIGTERM from outside (this script) while the server is blocked in poll:
#                   the replay runs the handler at the same poll and prints the same count;
#   spin            SIGTERM while the program spins on a flag without calling anything: the
#                   recording ends (the deferral bound ran the handler, marked late) and the
#                   replay ends too;
#   die             SIGTERM from outside, default action: the replay dies of it at the same
#                   point, after the same lines.
# Usage: replay_signals.sh ENCORE MODE PROG
set -eu
encore=$1 mode=$2 prog=$3
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_signals.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/replay_same.sh"

handlers() { # HANDLER events in session $1
    "$encore" dump "$1" 2>/dev/null | grep -c " handler " || true
}

# record an outside-signalled program: start it, wait for its pid file, send SIGTERM
record_term() {
    s=$1 what=$2
    rm -f "$tmp/pid"
    "$encore" record -q -o "$s" --name "$what" -- "$prog" "$what" "$tmp/pid" > "$s.out" &
    rec=$!
    i=0
    while [ ! -s "$tmp/pid" ]; do
        i=$((i + 1)); [ $i -lt 3000 ] || { echo "FAIL: $what never started"; kill "$rec"; exit 1; }
        sleep 0.01
    done
    # (a few polls first: the count printed depends on when the signal came)
    [ "$what" = term ] || [ "$what" = die ] && sleep 0.3
    kill -TERM "$(cat "$tmp/pid")"
    st=0
    wait "$rec" || st=$?
    [ $st = 0 ] || [ "$what" = die ] || { echo "FAIL: the recording of $what failed"; exit 1; }
}

case $mode in
timer1|timer0)
    r=${mode#timer}
    for i in 1 2 3 4 5 6 7 8 9 10; do
        s=$tmp/t$i
        "$encore" record -q -o "$s" --name timer -- "$prog" timer "$r" > "$s.out"
        n=$(handlers "$s")
        [ "$n" -gt 0 ] || { echo "FAIL: recording $i logged no handler run"; exit 1; }
        replay_same "$s"
    done
    # the output depends on the signals: the recordings differ (else the test shows nothing)
    diff=0
    for i in 2 3 4 5 6 7 8 9 10; do cmp -s "$tmp/t1.out" "$tmp/t$i.out" || diff=1; done
    [ $diff = 1 ] || { echo "FAIL: 10 recordings printed the same: the timer changed nothing"; exit 1; }
    if [ "$r" = 0 ]; then
        grep -q "eintr [1-9]" "$tmp"/t*.out || { echo "FAIL: no read ever failed with EINTR"; exit 1; }
    fi
    echo "ok: 10 recordings with a timer replay their own output";;
kill)
    s=$tmp/k
    "$encore" record -q -o "$s" --name kill -- "$prog" kill > "$s.out"
    for w in "usr1 from parent 1 value 0" "usr1 from parent 1 value 42" "usr2 code 0" "usr1 end"; do
        grep -q "$w" "$s.out" || { echo "FAIL: the recording lacks '$w':"; cat "$s.out"; exit 1; }
    done
    replay_same "$s"
    # Inf(P) past the child's first handler run holds the parent's kill (the signal edge),
    # and replay --stop halts exactly there, offline and online
    pred='kill.1: sent >= 3'
    "$encore" inf --json "$s" "$pred" > "$tmp/inf"
    a=$(grep -o '"cuts":\[{[^}]*}' "$tmp/inf" | head -1)
    k1=$("$encore" dump "$s" | awk '$1 == "process" { p = $2 } p == "kill" && $2 == "kill" { print $1; exit }')
    h1=$("$encore" dump "$s" | awk '$1 == "process" { p = $2 } p == "kill.1" && $2 == "handler" { print $1; exit }')
    c0=$(echo "$a" | grep -o '"kill":[0-9]*' | cut -d: -f2)
    c1=$(echo "$a" | grep -o '"kill.1":[0-9]*' | cut -d: -f2)
    [ -n "$c0" ] && [ -n "$c1" ] && [ -n "$k1" ] && [ -n "$h1" ] || {
        echo "FAIL: no cut, kill or handler run:"; cat "$tmp/inf"; exit 1; }
    if [ "$c1" -ge "$h1" ] && [ "$c0" -lt "$k1" ]; then
        echo "FAIL: the cut $a holds kill.1's handler run $h1 but not the kill (event $k1)"; exit 1
    fi
    for opt in "" --online; do
        # shellcheck disable=SC2086
        "$encore" replay $opt --json --then kill --stop "$pred" "$s" > "$tmp/rep" 2> "$tmp/err" || {
            echo "FAIL: replay $opt --stop '$pred':"; cat "$tmp/err"; exit 1; }
        b=$(grep -o '"cuts":\[{[^}]*}' "$tmp/rep" | head -1)
        [ "$a" = "$b" ] || { echo "FAIL: '$pred' $opt: encore inf says $a, replay halted at $b"; exit 1; }
    done
    echo "ok: signals between recorded processes replay; '$pred' halts at $a";;
term|spin)
    s=$tmp/$mode
    record_term "$s" "$mode"
    grep -q "^stopped" "$s.out" || { echo "FAIL: no handler ran:"; cat "$s.out"; exit 1; }
    if [ "$mode" = spin ]; then
        "$encore" replay "$s" > "$tmp/rep.out" 2> "$tmp/rep.err" || {
            echo "FAIL: the replay of the spinning program did not end:"; cat "$tmp/rep.err"; exit 1; }
        echo "ok: a handler run late (spinning program) replays to the end"
    else
        replay_same "$s"
        echo "ok: SIGTERM from outside replays: $(cat "$s.out")"
    fi;;
die)
    s=$tmp/die
    record_term "$s" die
    grep -q "^poll" "$s.out" || { echo "FAIL: no poll before SIGTERM:"; cat "$s.out"; exit 1; }
    "$encore" dump "$s" | grep -q " signal .*= 15" || { echo "FAIL: no death by SIGTERM logged"; exit 1; }
    replay_same "$s"
    echo "ok: a death by SIGTERM from outside replays: $(wc -l < "$s.out") lines";;
*) echo "usage: replay_signals.sh ENCORE timer1|timer0|kill|term|spin|die PROG"; exit 2;;
esac
