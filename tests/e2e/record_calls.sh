#!/bin/sh
# record_calls.sh: records tests/e2e/progs/e2e_calls (two processes, an exec, every call the
# recorder intercepts), then checks:
#   1. transparency: the program's output and its reports are the same with and without
#      recording (values that differ between any two runs -- clocks, random bytes, pids --
#      are left out of the comparison);
#   2. the traces match the reports event by event (check_trace).
# Usage: record_calls.sh ENCORE PROG CHECK_TRACE K
set -eu
encore=$1 prog=$2 check=$3 k=$4
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_calls.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bare" "$tmp/rec"

printf 'bytes-from-outside' | "$prog" "$tmp/bare" "$k" > "$tmp/bare.out"
printf 'bytes-from-outside' | "$encore" record -q -o "$tmp/session" --name calls \
    --hash-every "$k" -- "$prog" "$tmp/rec" "$k" > "$tmp/rec.out"

if ! cmp -s "$tmp/bare.out" "$tmp/rec.out"; then
    echo "FAIL: output differs with recording:"; diff "$tmp/bare.out" "$tmp/rec.out" || true
    exit 1
fi
# Run-dependent values: clocks, random bytes, pids, inodes, ports.
norm() {
    sed -e 's/ v=[0-9a-f]*//' -e 's/ \(ino\|pino\|epl\|epp\)=[^ ]*//g' "$1" |
    awk '$1 == "clock" || $1 == "random" || $1 == "pid" || $1 == "fork" { $5 = "X" } { print }'
}
for r in "$tmp"/bare/*.report; do
    b=$(basename "$r")
    norm "$r" > "$tmp/a"; norm "$tmp/rec/$b" > "$tmp/b"
    if ! cmp -s "$tmp/a" "$tmp/b"; then
        echo "FAIL: $b differs with recording:"; diff "$tmp/a" "$tmp/b" || true
        exit 1
    fi
done
"$check" "$tmp/session" "$tmp/rec"
