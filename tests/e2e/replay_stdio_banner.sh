#!/bin/sh
# replay_stdio_banner.sh: progs/stdio_banner.c (a server greeting through stdio from forked
# children, as exim does), recorded three times: every message is linked (no receive without
# its send: the banner written while the accepted end was undecided is logged), the replay
# ends with the recorded output and a halt on the last connection's child holds.
# Usage: replay_stdio_banner.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_stdio_banner.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; for f in "$tmp"/*.out "$tmp"/*.err; do [ -s "$f" ] && { echo "== $f"; cat "$f"; }; done; exit 1; }

for run in 1 2 3; do
	rm -rf "$tmp/s"
	"$encore" record -q -o "$tmp/s" -- "$prog" > "$tmp/rec.out" 2> "$tmp/rec.err" || fail "record $run"
	grep -qx "client 4: 250 got HELO 4" "$tmp/rec.out" || fail "record $run: no last answer"
	"$encore" analyze "$tmp/s" > "$tmp/an.out" 2> "$tmp/an.err" || fail "analyze $run"
	grep -q " 0 unmatched" "$tmp/an.out" || fail "recording $run: receives without their send"
	timeout 120 "$encore" replay --stall-timeout 10 "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
		fail "replay $run"
	cmp -s "$tmp/rec.out" "$tmp/rep.out" || fail "replay $run: output differs"
	timeout 120 "$encore" replay --json --stall-timeout 10 --stop 'stdio_banner.6: sent >= 1' \
		"$tmp/s" > "$tmp/halt.out" 2> "$tmp/halt.err" || fail "halt $run"
	grep -q '"halted":true' "$tmp/halt.out" || fail "halt $run: no halted state"
done
echo "ok: 3 recordings, every banner linked, replayed and halted"
