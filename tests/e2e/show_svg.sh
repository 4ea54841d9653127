#!/bin/sh
# show_svg.sh: `encore show` draws a recording of an example as well-formed SVG with one
# process line per recorded process, one arrow per message the analyzer linked, one dot per
# event, every arrow pointing down (logical time), and with --stop one cut line per Inf(P)
# cut, placed between the right events.
# Usage: show_svg.sh ENCORE PROG PROG_ARGS...   (PROG: an example; ring predicates are used
# when it reports a ring bug, a single-process predicate otherwise)
set -eu
encore=$1 prog=$2
shift 2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/show_svg.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

set +e
"$encore" record -q -o "$tmp/s" -- "$prog" "$@" > "$tmp/out"
rc=$?
set -e
[ "$rc" -le 1 ] || fail "$prog exited with status $rc"
"$encore" dump --json "$tmp/s" > "$tmp/dump.json"
"$encore" analyze "$tmp/s" > "$tmp/analyze.txt"
messages=$(sed -n 's/^ *messages *\([0-9]*\) linked.*/\1/p' "$tmp/analyze.txt")
[ -n "$messages" ] || fail "no message count in: $(cat "$tmp/analyze.txt")"

# A predicate that holds somewhere: the program's own bug report when it names two
# processes (the token ring), else the first receive of a process that receives.
root=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["processes"][0]["name"])' "$tmp/dump.json")
receiver=$(python3 -c '
import json, sys
for p in json.load(open(sys.argv[1]))["processes"]:
    if any(e["kind"] == "recv" and e["result"] > 0 for e in p["events"]):
        print(p["name"]); break' "$tmp/dump.json")
pair=$(sed -n 's/^[a-z]*: BUG: \([a-z]*\.[0-9]*\) and \([a-z]*\.[0-9]*\) held.*/\1 \2/p' "$tmp/out")
if [ -n "$pair" ]; then
    set -- $pair
    pred="$1: mark.holding == 1 && $2: mark.holding == 1"
else
    pred="$receiver: received >= 1"
fi
"$encore" inf --json "$tmp/s" "$pred" > "$tmp/inf.json"
"$encore" show "$tmp/s" --svg "$tmp/plain.svg" > /dev/null
"$encore" show "$tmp/s" --svg "$tmp/cut.svg" --stop "$pred" > /dev/null

python3 - "$tmp" "$messages" <<'PY'
import json, sys, xml.etree.ElementTree as ET
tmp, messages = sys.argv[1], int(sys.argv[2])
NS = '{http://www.w3.org/2000/svg}'
dump = json.load(open(tmp + '/dump.json'))
procs = [p['name'] for p in dump['processes']]
nevents = {p['name']: len(p['events']) for p in dump['processes']}
inf = json.load(open(tmp + '/inf.json'))

def fail(msg):
    print('FAIL:', msg)
    sys.exit(1)

def check(path, ncuts):
    root = ET.parse(path).getroot()        # raises on malformed XML
    if root.tag != NS + 'svg':
        fail(f'{path}: root element is {root.tag}')
    els = list(root.iter())
    def cls(tag, c):
        return [e for e in els if e.tag == NS + tag and e.get('class') == c]
    lines = cls('line', 'proc')
    if len(lines) != len(procs):
        fail(f'{path}: {len(lines)} process lines for {len(procs)} processes')
    titles = [l.find(NS + 'title').text.split(' ')[0] for l in lines]
    if titles != procs:
        fail(f'{path}: process lines {titles}, processes {procs}')
    names = [t.text for t in els if t.tag == NS + 'text' and t.get('class') == 'pname']
    if names != procs:
        fail(f'{path}: names drawn {names}, processes {procs}')
    msgs = cls('line', 'msg')
    if len(msgs) != messages:
        fail(f'{path}: {len(msgs)} message arrows, encore analyze linked {messages}')
    for m in msgs:
        if float(m.get('y2')) <= float(m.get('y1')):
            fail(f'{path}: an arrow points up: {m.find(NS + "title").text}')
    evs = [g for g in els if g.tag == NS + 'g' and g.get('class') == 'ev']
    if len(evs) != sum(nevents.values()):
        fail(f'{path}: {len(evs)} event dots for {sum(nevents.values())} events')
    # Dots of a process, top to bottom, are its events in order.
    xs = {float(l.get('x1')): l.find(NS + 'title').text.split(' ')[0] for l in lines}
    seen = {p: [] for p in procs}
    for g in evs:
        t = g.find(NS + 'title').text            # "PROC event K: label"
        proc, k = t.split(' event ')[0], int(t.split(' event ')[1].split(':')[0])
        shape = g[0]
        x = float(shape.get('cx') or float(shape.get('x')) + 4.5)
        y = float(shape.get('cy') or float(shape.get('y')) + 4.5)
        if xs.get(x) != proc:
            fail(f'{path}: {t} is not on the line of {proc}')
        seen[proc].append((k, y))
    for p in procs:
        ks = [k for k, _ in seen[p]]
        ys = [y for _, y in sorted(seen[p])]
        if sorted(ks) != list(range(1, nevents[p] + 1)) or ys != sorted(ys) or len(set(ys)) != len(ys):
            fail(f'{path}: events of {p} are not drawn once each, top to bottom')
    cuts = [e for e in els if e.tag == NS + 'polyline' and e.get('class') == 'cut']
    if len(cuts) != ncuts:
        fail(f'{path}: {len(cuts)} cut lines, expected {ncuts}')
    # The cut passes below event c and above event c+1 of every process.
    for poly, cut in zip(cuts, inf['cuts'] if ncuts else []):
        pts = [tuple(map(float, q.split(','))) for q in poly.get('points').split()]
        for i, p in enumerate(procs):
            y = pts[2 * i][1]
            c = cut[p]
            ev = dict(seen[p])
            if (c >= 1 and not ev[c] < y) or (c < nevents[p] and not y < ev[c + 1]):
                fail(f'{path}: the cut line at {p} (y={y}) is not between events {c} and {c + 1}')
    legend = [e for e in els if e.tag == NS + 'g' and e.get('class') == 'legend']
    if len(legend) != 1:
        fail(f'{path}: no legend')
    print(f'{path}: {len(lines)} process lines, {len(msgs)} arrows, {len(evs)} events, {len(cuts)} cut(s)')

check(tmp + '/plain.svg', 0)
check(tmp + '/cut.svg', len(inf['cuts']))
if not inf['cuts']:
    fail('the predicate used for --stop never holds')
PY
# Rendered, where a renderer is installed (it is not required to run the tests).
if command -v rsvg-convert > /dev/null; then
    rsvg-convert "$tmp/cut.svg" -o "$tmp/cut.png" || fail "rsvg-convert could not render the SVG"
    [ -s "$tmp/cut.png" ] || fail "rsvg-convert made an empty PNG"
fi

# Errors name the thing and say what to do; usage errors exit 2, failures 1.
expect() { # expect STATUS TEXT CMD...: CMD exits STATUS and says TEXT on stderr
    want=$1 text=$2; shift 2
    set +e
    "$@" > /dev/null 2> "$tmp/err"
    got=$?
    set -e
    [ "$got" = "$want" ] || fail "'$*' exited $got, not $want"
    grep -qF -- "$text" "$tmp/err" || fail "'$*' did not say '$text': $(cat "$tmp/err")"
}
expect 2 "--svg FILE" "$encore" show "$tmp/s"
expect 1 "$tmp/none" "$encore" show "$tmp/none" --svg "$tmp/x.svg"
expect 1 "cannot write $tmp/no/x.svg" "$encore" show "$tmp/s" --svg "$tmp/no/x.svg"
expect 2 "schemas/predicates.md" "$encore" show "$tmp/s" --svg "$tmp/x.svg" --stop "$root: sent >="
expect 1 "nobody" "$encore" show "$tmp/s" --svg "$tmp/x.svg" --stop "nobody: sent >= 1"
expect 2 "--format chrome" "$encore" export "$tmp/s" -o "$tmp/x.json"
expect 2 "-o FILE" "$encore" export "$tmp/s" --format shiviz
expect 1 "$tmp/none" "$encore" export "$tmp/none" --format chrome -o "$tmp/x.json"
"$encore" show --help | grep -q "^SYNOPSIS" || fail "encore show --help has no SYNOPSIS"
"$encore" export --help | grep -q "^SYNOPSIS" || fail "encore export --help has no SYNOPSIS"
echo "errors and --help as documented"
