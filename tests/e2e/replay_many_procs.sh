#!/bin/sh
# replay_many_procs.sh: a session of more processes than the replay's status board holds
# (a shell running /bin/true 1024 times, as a test suite's many subprocesses do: CPython's
# test_subprocess makes about 2400) is refused with a message naming the count, status 1;
# the replay crashed writing past the board before (replayer/gd.c).
# Usage: replay_many_procs.sh ENCORE
set -eu
encore=$1
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_many_procs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$encore" record -q -o "$tmp/s" -- /bin/sh -c \
	'i=0; while [ $i -lt 1024 ]; do /bin/true; i=$((i+1)); done; echo done' > "$tmp/rec.out"
grep -qx done "$tmp/rec.out"
rc=0
timeout 120 "$encore" replay -q "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
if [ $rc != 1 ] || ! grep -q 'the session has 1025 processes; replay follows at most' "$tmp/rep.err"; then
	echo "FAIL: replay exit $rc, expected 1 and the message:"; cat "$tmp/rep.err"; exit 1
fi
echo "ok: $(cat "$tmp/rep.err")"
