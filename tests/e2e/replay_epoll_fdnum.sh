#!/bin/sh
# replay_epoll_fdnum.sh: in a process with threads, each epoll_create and epoll_create1 is an
# FDNUM event (the number taken, ordered with the other threads' opens and closes), and the
# replay prints the recorded numbers (recorder/epoll.c, replayer/lc_nondet.c).
# Usage: replay_epoll_fdnum.sh ENCORE PROG   (PROG is tests/e2e/progs/epoll_threads.c)
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_epoll_fdnum.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for run in 1 2 3; do
    rm -rf "$tmp/s"
    "$encore" record -q -o "$tmp/s" --name ep -- "$prog" > "$tmp/rec.out"
    n=$("$encore" dump "$tmp/s" | grep -c 'fdnum *epoll_create' || true)
    if [ "$n" != 2 ]; then
        echo "FAIL: $n FDNUM events of epoll_create, 2 expected:"; "$encore" dump "$tmp/s"; exit 1
    fi
    rc=0
    timeout 120 "$encore" replay --stall-timeout 10 "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
        rc=$?
    if [ $rc != 0 ] || ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
        echo "FAIL: replay $run (exit $rc):"; cat "$tmp/rec.out" "$tmp/rep.out" "$tmp/rep.err"
        exit 1
    fi
done
echo "ok: 3 recordings, epoll numbers ordered: $(tr '\n' ' ' < "$tmp/rec.out")"
