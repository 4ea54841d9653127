#!/bin/sh
# record_note_later.sh: the file note of an open waits for the program's own fstat
# (recorder/files.c); every file tests/e2e/progs/note_later.c opens is noted all the same,
# whatever the program does next (fstat, read, mmap and close, dup2, close_range, fdopen and
# fclose, exec with it open, exit with it open, six at once), as `encore pack --dry-run`
# lists them; and a program that fstats each file it opens (as nginx does per request) gets
# no fstat of the recorder's: 200 open + fstat + close make as many fstat system calls
# recorded as bare, within the recorder's start (strace).
# Usage: record_note_later.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_note_later.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for f in fstat read mmap dup2 range fdopen many many6 exit exec; do
    echo "the file $f" > "$tmp/f-$f"
done
"$encore" record -q -o "$tmp/s" -- "$prog" "$tmp" > "$tmp/out" 2> "$tmp/err" ||
    { echo "FAIL: record:"; cat "$tmp/err"; exit 1; }
grep -qx ok "$tmp/out" || { echo "FAIL: the program did not run"; cat "$tmp/out" "$tmp/err"; exit 1; }
"$encore" pack --dry-run "$tmp/s" > "$tmp/pack" 2>&1 || { echo "FAIL: pack:"; cat "$tmp/pack"; exit 1; }
bad=0
for f in fstat read mmap dup2 range fdopen many many6 exit exec; do
    grep -q "add file $tmp/f-$f " "$tmp/pack" || { echo "FAIL: f-$f was not noted"; bad=1; }
done
[ $bad = 0 ] || { cat "$tmp/pack"; exit 1; }
echo "ok: all 10 files noted"

command -v strace > /dev/null || { echo "SKIP: no strace for the fstat count"; exit 77; }
count() { # the fstat system calls in an strace -c summary
    awk '$NF == "fstat" || $NF == "newfstatat" || $NF == "statx" { n += $4 } END { print n + 0 }' "$1"
}
strace -f -c -o "$tmp/bare.st" "$prog" "$tmp" fstat 200 > /dev/null 2>&1 ||
    { echo "SKIP: strace cannot trace here"; exit 77; }
rm -rf "$tmp/s2"
strace -f -c -o "$tmp/rec.st" "$encore" record -q -o "$tmp/s2" -- "$prog" "$tmp" fstat 200 > /dev/null
b=$(count "$tmp/bare.st") r=$(count "$tmp/rec.st")
echo "fstat calls: bare $b, recorded $r (encore record included)"
# one per open would be 200 more
if [ $((r - b)) -ge 100 ]; then
    echo "FAIL: the recorder made $((r - b)) more fstat calls for 200 opens the program fstats itself"
    exit 1
fi
"$encore" pack --dry-run "$tmp/s2" | grep -q "add file $tmp/f-fstat " ||
    { echo "FAIL: f-fstat was not noted in the fstat loop"; exit 1; }
echo "ok"
