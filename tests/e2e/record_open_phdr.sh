#!/bin/sh
# record_open_phdr.sh: a program whose one thread opens files from inside dl_iterate_phdr
# (libbacktrace's way) while another opens files too runs recorded to its end: the recorder
# never waits for the loader's lock while holding its own (recorder/files.c).  A deadlock
# would hang forever: the watchdog (far above the run's length) turns it into a failure.
# Usage: record_open_phdr.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_open_phdr.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "some bytes" > "$tmp/data"
"$prog" "$tmp/data" 20000 > /dev/null
rc=0
timeout 100 "$encore" record -q -o "$tmp/s" -- "$prog" "$tmp/data" 20000 > "$tmp/out" || rc=$?
if [ "$rc" = 124 ]; then
    echo "FAIL: the recorded program deadlocked (opens inside and outside dl_iterate_phdr)"
    exit 1
fi
[ "$rc" = 0 ] && grep -q '^done$' "$tmp/out" || { echo "FAIL: exit $rc"; exit 1; }
"$encore" check "$tmp/s" > /dev/null
echo "ok: 2 x 20000 opens, no deadlock"
