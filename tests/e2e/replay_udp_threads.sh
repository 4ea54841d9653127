#!/bin/sh
# replay_udp_threads.sh: progs/udp_threads.c (a thread sends datagrams to an echo process,
# another receives the echoes), recorded three times: the analyzer finds no cycle (no echo
# logged before its send), and the replay ends with the recorded output.
# Usage: replay_udp_threads.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_udp_threads.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; for f in "$tmp"/*.out "$tmp"/*.err; do [ -s "$f" ] && { echo "== $f"; cat "$f"; }; done; exit 1; }
for run in 1 2 3; do
	rm -rf "$tmp/s"
	"$encore" record -q -o "$tmp/s" -- "$prog" > "$tmp/rec.out" 2> "$tmp/rec.err" || fail "record $run"
	grep -qx "client got 300 echoes, the last msg [0-9]*" "$tmp/rec.out" || fail "record $run"
	"$encore" analyze "$tmp/s" > "$tmp/an.out" 2> "$tmp/an.err" || fail "analyze $run"
	timeout 120 "$encore" replay --stall-timeout 10 "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
		fail "replay $run"
	cmp -s "$tmp/rec.out" "$tmp/rep.out" || fail "replay $run: output differs"
done
echo "ok: 3 recordings analyzed and replayed"
