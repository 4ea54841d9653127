#!/bin/sh
# replay_fd_limit.sh: a program under a descriptor limit of 16 takes descriptors until the
# kernel refuses one, in a parent and its forked child, and prints every number it got.
# Under a soft limit of 16 (the hard one higher) the preloads keep their descriptors at the
# limit, past every number the program can be given; under a hard limit of 16 (nothing can
# go past it unprivileged) each keeps one, at the same number, recorded and replayed
# (interpose/fdclass.c, ip_dup_high).  Either way the replay must print what the recording
# did: before, the recorder's two descriptors and the replay's one took the program's low
# numbers (every replay diverged at the first pipe).  It also waits in epoll with every
# descriptor taken, for a registration whose data is a heap pointer: the replay could not
# read the registrations from /proc and gave back the recorded run's pointer (a crash).
# Usage: replay_fd_limit.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_fd_limit.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
hard=$(ulimit -Hn)
[ "$hard" = unlimited ] || [ "$hard" -ge 16 ] || { echo "SKIP: hard descriptor limit $hard"; exit 77; }
# Under -n (soft and hard 16) a process with CAP_SYS_RESOURCE still raises the limit for its
# moves; without it (an ordinary user) each preload keeps one descriptor, low: the same
# output is expected either way.
modes="-n"
[ "$hard" = unlimited ] || [ "$hard" -gt 32 ] && modes="-Sn -n"
for m in $modes; do
    rm -rf "$tmp/s"
    rc=0
    (ulimit $m 16 && exec timeout 120 "$encore" record -q -o "$tmp/s" -- "$prog") \
        > "$tmp/rec.out" 2> "$tmp/rec.err" || rc=$?
    [ $rc = 0 ] || { cat "$tmp/rec.err"; fail "recording under ulimit $m 16 exited $rc"; }
    grep -q 'epoll at the limit .*: the pipe is ready' "$tmp/rec.out" ||
        fail "ulimit $m 16: no epoll at the limit: $(cat "$tmp/rec.out")"
    grep -q 'parent: [0-9]* pipes, then Too many open files' "$tmp/rec.out" ||
        fail "ulimit $m 16: the program never met its limit: $(cat "$tmp/rec.out")"
    grep -q 'child: [0-9]* pipes, then Too many open files' "$tmp/rec.out" ||
        fail "ulimit $m 16: the child never met its limit"
    rc=0
    (ulimit $m 16 && exec timeout 120 "$encore" replay "$tmp/s") \
        > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
    if [ $rc != 0 ] || ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
        cat "$tmp/rep.err"
        diff "$tmp/rec.out" "$tmp/rep.out" | head -5
        fail "replay under ulimit $m 16 exited $rc or printed otherwise"
    fi
    echo "ok: ulimit $m 16: replayed: $(grep -c pipe "$tmp/rec.out") pipes"
done
