#!/bin/sh
# replay_timewait.sh: a recorded server closed its accepted connection first and had no
# SO_REUSEADDR (tests/e2e/progs/replay_timewait.c), so that connection holds the listening
# port in TIME_WAIT for a minute: a replay right after cannot bind the recorded port, and its
# divergence says that a connection in TIME_WAIT holds it and to replay again in a minute
# (not to free a port no process holds).
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
if timeout 60 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err"; then
    echo "FAIL: the replay bound port $port, held in TIME_WAIT"; cat "$tmp/rep.err"; exit 1
fi
grep -q "bind to 127\.0\.0\.1:$port failed: .*TIME_WAIT holds it.*replay again in a minute" \
    "$tmp/rep.err" ||
    { echo "FAIL: the divergence does not name the TIME_WAIT:"; cat "$tmp/rep.err"; exit 1; }
echo "ok: port $port held in TIME_WAIT, the replay said so"
