#!/bin/sh
# replay_examples.sh: the examples (token ring, two-phase commit, RPC chain, pipeline) under
# the replayer (replayer/README.md, tests "on every example").  Each is recorded with --bug (its bug
# shows in most runs) and replayed to the end: every process must print what it printed when
# recorded, line for line.  (The examples' processes share one stdout and prefix their lines
# with their logical name; the interleaving of different processes' lines on the shared
# terminal is not ordered by any message, so it is compared per process.)  Then replay halts
# at a predicate on each, offline and online, where `encore inf` says.
# Usage: replay_examples.sh ENCORE BUILD_EXAMPLES_DIR
set -eu
encore=$1 ex=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_ex.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

per_proc() { # per_proc FILE: lines grouped by process, each process's in order
    for n in $(cut -d: -f1 "$1" | sort -u); do grep "^$n: " "$1"; done
}
cuts() { grep -o '"cuts":\[{[^]]*\]' "$1" | head -1; }

while read -r prog pred; do
    "$encore" record -q -o "$tmp/$prog" -- "$ex/$prog" --bug --seed 7 > "$tmp/$prog.rec" 2> /dev/null || true
    "$encore" replay --stall-timeout 60 "$tmp/$prog" > "$tmp/$prog.rep" 2> "$tmp/$prog.err" || {
        echo "FAIL: $prog: replay:"; cat "$tmp/$prog.err"; exit 1; }
    per_proc "$tmp/$prog.rec" > "$tmp/a"; per_proc "$tmp/$prog.rep" > "$tmp/b"
    if ! cmp -s "$tmp/a" "$tmp/b"; then
        echo "FAIL: $prog: a process printed something else:"; diff "$tmp/a" "$tmp/b" | head; exit 1
    fi
    [ -s "$tmp/a" ] || { echo "FAIL: $prog printed nothing"; exit 1; }
    "$encore" inf --json "$tmp/$prog" "$pred" > "$tmp/inf"
    a=$(cuts "$tmp/inf")
    for mode in "" --online; do
        # shellcheck disable=SC2086
        "$encore" replay $mode --json --then kill --stall-timeout 60 --stop "$pred" "$tmp/$prog" \
            > "$tmp/halt" 2> "$tmp/halt.err" || { echo "FAIL: $prog: $mode halt:"; cat "$tmp/halt.err"; exit 1; }
        b=$(cuts "$tmp/halt")
        [ -n "$a" ] && [ "$a" = "$b" ] || { echo "FAIL: $prog $mode '$pred': $b, encore inf: $a"; exit 1; }
    done
    echo "ok: $prog: $(wc -l < "$tmp/a") lines; '$pred' -> $a"
done <<LIST
ring ring.1: mark.holding == 1 && ring.2: received >= 2
tpc tpc: mark.decision >= 1 && tpc.2: sent >= 2
rpc rpc.2: received >= 2 && rpc: sent >= 2
pipeline pipeline.3: received >= 3 && pipeline.1: sent >= 2
LIST
