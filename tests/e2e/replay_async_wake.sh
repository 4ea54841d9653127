#!/bin/sh
# replay_async_wake.sh: a wake-up the recorded run did not make (progs/async_wake.c, libuv's
# uv_async_send: whether it writes its eventfd depends on where another thread's own code
# ran, which the trace does not say) is not made in replay, and returns as if made
# (replayer/lc_sync.c, lc_evfd_io): before, the replay stopped with "expected ..., but the
# process called write of an eventfd" (BIND's dig, about one replay in 24).  The recording's
# woken thread runs its code late (ASYNC_WAKE_DELAY); the replay's runs it at once.
# Usage: replay_async_wake.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_async_wake.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
ASYNC_WAKE_DELAY=1 "$encore" record -q -o "$tmp/s" -- "$prog" > "$tmp/rec.out" 2> "$tmp/rec.err" ||
    { echo "FAIL: recording:"; cat "$tmp/rec.err"; exit 1; }
n=$("$encore" dump "$tmp/s" | grep -c 'sync *write fd=' || true)
[ "$n" = 1 ] || { echo "SKIP: the recording made $n eventfd writes, not the one this test needs"; exit 77; }
rc=0
timeout 60 "$encore" replay --setenv ASYNC_WAKE_DELAY= "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
if [ $rc != 0 ] || ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
    echo "FAIL: replay exited $rc:"; cat "$tmp/rep.err"; exit 1
fi
echo "ok: a wake-up not made when recorded is not made in replay"
