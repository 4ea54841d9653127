#!/bin/sh
# replay_fexecve.sh: fexecve is an exec: the child's new image is its next segment
# (fx.1@1.trace), not a process started behind the recorder's back (fx.1.s1, whose replay
# ended early, without a reason); the session replays to the end.
# Usage: replay_fexecve.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_fexecve.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$encore" record -q -o "$tmp/s" --name fx -- "$prog" > "$tmp/rec.out"
[ -f "$tmp/s/fx.1@1.trace" ] || { echo "FAIL: no fx.1@1.trace (the fexecve's image):"; ls "$tmp/s"; exit 1; }
[ ! -e "$tmp/s/fx.1.s1.trace" ] || { echo "FAIL: the fexecve's image was taken for a new process"; exit 1; }
"$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || { echo "FAIL: replay:"; cat "$tmp/rep.err"; exit 1; }
cmp -s "$tmp/rec.out" "$tmp/rep.out" || { echo "FAIL: the replay printed something else"; exit 1; }
echo "ok: fexecve recorded as an exec, replayed"
