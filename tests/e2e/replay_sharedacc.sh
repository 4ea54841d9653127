#!/bin/sh
# replay_sharedacc.sh: a prefork server (progs/replay_sharedacc.c: 3 workers accepting on one
# listening socket inherited from their parent, 6 clients connecting all at once) recorded 5
# times; each recording replays to the end with the same lines as recorded (sorted: the
# processes share stdout), and halts at `encore inf`'s cut for a predicate on a worker
# (replayer/README.md, accept).  Before the GD held connections for the other workers, a
# worker took another's recorded client from the shared queue and the replay stalled.
# Usage: replay_sharedacc.sh ENCORE PROG block|poll
set -eu
encore=$1 prog=$2 mode=$3
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_sharedacc.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/halt_at_inf.sh"

for rec in 1 2 3 4 5; do
    s=$tmp/s$rec
    "$encore" record -q -o "$s" --name pf -- "$prog" "$mode" 3 6 > "$tmp/rec.out"
    sort "$tmp/rec.out" > "$tmp/rec.sorted"
    grep -q "root: 6 clients served, 0 failures" "$tmp/rec.out" || {
        echo "FAIL: recording $rec:"; cat "$tmp/rec.out"; exit 1; }
    if ! timeout 120 "$encore" replay --stall-timeout 10 "$s" > "$tmp/rep.out" 2> "$tmp/rep.err"; then
        echo "FAIL: recording $rec did not replay to the end:"; cat "$tmp/rep.err"; exit 1
    fi
    grep -q "replayed to the end" "$tmp/rep.err" || { echo "FAIL: no summary"; cat "$tmp/rep.err"; exit 1; }
    sort "$tmp/rep.out" > "$tmp/rep.sorted"
    if ! cmp -s "$tmp/rec.sorted" "$tmp/rep.sorted"; then
        echo "FAIL: recording $rec: the replay printed other lines:"
        diff "$tmp/rec.sorted" "$tmp/rep.sorted" | head -20 || true
        exit 1
    fi
    # the halt: the first state where worker 1 has received 2 messages, if it ever does
    # (a worker may serve fewer); else the first where worker 1, 2 or 3 has received one (the
    # scheduler may give every client to one worker)
    halt_at_inf "$s" "$rec" 'pf.1: received >= 2' 'pf.1: received >= 1' 'pf.2: received >= 1' 'pf.3: received >= 1'
done
echo "ok: 5 recordings ($mode) replayed to the end and halted at the cut"
