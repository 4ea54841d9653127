#!/bin/sh
# export_chrome.sh: `encore export --format chrome` writes JSON that loads, with one track
# per process named by its logical name, one slice per event, and one flow (category
# "message") per message the analyzer linked, from the send's process to the receive's and
# never backwards in time.
# Usage: export_chrome.sh ENCORE PROG PROG_ARGS...
set -eu
encore=$1 prog=$2
shift 2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/export_chrome.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
set +e
"$encore" record -q -o "$tmp/s" -- "$prog" "$@" > "$tmp/out"
rc=$?
set -e
[ "$rc" -le 1 ] || { echo "FAIL: $prog exited with status $rc"; exit 1; }
"$encore" dump --json "$tmp/s" > "$tmp/dump.json"
"$encore" analyze "$tmp/s" > "$tmp/analyze.txt"
"$encore" export "$tmp/s" --format chrome -o "$tmp/trace.json"
python3 - "$tmp" <<'PY'
import json, re, sys
tmp = sys.argv[1]
def fail(msg):
    print('FAIL:', msg)
    sys.exit(1)
messages = int(re.search(r'messages\s+(\d+) linked', open(tmp + '/analyze.txt').read()).group(1))
dump = json.load(open(tmp + '/dump.json'))
procs = [p['name'] for p in dump['processes']]
trace = json.load(open(tmp + '/trace.json'))
ev = trace['traceEvents']
names = {e['pid']: e['args']['name'] for e in ev if e['ph'] == 'M' and e['name'] == 'process_name'}
if sorted(names.values()) != sorted(procs):
    fail(f'tracks {sorted(names.values())}, processes {sorted(procs)}')
for p in dump['processes']:
    pid = [k for k, v in names.items() if v == p['name']][0]
    slices = sorted((e for e in ev if e['ph'] == 'X' and e['pid'] == pid), key=lambda e: e['args']['index'])
    if [e['args']['index'] for e in slices] != list(range(1, len(p['events']) + 1)):
        fail(f'{p["name"]}: slices do not cover its {len(p["events"])} events once each')
    if [e['name'] for e in slices] != [x['kind'] for x in p['events']]:
        fail(f'{p["name"]}: slice names differ from the event kinds')
    for a, b in zip(slices, slices[1:]):
        if b['ts'] < a['ts'] + a['dur'] - 1e-9:
            fail(f'{p["name"]}: slices {a["args"]["index"]} and {b["args"]["index"]} overlap')
starts = {e['id']: e for e in ev if e['ph'] == 's' and e['cat'] == 'message'}
ends = {e['id']: e for e in ev if e['ph'] == 'f' and e['cat'] == 'message'}
n_s = sum(1 for e in ev if e['ph'] == 's' and e['cat'] == 'message')
if n_s != messages or len(starts) != messages or set(starts) != set(ends):
    fail(f'{n_s} message flows ({len(starts)} ids, {len(ends)} ends), encore analyze linked {messages}')
for i, s in starts.items():
    f = ends[i]
    if f['ts'] < s['ts'] or f.get('bp') != 'e':
        fail(f'flow {i} goes back in time or does not bind to its receive: {s} {f}')
print(f'{len(names)} tracks, {sum(1 for e in ev if e["ph"] == "X")} slices, {messages} message flows')
PY
