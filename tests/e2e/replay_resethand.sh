#!/bin/sh
# replay_resethand.sh: a one-shot SIGUSR1 handler (SA_RESETHAND) that runs while the process
# waits in a read (tests/e2e/progs/resethand.c): recorded, the process still runs it and
# exits 0 (the recorder's deferred run is not turned into the default action); replayed, the
# same output.  Three recordings.
# Usage: replay_resethand.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_resethand.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for run in 1 2 3; do
	rm -rf "$tmp/s"
	rc=0
	"$encore" record -q -o "$tmp/s" -- "$prog" > "$tmp/rec.out" 2> "$tmp/rec.err" || rc=$?
	if [ $rc != 0 ] || ! grep -qx "handler ran: yes" "$tmp/rec.out"; then
		echo "FAIL: recording $run (exit $rc):"; cat "$tmp/rec.out" "$tmp/rec.err"; exit 1
	fi
	rc=0
	timeout 120 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
	if [ $rc != 0 ] || ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
		echo "FAIL: replay $run (exit $rc):"; cat "$tmp/rep.err"; exit 1
	fi
done
echo "ok: 3 recordings of a one-shot handler run in a read, the handler ran, replayed"
