#!/bin/sh
# replay_halt.sh: halting at a precomputed cut (replayer/README.md, "Halting").  For each predicate,
# `encore replay --stop P --json` must halt every process at the cut `encore inf --json`
# computes offline; `--cut FILE` (the JSON of encore inf) must give the same, and so must
# `--online` (except for disjunctions: halt markers, tested in replay_online); after
# `--then kill` no replayed process is left (checked by pid).
# Usage: replay_halt.sh ENCORE NAME PROG ARGS... -- PREDICATE...   (an argument @TMP@ is a
# fresh directory)
set -eu
encore=$1 name=$2
shift 2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_halt.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prog=""
mkdir "$tmp/w"
while [ "$1" != "--" ]; do
    a=$1; [ "$a" = "@TMP@" ] && a="$tmp/w"   # a fresh directory (programs that write reports)
    prog="$prog $a"; shift
done
shift
# shellcheck disable=SC2086
"$encore" record -q -o "$tmp/s" --name "$name" -- $prog > /dev/null

cuts() { grep -o '"cuts":\[{[^}]*}' "$1" | head -1; }   # the first cut (replay halts there)
alive() { # the pids of a --json halt report that still exist
    for p in $(grep -o '"pid":[0-9]*' "$1" | cut -d: -f2); do
        [ "$p" -gt 0 ] && kill -0 "$p" 2>/dev/null && echo "$p"
    done; true
}
n=0
for pred in "$@"; do
    n=$((n + 1))
    "$encore" inf --json "$tmp/s" "$pred" > "$tmp/inf.$n"
    "$encore" replay --json --then kill --stop "$pred" "$tmp/s" > "$tmp/rep.$n" 2> "$tmp/err.$n" || {
        echo "FAIL: replay --stop '$pred':"; cat "$tmp/err.$n"; exit 1; }
    a=$(cuts "$tmp/inf.$n"); b=$(cuts "$tmp/rep.$n")
    if [ -z "$a" ] || [ "$a" != "$b" ]; then
        echo "FAIL: '$pred': encore inf says $a, replay halted at $b"; exit 1
    fi
    grep -q '"status":"halted"' "$tmp/rep.$n" || { echo "FAIL: nothing halted"; exit 1; }
    grep -q '"backtrace":"#0 ' "$tmp/rep.$n" || { echo "FAIL: no backtrace"; exit 1; }
    case "$pred" in
    *exited*) ;; # that process is gone: no live values to show
    *) grep -q '"terms":{"[a-z_.()]*":[0-9]' "$tmp/rep.$n" || { echo "FAIL: no term values"; exit 1; } ;;
    esac
    left=$(alive "$tmp/rep.$n")
    [ -z "$left" ] || { echo "FAIL: processes left behind: $left"; exit 1; }
    "$encore" replay --json --then kill --cut "$tmp/inf.$n" "$tmp/s" > "$tmp/cut.$n" 2>&1 || {
        echo "FAIL: replay --cut:"; cat "$tmp/cut.$n"; exit 1; }
    c=$(cuts "$tmp/cut.$n")
    [ "$a" = "$c" ] || { echo "FAIL: '$pred': --cut halted at $c, not $a"; exit 1; }
    case "$pred" in
    *"||"*) ;; # disjunctions: halt markers, tested in replay_online
    *)  # the online protocol (Manabe & Imase 3.2; linked: Miller & Choi 3.6) halts there too
        "$encore" replay --online --json --then kill --stop "$pred" "$tmp/s" > "$tmp/onl.$n" 2>&1 || {
            echo "FAIL: replay --online --stop '$pred':"; cat "$tmp/onl.$n"; exit 1; }
        o=$(cuts "$tmp/onl.$n")
        [ "$a" = "$o" ] || { echo "FAIL: '$pred': --online halted at $o, not $a"; exit 1; }
        left=$(alive "$tmp/onl.$n")
        [ -z "$left" ] || { echo "FAIL: processes left behind: $left"; exit 1; } ;;
    esac
    echo "ok: $pred -> $a"
done
# --then continue: halt, then run on to the end
"$encore" replay --json --then continue --stop "$1" "$tmp/s" > "$tmp/cont" 2> "$tmp/cont.err" || {
    echo "FAIL: --then continue:"; cat "$tmp/cont.err"; exit 1; }
grep -q "replayed to the end" "$tmp/cont.err" || { echo "FAIL: --then continue did not end"; exit 1; }
