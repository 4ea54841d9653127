#!/bin/sh
# replay_spin.sh: threads spinning on a mutex as jemalloc does (tests/e2e/progs/spin_lock.c:
# trylock, spin on a plain atomic flag trying again, clock, last trylock, lock, clock), one
# of them made through dlsym(RTLD_NEXT, "pthread_create") from a library loaded after the
# preload, are recorded RUNS times; each recording replays to the end printing the same lock
# order (replayer/README.md, "Threads": soft trylocks).  Also checked: every thread was
# seen start (a THREAD event for each, no warning), RTLD_NEXT kept its meaning under both
# preloads (the program exits 3 otherwise), and some recording had failed trylocks (else the
# test would show nothing).
# With "alloc" the threads also allocate (the program linked with jemalloc, whose
# background thread MALLOC_CONF turns on: its calls are the allocator's own, not events);
# with "sem" the lock is a semaphore (sem_trywait failures are soft too); with "fewer" a
# thread fails 600 trylocks when recorded while another holds the lock, and its replay is
# given one try (SPIN_TRIES=1) before it reads the clock, takes its last trylock and locks:
# the clock read is the recorded one, past the failures the replay did not make; with
# "gaveup" the holder lets go after 300 of those failures: the recorded thread got the lock by
# trying, the replay gives up after one try, reads the clock (a borrowed value) and locks.
# On failure the session directory is kept (its path is printed) for `encore dump`.
# Usage: replay_spin.sh ENCORE RUNS PROG THREADS PASSES [alloc|sem|fewer|gaveup]
set -eu
encore=$1 runs=$2 prog=$3 threads=$4 passes=$5 mode=${6:-}
[ -n "$prog" ] || { echo "SKIP: no program (libjemalloc.so.2 missing at build time)"; exit 77; }
[ "$mode" != alloc ] || export MALLOC_CONF=background_thread:true
failpat='pthread_mutex_trylock.* = 16'
[ "$mode" != sem ] || failpat='sem_trywait.* = -1 '
tries=
[ "$mode" != fewer ] && [ "$mode" != gaveup ] || tries="--setenv SPIN_TRIES=1"

tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_spin.XXXXXX")
passed=0
trap '[ "$passed" = 1 ] && rm -rf "$tmp" || echo "(kept: $tmp)"' EXIT
failed=0
run=1
while [ "$run" -le "$runs" ]; do
    rm -rf "$tmp/s"
    { "$encore" record -q -o "$tmp/s" --name spin -- "$prog" "$threads" "$passes" $mode \
        2> "$tmp/rec.err"; echo $? > "$tmp/rst"; } | cat > "$tmp/rec.out"
    if [ "$(cat "$tmp/rst")" != 0 ]; then
        echo "FAIL: recording $run exited with $(cat "$tmp/rst")"; cat "$tmp/rec.err"; exit 1
    fi
    if grep -q "did not see start" "$tmp/rec.err"; then
        echo "FAIL: recording $run has a thread the recorder did not see start:"
        cat "$tmp/rec.err"; exit 1
    fi
    "$encore" dump "$tmp/s" > "$tmp/dump"
    made=$(grep -c ' thread  *pthread_create = [1-9]' "$tmp/dump" || true)
    if [ "$made" != "$threads" ]; then
        echo "FAIL: recording $run logged $made thread creations, not $threads"; exit 1
    fi
    n=$(grep -c "$failpat" "$tmp/dump" || true)
    failed=$((failed + n))
    { timeout 120 "$encore" replay $tries "$tmp/s" 2> "$tmp/rep.err"; echo $? > "$tmp/st"; } |
        cat > "$tmp/rep.out"
    if [ "$(cat "$tmp/st")" = 124 ]; then
        echo "FAIL: replay $run hung (killed after 120 s)"; cat "$tmp/rep.err"; exit 1
    fi
    if ! grep -q "replayed to the end" "$tmp/rep.err"; then
        echo "FAIL: replay of recording $run ($n failed trylocks) did not run to the end:"
        cat "$tmp/rep.err"; exit 1
    fi
    if ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
        echo "FAIL: replay of recording $run printed another lock order than the recorded run:"
        diff "$tmp/rec.out" "$tmp/rep.out" | head -5 || true
        exit 1
    fi
    cp "$tmp/rec.out" "$tmp/out.$run"
    run=$((run + 1))
done
if [ "$failed" = 0 ]; then
    echo "FAIL: no trylock failed in $runs recordings: the threads never contended"; exit 1
fi
distinct=$(md5sum "$tmp"/out.* | cut -d' ' -f1 | sort -u | wc -l)
passed=1
echo "ok: $runs recordings ($failed failed trylocks) replayed identically ($distinct different lock orders)"
