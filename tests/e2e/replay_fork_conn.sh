#!/bin/sh
# replay_fork_conn.sh: progs/fork_conn.c (a connection read by forked workers in turn),
# recorded three times; each recording: the analyzer links every worker's request to the
# client's send (no "read by several processes" warning), the replay ends with the recorded
# output, and a halt where the third worker has received its request holds the client
# before it got the third answer.
# Usage: replay_fork_conn.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_fork_conn.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; [ -d "$tmp/s" ] && "$encore" dump "$tmp/s" | grep -E "recv|send" | head -12; for f in "$tmp"/*.out "$tmp"/*.err; do [ -s "$f" ] && { echo "== $f"; cat "$f"; }; done; exit 1; }

for run in 1 2 3; do
	rm -rf "$tmp/s"
	"$encore" record -q -o "$tmp/s" -- "$prog" > "$tmp/rec.out" 2> "$tmp/rec.err" || fail "record $run"
	grep -qx "client: worker 3 got third" "$tmp/rec.out" || fail "record $run: no third answer"
	"$encore" analyze "$tmp/s" > "$tmp/an.out" 2> "$tmp/an.err" || fail "analyze $run"
	if grep -q "several processes" "$tmp/an.out" "$tmp/an.err"; then
		fail "recording $run: the workers' reads were not placed in the stream"
	fi
	timeout 120 "$encore" replay --stall-timeout 10 "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
		fail "replay $run"
	cmp -s "$tmp/rec.out" "$tmp/rep.out" || fail "replay $run: output differs"
	if grep -q "several processes" "$tmp/rep.err"; then fail "replay $run warns"; fi
	# the third worker (fork_conn.4) has its request: the client sent it, so it is past its
	# second answer, and not past the third, which that worker has not sent yet
	timeout 120 "$encore" replay --json --stall-timeout 10 --stop 'fork_conn.4: received >= 1' \
		"$tmp/s" > "$tmp/halt.out" 2> "$tmp/halt.err" || fail "halt $run"
	grep -q '"halted"' "$tmp/halt.out" || fail "halt $run: no halted state"
done
# The burst: the requests sent at once, the workers alive together, their reads ordered by the
# stream alone.  A halt on any worker must come (before link_turns, a halt on a worker that
# read after another could leave that one before its read, and wait for ever for its turn).
for run in 1 2 3; do
	rm -rf "$tmp/s"
	"$encore" record -q -o "$tmp/s" -- "$prog" burst > "$tmp/rec.out" 2> "$tmp/rec.err" ||
		fail "burst: record $run"
	grep -qx "server: 3 requests served" "$tmp/rec.out" || fail "burst: record $run"
	timeout 120 "$encore" replay --stall-timeout 10 "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
		fail "burst: replay $run"
	cmp -s "$tmp/rec.out" "$tmp/rep.out" || fail "burst: replay $run: output differs"
	for w in 2 3 4; do
		timeout 120 "$encore" replay --json --stall-timeout 10 --stop "fork_conn.$w: received >= 1" \
			"$tmp/s" > "$tmp/halt.out" 2> "$tmp/halt.err" || fail "burst: halt $run on fork_conn.$w"
		grep -q '"halted":true' "$tmp/halt.out" || fail "burst: halt $run on fork_conn.$w"
	done
done
echo "ok: 3 recordings, every worker's reads linked, replayed and halted; 3 bursts halted on each worker"
