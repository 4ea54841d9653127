#!/bin/sh
# replay_fdnum_mix.sh: two threads take and free descriptor numbers, one with calls the
# recorder logs (open, fopen, fclose, close), the other also with calls it does not log
# (opendir, eventfd, a close through syscall(2), failed opens) and an open from inside a
# dl_iterate_phdr callback.  Recording must end (it deadlocked: the fd-order lock was held
# across a file note that walks the loaded objects), and each of four recordings replays with
# the recorded output (a number moved by an unlogged call, or a failed open taking the next
# open's event, made the replay diverge: replayer/README.md, "Threads").
# Usage: replay_fdnum_mix.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_fdnum_mix.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/d"
echo apple > "$tmp/d/a"
echo banana > "$tmp/d/b"
for i in 1 2 3 4; do
    rm -rf "$tmp/s"
    rc=0
    timeout 120 "$encore" record -q -o "$tmp/s" -- "$prog" "$tmp/d" 300 \
        > "$tmp/rec.out" 2> "$tmp/rec.err" || rc=$?
    if [ $rc != 0 ]; then
        echo "FAIL: recording $i exited $rc (124: it hung):"; cat "$tmp/rec.err"; exit 1
    fi
    rc=0
    timeout 120 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
    if [ $rc != 0 ] || ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
        echo "FAIL: replay of recording $i exited $rc:"; cat "$tmp/rep.err"; exit 1
    fi
done
echo "ok: four recordings replayed: $(cat "$tmp/rec.out")"
