#!/bin/sh
# record_full_shared.sh: a shell whose pipelines share pipe ends across forks makes the
# recorder map its table of shared ends (recorder/share.c) in the session directory; on a
# nearly full filesystem that table must not be a sparse file whose first store is a SIGBUS
# in the program: the program's output and exit status are those of the bare run, whatever
# the recording keeps.  Needs to mount a small tmpfs (root, or a user namespace); skipped (77)
# otherwise.
# Usage: record_full_shared.sh ENCORE
set -eu
encore=$1
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_full_shared.XXXXXX")
mnt="$tmp/mnt"
mkdir "$mnt"
cleanup() {
    umount "$mnt" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
if ! mount -t tmpfs -o size=400k,mode=0700 tmpfs "$mnt" 2>/dev/null; then
    echo "SKIP: cannot mount a tmpfs here"
    exit 77
fi
script='for i in 1 2 3 4 5 6 7 8; do echo $i | cat; done'
sh -c "$script" > "$tmp/bare.out"
rc=0
"$encore" record -q -o "$mnt/s" -- sh -c "$script" > "$tmp/rec.out" 2> "$tmp/rec.err" || rc=$?
if [ "$rc" != 0 ] || ! cmp -s "$tmp/bare.out" "$tmp/rec.out"; then
    echo "FAIL: recorded on a full filesystem, the program exited $rc (bare 0) and printed:"
    cat "$tmp/rec.out"; cat "$tmp/rec.err"; exit 1
fi
echo "ok: the program ran as bare on a 400 KiB filesystem"
