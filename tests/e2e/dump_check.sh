#!/bin/sh
# dump_check.sh: `encore dump` and `encore check` on a real recording.
#   1. dump --json is one JSON document whose processes and events agree with what `encore
#      check` counts, with indices 1..n in order and derived byte offsets that add up per
#      channel direction;
#   2. the text dump names every process;
#   3. a trace with a corrupted chunk: check and dump exit 1 and name the file and offset;
#      a file that is not a trace is refused by name.
# Usage: dump_check.sh ENCORE PROG   (PROG is e2e_calls: PROG REPORTDIR K)
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/dump_check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/reports"
"$encore" record -q -o "$tmp/s" --name calls -- "$prog" "$tmp/reports" 1 </dev/null >/dev/null

"$encore" check "$tmp/s" > "$tmp/check.out"
"$encore" dump --json "$tmp/s" > "$tmp/dump.json"
"$encore" dump "$tmp/s" > "$tmp/dump.txt"
python3 - "$tmp/check.out" "$tmp/dump.json" "$tmp/dump.txt" <<'PY'
import json, re, sys
check, dump, text = sys.argv[1:4]
counts = {}
for line in open(check):
    m = re.search(r"process (\S+) image \d+: (\d+) events, closed, ok$", line)
    assert m, "check did not say ok: " + line
    counts[m.group(1)] = counts.get(m.group(1), 0) + int(m.group(2))
doc = json.load(open(dump))
names = [p["name"] for p in doc["processes"]]
assert names == sorted(counts), (names, counts)
assert len(names) >= 2, names
for p in doc["processes"]:
    ev = p["events"]
    assert len(ev) == counts[p["name"]], (p["name"], len(ev), counts[p["name"]])
    assert [e["index"] for e in ev] == list(range(1, len(ev) + 1)), p["name"]
    assert isinstance(p["pid"], int) and p["pid"] > 0 and p["host"]
    # derived offsets: each send/recv starts where the previous one on that direction ended
    # (channels inherited at fork start from the parent's counts, so check from the
    # second event of each direction on)
    last = {}
    for e in ev:
        if e["kind"] not in ("send", "recv") or not e["channel"]:
            continue
        key = (e["kind"], e["channel"])
        if key in last:
            assert e["offset"] == last[key], (p["name"], e)
        peek = e["flags"] & 1
        last[key] = e["offset"] + (e["result"] if e["result"] > 0 and not peek else 0)
    kinds = {e["kind"] for e in ev}
    assert "unknown" not in kinds, kinds
txt = open(text).read()
for n in names:
    assert ("process " + n + " ") in txt, n
print("dump and check agree on", sum(counts.values()), "events in", len(names), "processes")
PY

# Event indices run on across exec'd images, failed execs included: the shell tries each
# PATH entry (the first two do not exist), env then execs true.
PATH="$tmp/nope1:$tmp/nope2:$PATH" "$encore" record -q -o "$tmp/chain" --name chain -- \
    sh -c 'exec env true' </dev/null
"$encore" dump --json "$tmp/chain" > "$tmp/chain.json"
python3 - "$tmp/chain.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]
idx = [e["index"] for e in p["events"]]
assert idx == list(range(1, len(idx) + 1)), idx
kinds = [e["kind"] for e in p["events"]]
assert kinds.count("exec") >= 4 and kinds[-1] == "exit", kinds
PY

# Corrupt a chunk of the root's trace: the first chunk starts at chunks_off (header bytes
# 32..39); invert a byte in the middle of its payload (48-byte chunk header, comp_len at 8),
# so that the change cannot be a no-op or land past the payload.
f="$tmp/s/calls.trace"
python3 - "$f" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
off = struct.unpack_from('<Q', b, 32)[0]
assert struct.unpack_from('<I', b, off)[0] == 0x4b484345, "no chunk at chunks_off"
comp = struct.unpack_from('<I', b, off + 8)[0]
b[off + 48 + comp // 2] ^= 0xff
open(sys.argv[1], 'r+b').write(b)
PY
if "$encore" check "$tmp/s" > "$tmp/check2.out" 2>&1; then
    echo "FAIL: check passed a corrupted trace"; cat "$tmp/check2.out"; exit 1
fi
grep -q "calls.trace.*DAMAGED at offset" "$tmp/check2.out" ||
    { echo "FAIL: check did not name the damage"; cat "$tmp/check2.out"; exit 1; }
if "$encore" dump "$tmp/s" > /dev/null 2> "$tmp/dump2.err"; then
    echo "FAIL: dump exited 0 on a corrupted trace"; exit 1
fi
grep -q "calls.trace: offset [0-9]*:" "$tmp/dump2.err" ||
    { echo "FAIL: dump did not name file and offset"; cat "$tmp/dump2.err"; exit 1; }

echo "not a trace" > "$tmp/junk.trace"
if "$encore" dump "$tmp/junk.trace" > /dev/null 2> "$tmp/junk.err"; then
    echo "FAIL: dump accepted junk"; exit 1
fi
grep -q "junk.trace.*not an encore trace" "$tmp/junk.err" ||
    { echo "FAIL: junk not refused by name"; cat "$tmp/junk.err"; exit 1; }
echo "ok"
