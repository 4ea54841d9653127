#!/bin/sh
# replay_pipe_workers.sh: a parent and three forked workers sharing one task pipe and one answers
# pipe (progs/pipe_workers.c; which worker gets which task is the kernel's choice) recorded 5
# times; each recording replays to the end printing what it printed (which worker did which
# task, in the order the answers came), and halts at `encore inf`'s cut for a predicate on a
# worker (replayer/README.md, "Pipe ends several processes hold").  Before the shared offsets,
# the workers raced for the tasks in replay and printed another assignment.
# With "sem" the workers take process-shared semaphores around their reads and answers (as
# Python's multiprocessing.Pool does): replay gives them in the recorded order.
# Usage: replay_pipe_workers.sh ENCORE PROG [sem]
set -eu
encore=$1 prog=$2 mode=${3:-}
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_pipe_workers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/halt_at_inf.sh"

for rec in 1 2 3 4 5; do
    s=$tmp/s$rec
    "$encore" record -q -o "$s" --name pw -- "$prog" $mode > "$tmp/rec.out"
    [ "$(grep -c '^worker [0-2] did task ' "$tmp/rec.out")" = 12 ] || {
        echo "FAIL: recording $rec:"; cat "$tmp/rec.out"; exit 1; }
    for run in 1 2; do
        if ! timeout 120 "$encore" replay --stall-timeout 10 "$s" > "$tmp/rep.out" 2> "$tmp/rep.err"; then
            echo "FAIL: recording $rec did not replay to the end:"; cat "$tmp/rep.err"; exit 1
        fi
        grep -q "replayed to the end" "$tmp/rep.err" || { echo "FAIL: no summary"; cat "$tmp/rep.err"; exit 1; }
        if ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
            echo "FAIL: recording $rec, replay $run printed other lines:"
            diff "$tmp/rec.out" "$tmp/rep.out" | head -20 || true
            exit 1
        fi
    done
    if [ "$mode" = sem ]; then
        # the semaphores' order is in the happened-before relation, in SQL too: each worker's
        # acquisition after the one before it (from another process at least once)
        n=$("$encore" sql --csv "$s" "SELECT count(*) FROM dependency d JOIN event a ON a.id = d.src
            JOIN event b ON b.id = d.dst WHERE d.kind = 'order' AND a.proc != b.proc AND hb(d.src, d.dst)")
        n=$(echo "$n" | tail -1)
        [ "$n" -gt 0 ] || { echo "FAIL: recording $rec: no semaphore edge between processes in SQL"; exit 1; }
    fi
    [ ! -e "$s/.encore-replay" ] || { echo "FAIL: the replay left $s/.encore-replay:"; ls -la "$s/.encore-replay"; exit 1; }
    # the halt: the first state where worker 2 has received 2 tasks, if it ever does (a worker
    # may get fewer); else one where some worker has received one
    halt_at_inf "$s" "$rec" 'pw.2: received >= 2' 'pw.1: received >= 2' 'pw.3: received >= 2' 'pw.1: received >= 1'
    # the online protocol (the GD pulls what each receive and acquisition needs) halts there too
    if ! timeout 120 "$encore" replay --online --json --then kill --stall-timeout 10 --stop "$p" \
            "$s" > "$tmp/onl.json" 2> "$tmp/onl.err"; then
        echo "FAIL: recording $rec: the online replay did not halt:"; cat "$tmp/onl.err"; exit 1
    fi
    o=$(cuts "$tmp/onl.json")
    [ "$a" = "$o" ] || { echo "FAIL: recording $rec: '$p' online halted at $o, not $a"; exit 1; }
done
echo "ok: 5 recordings of workers sharing a task pipe${mode:+ ($mode)} replayed twice each with the same output, and halted at the cut"
