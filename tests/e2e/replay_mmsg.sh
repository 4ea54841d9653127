#!/bin/sh
# replay_mmsg.sh: datagrams sent with sendmmsg, through libc and through
# syscall(SYS_sendmmsg) (tests/e2e/progs/mmsg.c), are a SEND event each in the sender's trace
# (recorder/io_more.c), and the session replays to the end with the same output.
# Usage: replay_mmsg.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_mmsg.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$encore" record -q -o "$tmp/s" --name mm -- "$prog" > "$tmp/rec.out" 2> "$tmp/rec.err" ||
    { echo "FAIL: the recorded run failed"; cat "$tmp/rec.err"; exit 1; }
[ "$(wc -l < "$tmp/rec.out")" = 4 ] || { echo "FAIL: recorded output:"; cat "$tmp/rec.out"; exit 1; }
"$encore" dump "$tmp/s/mm.trace" > "$tmp/dump"
n=$(grep -c ' send  *sendmsg ' "$tmp/dump" || true)
if [ "$n" != 4 ]; then
    echo "FAIL: $n send events in the sender's trace, not 4 (one per message):"
    cat "$tmp/dump"; exit 1
fi
timeout 60 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
    { echo "FAIL: replay failed:"; cat "$tmp/rep.err"; exit 1; }
cmp -s "$tmp/rec.out" "$tmp/rep.out" ||
    { echo "FAIL: the replay printed something else:"; diff "$tmp/rec.out" "$tmp/rep.out" || true; exit 1; }
echo "ok: 4 messages sent with sendmmsg, 4 send events, replayed"
