#!/bin/sh
# replay_self_kill.sh: a process that SIGKILLs itself (`kill -9 $$`) leaves a trace with no
# event for the kill, not closed; its replay runs to the end of the trace and the replayed
# kill ends it there.  The LC used to wait, in that kill, for its target to reach the end of
# its trace: itself, waiting (a stall report after the stall timeout, exit 1).
# Usage: replay_self_kill.sh ENCORE
set -eu
encore=$1
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_self_kill.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
rc=0
"$encore" record -q -o "$tmp/s" -- sh -c 'kill -9 $$; echo after' > "$tmp/rec.out" 2>&1 || rc=$?
[ "$rc" = 137 ] || { echo "FAIL: the recording exited $rc, not 137"; cat "$tmp/rec.out"; exit 1; }
rc=0
timeout 60 "$encore" replay --stall-timeout 30 "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
if [ "$rc" != 0 ] || ! grep -q "replayed to the end" "$tmp/rep.err" || ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
	echo "FAIL: the replay exited $rc:"; cat "$tmp/rep.err"; cat "$tmp/rep.out"; exit 1
fi
echo "ok: a process that killed itself replayed to its end"
