#!/bin/sh
# replay_spin_sleep.sh: a process that sleeps with select on no descriptor between its tries
# of a lock in shared memory (progs/spin_sleep.c, PostgreSQL's spinlocks and pg_usleep),
# recorded 3 times sleeping at least 3 times; each recording replays to the end twice,
# printing what it printed, however many times the child sleeps in replay: such a sleep is
# soft, as a failed trylock (replayer/README.md, "Threads": soft trylocks); before, the
# replay stopped where the child took the lock sooner than recorded.
# (the shared file is the program's own, made again by each run: --ignore-changed-files)
# Usage: replay_spin_sleep.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_spin_sleep.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

for rec in 1 2 3; do
    s=$tmp/s$rec
    rm -f "$tmp/area"
    "$prog" --feed "$tmp/area" | "$encore" record -q -o "$s" --name spin -- "$prog" "$tmp/area" > "$tmp/rec.out"
    n=$("$encore" dump "$s" | grep -c ' select = 0') || true
    [ "$n" -ge 3 ] || { echo "FAIL: recording $rec: $n sleeps, not 3 or more"; exit 1; }
    for run in 1 2; do
        if ! timeout 120 "$encore" replay --stall-timeout 10 --ignore-changed-files "$s" > "$tmp/rep.out" 2> "$tmp/rep.err"; then
            echo "FAIL: recording $rec ($n sleeps), replay $run did not replay to the end:"; cat "$tmp/rep.err"; exit 1
        fi
        cmp -s "$tmp/rec.out" "$tmp/rep.out" || {
            echo "FAIL: recording $rec, replay $run printed:"; cat "$tmp/rep.out"; exit 1; }
    done
done
echo "ok: 3 recordings of a process sleeping between tries of a lock replayed twice each"
