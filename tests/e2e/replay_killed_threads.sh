#!/bin/sh
# replay_killed_threads.sh: a recorded process with threads SIGKILLed from outside the
# session (tests/e2e/progs/killed_threads.c), as a server killed in production: its trace
# is not closed (`encore check` says so), and the replay runs it to the end of its trace,
# then free until it kills it, and exits 0 saying it replayed to the end; whichever thread
# reached the end first used to be told "the recorded run ended here ... but the process
# went on" (a divergence, exit 1).  Five recordings, each killed after some thousands of events.
# Usage: replay_killed_threads.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_killed_threads.XXXXXX")
rpid=""
cleanup() {
	[ -z "$rpid" ] || kill -KILL "$rpid" 2>/dev/null || true
	[ ! -s "$tmp/pid" ] || kill -KILL "$(cat "$tmp/pid")" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
mkfifo "$tmp/in"
for run in 1 2 3 4 5; do
	rm -rf "$tmp/s" "$tmp/pid"
	# the fifo held open for writing by this shell (fd 9) so that the program's read waits
	"$encore" record -q -o "$tmp/s" -- "$prog" "$tmp/pid" < "$tmp/in" > "$tmp/rec.out" 2> "$tmp/rec.err" &
	rpid=$!
	exec 9> "$tmp/in"
	n=0
	while [ ! -s "$tmp/pid" ] && [ $n -lt 2000000 ]; do n=$((n + 1)); done
	[ -s "$tmp/pid" ] || { echo "FAIL: run $run: the program never wrote its pid"; cat "$tmp/rec.err"; exit 1; }
	pid=$(cat "$tmp/pid")
	# let the threads run: until their trace holds some thousands of events (its size)
	n=0
	while [ "$(du -k "$tmp/s" | tail -1 | cut -f1)" -lt 200 ] && [ $n -lt 200000 ]; do n=$((n + 1)); done
	kill -KILL "$pid"
	st=0
	wait "$rpid" || st=$?
	rpid=""
	exec 9>&-
	[ $st = 137 ] || { echo "FAIL: run $run: encore record exited $st, not 137 (the program's SIGKILL)"; cat "$tmp/rec.err"; exit 1; }
	"$encore" check "$tmp/s" > "$tmp/check.out" 2>&1 || true
	grep -q "not closed" "$tmp/check.out" ||
		{ echo "FAIL: run $run: check does not say the trace was not closed:"; cat "$tmp/check.out"; exit 1; }
	st=0
	timeout 120 "$encore" replay --stall-timeout 15 "$tmp/s" < /dev/null > "$tmp/rep.out" 2> "$tmp/rep.err" || st=$?
	if [ $st != 0 ] || ! grep -q "replayed to the end" "$tmp/rep.err"; then
		echo "FAIL: run $run: replay exited $st:"; cat "$tmp/rep.err"; exit 1
	fi
done
echo "ok: 5 recordings of a threaded process SIGKILLed from outside, each replayed to the end of its trace"
