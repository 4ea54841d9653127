#!/bin/sh
# record_open_again.sh: a program that opens one 64 KiB file 200 times, as a server opening
# its files per request does, reads the file's first bytes for the hash once under the
# recorder, not 200 times (recorder/files.c: a file opened again unchanged is not read
# again), and the file is noted with its hash (once: an open of the same path, the file
# unchanged, adds no record to the trace; pack and replay's check read each file once).
# Usage: record_open_again.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_open_again.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

[ -r /proc/self/io ] || { echo "SKIP: no /proc/self/io"; exit 77; }
head -c 65536 /dev/zero | tr '\0' 'x' > "$tmp/data"
"$encore" record -q -o "$tmp/s" -- "$prog" "$tmp/data" 200 > "$tmp/out"
cat "$tmp/out"
extra=$(sed -n 's/^own [0-9]* extra \([0-9]*\)$/\1/p' "$tmp/out")
[ -n "$extra" ] || { echo "FAIL: no count printed"; exit 1; }
# one hash read of 64 KiB and the read of /proc/self/io; 200 would be 12.5 MiB
if [ "$extra" -gt $((2 * 65536)) ]; then
    echo "FAIL: the recorder read $extra bytes for 200 opens of one unchanged 64 KiB file"
    exit 1
fi
# the hash noted is the file's: pack refuses a file whose hash differs from its record
"$encore" check "$tmp/s" > /dev/null
"$encore" pack -q "$tmp/s" > "$tmp/pack.out" 2>&1 || { echo "FAIL: pack:"; cat "$tmp/pack.out"; exit 1; }
echo "ok: $extra bytes read by the recorder for 200 opens"
