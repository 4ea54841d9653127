#!/bin/sh
# replay_timewait.sh: a recorded server closed its accepted connection first and had no
# SO_REUSEADDR (tests/e2e/progs/replay_timewait.c), so that connection holds the listening
# port in TIME_WAIT for a minute: a replay right after cannot bind the recorded port at once;
# it waits for the TIME_WAIT to end (up to 70 s: TCP holds it 60), then replays to the end
# with the recorded output, and its warnings say how long it waited for which port
# (replayer/lc_chan.c, bind_recorded).  (It used to stop at the bind, saying to replay again
# in a minute.)
# Usage: replay_timewait.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_timewait.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$encore" record -q -o "$tmp/s" -- "$prog" > "$tmp/rec.out" 2> "$tmp/rec.err" ||
    { echo "FAIL: the recorded run failed:"; cat "$tmp/rec.err"; exit 1; }
port=$("$encore" dump "$tmp/s" | sed -n 's/.* listen .*tcp 127\.0\.0\.1:\([0-9]*\) .*/\1/p' | head -1)
[ -n "$port" ] || { echo "FAIL: no recorded listening port"; "$encore" dump "$tmp/s"; exit 1; }
# (the kernel's table says whether the close left TIME_WAIT: where it did not, no test)
hex=$(printf '%04X' "$port")
grep -q "^ *[0-9]*: [0-9A-F]*:$hex [0-9A-F]*:[0-9A-F]* 06 " /proc/net/tcp ||
    { echo "SKIP: no connection in TIME_WAIT on port $port"; exit 77; }
rc=0
timeout 150 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
grep -q "replayed to the end" "$tmp/rep.err" ||
    { echo "FAIL: the replay (exit $rc) did not run to the end:"; cat "$tmp/rep.err"; exit 1; }
cmp -s "$tmp/rec.out" "$tmp/rep.out" || { echo "FAIL: the replay printed something else"; exit 1; }
grep -q "waited [0-9.]* s for port $port, held by a connection in TIME_WAIT" "$tmp/rep.err" ||
    { echo "FAIL: the replay does not say it waited for port $port:"; cat "$tmp/rep.err"; exit 1; }
echo "ok: port $port held in TIME_WAIT, the replay waited for it and said so"
