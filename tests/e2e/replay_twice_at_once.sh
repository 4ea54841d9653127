#!/bin/sh
# replay_twice_at_once.sh: one replay of a session at a time.  While `encore debug` holds a
# session (waiting for commands), `encore replay` of it refuses, naming the session, instead
# of taking the first one's control socket and status board from under it (both used to
# fail); once the first has ended, the replay runs.
# Usage: replay_twice_at_once.sh ENCORE
set -eu
encore=$1
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_twice.XXXXXX")
dpid=""
cleanup() {
	exec 9>&- 2>/dev/null || true
	[ -z "$dpid" ] || kill -KILL "$dpid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
"$encore" record -q -o "$tmp/s" -- sh -c 'echo one | cat' > /dev/null
mkfifo "$tmp/in"
"$encore" debug "$tmp/s" < "$tmp/in" > "$tmp/dbg.out" 2>&1 &
dpid=$!
exec 9> "$tmp/in"
n=0
while [ ! -S "$tmp/s/.encore-replay/ctl" ] && [ $n -lt 2000000 ]; do n=$((n + 1)); done
[ -S "$tmp/s/.encore-replay/ctl" ] || { echo "FAIL: the debug session never started"; cat "$tmp/dbg.out"; exit 1; }
rc=0
"$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
if [ $rc = 0 ] || ! grep -q "is being replayed already" "$tmp/rep.err"; then
	echo "FAIL: a second replay while a debug session runs exited $rc:"; cat "$tmp/rep.err"; exit 1
fi
[ -S "$tmp/s/.encore-replay/ctl" ] || { echo "FAIL: the refused replay removed the first one's socket"; exit 1; }
exec 9>&-
wait "$dpid" || true
dpid=""
"$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
	{ echo "FAIL: the replay after the debug session ended failed:"; cat "$tmp/rep.err"; exit 1; }
echo "ok: a second replay refused while the first ran, and ran after it"
