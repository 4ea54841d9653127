#!/bin/sh
# export_shiviz.sh: `encore export --format shiviz` writes a log ShiViz can parse (its regex
# on line 1, an empty delimiter on line 2, then "HOST {clock}" / description pairs), and the
# vector clocks round-trip: parsed back, each host's own entry counts its events 1, 2, 3...,
# and the clock of every event equals its causal past as the analyzer computes it
# (`encore cut --after PROC:K`, the least consistent cut containing the event), so the
# clocks order two events exactly when the analyzer says one happened before the other.
# Usage: export_shiviz.sh ENCORE PROG PROG_ARGS...
set -eu
encore=$1 prog=$2
shift 2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/export_shiviz.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
set +e
"$encore" record -q -o "$tmp/s" -- "$prog" "$@" > "$tmp/out"
rc=$?
set -e
[ "$rc" -le 1 ] || { echo "FAIL: $prog exited with status $rc"; exit 1; }
"$encore" dump --json "$tmp/s" > "$tmp/dump.json"
"$encore" export "$tmp/s" --format shiviz -o "$tmp/run.log"
python3 - "$tmp" "$encore" <<'PY'
import json, re, subprocess, sys
tmp, encore = sys.argv[1], sys.argv[2]
def fail(msg):
    print('FAIL:', msg)
    sys.exit(1)
dump = json.load(open(tmp + '/dump.json'))
nevents = {p['name']: len(p['events']) for p in dump['processes']}
lines = open(tmp + '/run.log').read().split('\n')
if lines[0] != r'(?<host>\S*) (?<clock>{.*})\n(?<event>.*)' or lines[1] != '':
    fail(f'header lines: {lines[:2]}')
# ShiViz's regex, in Python's spelling, over the rest of the log.
body = '\n'.join(lines[2:])
pat = re.compile(r'(?P<host>\S*) (?P<clock>{.*})\n(?P<event>.*)')
clocks = {}
count = {h: 0 for h in nevents}
for m in pat.finditer(body):
    host, clock = m.group('host'), json.loads(m.group('clock'))
    if host not in nevents:
        fail(f'unknown host {host}')
    count[host] += 1
    if clock.get(host) != count[host]:
        fail(f'{host}: event {count[host]} has own clock entry {clock.get(host)}')
    k = int(m.group('event').split(' ')[0].lstrip('#'))
    if k != count[host]:
        fail(f'{host}: event {count[host]} described as #{k}')
    clocks[(host, k)] = clock
if count != nevents:
    fail(f'events per host {count}, in the traces {nevents}')
# Round trip against the analyzer: a sample of events of every host (all of a small run).
for host, n in nevents.items():
    step = max(1, n // 25)
    for k in sorted(set(list(range(1, n + 1, step)) + [n])):
        out = subprocess.run([encore, 'cut', '--json', tmp + '/s', '--after', f'{host}:{k}'],
                             check=True, capture_output=True, text=True).stdout
        cut = {p: c for p, c in json.loads(out)['cut'].items() if c}
        if cut != clocks[(host, k)]:
            fail(f'{host} event {k}: vector clock {clocks[(host, k)]}, causal past {cut}')
# Happened-before read from the clocks is a partial order consistent with program order.
def hb(a, b):
    ca, cb = clocks[a], clocks[b]
    return a != b and all(cb.get(h, 0) >= v for h, v in ca.items())
keys = sorted(clocks)
for a in keys[::7]:
    for b in keys[::11]:
        if hb(a, b) and hb(b, a):
            fail(f'{a} and {b} each happened before the other')
print(f'{sum(count.values())} events on {len(count)} hosts; clocks equal the causal past')
PY
