#!/bin/sh
# replay_full_disk.sh: a session on a file system that is full (recorded until the disk
# filled, a common way to meet one) is replayed with a clear refusal: `encore replay` exits
# 1 naming its status board and ENOSPC, and saying what to do; it died of SIGBUS before (its
# board, a sparse file, mapped and stored into with no block to back it).  Room made again,
# the same session replays.  Needs to mount a small tmpfs (root); skipped (77) otherwise.
# Usage: replay_full_disk.sh ENCORE
set -eu
encore=$1
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_full_disk.XXXXXX")
mnt="$tmp/mnt"
mkdir "$mnt"
cleanup() {
    umount "$mnt" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
if ! mount -t tmpfs -o size=2m,mode=0700 tmpfs "$mnt" 2>/dev/null; then
    echo "SKIP: cannot mount a tmpfs here"
    exit 77
fi
"$encore" record -q -o "$mnt/s" -- /bin/sh -c 'echo parent; /bin/sh -c "echo child"' \
    > "$tmp/rec.out" 2> "$tmp/rec.err" || { echo "FAIL: recording:"; cat "$tmp/rec.err"; exit 1; }
# the file system filled after the recording
avail=$(df -k --output=avail "$mnt" | tail -1)
head -c $(( avail * 1024 )) /dev/zero > "$mnt/fill" 2>/dev/null || true
rc=0
timeout 120 "$encore" replay "$mnt/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
if [ $rc != 1 ] || ! grep -q "status board: No space left on device" "$tmp/rep.err"; then
    echo "FAIL: replay on a full file system exited $rc (1 and the board's ENOSPC expected):"
    cat "$tmp/rep.err"; exit 1
fi
rm -f "$mnt/fill"
rc=0
timeout 120 "$encore" replay "$mnt/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
if [ $rc != 0 ] || ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
    echo "FAIL: replay with room again exited $rc:"; cat "$tmp/rep.err"; exit 1
fi
echo "ok: a session on a full file system refused with ENOSPC named, replayed once there is room"
