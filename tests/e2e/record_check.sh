#!/bin/sh
# record_check.sh: records one of the programs of tests/e2e/progs with `encore record`, then
# checks:
#   1. transparency: the program's output and its reports are the same with and without
#      recording (values that differ between any two runs -- clocks, random bytes, pids,
#      inodes, ports -- are left out of the comparison);
#   2. the traces match the reports event by event (check_trace).
# Usage: record_check.sh ENCORE CHECK_TRACE NAME K KILLED PROG [ARGS...]
#   NAME    logical name of the root; K the recorder's --hash-every;
#   KILLED  the process expected to die by SIGKILL ("-" for none);
#   PROG    is run as PROG REPORTDIR ARGS..., with a pipe from outside on its stdin.
# EXPECT_STDERR, when set, is a string `encore record` must print (a warning).
set -eu
encore=$1 check=$2 name=$3 k=$4 killed=$5 prog=$6
shift 6
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bare" "$tmp/rec"

printf 'bytes-from-outside' | "$prog" "$tmp/bare" "$@" > "$tmp/bare.out"
printf 'bytes-from-outside' | "$encore" record -q -o "$tmp/session" --name "$name" \
    --hash-every "$k" -- "$prog" "$tmp/rec" "$@" > "$tmp/rec.out" 2> "$tmp/rec.err"
cat "$tmp/rec.err" >&2
if [ -n "${EXPECT_STDERR:-}" ] && ! grep -qF "$EXPECT_STDERR" "$tmp/rec.err"; then
    echo "FAIL: encore record did not say: $EXPECT_STDERR"
    exit 1
fi

# Security: the session directory is 0700, every trace file 0600.
[ "$(stat -c %a "$tmp/session")" = 700 ] || { echo "FAIL: session directory mode"; exit 1; }
for f in "$tmp"/session/*.trace; do
    [ "$(stat -c %a "$f")" = 600 ] || { echo "FAIL: $f mode $(stat -c %a "$f")"; exit 1; }
done
if ! cmp -s "$tmp/bare.out" "$tmp/rec.out"; then
    echo "FAIL: output differs with recording:"; diff "$tmp/bare.out" "$tmp/rec.out" || true
    exit 1
fi
# Lines marked vary=1 (e.g. how much of a non-blocking send the kernel took) keep their
# result and hash out of the comparison too.
norm() {
    sed -e 's/ v=[0-9a-f]*//' -e 's/ \(ino\|pino\|epl\|epp\)=[^ ]*//g' "$1" |
    awk '$1 == "clock" || $1 == "random" || $1 == "pid" || $1 == "fork" || $1 == "wait" { $5 = "X" }
         $1 == "kill" { sub(/ a=[0-9-]*/, " a=X") }
         / vary=1/ { $5 = "X"; sub(/ h=[0-9a-f]*/, "") } { print }'
}
for r in "$tmp"/bare/*.report; do
    b=$(basename "$r")
    norm "$r" > "$tmp/a"; norm "$tmp/rec/$b" > "$tmp/b"
    if ! cmp -s "$tmp/a" "$tmp/b"; then
        echo "FAIL: $b differs with recording:"; diff "$tmp/a" "$tmp/b" || true
        exit 1
    fi
done
if [ "$killed" = "-" ]; then
    "$check" "$tmp/session" "$tmp/rec"
else
    "$check" --killed "$killed" "$tmp/session" "$tmp/rec"
fi
