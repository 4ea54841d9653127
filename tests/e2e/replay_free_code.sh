#!/bin/sh
# replay_free_code.sh: two threads that meet through atomics in the code they run between
# their events (progs/free_code.c: a reference count whose last holder closes a pipe, and a
# pending flag as libuv's uv_async_send keeps one), recorded with the worker held up by a
# delay the replay does not have (FREE_CODE_DELAY: the scheduler's, in the recording of BIND's
# dig); each of 3 recordings per mode replays to the end twice with the recorded output:
# replay runs a thread's free code where the trace puts it (replayer/README.md, "Threads"),
# where before the worker dropped its reference at once (and read the clock instead of
# closing) and the woken worker cleared the flag before the main thread read it.
# Usage: replay_free_code.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_free_code.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

for mode in late early; do
    case $mode in late) want='closed by worker' ;; early) want='wakeups sent: 1' ;; esac
    for rec in 1 2 3; do
        s=$tmp/$mode$rec
        FREE_CODE_DELAY=1 "$encore" record -q -o "$s" --name fc -- "$prog" $mode > "$tmp/rec.out"
        grep -qx "$want" "$tmp/rec.out" || {
            echo "FAIL: $mode, recording $rec printed:"; cat "$tmp/rec.out"; exit 1; }
        for run in 1 2; do
            if ! timeout 120 "$encore" replay --stall-timeout 10 "$s" > "$tmp/rep.out" 2> "$tmp/rep.err"; then
                echo "FAIL: $mode, recording $rec, replay $run did not replay to the end:"
                cat "$tmp/rep.err"; exit 1
            fi
            cmp -s "$tmp/rec.out" "$tmp/rep.out" || {
                echo "FAIL: $mode, recording $rec, replay $run printed:"; cat "$tmp/rep.out"; exit 1; }
        done
    done
done
echo "ok: 3 recordings of each mode replayed twice each with the recorded output"
