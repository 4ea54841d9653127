#!/bin/sh
# replay_env_lengths.sh: a program whose events depend on the lengths of its environment's
# entries (progs/env_walk.c: a lock per 16 bytes of each, as Tcl's allocator at its exit)
# replays: it gets its recorded environment back, ENCORE_RECORD and LD_PRELOAD as it saw
# them (replayer/README.md, "Environment"; schemas/trace-format.md, "Environment").  Before,
# it diverged at a lock where the recorded run had done its write.  Run as a root and as an image a recorded shell execs.
# Usage: replay_env_lengths.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_env_lengths.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for how in root exec; do
    s=$tmp/s.$how
    if [ $how = root ]; then
        "$encore" record -q -o "$s" --name ew -- "$prog" > "$tmp/rec.out" 2> "$tmp/rec.err"
    else
        "$encore" record -q -o "$s" --name ew -- /bin/sh -c "$prog; true" > "$tmp/rec.out" 2> "$tmp/rec.err"
    fi || { echo "FAIL: recording ($how):"; cat "$tmp/rec.err"; exit 1; }
    grep -q '^walked the environment$' "$tmp/rec.out" || { echo "FAIL: recorded output ($how)"; exit 1; }
    if ! timeout 120 "$encore" replay --stall-timeout 10 "$s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
       ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
        echo "FAIL: the replay ($how) did not follow the recorded environment walk:"; cat "$tmp/rep.err"
        exit 1
    fi
done
echo "ok: a walk of the environment replays, as a root and as an exec'd image"
