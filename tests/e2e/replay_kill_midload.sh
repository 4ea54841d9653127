#!/bin/sh
# replay_kill_midload.sh: a server SIGKILLed by its parent while a client keeps it busy
# (tests/e2e/progs/kill_midload.c), recorded and replayed five times: the replay's kill
# waits until the server has made its recorded last events (replayer/lc_pids.c), so the
# client gets the same echoes and the replay runs to the end with the recorded output.
# Sent as soon as the parent got there, the kill ended the server early and the client's
# receive failed ("the recorded call moved N bytes").
# Usage: replay_kill_midload.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_kill_midload.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for run in 1 2 3 4 5; do
	rm -rf "$tmp/s"
	st=0
	"$encore" record -q -o "$tmp/s" -- "$prog" > "$tmp/rec.out" 2> "$tmp/rec.err" || st=$?
	if [ $st != 0 ] || ! grep -q "server: Killed" "$tmp/rec.out"; then
		echo "FAIL: recording $run (exit $st):"; cat "$tmp/rec.out" "$tmp/rec.err"; exit 1
	fi
	st=0
	timeout 120 "$encore" replay --stall-timeout 15 "$tmp/s" < /dev/null > "$tmp/rep.out" 2> "$tmp/rep.err" || st=$?
	if [ $st != 0 ] || ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
		echo "FAIL: replay $run (exit $st):"; cat "$tmp/rep.out" "$tmp/rep.err"; exit 1
	fi
done
echo "ok: 5 recordings of a server SIGKILLed mid-load replayed with the recorded output"
