#!/bin/sh
# replay_system_pair.sh: progs/system_pair.c (a system() child reads its parent's socketpair
# end and answers on it), recorded three times: the analyzer links the child's receives and
# the parent's receive of the answer (no external receive, none unmatched), and the replay
# ends with the recorded output.
# Usage: replay_system_pair.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_system_pair.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; for f in "$tmp"/*.out "$tmp"/*.err; do [ -s "$f" ] && { echo "== $f"; cat "$f"; }; done; exit 1; }
for run in 1 2 3; do
	rm -rf "$tmp/s"
	"$encore" record -q -o "$tmp/s" -- "$prog" > "$tmp/rec.out" 2> "$tmp/rec.err" || fail "record $run"
	grep -qx "status 0, answer: sh got hello" "$tmp/rec.out" || fail "record $run"
	"$encore" analyze "$tmp/s" > "$tmp/an.out" 2> "$tmp/an.err" || fail "analyze $run"
	grep -q "; 0 external receives; 0 unmatched" "$tmp/an.out" ||
		fail "recording $run: the system() child's messages are not linked"
	timeout 120 "$encore" replay --stall-timeout 10 "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
		fail "replay $run"
	cmp -s "$tmp/rec.out" "$tmp/rep.out" || fail "replay $run: output differs"
done
echo "ok: 3 recordings, the system() child's messages linked, replayed"
