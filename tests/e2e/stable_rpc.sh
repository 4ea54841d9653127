#!/bin/sh
# stable_rpc.sh: `encore stable` on a recorded RPC program whose stable points are
# known (progs/stable_rpc.c: client rpc, server rpc.1, logger rpc.2).
#   1. `rpc: sent(rpc.1) == received(rpc.1) + 1 == rpc.1: received == 2` (the client waits
#      for its 2nd reply while the server holds its 2nd request) has exactly one valid
#      recognition point: the server just after its receive in serve(), dependent monotonic,
#      pre client_call's send -> serve's receive, post serve's send -> client_call's receive;
#      in the run it is recognised at the server's 2nd receive and both parts are stable
#      (the client's window is the single state after its 2nd request).
#   2. with the logger (a pipeline sink) instead of the client there is no valid point and
#      neither part is stable;
#   3. monotonic parts need only the pre-recognition interaction (the logger is a point);
#   4. the same when the server execs itself first (its sites come from its second trace
#      file, whose site ids start again at 1);
#   5. --sets, --also (two recordings, one DCFG), --help and the user's errors.
# The recorded event numbers are read back from `encore dump --json`, never hard-coded.
# Usage: stable_rpc.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/stable_rpc.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$encore" record -q -o "$tmp/r3" --name rpc -- "$prog" 3 </dev/null
"$encore" record -q -o "$tmp/r1" --name rpc -- "$prog" 1 </dev/null
"$encore" record -q -o "$tmp/rx" --name rpc -- "$prog" 3 exec </dev/null
"$encore" dump --json "$tmp/r3" > "$tmp/dump.json"
"$encore" dump --json "$tmp/rx" > "$tmp/dumpx.json"

SE1='rpc: sent(rpc.1) == received(rpc.1) + 1 == rpc.1: received == 2'
SE2='rpc.2: received == 1 == rpc.1: received == 2'
SE3='rpc: sent(rpc.1) >= 2 == rpc.2: received >= 1'
"$encore" stable --json "$tmp/r3" "$SE1" > "$tmp/se1.json"
"$encore" stable --json "$tmp/r3" "$SE2" > "$tmp/se2.json"
"$encore" stable --json "$tmp/r3" "$SE3" > "$tmp/se3.json"
"$encore" stable --json --also "$tmp/r1" "$tmp/r3" "$SE1" > "$tmp/se1m.json"
"$encore" stable --json "$tmp/rx" "$SE1" > "$tmp/se1x.json"
"$encore" stable --json --by-peer "$tmp/r3" "$SE1" > "$tmp/se1p.json"
"$encore" stable --json "$tmp/r3" --sets > "$tmp/sets.json"

python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
load = lambda n: json.load(open(f"{tmp}/{n}"))
def events_of(dumpfile):
    return {p["name"]: p["events"] for p in load(dumpfile)["processes"]}
ev = events_of("dump.json")

def nth(proc, kind, fn, k):
    """index of the k-th (1-based) event of kind in function fn of proc"""
    # (the compiler may name a clone of full_read "full_read.constprop.0")
    hits = [e["index"] for e in ev[proc] if e["kind"] == kind and e["result"] > 0
            and (e["function"] == fn or e["function"].startswith(fn + "."))]
    return hits[k - 1]

def check_se1(doc, nrec):
    assert doc["dcfg"] == {"processes": 3, "nodes": 12, "messages": 3, "recordings": nrec}, doc["dcfg"]
    assert [c["monotonic"] for c in doc["components"]] == [False, False]
    pts = doc["points"]
    assert len(pts) == 1, pts
    p = pts[0]
    assert p["process"] == "rpc.1" and p["class"] == "dependent monotonic", p
    assert p["after"]["kind"] == "recv" and " < serve+" in p["after"]["site"], p["after"]
    c, s = p["components"]
    assert c["class"] == "dependent monotonic" and s["class"] == "local" and s["pre"] is None
    assert c["pre"]["send"]["function"] == "client_call" and c["pre"]["send"]["process"] == "rpc"
    assert c["pre"]["recv"]["id"] == p["after"]["id"]
    assert c["post"]["send"]["function"] == "serve" and c["post"]["send"]["process"] == "rpc.1"
    assert c["post"]["recv"]["process"] == "rpc" and " < client_call+" in c["post"]["recv"]["site"]
    assert c["post"]["send_guarantees_recv"] and c["post"]["send_postdominates_p"]

d = load("se1.json")
check_se1(d, 1)
run = d["run"]
call2 = nth("rpc", "send", "client_call", 2)
req2 = nth("rpc.1", "recv", "full_read", 2)
assert run["holds"] and run["cut"]["rpc"] == call2 and run["cut"]["rpc.1"] == req2, run
assert run["recognized"] == {"point": 0, "process": "rpc.1", "event": req2}, run
c, s = run["components"]
# the client is blocked for the 2nd reply: one state, and it shows the event
assert c["process"] == "rpc" and c["lo"] == c["hi"] == call2 and c["stable"], c
assert s["process"] == "rpc.1" and s["lo"] == s["hi"] == req2 and s["stable"], s

# through exec: the server's second image; same point, same stability
x = load("se1x.json")
check_se1(x, 1)
assert [e["kind"] for e in events_of("dumpx.json")["rpc.1"]].count("exec") == 1
saved, ev = ev, events_of("dumpx.json")
req2x = nth("rpc.1", "recv", "full_read", 2)
assert x["run"]["recognized"]["event"] == req2x and x["run"]["cut"]["rpc.1"] == req2x, x["run"]
assert [c["stable"] for c in x["run"]["components"]] == [True, True], x["run"]
ev = saved

# split by peer: each site here talks to one process, so the same point, sites named so
p = load("se1p.json")
check_se1(p, 1)
assert p["points"][0]["after"]["site"].endswith(" <- rpc"), p["points"][0]["after"]
assert p["points"][0]["components"][0]["post"]["send"]["site"].endswith(" -> rpc")
assert p["run"] == load("se1.json")["run"]

# two recordings merge into the same graph and give the same point
m = load("se1m.json")
check_se1(m, 2)
assert m["run"] == run, (m["run"], run)

d = load("se2.json")
assert d["points"] == [] and d["run"]["holds"] and d["run"]["recognized"] is None, d
assert [c["stable"] for c in d["run"]["components"]] == [False, False], d["run"]
assert d["run"]["components"][0]["true_through"] == nth("rpc.2", "recv", "full_read", 1)

d = load("se3.json")
assert [c["monotonic"] for c in d["components"]] == [True, True]
assert len(d["points"]) == 1 and d["points"][0]["process"] == "rpc.2", d["points"]
assert d["points"][0]["class"] == "monotonic"
assert d["points"][0]["components"][0]["pre"]["send"]["function"] == "log_done"
assert d["points"][0]["components"][0]["post"] is None
assert [c["stable"] for c in d["run"]["components"]] == [True, True], d["run"]

# --sets: PRE and POST of the sites, against what the program does
sets = load("sets.json")
node = {}
for n in sets["nodes"]:
    node[(n["process"], n["kind"], n["function"] if n["kind"] != "recv"
          else n["site"].split(" < ")[1].split("+")[0])] = n
call = node[("rpc", "send", "client_call")]
reply = node[("rpc", "recv", "client_call")]
note = node[("rpc", "send", "log_done")]
req = node[("rpc.1", "recv", "serve")]
resp = node[("rpc.1", "send", "serve")]
log = node[("rpc.2", "recv", "logger")]
assert call["id"] in req["pre"] and resp["id"] in reply["pre"]
assert call["id"] not in reply["pre"]                     # own sends are excluded
# call -> req ~> resp -> reply ~> note -> log visits rpc twice: call is not in PRE(log)
assert set(log["pre"]) == {resp["id"], note["id"]}, log["pre"]
assert resp["id"] in reply["post1"] and reply["id"] in resp["post2"]
assert req["id"] in call["post2"] and log["id"] in call["post2"]
assert reply["id"] in call["pdom"] and note["id"] in reply["pdom"]
print("stable_rpc: json checks passed")
PY

# the text form says the same
"$encore" stable "$tmp/r3" "$SE1" > "$tmp/se1.txt"
grep -q '^valid recognition points: 1$' "$tmp/se1.txt"
grep -q '1\. rpc\.1, just after #[0-9]* recv in full_read[.a-z0-9]* < serve (rpc\.1): dependent monotonic' "$tmp/se1.txt"
grep -q 'pre  #[0-9]* send in client_call < main (rpc) -> #[0-9]* recv in full_read[.a-z0-9]* < serve (rpc\.1)' "$tmp/se1.txt"
[ "$(grep -c ': stable$' "$tmp/se1.txt")" = 2 ]
"$encore" stable "$tmp/r3" "$SE2" > "$tmp/se2.txt"
grep -q '^valid recognition points: 0$' "$tmp/se2.txt"
grep -q '^  rpc\.2: none of its sends reaches another process' "$tmp/se2.txt"
[ "$(grep -c ': NOT stable$' "$tmp/se2.txt")" = 2 ]
"$encore" stable "$tmp/r3" --sets | grep -q '^    POST2 {'

# help and errors
"$encore" stable --help | grep -q '^SYNOPSIS'
set +e
"$encore" stable "$tmp/r3" 'rpc: sent == 1' 2> "$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q 'at least two parts' "$tmp/err" || { echo "FAIL: one part: $rc"; cat "$tmp/err"; exit 1; }
"$encore" stable "$tmp/r3" 'rpc: sent == 1 == nobody: exited' 2> "$tmp/err"; rc=$?
[ $rc = 1 ] && grep -q 'nobody' "$tmp/err" || { echo "FAIL: unknown process: $rc"; cat "$tmp/err"; exit 1; }
"$encore" stable "$tmp/r3" 'rpc: var.x == 1 == rpc.1: sent >= 1' > "$tmp/out" 2> "$tmp/err"; rc=$?
grep -q 'not checked: a part reads var' "$tmp/out" || { echo "FAIL: var not said"; cat "$tmp/out"; exit 1; }
[ $rc = 0 ] || { echo "FAIL: var: $rc"; cat "$tmp/err"; exit 1; }
"$encore" stable "$tmp/nonexistent" --sets 2> "$tmp/err"; rc=$?
[ $rc = 1 ] || { echo "FAIL: missing dir: $rc"; exit 1; }
"$encore" stable "$tmp/r3" 2> "$tmp/err"; rc=$?
[ $rc = 2 ] || { echo "FAIL: no event: $rc"; exit 1; }
set -e
echo "stable_rpc: ok"
