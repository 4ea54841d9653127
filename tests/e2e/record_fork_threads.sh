#!/bin/sh
# record_fork_threads.sh: recording never hangs a threaded program that forks (recorder/README.md,
# "Limits"): fork_atfork's atfork handler locks a mutex its busy thread holds around
# clock_gettime.  The recorder holds its lock across the fork (so that the child starts from a
# consistent state); a thread that then needs it must not wait, or it waits for the fork that
# waits for its mutex.  Bounded by `timeout`: a hang fails the test.
# Usage: record_fork_threads.sh ENCORE FORK_ATFORK
set -eu
encore=$1 prog=$2
. "$(dirname "$0")/real_lib.sh"
real_init fork_threads

timeout 60 "$encore" record -q -o "$real_tmp/s" --name fa -- "$prog" 100 > "$real_tmp/out" \
    2> "$real_tmp/err" || { cat "$real_tmp/err"; real_fail "encore record (hung or failed)"; }
grep -qx '100 forks' "$real_tmp/out" || real_fail "the program did not finish its forks"
real_check "$real_tmp/s"
n=$(ls "$real_tmp/s"/fa.*.trace | wc -l)
[ "$n" = 100 ] || real_fail "$n children recorded, not 100"
echo "ok: 100 forks beside a busy thread, recorded; 101 traces whole"
