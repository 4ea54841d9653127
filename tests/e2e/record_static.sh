#!/bin/sh
# record_static.sh: `encore record` refuses a static binary before running it, with a clear
# message and exit status 1.
# Usage: record_static.sh ENCORE STATIC_PROG
set -u
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_static.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$encore" record -q -o "$tmp/s" -- "$prog" "$tmp/ran" 2> "$tmp/err"
rc=$?
cat "$tmp/err"
[ "$rc" -eq 1 ] || { echo "FAIL: exit status $rc, expected 1"; exit 1; }
grep -q "statically linked" "$tmp/err" || { echo "FAIL: no clear message"; exit 1; }
[ ! -e "$tmp/ran" ] || { echo "FAIL: the static program ran"; exit 1; }
echo "refused as expected"
