#!/bin/sh
# connfail_dump.sh: a read of SO_ERROR on a channel (how a non-blocking connect learns it
# failed) is an event of call getsockopt, not connect (schemas/trace-format.md, "Event
# kinds" and "Calls"): `encore dump` names it so, with the value read, and the session
# replays to the end; rewritten as recorders before call getsockopt wrote it (call connect,
# the same aux: OLD, old_so_error.c), it replays to the end too.
# Usage: connfail_dump.sh ENCORE PROG OLD   (PROG is replay_connfail)
set -eu
encore=$1 prog=$2 old=$3
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/connfail_dump.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$encore" record -q -o "$tmp/s" --name cf -- "$prog" > "$tmp/rec.out"
"$encore" dump --json "$tmp/s" > "$tmp/dump.json"
python3 - "$tmp/dump.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
reads = [e for p in doc["processes"] for e in p["events"] if e["call"] == "getsockopt"]
# replay_connfail reads SO_ERROR once refused (111) before it lets the server listen, then
# until it is connected (0): refused as many times as the server took to listen
aux = [e["aux"] for e in reads]
assert len(aux) >= 2 and aux[0] == [4, 111] and aux[-1] == [4, 0], reads
assert all(a == [4, 111] for a in aux[1:-1]), reads
assert all(e["kind"] == "connect" for e in reads), reads
# and no connect event carries SO_ERROR's aux any more
bad = [e for p in doc["processes"] for e in p["events"]
       if e["call"] == "connect" and e["aux"][:1] == [4]]
assert not bad, bad
PY
"$encore" dump "$tmp/s" | grep -q "connect  getsockopt fd=3 ch=[0-9]* = 0 aux=4,111" ||
    { echo "FAIL: the text dump does not name getsockopt"; exit 1; }
"$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
    { echo "FAIL: replay:"; cat "$tmp/rep.err"; exit 1; }
cmp -s "$tmp/rec.out" "$tmp/rep.out" || { echo "FAIL: replay printed something else"; exit 1; }
# the same session as an older recorder wrote it
mkdir -m 700 "$tmp/old"
cp -r "$tmp/s/.encore-session" "$tmp/old/"
n=0
for f in "$tmp"/s/*.trace; do
    n=$((n + $("$old" "$f" "$tmp/old/${f##*/}")))
done
[ "$n" -ge 2 ] || { echo "FAIL: $n SO_ERROR reads rewritten"; exit 1; }
"$encore" dump "$tmp/old" | grep -q "connect  connect fd=3 ch=[0-9]* = 0 aux=4,111" ||
    { echo "FAIL: the rewritten session has no old-style SO_ERROR read"; exit 1; }
"$encore" replay "$tmp/old" > "$tmp/old.out" 2> "$tmp/old.err" ||
    { echo "FAIL: replay of the old-style session:"; cat "$tmp/old.err"; exit 1; }
cmp -s "$tmp/rec.out" "$tmp/old.out" || { echo "FAIL: the old-style replay printed something else"; exit 1; }
echo "ok: SO_ERROR reads are getsockopt events, and replay; old-style ones ($n) replay too"
