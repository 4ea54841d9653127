#!/bin/sh
# record_shutwake.sh: a thread shuts a connection down to wake another blocked sending on it
# (tests/e2e/progs/threads.c, shutwake): recorded, the program ends as it does bare (a
# shutdown that waited for the send in flight on its descriptor hung it for ever: the
# program ends itself after 60 s, SIGALRM).  Its replay is not asked for: the program waits for
# the send through FIONREAD, which replay does not order (README, Limits).
# Usage: record_shutwake.sh ENCORE THREADS_PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_shutwake.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
rc=0
timeout 120 "$encore" record -q -o "$tmp/s" -- "$prog" shutwake > "$tmp/out" 2> "$tmp/err" || rc=$?
if [ $rc != 0 ] || ! grep -qx "shutwake: the send ended (partial)" "$tmp/out"; then
	echo "FAIL: the recorded program (exit $rc)"
	cat "$tmp/out" "$tmp/err"
	exit 1
fi
echo "ok: the recorded shutdown woke the blocked sender"
