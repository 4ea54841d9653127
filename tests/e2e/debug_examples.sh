#!/bin/sh
# debug_examples.sh: `encore debug --json` on every example (token ring, two-phase commit,
# RPC chain, pipeline; TCP, pipes, forks): `continue` halts where `encore inf` says, a step
# of one process keeps the state consistent (`encore cut --after`), `restart` then
# `continue` halts there again, and what the programs print goes to `output`, never to the
# console (stdout holds one JSON line per command, nothing else).
# Usage: debug_examples.sh ENCORE BUILD_EXAMPLES_DIR
set -eu
encore=$1 ex=$2
command -v python3 > /dev/null || { echo "SKIP: no python3"; exit 77; }
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/debug_ex.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

while read -r prog step pred; do
    "$encore" record -q -o "$tmp/$prog" -- "$ex/$prog" --bug --seed 7 > /dev/null 2>&1 || true
    "$encore" inf --json "$tmp/$prog" "$pred" > "$tmp/inf"
    printf 'stop %s\ncontinue\nstep %s\nrestart\ncontinue\noutput %s\nquit\n' "$pred" "$step" "$prog" |
        "$encore" debug --json --stall-timeout 60 "$tmp/$prog" > "$tmp/out" 2> "$tmp/err" || {
        echo "FAIL: $prog: debug:"; cat "$tmp/err"; exit 1; }
    python3 - "$encore" "$tmp/$prog" "$tmp/inf" "$tmp/out" "$prog" "$step" <<'PY' || exit 1
import json, subprocess, sys
encore, sess, inf, out, prog, step = sys.argv[1:7]
want = json.load(open(inf))["cuts"][0]
a = [json.loads(l) for l in open(out)]
assert len(a) == 7, ("one answer per command", len(a), open(out).read()[:2000])
assert all(x["ok"] for x in a), a
assert a[1]["cuts"][0] == want, ("continue", a[1]["cuts"][0], "inf", want)
c, s = a[1]["cuts"][0], a[2]["cuts"][0]
assert s[step] == c[step] + 1, ("step", step, c, s)
refs = ",".join("%s:%d" % (p, k) for p, k in s.items() if k)
closed = json.loads(subprocess.run([encore, "cut", "--json", sess, "--after", refs],
                                   capture_output=True, text=True, check=True).stdout)["cut"]
assert all(closed.get(p, 0) == k for p, k in s.items()), ("inconsistent", s, closed)
assert a[4]["cuts"][0] == want, ("restart + continue", a[4]["cuts"][0], want)
assert isinstance(a[5]["output"], str), a[5]
print("ok: %s: %s" % (prog, want))
PY
done <<LIST
ring ring.2 ring.1: mark.holding == 1 && ring.2: received >= 2
tpc tpc.1 tpc: mark.decision >= 1 && tpc.2: sent >= 2
rpc rpc.1 rpc.2: received >= 2 && rpc: sent >= 2
pipeline pipeline.2 pipeline.3: received >= 3 && pipeline.1: sent >= 2
LIST
