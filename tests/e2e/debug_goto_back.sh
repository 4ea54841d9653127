#!/bin/sh
# debug_goto_back.sh: `encore debug`'s goto to a cut behind the current state starts the
# processes again, and they must not inherit the cut file (the console kept it open: one
# more descriptor in the new roots, whose numbers then came out other than recorded: "pipe
# returned descriptor 12, the recorded one was 11").  The token ring's root makes its pipes
# after its sockets, so every number after the leaked one moved.
# Usage: debug_goto_back.sh ENCORE RING
set -eu
encore=$1 ring=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/debug_goto_back.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$encore" record -q -o "$tmp/s" -- "$ring" --bug --seed 1 > /dev/null 2>&1 || true  # (--bug: it may exit 1)
"$encore" inf --json "$tmp/s" 'ring.2: received >= 3' > "$tmp/cut.json"
want=$(grep -o '"cuts":\[{[^}]*}' "$tmp/cut.json")
printf 'step ring 40\ngoto %s\n' "$tmp/cut.json" |
	timeout 120 "$encore" debug --json "$tmp/s" > "$tmp/out" 2> "$tmp/err"
got=$(tail -1 "$tmp/out" | grep -o '"cuts":\[{[^}]*}' || true)
if [ "$got" != "$want" ]; then
	echo "FAIL: goto backwards: $(tail -1 "$tmp/out" | cut -c1-400)"; exit 1
fi
echo "ok: goto backwards halted at $got"
