#!/bin/sh
# replay_chld_first.sh: a parent whose SIGCHLD handler ran for its child's exit before it read
# the child's output (progs/chld_first.c) is recorded, replayed to the end, and halted at
# its first receive: `encore inf`'s cut holds the child's exit (the handler run follows the
# child's end, analyzer/README.md) and the halt is exactly that cut.  Before, the cut held
# the child before its exit and the halted replay waited for ever in the handler run (a
# halted memcached session's shell did, tests/corpus/memcached.sh).
# Usage: replay_chld_first.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_chld_first.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/halt_at_inf.sh"

for rec in 1 2; do
    s=$tmp/s$rec
    "$encore" record -q -o "$s" --name cf -- "$prog" > "$tmp/rec.out" 2> "$tmp/rec.err" ||
        { echo "FAIL: recording $rec:"; cat "$tmp/rec.err"; exit 1; }
    grep -q '^handler ran, then read: from the child$' "$tmp/rec.out" ||
        { echo "FAIL: recording $rec printed:"; cat "$tmp/rec.out"; exit 1; }
    # the handler run is in the parent's trace before its first receive
    "$encore" dump "$s/cf.trace" > "$tmp/dump" 2>/dev/null
    h=$(grep -n ' handler ' "$tmp/dump" | head -1 | cut -d: -f1)
    r=$(grep -n ' recv ' "$tmp/dump" | head -1 | cut -d: -f1)
    [ -n "$h" ] && [ -n "$r" ] && [ "$h" -lt "$r" ] ||
        { echo "FAIL: recording $rec: no SIGCHLD handler run before the receive:"; cat "$tmp/dump"; exit 1; }
    if ! timeout 120 "$encore" replay --stall-timeout 10 "$s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
       ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
        echo "FAIL: recording $rec did not replay to the end with its output:"; cat "$tmp/rep.err"
        exit 1
    fi
    halt_at_inf "$s" "$rec" 'cf: received >= 1'
    # the child at its last event (its exit) in the cut
    n=$("$encore" dump "$s/cf.1.trace" 2>/dev/null | grep -c '^ *[0-9][0-9]*  ')
    grep -q "\"cf.1\":$n[,}]" "$tmp/inf.json" ||
        { echo "FAIL: recording $rec: the cut does not hold the child's exit (event $n):"; cat "$tmp/inf.json"; exit 1; }
done
echo "ok: a SIGCHLD handler run before a receive: the halt at the receive holds the child's exit (2 recordings)"
