#!/bin/sh
# fdpass_analyze.sh: descriptors passed with SCM_RIGHTS join the sender's channel end
# (analyzer/README.md, "Matching"; schemas/trace-format.md, "Descriptor passing").  A master
# accepts TCP connections and passes them to a worker (progs/replay_fdpass.c), then passes
# its listening socket: every receive must be linked, none external, and each client's bytes
# must be received by the worker, each answer by its client, through the passed connections.
# Usage: fdpass_analyze.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/fdpass_analyze.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$encore" record -q -o "$tmp/s" --name fdp -- "$prog" 2 > "$tmp/rec.out"
"$encore" analyze "$tmp/s" > "$tmp/an" 2>&1 || { echo "FAIL: analyze"; cat "$tmp/an"; exit 1; }
for want in '0 external receives; 0 unmatched' 'channels   5 (5 matched, 0 external)'; do
    grep -q "$want" "$tmp/an" || { echo "FAIL: analyze does not say '$want':"; cat "$tmp/an"; exit 1; }
done
# the PASS events: 4 sent by the master (two connections, a file, the listener), 4 received
# by the worker; the file is no channel (aux[2] = 4, a file)
"$encore" dump "$tmp/s" > "$tmp/dump"
n=$(grep -c ' pass  *sendmsg ' "$tmp/dump") || true
[ "$n" = 4 ] || { echo "FAIL: $n PASS events on the master's side, 4 expected"; exit 1; }
n=$(grep -c ' pass  *recvmsg ' "$tmp/dump") || true
[ "$n" = 4 ] || { echo "FAIL: $n PASS events on the worker's side, 4 expected"; exit 1; }
grep -q ' pass  *recvmsg fd=[0-9]* = [0-9]* aux=2,[0-9]*,4 ' "$tmp/dump" || {
    echo "FAIL: no PASS event of a file without channel:"; grep ' pass ' "$tmp/dump"; exit 1; }
"$encore" sql "$tmp/s" "SELECT ps.name || '>' || pr.name || ':' || count(*) FROM message m
    JOIN event s ON s.id = m.send JOIN event r ON r.id = m.recv
    JOIN process ps ON ps.id = s.proc JOIN process pr ON pr.id = r.proc
    GROUP BY ps.name, pr.name ORDER BY 1" > "$tmp/msgs"
# the master's five commands; each client's request to the worker and the worker's answer
for want in 'fdp>fdp.1:5' 'fdp.1>fdp.2:1' 'fdp.1>fdp.3:1' 'fdp.1>fdp.4:1' 'fdp.2>fdp.1:1' \
            'fdp.3>fdp.1:1' 'fdp.4>fdp.1:1'; do
    grep -qx "$want" "$tmp/msgs" || { echo "FAIL: no message $want:"; cat "$tmp/msgs"; exit 1; }
done
echo "ok: passed connections matched"
