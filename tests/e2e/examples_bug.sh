#!/bin/sh
# examples_bug.sh: an example program (examples/) shows its bug under `encore record`, and
# `encore inf` finds the bug's global state in exactly the recordings where the program
# itself reported the bug.
#   1. Same kind of output with and without recording: with the same --seed the first line
#      (the program's parameters) is identical, every line comes from one of the program's
#      processes, and the last line is the root's verdict ("NAME: OK: ..." or "NAME: BUG: ...").
#   2. Recorded with --bug until the program reports its bug (at most $TRIES runs; the
#      test fails if it never does).  In every recorded run the program's own verdict and
#      Inf(P) must agree: a BUG report names processes and values from which the test
#      writes P, and Inf(P) must exist; where the examples allow an exact converse (tpc,
#      rpc, pipeline), an OK report means P never holds.
# No sleeps and no timing assertions: the programs' own timeouts decide, the test only
# compares what the program said with what the trace says.
# Usage: examples_bug.sh ENCORE PROG NAME      (NAME: ring, tpc, rpc or pipeline)
set -eu
encore=$1 prog=$2 name=$3
TRIES=${TRIES:-12}
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/examples_bug.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*"; exit 1; }

# Exit status 0 (OK) or 1 (BUG) only; anything else is a failure of the program.
run() {
    out=$1; shift
    set +e
    "$@" > "$out"
    rc=$?
    set -e
    [ "$rc" -le 1 ] || { cat "$out"; fail "'$*' exited with status $rc"; }
}

check_lines() {
    grep -qv "^$name\(\.[0-9]*\)\?: " "$1" && { grep -v "^$name\(\.[0-9]*\)\?: " "$1" | head -3;
        fail "$1: a line that does not come from a $name process"; }
    tail -1 "$1" | grep -q "^$name: \(OK\|BUG\): " || fail "$1: last line is not the verdict: $(tail -1 "$1")"
}

# --- 1. with and without encore ---
run "$tmp/bare.out" "$prog" --bug --seed 7
run "$tmp/rec.out" "$encore" record -q -o "$tmp/s0" --name "$name" -- "$prog" --bug --seed 7
check_lines "$tmp/bare.out"
check_lines "$tmp/rec.out"
[ "$(head -1 "$tmp/bare.out")" = "$(head -1 "$tmp/rec.out")" ] ||
    fail "first line differs with recording: '$(head -1 "$tmp/bare.out")' vs '$(head -1 "$tmp/rec.out")'"
echo "same kind of output with and without recording: $(tail -1 "$tmp/rec.out")"

# ncuts DIR P: sets n to the number of Inf(P) cuts (0 when P never holds).
ncuts() {
    "$encore" inf --json "$1" "$2" > "$tmp/inf.json" || fail "encore inf $1 '$2' failed"
    n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["cuts"]))' "$tmp/inf.json")
}

# The predicate of the bug a verdict names, and (for an OK run) the predicates that must
# never hold.
bug_pred() {
    case $name in
    ring)
        set -- $(sed -n 's/^ring: BUG: \(ring\.[0-9]*\) and \(ring\.[0-9]*\) held.*/\1 \2/p' "$1")
        echo "$1: mark.holding == 1 && $2: mark.holding == 1" ;;
    tpc)
        set -- $(sed -n 's/^tpc: BUG: committed round \([0-9]*\) although \(tpc\.[0-9]*\) voted no/\1 \2/p' "$1")
        echo "tpc: mark.round == $1 && tpc: mark.decision == 1 && $2: mark.vote == 2" ;;
    rpc)
        echo "rpc.1: mark.dropped >= 1 && rpc: mark.lost >= 1" ;;
    pipeline)
        set -- $(sed -n 's/^pipeline\.3: BUG: item \([0-9]*\) arrived before item \([0-9]*\)/\1 \2/p' "$1")
        echo "pipeline.3: mark.last == $1 && pipeline.$(( ($2 - 1) % 2 + 1 )): mark.busy == $2" ;;
    esac
}
never_preds() {
    case $name in
    tpc)
        for k in $(sed -n 's/^\(tpc\.[0-9]*\): .*/\1/p' "$1" | sort -u) tpc.1 tpc.2 tpc.3; do
            echo "tpc: mark.decision == 1 && $k: mark.vote == 2"
        done | sort -u ;;
    rpc) echo "rpc.1: mark.inflight == 2" ;;
    pipeline) echo "pipeline.3: mark.reordered == 1" ;;
    esac
}

# --- 2. record until the bug shows; the verdicts and Inf(P) agree in every run ---
try=1 found=0
while [ "$try" -le "$TRIES" ] && [ "$found" = 0 ]; do
    d="$tmp/run$try"
    run "$tmp/run$try.out" "$encore" record -q -o "$d" --name "$name" -- "$prog" --bug
    check_lines "$tmp/run$try.out"
    if tail -1 "$tmp/run$try.out" | grep -q "^$name: BUG: "; then
        p=$(bug_pred "$tmp/run$try.out")
        # A field the report did not give leaves "== &&", "== $" or ": mark" at the start.
        case $p in ""|": "*|*"== &&"*|*"== "|*"  "*)
            fail "could not read the bug from: $(grep BUG "$tmp/run$try.out")";; esac
        ncuts "$d" "$p"
        [ "$n" -ge 1 ] || { cat "$tmp/run$try.out"; fail "run $try: the program reported '$(tail -1 "$tmp/run$try.out")' but Inf($p) does not exist"; }
        echo "run $try: $(grep -m1 'BUG' "$tmp/run$try.out"); Inf($p): $(cat "$tmp/inf.json")"
        found=1
    else
        never_preds "$tmp/run$try.out" > "$tmp/never"
        while read -r p; do
            ncuts "$d" "$p"
            [ "$n" = 0 ] || fail "run $try: the program reported OK but '$p' holds at $(cat "$tmp/inf.json")"
        done < "$tmp/never"
        echo "run $try: $(tail -1 "$tmp/run$try.out") (and Inf finds no bug state)"
    fi
    try=$((try + 1))
done
[ "$found" = 1 ] || fail "$name --bug did not show its bug in $TRIES recorded runs"
