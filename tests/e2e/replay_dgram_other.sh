#!/bin/sh
# replay_dgram_other.sh: progs/dgram_other.c, whose datagram holds a pid read past the
# interposers: its replay sends other bytes, the receive cannot complete, and the stall
# report says a datagram matching no recorded receive came (not only that it waits).
# Usage: replay_dgram_other.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_dgram_other.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$encore" record -q -o "$tmp/s" -- "$prog" > "$tmp/rec.out"
grep -qx "received a datagram of 14 bytes" "$tmp/rec.out" || { echo "FAIL: recording"; cat "$tmp/rec.out"; exit 1; }
rc=0
timeout 120 "$encore" replay --stall-timeout 3 "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
if [ $rc = 0 ]; then
	echo "SKIP: the replay got the recorded pid (pids reused?)"
	exit 77
fi
grep -q "no progress for" "$tmp/rep.err" || { echo "FAIL: no stall report"; cat "$tmp/rep.err"; exit 1; }
grep -q "1 datagram matching no recorded one arrived instead (the last of 14 bytes)" "$tmp/rep.err" ||
	{ echo "FAIL: the stall report does not name the other datagram:"; cat "$tmp/rep.err"; exit 1; }
echo "ok: the stall names the datagram that came instead"
