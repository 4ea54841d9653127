#!/bin/sh
# replay_threads.sh: a multi-threaded program whose output depends on how its threads were
# scheduled (tests/e2e/progs/threads.c) is recorded RUNS times; each recording replays to
# the end with the same output, byte for byte (replayer/README.md, "Threads").  The output
# goes through a pipe (a channel: its writes are events, ordered between the threads).
# Usage: replay_threads.sh ENCORE RUNS PROG MODE [ARGS...]   (an argument @TMP@ is replaced
# by a fresh directory)
set -eu
encore=$1 runs=$2
shift 2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_threads.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/w"
prog=$1
shift
args=""
for a in "$@"; do
    [ "$a" = "@TMP@" ] && a="$tmp/w"
    args="$args $a"
done
run=1
while [ "$run" -le "$runs" ]; do
    rm -rf "$tmp/s"
    # shellcheck disable=SC2086
    "$encore" record -q -o "$tmp/s" --name thr -- "$prog" $args 2> "$tmp/rec.err" |
        cat > "$tmp/rec.out"
    [ -s "$tmp/rec.out" ] || { echo "FAIL: recording $run printed nothing"; cat "$tmp/rec.err"; exit 1; }
    cp "$tmp/rec.out" "$tmp/out.$run"
    { rc=0; timeout 120 "$encore" replay "$tmp/s" 2> "$tmp/rep.err" || rc=$?; echo $rc > "$tmp/st"; } |
        cat > "$tmp/rep.out"
    if [ "$(cat "$tmp/st")" = 124 ]; then
        echo "FAIL: replay $run hung (killed after 120 s)"; cat "$tmp/rep.err"; exit 1
    fi
    if ! grep -q "replayed to the end" "$tmp/rep.err"; then
        echo "FAIL: replay of recording $run did not run to the end:"; cat "$tmp/rep.err"; exit 1
    fi
    if ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
        echo "FAIL: replay of recording $run printed something else than the recorded run:"
        diff "$tmp/rec.out" "$tmp/rep.out" | head -20 || true
        exit 1
    fi
    run=$((run + 1))
done
distinct=$(md5sum "$tmp"/out.* | cut -d' ' -f1 | sort -u | wc -l)
echo "ok: $runs recordings replayed identically ($distinct different outputs among them)"
