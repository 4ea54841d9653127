#!/bin/sh
# edges_ready.sh: readiness results are ordered after the sends they saw (the analyzer's
# readiness edges, analyzer/README.md).  replay_ready's parent waits for each message of its
# child with poll, select or epoll and then reads it: every readiness result that said
# "readable" must depend on the child's send of the bytes the next read takes (the last one,
# the end of the stream, on the child's release of it), so `encore sql` lists a 'ready'
# dependency for every result, and `encore cut --after` the parent's 3rd result holds the
# child past the send it saw.
# Usage: edges_ready.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/edges_ready.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

for mode in poll select epoll; do
    "$encore" record -q -o "$tmp/$mode" --name rd -- "$prog" "$mode" 10 > /dev/null
    n=$("$encore" sql --csv "$tmp/$mode" "SELECT count(*) FROM event WHERE kind = 'ready' AND result > 0" | tail -1)
    # each after a send of rd.1, the last (the end of the stream) after rd.1's release of it
    d=$("$encore" sql --csv "$tmp/$mode" "SELECT count(DISTINCT d.dst) FROM dependency d
        JOIN event r ON r.id = d.dst JOIN event s ON s.id = d.src JOIN process sp ON sp.id = s.proc
        WHERE d.kind = 'ready' AND r.kind = 'ready' AND sp.name = 'rd.1'
        AND (s.kind = 'send' OR r.idx = (SELECT max(idx) FROM event WHERE proc = r.proc
                                         AND kind = 'ready' AND result > 0))" | tail -1)
    [ "$n" -gt 0 ] && [ "$d" = "$n" ] ||
        { echo "FAIL: $mode: $n readiness results, $d ordered after what rd.1 did"; exit 1; }
    # the 3rd readiness result of rd: the cut holds rd.1 at least at the send it saw
    k=$("$encore" sql --csv "$tmp/$mode" "SELECT r.idx FROM event r JOIN process p ON p.id = r.proc
        WHERE p.name = 'rd' AND r.kind = 'ready' AND r.result > 0 ORDER BY r.idx LIMIT 1 OFFSET 2" | tail -1)
    want=$("$encore" sql --csv "$tmp/$mode" "SELECT s.idx FROM dependency d JOIN event s ON s.id = d.src
        JOIN event r ON r.id = d.dst JOIN process p ON p.id = r.proc
        WHERE d.kind = 'ready' AND p.name = 'rd' AND r.idx = $k" | tail -1)
    "$encore" cut --json "$tmp/$mode" --after "rd:$k" > "$tmp/cut.json"
    got=$(grep -o '"rd.1":[0-9]*' "$tmp/cut.json" | head -1 | cut -d: -f2)
    [ -n "$got" ] && [ "$got" -ge "$want" ] ||
        { echo "FAIL: $mode: the cut after rd:$k holds rd.1 at $got, before its send $want"; cat "$tmp/cut.json"; exit 1; }
    echo "ok: $mode: $n readiness results, each after the send it saw (cut after rd:$k: rd.1 >= $want)"
done
