#!/bin/sh
# replay_sem_other.sh: a thread whose replay waits on another semaphore than the recorded
# one (progs/sem_other.c: an order decided by what differs between recording and replay, as
# CPython's ThreadPoolExecutor joins its workers in the order of a set, which follows
# addresses) stalls, and the stall report says what happened: the acquisition at its turn
# blocks though every post recorded before it was made, on another object than recorded
# (replayer/lc_sync.c, sem_acquire).  Before, the report said the thread was "running".
# Usage: replay_sem_other.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_sem_other.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$encore" record -q -o "$tmp/s" --name so -- "$prog" > "$tmp/rec.out" 2> "$tmp/rec.err" ||
    { echo "FAIL: recording:"; cat "$tmp/rec.err"; exit 1; }
grep -q '^took 0 then 1$' "$tmp/rec.out" || { echo "FAIL: recorded output:"; cat "$tmp/rec.out"; exit 1; }
rc=0
timeout 120 "$encore" replay --setenv SEM_OTHER_SECOND=1 --stall-timeout 3 "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
if [ $rc = 0 ] || ! grep -q 'so (pid [0-9]*) at state [0-9]* of [0-9]*: #[0-9]* sync at its turn blocks: the semaphore is taken, though every post recorded before it was made' "$tmp/rep.err"; then
    echo "FAIL: replay exited $rc without saying the semaphore waited on is another one:"
    cat "$tmp/rep.err"; exit 1
fi
echo "ok: a wait on another semaphore than recorded: the stall report says so"
