#!/bin/sh
# sql_stable.sh: the stability tables of the SQL schema (site_node, pre_set, post_set) hold
# exactly the nodes and PRE/POST1/POST2 sets `encore stable DIR --sets --json` prints, for a
# recorded token ring.
# Usage: sql_stable.sh ENCORE RING
set -eu
encore=$1 ring=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/sql_stable.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$encore" record -q -o "$tmp/s" -- "$ring" --seed 7 </dev/null >/dev/null 2>&1 || true
"$encore" stable "$tmp/s" --sets --json > "$tmp/sets.json"
"$encore" sql --json "$tmp/s" "SELECT id, process, kind, function, site, seen FROM site_node ORDER BY id" > "$tmp/nodes.json"
"$encore" sql --json "$tmp/s" "SELECT node, member FROM pre_set ORDER BY node, member" > "$tmp/pre.json"
"$encore" sql --json "$tmp/s" "SELECT node, member, kind FROM post_set ORDER BY node, member" > "$tmp/post.json"
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
sets = json.load(open(d + "/sets.json"))
def rows(name):
    doc = json.load(open(d + "/" + name))
    return doc if isinstance(doc, list) else doc["rows"]
nodes = rows("nodes.json")
assert len(nodes) == len(sets["nodes"]) > 0, (len(nodes), len(sets["nodes"]))
for row, n in zip(nodes, sets["nodes"]):
    assert row["id"] == n["id"] and row["process"] == n["process"], (row, n)
    assert row["kind"] == n["kind"] and row["site"] == n["site"] and row["seen"] == n["seen"], (row, n)
pre = {(r["node"], r["member"]) for r in rows("pre.json")}
want = {(n["id"], m) for n in sets["nodes"] for m in n["pre"]}
assert pre == want, (sorted(pre ^ want))
post = {(r["node"], r["member"], r["kind"]) for r in rows("post.json")}
want = {(n["id"], m, k) for n in sets["nodes"] for k in ("post1", "post2") for m in n[k]}
assert post == want, (sorted(post ^ want))
assert post, "a token ring has POST sets"
print("sql stability tables agree:", len(nodes), "nodes,", len(pre), "pre,", len(post), "post")
PY
