#!/bin/sh
# replay_stall_thread.sh: a replay whose next event belongs to a thread that runs on outside
# interposed calls (tests/e2e/progs/threads.c stall: it spins because a file the recording
# saw is gone, which no event records) ends in the stall report, naming the thread the
# process waits for (replayer/README.md, "Threads"); bounded by `timeout`: a hang fails.
# Usage: replay_stall_thread.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_stall_thread.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
touch "$tmp/present"
"$encore" record -q -o "$tmp/s" --name st -- "$prog" stall "$tmp/present" 2> /dev/null |
    cat > "$tmp/rec.out"
grep -q joined "$tmp/rec.out" || { echo "FAIL: the recorded run did not finish"; exit 1; }
rm "$tmp/present"
st=0
timeout 120 "$encore" replay --stall-timeout 3 "$tmp/s" > /dev/null 2> "$tmp/rep.err" || st=$?
[ "$st" != 124 ] || { echo "FAIL: the replay hung"; cat "$tmp/rep.err"; exit 1; }
[ "$st" != 0 ] || { echo "FAIL: the replay ran to the end"; cat "$tmp/rep.err"; exit 1; }
if ! grep -q "is thread 1's, which does not reach it" "$tmp/rep.err"; then
    echo "FAIL: the stall report does not name the spinning thread:"; cat "$tmp/rep.err"; exit 1
fi
echo "ok: $(grep "thread 1's" "$tmp/rep.err" | head -1 | sed 's/^ *//')"
