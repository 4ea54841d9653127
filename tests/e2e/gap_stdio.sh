#!/bin/sh
# gap_stdio.sh: stdio on channels (recorder/stdio.c).
# Usage: gap_stdio.sh ENCORE GAP_STDIO
#   1. a pipe written and read with stdio between two recorded processes: every receive is
#      matched to its send (analyze: 0 unmatched), the stdin bytes read with fgets/getchar
#      are in the trace, and replay (fed other bytes on stdin) prints the same thing;
#   2. fscanf on the pipe: analyze and replay say its bytes are not recorded;
#   3. sort reading its stdin (fread inside coreutils): replay prints the recorded lines;
#   4. popen: a recorded child writing more than a pipe holds ends as it did in replay;
#   5. uniq (inlined getc_unlocked: its refills are the receives): stdin fed back, and
#      seq | uniq -c | tail between recorded processes matched and replayed identically.
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/gap_stdio.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

printf 'from outside\nmore bytes\n' |
    timeout 60 "$encore" record -q -o "$tmp/s" --name gs -- "$prog" pipe > "$tmp/rec.out"
grep -q 'stdin fgets: from ou' "$tmp/rec.out" || { echo "FAIL: program output"; cat "$tmp/rec.out"; exit 1; }
"$encore" dump "$tmp/s" > "$tmp/dump.txt"
grep -qE 'input +stdio' "$tmp/dump.txt" || { echo "FAIL: no stdio input event"; cat "$tmp/dump.txt"; exit 1; }
"$encore" analyze "$tmp/s" > "$tmp/an.txt"
grep -q ' 0 unmatched' "$tmp/an.txt" || { echo "FAIL: unmatched messages"; cat "$tmp/an.txt"; exit 1; }
if grep -q 'used stdio' "$tmp/an.txt"; then echo "FAIL: stdio warning without scanf"; cat "$tmp/an.txt"; exit 1; fi
for run in 1 2; do
    if ! printf 'something else entirely\n' | timeout 60 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err"; then
        echo "FAIL: replay $run did not run to the end:"; cat "$tmp/rep.err"; exit 1
    fi
    if ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
        echo "FAIL: replay $run printed something else than the recorded run:"
        diff "$tmp/rec.out" "$tmp/rep.out" | head -20 || true
        exit 1
    fi
done

rm -rf "$tmp/s"
printf 'x\n' | timeout 60 "$encore" record -q -o "$tmp/s" --name gs -- "$prog" scanf > "$tmp/rec.out"
"$encore" analyze "$tmp/s" > "$tmp/an.txt"
grep -q 'gs used stdio on channel [0-9]*: its bytes there are not recorded; replay of it is not guaranteed' "$tmp/an.txt" ||
    { echo "FAIL: no stdio warning from analyze"; cat "$tmp/an.txt"; exit 1; }
printf 'x\n' | timeout 60 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || true
grep -q 'gs used stdio on channel [0-9]*: its bytes there are not recorded' "$tmp/rep.err" ||
    { echo "FAIL: no stdio warning from replay"; cat "$tmp/rep.err"; exit 1; }

if command -v sort > /dev/null; then
    rm -rf "$tmp/s"
    printf 'pear\napple\nfig\n' | timeout 60 "$encore" record -q -o "$tmp/s" --name sort -- sort > "$tmp/rec.out"
    printf 'zzz\n' | timeout 60 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
        { echo "FAIL: sort replay"; cat "$tmp/rep.err"; exit 1; }
    cmp -s "$tmp/rec.out" "$tmp/rep.out" || { echo "FAIL: sort replay differs"; diff "$tmp/rec.out" "$tmp/rep.out"; exit 1; }
fi
if command -v seq > /dev/null; then
    rm -rf "$tmp/s"
    timeout 60 "$encore" record -q -o "$tmp/s" --name po -- "$prog" popen < /dev/null > "$tmp/rec.out"
    grep -q 'popen: 30000 lines, sum 450015000, status 0' "$tmp/rec.out" || { echo "FAIL: popen run"; cat "$tmp/rec.out"; exit 1; }
    timeout 60 "$encore" replay --stall-timeout 20 "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" < /dev/null ||
        { echo "FAIL: popen replay"; cat "$tmp/rep.err"; exit 1; }
    cmp -s "$tmp/rec.out" "$tmp/rep.out" || { echo "FAIL: popen replay differs"; diff "$tmp/rec.out" "$tmp/rep.out"; exit 1; }
fi

# uniq reads with getc_unlocked, inlined: only its buffer refills (__uflow) are seen, and
# logged as receives of the bytes they brought: its stdin is fed back in replay, and between
# recorded processes (seq writing through stdio, uniq reading through refills) every
# receive is matched
if command -v uniq > /dev/null && command -v seq > /dev/null; then
    rm -rf "$tmp/s"
    printf 'a\na\nb\n' | timeout 60 "$encore" record -q -o "$tmp/s" --name uniq -- uniq -c > "$tmp/rec.out"
    printf 'zzz\n' | timeout 60 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
        { echo "FAIL: uniq replay"; cat "$tmp/rep.err"; exit 1; }
    cmp -s "$tmp/rec.out" "$tmp/rep.out" || { echo "FAIL: uniq replay differs"; diff "$tmp/rec.out" "$tmp/rep.out"; exit 1; }
    rm -rf "$tmp/s"
    timeout 60 "$encore" record -q -o "$tmp/s" --name sh -- sh -c 'seq 1 5000 | uniq -c | tail -n 2' > "$tmp/rec.out" < /dev/null
    "$encore" analyze "$tmp/s" > "$tmp/an.txt"
    grep -q ' 0 unmatched' "$tmp/an.txt" || { echo "FAIL: seq | uniq: unmatched messages"; cat "$tmp/an.txt"; exit 1; }
    timeout 60 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" < /dev/null ||
        { echo "FAIL: seq | uniq replay"; cat "$tmp/rep.err"; exit 1; }
    cmp -s "$tmp/rec.out" "$tmp/rep.out" || { echo "FAIL: seq | uniq replay differs"; exit 1; }
fi
echo "ok"
