#!/bin/sh
# replay_notrace.sh: a process whose trace the recorder could not create (a full disk: the
# recorder leaves a notrace.ERRNO.FILE note in the session's registry, schemas/trace-format.md,
# "Truncation") stops the replay where it starts with the reason named: "process P was not
# recorded: its trace ... could not be created (No space left on device ...)", not "it did
# not exist in the recorded run".  The note is made by hand after a recording: a child's
# trace removed, its note put in its place.
# Usage: replay_notrace.sh ENCORE
set -eu
encore=$1
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_notrace.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$encore" record -q -o "$tmp/s" --name root -- /bin/sh -c 'echo parent; /bin/sh -c "echo child"' \
    > "$tmp/rec.out" 2> "$tmp/rec.err" || { echo "FAIL: recording:"; cat "$tmp/rec.err"; exit 1; }
[ -f "$tmp/s/root.1.trace" ] || { echo "FAIL: no trace root.1.trace:"; ls "$tmp/s"; exit 1; }
rm "$tmp/s/root.1.trace"
: > "$tmp/s/.encore-registry/notrace.28.root.1.trace"
rc=0
timeout 120 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
if [ $rc != 1 ] ||
   ! grep -q "process root.1 was not recorded: its trace .*could not be created (No space left on device" "$tmp/rep.err"; then
    echo "FAIL: replay exited $rc without naming why root.1 has no trace:"; cat "$tmp/rep.err"; exit 1
fi
echo "ok: a process with no trace and a notrace note: the replay says it was not recorded and why"
