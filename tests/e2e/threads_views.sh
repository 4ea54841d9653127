#!/bin/sh
# threads_views.sh: the outputs that show a session show each event's thread, and the same
# one `encore dump --json` gives it (schemas/json.md): `analyze --json` (a process's thread
# count, each race's threads), `export --format chrome` (one track per thread: tid is the
# thread index) and `show` (SVG labels "tN " in a process with threads).  The session is a
# thread pool (tests/e2e/progs/threads.c), whose events come from four threads.
# Usage: threads_views.sh ENCORE THREADS_PROG
set -eu
encore=$1 prog=$2
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/threads_views.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$encore" record -q -o "$tmp/s" --name thr -- "$prog" pool 3 5 3 2> "$tmp/rec.err" |
    cat > /dev/null
"$encore" dump --json "$tmp/s" > "$tmp/dump.json"
"$encore" analyze --json "$tmp/s" > "$tmp/analyze.json" 2> /dev/null
"$encore" export "$tmp/s" --format chrome -o "$tmp/chrome.json" 2> /dev/null
"$encore" show "$tmp/s" --svg "$tmp/s.svg" > /dev/null 2>&1
python3 - "$tmp" <<'PY'
import collections, json, re, sys
tmp = sys.argv[1]
dump = json.load(open(tmp + "/dump.json"))
ana = json.load(open(tmp + "/analyze.json"))
chrome = json.load(open(tmp + "/chrome.json"))
svg = open(tmp + "/s.svg").read()

per = {p["name"]: collections.Counter(e["thread"] for e in p["events"])
       for p in dump["processes"]}
ev_thread = {(p["name"], e["index"]): e["thread"] for p in dump["processes"]
             for e in p["events"]}
assert len(per["thr"]) >= 3, ("the pool's events come from one thread?", per["thr"])

# analyze --json: threads = 1 + the highest thread; each race's events' threads
for p in ana["processes"]:
    assert p["threads"] == 1 + max(per[p["name"]]), (p, per[p["name"]])
assert ana["races"], "no race to check"
for r in ana["races"]:
    for ref, key in (("recv", "recv_thread"), ("src", "src_thread"), ("rival", "rival_thread")):
        name, idx = r[ref].rsplit(":", 1)
        assert r[key] == ev_thread[(name, int(idx))], (r, key)

# chrome: the slices of each process, per tid, are its events of that thread
events = chrome["traceEvents"] if isinstance(chrome, dict) else chrome
pid_of = {e["args"]["name"]: e["pid"] for e in events
          if e.get("ph") == "M" and e.get("name") == "process_name"}
for name, want in per.items():
    got = collections.Counter(e["tid"] for e in events
                              if e.get("ph") == "X" and e["pid"] == pid_of[name])
    assert got == want, (name, got, want)
names = {(e["pid"], e["tid"]) for e in events
         if e.get("ph") == "M" and e.get("name") == "thread_name"}
for t in per["thr"]:
    assert (pid_of["thr"], t) in names, ("no track name for thread", t)

# show: in the process with threads every label says its thread, as many as it has events
got = collections.Counter(int(t) for t in re.findall(r'class="label"[^>]*>t(\d+) ', svg))
assert got == per["thr"], (got, per["thr"])
print("ok: threads", dict(per["thr"]))
PY
