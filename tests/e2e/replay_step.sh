#!/bin/sh
# replay_step.sh: single step (replayer/README.md; Manabe & Imase 5.1).  Halt at a cut, then step
# processes one event at a time with --step; after each step the replay must be halted at the
# least consistent cut containing the previous cut and the stepped process's next event,
# which `encore cut --after` computes offline.  Stepping from the start works too.
# Usage: replay_step.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_step.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$encore" record -q -o "$tmp/s" --name pp -- "$prog" 3 8 > /dev/null

pairs() { grep -o '"[a-z0-9.]*":[0-9][0-9]*' | sort; }   # "PROC":N lines of a cut
check() { # check START_OPTS... -- STEP...
    opts=""
    while [ "$1" != "--" ]; do opts="$opts $1"; shift; done
    shift
    steps=""
    for s in "$@"; do steps="$steps --step $s"; done
    # shellcheck disable=SC2086
    "$encore" replay --json --then kill $opts $steps "$tmp/s" > "$tmp/out" 2> "$tmp/err" || {
        echo "FAIL: replay$opts$steps:"; cat "$tmp/err"; exit 1; }
    [ "$(grep -c '"halted":true' "$tmp/out")" -eq $(($# + 1)) ] || {
        echo "FAIL: expected $(($# + 1)) halts:"; cat "$tmp/out" "$tmp/err"; exit 1; }
    i=1
    for s in "$@"; do
        prev=$(sed -n "${i}p" "$tmp/out" | grep -o '"cuts":\[{[^]]*' | pairs)
        next=$(sed -n "$((i + 1))p" "$tmp/out" | grep -o '"cuts":\[{[^]]*' | pairs)
        list=""
        for pv in $prev; do
            name=$(echo "$pv" | cut -d'"' -f2); k=$(echo "$pv" | cut -d: -f2)
            [ "$name" = "$s" ] && k=$((k + 1))
            [ "$k" -gt 0 ] && list="$list${list:+,}$name:$k"
        done
        want=$("$encore" cut --json "$tmp/s" --after "$list" | grep -o '"cut":{[^}]*' | pairs)
        [ "$want" = "$next" ] || {
            echo "FAIL: step $i ($s) from $(echo $prev): got $(echo $next), want $(echo $want)"; exit 1; }
        i=$((i + 1))
    done
    echo "ok:$opts$steps"
}
check -- pp pp pp.1 pp pp.2 pp.2
"$encore" inf --json "$tmp/s" 'pp: mark.got >= 4 && pp.2: sent >= 2' > "$tmp/cut.json"
# (pp.2 is early in that cut whatever the recording: sent >= 2; pp.1 and pp.3 may be at their end)
check --cut "$tmp/cut.json" -- pp pp pp pp pp.2 pp.2 pp.2 pp
check --stop 'pp.3:mark.ack>=2' -- pp.3 pp.3 pp.3 pp.3
# stepping a process past its end is refused
if "$encore" replay --json --then kill --stop 'pp.1: exited' --step pp.1 "$tmp/s" \
    > "$tmp/out" 2> "$tmp/err"; then echo "FAIL: stepped past the end"; exit 1; fi
grep -q "end of its trace" "$tmp/err" || { echo "FAIL: no message"; cat "$tmp/err"; exit 1; }
echo "ok: past the end refused"
