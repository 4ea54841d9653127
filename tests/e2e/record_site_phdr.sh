#!/bin/sh
# record_site_phdr.sh: a program whose one thread makes calls from new call sites inside a
# dl_iterate_phdr callback while another makes calls from new call sites too runs recorded to
# its end: resolving a site never waits for the loader's lock under the writer's
# (recorder/site.c).  A deadlock would hang forever: the program runs under a watchdog (far
# above the run's length) that kills it, which turns the hang into a failure.
# Usage: record_site_phdr.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_site_phdr.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$prog" 4 > /dev/null
timeout=$(command -v timeout)
rc=0
timeout -k 10 120 "$encore" record -q -o "$tmp/s" -- "$timeout" -s KILL 60 "$prog" 4 \
    > "$tmp/out" || rc=$?
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "FAIL: the recorded program deadlocked (new call sites inside and outside dl_iterate_phdr)"
    exit 1
fi
[ "$rc" = 0 ] && grep -q '^done$' "$tmp/out" || { echo "FAIL: exit $rc"; exit 1; }
"$encore" check "$tmp/s" > /dev/null
echo "ok: 2 x 128 new call sites, inside and outside dl_iterate_phdr, no deadlock"
