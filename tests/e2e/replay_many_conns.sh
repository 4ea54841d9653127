#!/bin/sh
# replay_many_conns.sh: a client that connects 100 times in turn to the server it forked
# (tests/e2e/progs/many_conns.c): recorded, then replayed to the end with the same output
# (past its 64th connection the server's accept waited for ever).  Three recordings.
# Usage: replay_many_conns.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_many_conns.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for run in 1 2 3; do
	rm -rf "$tmp/s"
	rc=0
	"$encore" record -q -o "$tmp/s" -- "$prog" > "$tmp/rec.out" 2> "$tmp/rec.err" || rc=$?
	if [ $rc != 0 ] || ! grep -q "^100 connections" "$tmp/rec.out"; then
		echo "FAIL: recording $run (exit $rc):"; cat "$tmp/rec.out" "$tmp/rec.err"; exit 1
	fi
	rc=0
	timeout 120 "$encore" replay --stall-timeout 10 "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
	if [ $rc != 0 ] || ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
		echo "FAIL: replay $run (exit $rc):"; cat "$tmp/rep.out" "$tmp/rep.err"; exit 1
	fi
done
echo "ok: 3 recordings of a client's 100 connections in turn replayed"
