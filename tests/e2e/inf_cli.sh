#!/bin/sh
# inf_cli.sh: encore inf, cut and analyze on a real recording, two code paths against each
# other.  For the predicate `P: events >= k` (true from P's k-th event on), Inf is the least
# consistent cut containing that event, which `encore cut --after P:k` computes by another
# route; for a conjunction of two such predicates Inf is the least cut containing both
# events (`cut --after P:a,Q:b`).  Plus the errors a user can cause.
# Usage: inf_cli.sh ENCORE PROG   (PROG is e2e_calls: PROG REPORTDIR K)
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/inf_cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/reports"
"$encore" record -q -o "$tmp/s" --name calls -- "$prog" "$tmp/reports" 1 </dev/null >/dev/null
"$encore" dump --json "$tmp/s" > "$tmp/dump.json"

python3 - "$encore" "$tmp/s" "$tmp/dump.json" <<'PY'
import json, subprocess, sys
encore, session, dump = sys.argv[1:4]
doc = json.load(open(dump))
count = {p["name"]: len(p["events"]) for p in doc["processes"]}
names = sorted(count)

def run(*args):
    out = subprocess.run([encore] + list(args), capture_output=True, text=True)
    assert out.returncode == 0, (args, out.stderr)
    return json.loads(out.stdout)

checked = 0
for p in names:
    for k in sorted({1, 2, count[p] // 2, count[p]} - {0}):
        inf = run("inf", "--json", session, "%s: events >= %d" % (p, k))
        assert inf["kind"] == "conjunctive" and len(inf["cuts"]) == 1, inf
        cut = run("cut", "--json", session, "--after", "%s:%d" % (p, k))
        assert inf["cuts"][0] == cut["cut"], (p, k, inf, cut)
        assert inf["cuts"][0][p] == k
        checked += 1
p, q = names[0], names[1]
for a in (1, count[p] // 2, count[p]):
    for b in (1, count[q] // 2, count[q]):
        inf = run("inf", "--json", session, "%s: events >= %d && %s: events >= %d" % (p, a, q, b))
        cut = run("cut", "--json", session, "--after", "%s:%d,%s:%d" % (p, a, q, b))
        assert inf["cuts"] == [cut["cut"]], (a, b, inf, cut)
        checked += 1
# never true: an empty list, exit 0
inf = run("inf", "--json", session, "%s: events > %d" % (p, count[p]))
assert inf["cuts"] == [], inf
print("inf and cut agree on", checked, "predicates")
PY

# Errors: a predicate only replay can evaluate, a bad predicate, an unknown process.
if "$encore" inf "$tmp/s" 'calls: var.x == 1' 2> "$tmp/err"; then
    echo "FAIL: var. predicate accepted offline"; exit 1
fi
grep -q "encore replay" "$tmp/err" || { echo "FAIL: no pointer to replay"; cat "$tmp/err"; exit 1; }
set +e
"$encore" inf "$tmp/s" 'calls: recieved >= 1' 2> "$tmp/err"; rc=$?
set -e
[ "$rc" = 2 ] || { echo "FAIL: bad predicate exit $rc"; exit 1; }
grep -q "column 7" "$tmp/err" || { echo "FAIL: no column"; cat "$tmp/err"; exit 1; }
if "$encore" inf "$tmp/s" 'nosuch: events >= 1' 2> "$tmp/err"; then
    echo "FAIL: unknown process accepted"; exit 1
fi
grep -q "nosuch" "$tmp/err" || { echo "FAIL: unknown process not named"; cat "$tmp/err"; exit 1; }

# analyze: every receive that moved bytes (MSG_PEEK included) is linked to a recorded send.
"$encore" analyze "$tmp/s" > "$tmp/analyze.out"
recvs=$(python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
print(sum(1 for p in d['processes'] for e in p['events'] if e['kind']=='recv' and e['result']>0))" "$tmp/dump.json")
grep -q "messages *$recvs linked; 0 external receives; 0 unmatched" "$tmp/analyze.out" ||
    { echo "FAIL: analyze does not link the $recvs receives"; cat "$tmp/analyze.out"; exit 1; }
# analyze --json says the same: counts, one entry per process with the dump's event count
"$encore" analyze --json "$tmp/s" > "$tmp/analyze.json"
python3 -c "
import json,sys
a=json.load(open(sys.argv[1])); d=json.load(open(sys.argv[2])); recvs=int(sys.argv[3])
c=a['counts']
assert c['messages'] == recvs and c['unmatched_recvs'] == 0, c
assert c['processes'] == len(d['processes']) == len(a['processes']), c
assert {p['name']: p['events'] for p in a['processes']} == \
       {p['name']: len(p['events']) for p in d['processes']}, a['processes']
assert c['races'] >= len(a['races'])
" "$tmp/analyze.json" "$tmp/dump.json" "$recvs" ||
    { echo "FAIL: analyze --json disagrees"; cat "$tmp/analyze.json"; exit 1; }
# a mark key and a function that occur nowhere: P never holds, and a note names them
"$encore" inf "$tmp/s" "calls: mark.no_such_key >= 1 and in(no_such_function)" > "$tmp/o" 2> "$tmp/e" ||
    { echo "FAIL: inf with unknown names"; cat "$tmp/e"; exit 1; }
grep -q "never holds" "$tmp/o" && grep -q "mark.no_such_key, in(no_such_function): no such name" "$tmp/e" ||
    { echo "FAIL: no note for unknown names:"; cat "$tmp/o" "$tmp/e"; exit 1; }
echo ok
