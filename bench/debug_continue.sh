#!/bin/sh
# debug_continue.sh: `continue` in `encore debug` to a state deep in a session of about 1e6
# events, against `encore replay --stop` to the same state (target: at most 1.2 times its
# time).  The session: two processes playing ping-pong over a socket pair
# (bench/replay_pingpong.c's worker), 250000 round trips = 1000006 events; the predicate
# holds at 96% of it.  Both commands are timed whole (start, load, replay, halt, end), the
# fastest of R runs each, alternated; their halts must be the same cut.
# Usage: debug_continue.sh ENCORE PINGPONG [ROUNDS [R]]
set -eu
encore=$1 prog=$2 rounds=${3:-250000} reps=${4:-5}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/debug_continue.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$encore" record -q -o "$tmp/s" --name pp -- "$prog" worker pair 64 "$rounds"
P="pp.1: sent >= $((rounds * 24 / 25))"
now() { date +%s%N; }
best_r=0 best_d=0
i=0
while [ $i -lt "$reps" ]; do
    t0=$(now)
    "$encore" replay -q --json --then kill --stop "$P" "$tmp/s" > "$tmp/r.json"
    t1=$(now)
    printf 'stop %s\ncontinue\nquit\n' "$P" | "$encore" debug --json "$tmp/s" > "$tmp/d.json"
    t2=$(now)
    r=$((t1 - t0)) d=$((t2 - t1))
    [ $best_r -eq 0 ] || [ $r -lt $best_r ] && best_r=$r
    [ $best_d -eq 0 ] || [ $d -lt $best_d ] && best_d=$d
    i=$((i + 1))
done
rc=$(grep -o '"cuts":\[[^]]*\]' "$tmp/r.json")
dc=$(sed -n 2p "$tmp/d.json" | grep -o '"cuts":\[[^]]*\]')
[ "$rc" = "$dc" ] || { echo "FAIL: replay halted at $rc, debug at $dc"; exit 1; }
events=$("$encore" analyze "$tmp/s" | sed -n 's/^ *events *\([0-9]*\).*/\1/p')
echo "session: $events events; halt at $rc"
echo "replay --stop: $((best_r / 1000000)) ms; debug continue: $((best_d / 1000000)) ms; ratio $(awk "BEGIN { printf \"%.2f\", $best_d / $best_r }")"
