#!/bin/sh
# record_full_disk.sh: recording into a filesystem that is full, or fills up during the
# recording, never harms the program: its output and exit status are those of the bare run, a
# forked child does not die (and its parent does not hang), `encore record` prints "trace T
# truncated after event N: REASON" and `encore check` calls the trace truncated and exits
# non-zero.  A start with no room for the session id file fails naming it, leaving no file.
# With room for the trace's first tail but not its second (reserved when the first fills),
# the trace stops there, truncated, the program running on.
# The same holds under a file size limit (EFBIG, and no SIGXFSZ reaches the program).
# Needs to mount a small tmpfs (root, or a user namespace); skipped (77) otherwise.
# The input comes through a pipe: external input, stored verbatim, so the trace outgrows the
# filesystem.  The bare output is the input itself.
# Usage: record_full_disk.sh ENCORE PROG   (PROG is tests/e2e/progs/fill_feed.c)
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_full_disk.XXXXXX")
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
head -c 6000000 /dev/urandom > "$tmp/input"

# Fill the filesystem, leaving about $1 KiB.
fill() {
    rm -f "$mnt/fill"
    avail=$(df -k --output=avail "$mnt" | tail -1)
    keep=$1
    if [ "$avail" -gt "$keep" ]; then
        head -c $(( (avail - keep) * 1024 )) /dev/zero > "$mnt/fill" 2>/dev/null || true
    fi
}

check_run() {
    case=$1 session=$2 rec_rc=$3
    if ! cmp -s "$tmp/input" "$tmp/rec.out"; then
        echo "FAIL ($case): the program's output differs from its input when recorded"
        cat "$tmp/rec.err"; exit 1
    fi
    if [ "$rec_rc" != 0 ]; then
        echo "FAIL ($case): encore record exited $rec_rc, bare 0:"; cat "$tmp/rec.err"; exit 1
    fi
    if ! grep -q "encore record: trace .*truncated after event [0-9]*: No space left on device" \
            "$tmp/rec.err"; then
        echo "FAIL ($case): no truncation line from encore record:"; cat "$tmp/rec.err"; exit 1
    fi
    rc=0
    "$encore" check "$session" > "$tmp/check.out" 2>&1 || rc=$?
    if [ "$rc" = 0 ] ||
       ! grep -q 'TRUNCATED after event [0-9]*.*No space left on device' "$tmp/check.out"; then
        echo "FAIL ($case): encore check exited $rc:"; cat "$tmp/check.out"; exit 1
    fi
}

# (a) full before the start: the session id fits, no trace does (with no room at all, and
# with room for the header but not the mapped tail: the SIGBUS of old)
for keep in 0 40; do
    rm -rf "$mnt"/*
    mkdir -m 700 "$mnt/a"
    "$encore" record -q -o "$mnt/a" -- true
    rm -f "$mnt/a"/*.trace
    fill "$keep"
    rc=0
    cat "$tmp/input" | "$encore" record -q -o "$mnt/a" --name feed -- "$prog" \
        > "$tmp/rec.out" 2> "$tmp/rec.err" || rc=$?
    check_run "full before, $keep KiB left" "$mnt/a" "$rc"
    if [ -n "$(ls "$mnt/a")" ]; then
        echo "FAIL (full before, $keep KiB left): half-made files: $(ls "$mnt/a")"; exit 1
    fi
    echo "ok: full before the start ($keep KiB left): $(grep truncated "$tmp/rec.err")"
done
rm -rf "$mnt"/*

# (a') no room even for the session id: record fails naming the file, leaves nothing
mkdir -m 700 "$mnt/a2"
fill 0
rc=0
"$encore" record -q -o "$mnt/a2" -- true 2> "$tmp/rec.err" || rc=$?
if [ "$rc" = 0 ] || ! grep -q "$mnt/a2/.encore-session: No space left on device" "$tmp/rec.err" ||
   [ -n "$(ls -A "$mnt/a2")" ]; then
    echo "FAIL: a start with no room: exit $rc, left: $(ls -A "$mnt/a2")"; cat "$tmp/rec.err"
    exit 1
fi
echo "ok: no room for the session: $(cat "$tmp/rec.err")"
rm -rf "$mnt"/*

# (b) filling part-way: room for the start, not for 6 MB of input; with and without a fork
for mode in plain fork; do
    rm -rf "$mnt"/*
    fill 600
    set --
    [ "$mode" = fork ] && set -- fork
    rc=0
    cat "$tmp/input" | "$encore" record -q -o "$mnt/b" --name feed -- "$prog" "$@" \
        > "$tmp/rec.out" 2> "$tmp/rec.err" || rc=$?
    check_run "part-way $mode" "$mnt/b" "$rc"
    if [ "$mode" = fork ] && ! grep -q 'fill_feed: child exited 0' "$tmp/rec.err"; then
        echo "FAIL (part-way fork): the child did not exit 0:"; cat "$tmp/rec.err"; exit 1
    fi
    echo "ok: part-way ($mode): $(grep truncated "$tmp/rec.err" | tr '\n' ' ')"
    if [ "$mode" = plain ]; then
        # replay follows the trace up to its cut and says so
        rc=0
        timeout 120 "$encore" replay "$mnt/b" < /dev/null > /dev/null 2> "$tmp/replay.err" ||
            rc=$?
        if ! grep -q "trace .*feed.trace was truncated after event [0-9]* (No space left on device)" \
                "$tmp/replay.err"; then
            echo "FAIL: encore replay (exit $rc) did not say the trace was truncated:"
            cat "$tmp/replay.err"; exit 1
        fi
        echo "ok: replay: $(head -1 "$tmp/replay.err")"
    fi
done

# (b') room for the first tail but not the second, which stays a hole until a tail fills
# (schemas/trace-format.md, "Two tails"): reserving it then fails, and the trace stops there
rm -rf "$mnt"/*
fill 100
rc=0
cat "$tmp/input" | "$encore" record -q -o "$mnt/b2" --name feed -- "$prog" \
    > "$tmp/rec.out" 2> "$tmp/rec.err" || rc=$?
check_run "no room for the second tail" "$mnt/b2" "$rc"
echo "ok: no room for the second tail: $(grep truncated "$tmp/rec.err" | tr '\n' ' ')"

# (c) the disk fills while the program waits on a pipe the test holds
rm -rf "$mnt"/*
mkfifo "$tmp/gate"
fill 1500
rc=0
cat "$tmp/input" | "$encore" record -q -o "$mnt/c" --name feed -- "$prog" fork "$tmp/gate" \
    > "$tmp/rec.out" 2> "$tmp/rec.err" &
rec=$!
exec 3> "$tmp/gate"
fill 0
printf x >&3
exec 3>&-
wait "$rec" || rc=$?
check_run "filled meanwhile" "$mnt/c" "$rc"
echo "ok: filled while recording: $(grep truncated "$tmp/rec.err" | tr '\n' ' ')"

# (d) a file size limit (RLIMIT_FSIZE) below the trace's size: the recorder's writes fail with
# EFBIG and their SIGXFSZ, which would end the program, is never delivered
rm -rf "$mnt"/* "$tmp/d"
rc=0
cat "$tmp/input" | sh -c 'ulimit -f 1024 && exec "$@"' sh "$encore" record -q -o "$tmp/d" \
    --name feed -- "$prog" fork 2> "$tmp/rec.err" | cat > "$tmp/rec.out" || rc=$?
if ! cmp -s "$tmp/input" "$tmp/rec.out" || [ "$rc" != 0 ] ||
   ! grep -q 'fill_feed: child exited 0' "$tmp/rec.err" ||
   ! grep -q "truncated after event [0-9]*: File too large" "$tmp/rec.err"; then
    echo "FAIL (file size limit): exit $rc, output $(wc -c < "$tmp/rec.out") bytes:"
    cat "$tmp/rec.err"; exit 1
fi
echo "ok: file size limit: $(grep truncated "$tmp/rec.err" | tr '\n' ' ')"

