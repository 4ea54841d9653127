#!/bin/sh
# json_fields.sh: every `--json` output against its table in schemas/json.md.  On a
# recording of the pipeline example (and of the two-phase commit, for `stable`), runs dump,
# analyze, inf, cut, stable, stable --sets, replay and sql with --json, and checks each
# document key by key against the document: every key the output has is documented, every
# key the document does not call optional is there, with the documented type.  Then the
# contract the tools rely on: `replay --cut` halts at the cut `inf --json` printed, and
# accepts a bare cut object (`cut --json`'s `ariadne`) on stdin.
# (The pipeline talks over socket pairs only: its replay cannot find a recorded TCP port
# still taken by the recorded run's connections in TIME_WAIT.)
# Usage: json_fields.sh ENCORE PIPELINE TPC JSON_MD
set -eu
encore=$1 pipeline=$2 tpc=$3 doc=$4
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/json_fields.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

python3 - "$encore" "$tmp" "$doc" "$pipeline" "$tpc" <<'PY'
import json, re, subprocess, sys
encore, tmp, doc, pipeline_exe, tpc_exe = sys.argv[1:6]
pipe, tpc = tmp + "/pipeline", tmp + "/tpc"

# Recorded from here, as the replays below are started: a replayed process must find the
# descriptors its recorded run inherited (only 0, 1 and 2 from a python3 subprocess).
for exe, out in ((pipeline_exe, pipe), (tpc_exe, tpc)):
    r = subprocess.run([encore, "record", "-q", "-o", out, "--", exe, "--seed", "1"],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    assert r.returncode in (0, 1), (exe, r.returncode)  # 1: the example's bug showed

# --- the document: one table per `### `encore ...`` heading ---------------------------
spec, section = {}, None
text = open(doc).read()
for line in text.splitlines():
    m = re.match(r"### `([^`]+)`", line)
    if m:
        section = m.group(1)
        spec[section] = {}
        continue
    if line.startswith("## "):
        section = None
    m = re.match(r"\| `([^`]+)` \| ([^|]+) \|", line)
    if section and m:
        spec[section][m.group(1)] = m.group(2).strip()
m = re.search(r"A `node` is a DCFG node: `\{([^}]*)\}`", text)
assert m, "json.md: no definition of a node"
node_keys = set(re.findall(r'"(\w+)"', m.group(1)))
for want in ("encore dump --json", "encore analyze --json", "encore inf --json",
             "encore cut --json", "encore stable --json", "encore stable --sets --json",
             "encore replay --json", "encore sql --json"):
    assert want in spec, "json.md has no section for " + want

def run(*args):
    out = subprocess.run([encore] + list(args), capture_output=True, text=True,
                         stdin=subprocess.DEVNULL)
    assert out.returncode == 0, (args, out.returncode, out.stderr)
    # stdout is the document alone (replay --json sends the programs' output to stderr)
    assert out.stdout.endswith("\n"), (args, "no newline at the end")
    return json.loads(out.stdout)

# --- one document against one table ----------------------------------------------------
TYPES = {"integer": int, "string": str, "boolean": bool, "array": list, "object": dict,
         "number": (int, float), "cut": dict, "map": dict, "node": dict}

def parent(path):
    return path.rsplit(".", 1)[0] if "." in path else ""

def check(section, value):
    table, seen = spec[section], set()
    def typed(path, v):
        t = table[path]
        if v is None:
            assert "or null" in t, (section, path, "is null")
            return False
        base = t.split(",")[0].split(" or ")[0].strip()
        want = TYPES[base]
        ok = isinstance(v, want) and not (want in (int, (int, float)) and isinstance(v, bool))
        assert ok, (section, path, "should be", base, v)
        if base == "cut":
            assert all(isinstance(x, int) for x in v.values()), (section, path, v)
        if base == "node":
            assert set(v) == node_keys, (section, path, "node keys", sorted(v))
        return base in ("object", "array")
    def walk(prefix, obj):
        assert isinstance(obj, dict), (section, prefix, obj)
        for k, v in obj.items():
            path = prefix + "." + k if prefix else k
            assert path in table, (section, "undocumented key", path)
            seen.add(path)
            if not typed(path, v):
                continue
            if isinstance(v, dict):
                walk(path, v)
            elif any(p.startswith(path + "[].") for p in table):
                for el in v:
                    walk(path + "[]", el)
        for path, t in table.items():
            if parent(path) == prefix and "optional" not in t:
                assert path.rsplit(".", 1)[-1] in obj, (section, "missing", path)
    walk("", value)
    return seen

covered = {s: set() for s in spec}
def doc_of(section, *args, **kw):
    v = run(*args, **kw)
    covered[section] |= check(section, v)
    return v

# --- every output ----------------------------------------------------------------------
d = doc_of("encore dump --json", "dump", "--json", pipe)
assert len(d["processes"]) >= 3 and all(p["events"] for p in d["processes"]), d["processes"]
doc_of("encore dump --json", "dump", "--json", "--limit", "3", pipe + "/pipeline.1.trace")
names = [p["name"] for p in d["processes"]]
count = {p["name"]: len(p["events"]) for p in d["processes"]}

a = doc_of("encore analyze --json", "analyze", "--json", pipe)
assert [p["name"] for p in a["processes"]] == names

p1, p2 = "pipeline.1", "pipeline.2"
pred = "%s: events >= 5 && %s: events >= 5" % (p1, p2)
inf = doc_of("encore inf --json", "inf", "--json", pipe, pred)
assert inf["kind"] == "conjunctive" and len(inf["cuts"]) == 1, inf
assert set(inf["cuts"][0]) == set(names), inf
doc_of("encore inf --json", "inf", "--json", pipe, "%s: exited || %s: exited" % (p1, p2))
never = doc_of("encore inf --json", "inf", "--json", pipe, "%s: events > %d" % (p1, count[p1]))
assert never["cuts"] == [], never

after = doc_of("encore cut --json", "cut", "--json", pipe, "--after", "%s:5" % p1)
before = doc_of("encore cut --json", "cut", "--json", pipe, "--before", "%s:5,%s:5" % (p1, p2))
for c in (after, before):
    roles = c["core"] + c["influence"] + c["other"]
    assert sorted(roles) == sorted(names), c

st = doc_of("encore stable --json", "stable", "--json", "--context", tpc,
            "tpc.1: mark.vote == 1 == tpc.2: mark.vote == 1")
assert st["points"], "no recognition point on tpc with --context"
sets = doc_of("encore stable --sets --json", "stable", "--json", tpc, "--sets")
assert [n["id"] for n in sets["nodes"]] == list(range(len(sets["nodes"])))

rp = doc_of("encore replay --json", "replay", "--json", "--then", "kill", "--stop", pred, pipe)
assert rp["cuts"] == inf["cuts"], (rp["cuts"], inf["cuts"])
assert [p["name"] for p in rp["processes"]] == names
assert rp["processes"][names.index(p1)]["terms"] == {"events": 5}, rp["processes"]

# --- what the tools rely on: replay --cut reads these ----------------------------------
open(tmp + "/inf.json", "w").write(json.dumps(inf))
rc = doc_of("encore replay --json", "replay", "--json", "--then", "kill", "--cut",
            tmp + "/inf.json", pipe)
assert rc["cuts"] == inf["cuts"] and "predicate" not in rc, rc
out = subprocess.run([encore, "replay", "--json", "--then", "kill", "--cut", "-", pipe],
                     input=json.dumps(before["ariadne"], indent=2), capture_output=True,
                     text=True)
assert out.returncode == 0, out.stderr
assert json.loads(out.stdout.splitlines()[-1])["cuts"] == [before["ariadne"]], out.stdout

# --- sql: one array per statement, keys = the columns ---------------------------------
out = subprocess.run([encore, "sql", "--json", pipe,
                      "SELECT name, pid, NULL AS z, x'00ff' AS b FROM process ORDER BY name; "
                      "SELECT count(*) AS n FROM event WHERE 0"], capture_output=True, text=True)
assert out.returncode == 0, out.stderr
dec, pos, arrays = json.JSONDecoder(), 0, []
while out.stdout[pos:].strip():
    while out.stdout[pos].isspace():
        pos += 1
    v, pos = dec.raw_decode(out.stdout, pos)
    arrays.append(v)
assert len(arrays) == 2, arrays
assert [r["name"] for r in arrays[0]] == sorted(names), arrays[0]
assert all(set(r) == {"name", "pid", "z", "b"} and r["z"] is None and r["b"] == "00ff" and
           isinstance(r["pid"], int) for r in arrays[0]), arrays[0]
assert arrays[1] == [{"n": 0}], arrays[1]

# --- every documented key that is not optional was seen --------------------------------
missed = []
for s, table in spec.items():
    for path, t in table.items():
        chain, opt = path, False
        while chain:
            if "optional" in table.get(chain, "") or "or null" in table.get(chain, ""):
                opt = True
            chain = parent(chain)
        if not opt and path not in covered[s]:
            missed.append((s, path))
assert not missed, ("documented but never produced", missed)
print("json.md: %d keys in %d outputs checked against the real output" %
      (sum(len(c) for c in covered.values()), len(spec)))
PY
echo ok
