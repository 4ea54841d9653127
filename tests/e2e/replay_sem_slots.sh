#!/bin/sh
# replay_sem_slots.sh: processes that pick a free slot in shared memory and drain its
# process-shared semaphore (progs/sem_slots.c, PostgreSQL's PGSemaphoreReset), recorded
# 3 times with the slots taken in an order the replay does not follow by itself; each
# recording replays to the end twice, printing what it printed.  A successful sem_trywait
# whose next event is a failed one of the same semaphore is a drain: replay tries it for
# real and gives the success back (replayer/README.md, "Process-shared semaphores"); before,
# replay waited on the semaphore for ever where the process had picked the slot another had
# drained.
# (the shared file is the program's own, made again by each run: --ignore-changed-files)
# Usage: replay_sem_slots.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_sem_slots.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

for rec in 1 2 3; do
    s=$tmp/s$rec
    rm -f "$tmp/area"
    "$prog" --feed "$tmp/area" | "$encore" record -q -o "$s" --name slots -- "$prog" "$tmp/area" > "$tmp/rec.out"
    printf 'A drained 0\nB drained 1\n' > "$tmp/want"
    cmp -s "$tmp/want" "$tmp/rec.out" || { echo "FAIL: recording $rec printed:"; cat "$tmp/rec.out"; exit 1; }
    for run in 1 2; do
        if ! timeout 120 "$encore" replay --stall-timeout 10 --ignore-changed-files "$s" > "$tmp/rep.out" 2> "$tmp/rep.err"; then
            echo "FAIL: recording $rec, replay $run did not replay to the end:"; cat "$tmp/rep.err"; exit 1
        fi
        cmp -s "$tmp/rec.out" "$tmp/rep.out" || {
            echo "FAIL: recording $rec, replay $run printed:"; cat "$tmp/rep.out"; exit 1; }
    done
done
echo "ok: 3 recordings of processes draining the semaphores of slots picked in shared memory replayed twice each"
