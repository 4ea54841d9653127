#!/bin/sh
# record_note_reuse.sh: an open's file note waits for the program's fstat (recorder/files.c);
# when the descriptor is closed where the recorder does not see it (closedir after
# fdopendir, a raw system call) and its number taken again, the note is not made on the new
# file (tests/e2e/progs/note_reuse.c): each recording replays with its output, and the
# directory is not noted as a file.  The recorder's own fstat of a descriptor at its first
# use is no call of the program's: the exit event counts no call unlogged (aux empty).
# Usage: record_note_reuse.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_note_reuse.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/d"
echo "a line of data" > "$tmp/data"
echo "another file, longer than the data" > "$tmp/d/other"
touch -d '1 hour ago' "$tmp/data" "$tmp/d/other" # (older than the session: inputs)
touch "$tmp/d/one" "$tmp/d/two"
for mode in dir raw two; do
    rc=0
    "$encore" record -q -o "$tmp/$mode" -- "$prog" "$tmp/d" "$tmp/data" "$mode" \
        > "$tmp/$mode.rec" 2> "$tmp/$mode.rerr" || rc=$?
    [ $rc = 77 ] && { echo "SKIP: no raw system call on this machine"; exit 77; }
    [ $rc = 0 ] || { echo "FAIL: record $mode (exit $rc):"; cat "$tmp/$mode.rec" "$tmp/$mode.rerr"; exit 1; }
    rc=0
    timeout 120 "$encore" replay --stall-timeout 10 "$tmp/$mode" > "$tmp/$mode.rep" \
        2> "$tmp/$mode.err" || rc=$?
    if [ $rc != 0 ] || ! cmp -s "$tmp/$mode.rec" "$tmp/$mode.rep"; then
        echo "FAIL: replay of $mode (exit $rc):"; cat "$tmp/$mode.rep" "$tmp/$mode.err"; exit 1
    fi
    "$encore" pack --dry-run "$tmp/$mode" > "$tmp/$mode.pack" 2>&1 ||
        { echo "FAIL: pack $mode:"; cat "$tmp/$mode.pack"; exit 1; }
    if grep -q "add file $tmp/d " "$tmp/$mode.pack"; then
        echo "FAIL: $mode: the directory was noted as a file:"; cat "$tmp/$mode.pack"; exit 1
    fi
    echo "ok: $mode replays: $(tr '\n' ' ' < "$tmp/$mode.rec")"
done
grep -q "add file $tmp/data " "$tmp/dir.pack" ||
    { echo "FAIL: the file fopen'ed was not noted:"; cat "$tmp/dir.pack"; exit 1; }
"$encore" dump --json "$tmp/two" > "$tmp/two.json"
grep -q '"kind":"exit","call":"exit".*"aux":\[\]' "$tmp/two.json" || {
    echo "FAIL: the exit counts calls unlogged:"; grep -o '"kind":"exit".*' "$tmp/two.json"; exit 1; }
echo "ok: no call unlogged"
