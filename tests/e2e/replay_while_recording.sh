#!/bin/sh
# replay_while_recording.sh: a session whose recording still runs has no end to replay to:
# `encore replay` refuses it, naming the trace still written (its writer's lock), where it
# used to replay a half-written trace and report nonsense; once the recording ended, the
# replay runs.
# Usage: replay_while_recording.sh ENCORE
set -eu
encore=$1
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_while_rec.XXXXXX")
rpid=""
cleanup() {
	exec 9>&- 2>/dev/null || true
	[ -z "$rpid" ] || kill -KILL "$rpid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
mkfifo "$tmp/in"
"$encore" record -q -o "$tmp/s" -- sh -c 'echo started; read x; echo "got $x"' < "$tmp/in" > "$tmp/rec.out" 2>&1 &
rpid=$!
exec 9> "$tmp/in"
n=0
while [ ! -s "$tmp/rec.out" ] && [ $n -lt 2000000 ]; do n=$((n + 1)); done
rc=0
"$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
if [ $rc = 0 ] || ! grep -q "is still being recorded" "$tmp/rep.err"; then
	echo "FAIL: the replay of a session still recorded exited $rc:"; cat "$tmp/rep.err"; exit 1
fi
echo line >&9
exec 9>&-
wait "$rpid"
rpid=""
"$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
	{ echo "FAIL: the replay after the recording ended failed:"; cat "$tmp/rep.err"; exit 1; }
cmp -s "$tmp/rec.out" "$tmp/rep.out" || { echo "FAIL: the replay printed something else"; exit 1; }
echo "ok: refused while recorded, replayed once ended"
