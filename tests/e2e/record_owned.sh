#!/bin/sh
# record_owned.sh: owned mutexes (encore record --owned-mutexes; recorder/sync.c,
# schemas/trace-format.md "Threads"): the
# threads of `threads owned` take their own mutexes 3 times a round; those acquisitions by
# the mutex's owner are no events but counts (dump's owned=N), no release is an event, and
# the counts add up to at least the acquisitions the program made by its owner: every one
# of the 3 per round but the first of each worker.  Then the recording replays (the
# replay_threads_owned test replays many).
# Usage: record_owned.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_owned.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
threads=3 rounds=2000
"$encore" record -q --owned-mutexes -o "$tmp/s" -- "$prog" owned $threads $rounds > "$tmp/rec.out" 2> "$tmp/rec.err" ||
	{ echo "FAIL: the recording failed"; cat "$tmp/rec.err"; exit 1; }
"$encore" dump "$tmp/s" > "$tmp/dump"
if grep -q 'pthread_mutex_unlock' "$tmp/dump"; then
	echo "FAIL: a mutex release is an event:"; grep -m3 'pthread_mutex_unlock' "$tmp/dump"; exit 1
fi
owned=$(sed -n 's/.* owned=\([0-9]*\) .*/\1/p' "$tmp/dump" | awk '{ s += $1 } END { print s + 0 }')
locks=$(grep -c 'sync *pthread_mutex_lock' "$tmp/dump" || true)
want=$((threads * (3 * rounds - 1)))
if [ "$owned" -lt "$want" ]; then
	echo "FAIL: $owned acquisitions counted without events, at least $want expected ($locks lock events)"
	exit 1
fi
"$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
	{ echo "FAIL: the replay failed"; cat "$tmp/rep.err"; exit 1; }
cmp -s "$tmp/rec.out" "$tmp/rep.out" || { echo "FAIL: the replay printed something else"; diff "$tmp/rec.out" "$tmp/rep.out" | head; exit 1; }
# without the option: every acquisition and release an event, no count, and it replays too
rm -rf "$tmp/s"
"$encore" record -q -o "$tmp/s" -- "$prog" owned $threads $rounds > "$tmp/rec.out"
"$encore" dump "$tmp/s" > "$tmp/dump"
! grep -q ' owned=' "$tmp/dump" || { echo "FAIL: acquisitions without events by default"; exit 1; }
[ "$(grep -c 'sync *pthread_mutex_lock' "$tmp/dump")" -ge "$want" ] &&
	grep -q 'sync *pthread_mutex_unlock' "$tmp/dump" ||
	{ echo "FAIL: by default, too few lock or no unlock events"; exit 1; }
"$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
	{ echo "FAIL: the replay without --owned-mutexes failed"; cat "$tmp/rep.err"; exit 1; }
cmp -s "$tmp/rec.out" "$tmp/rep.out" || { echo "FAIL: by default, the replay printed something else"; exit 1; }
echo "ok: --owned-mutexes: $owned acquisitions without events, $locks lock events, no release event; replayed; by default every call an event, replayed"
