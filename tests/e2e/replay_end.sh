#!/bin/sh
# replay_end.sh: record a multi-process program whose output depends on message order,
# clocks and random bytes, replay it to the end, and require the same stdout byte for byte
# (replayer/README.md, "Faithful re-execution").  Run twice: the replay is repeatable.
# Usage: replay_end.sh ENCORE NAME PROG [ARGS...]
#   An argument @TMP@ is replaced by a fresh directory (for programs that write reports);
#   the recorded program reads bytes from outside the session on its stdin.
set -eu
encore=$1 name=$2
shift 2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_end.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

mkdir "$tmp/w"
prog=$1
shift
args=""
for a in "$@"; do
    [ "$a" = "@TMP@" ] && a="$tmp/w"
    args="$args $a"
done
# shellcheck disable=SC2086
printf 'bytes-from-outside' | "$encore" record -q -o "$tmp/s" --name "$name" -- "$prog" $args > "$tmp/rec.out"
for run in 1 2; do
    if ! "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err"; then
        echo "FAIL: replay $run did not run to the end:"; cat "$tmp/rep.err"; exit 1
    fi
    if ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
        echo "FAIL: replay $run printed something else than the recorded run:"
        diff "$tmp/rec.out" "$tmp/rep.out" | head -20 || true
        exit 1
    fi
    grep -q "replayed to the end" "$tmp/rep.err" || { echo "FAIL: no summary"; exit 1; }
done
# the replay leaves nothing in the session directory
if [ -e "$tmp/s/.encore-replay" ]; then echo "FAIL: .encore-replay left behind"; exit 1; fi
echo "ok: $(wc -l < "$tmp/rec.out") lines identical"
