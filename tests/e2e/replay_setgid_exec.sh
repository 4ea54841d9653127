#!/bin/sh
# replay_setgid_exec.sh: a process whose last recorded event is an exec of a set-group-ID
# program (the loader ignores LD_PRELOAD there: that image is not recorded, `encore check`
# names it, as tmux's utempter helper) replays to the end: the image runs unreplayed, as it
# ran unrecorded.  Before, the replay reported it as "ended early" (tmux's new-session).
# Needs root (a group to give the copy) and a file system that honours set-group-ID; skipped
# (77) otherwise.
# Usage: replay_setgid_exec.sh ENCORE
set -eu
encore=$1
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to make a set-group-ID program"; exit 77; }
grp=$(getent group nogroup | cut -d: -f3)
[ -n "$grp" ] || { echo "SKIP: no group nogroup"; exit 77; }
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_setgid_exec.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 0755 "$tmp"
cp /bin/echo "$tmp/sgecho"
chgrp "$grp" "$tmp/sgecho"
chmod 2755 "$tmp/sgecho"
"$encore" record -q -o "$tmp/s" -- /bin/sh -c "$tmp/sgecho from-the-helper; echo after" \
    > "$tmp/rec.out" 2> "$tmp/rec.err" || { echo "FAIL: recording:"; cat "$tmp/rec.err"; exit 1; }
if ! "$encore" check "$tmp/s" 2>&1 | grep -q "NOT RECORDED: exec of a set-user-ID"; then
    echo "SKIP: the set-group-ID copy was recorded (a nosuid file system?)"; exit 77
fi
rc=0
timeout 120 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
if [ $rc != 0 ] || ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
    echo "FAIL: replay exited $rc:"; cat "$tmp/rep.err"; diff "$tmp/rec.out" "$tmp/rep.out"; exit 1
fi
echo "ok: an exec into an unrecorded set-group-ID image replayed to the end"
