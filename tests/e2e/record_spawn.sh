#!/bin/sh
# record_spawn.sh: children started without the recorder seeing a fork (system(), which
# glibc implements with an internal posix_spawn) are recorded as PARENT.s1, PARENT.s2...
# under the name of their real parent, here a forked child (spawn.1) whose environment still
# names the root; a child started with posix_spawn itself is the root's second child,
# spawn.2.  With `replay`, the recording then replays to the end: the forked child's system() children are
# spawn.1.sK in replay too (its LC stamps its own name where its environment names its parent).
# Usage: record_spawn.sh ENCORE E2E_SPAWN [replay]
set -eu
encore=$1 prog=$2 replay=${3:-}
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_spawn.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$encore" record -q -o "$tmp/s" --name spawn -- "$prog"
for f in spawn.trace spawn.1.trace spawn.1.s1.trace spawn.1.s2.trace spawn.2.trace; do
    [ -e "$tmp/s/$f" ] || { echo "FAIL: no $f in:"; ls "$tmp/s"; exit 1; }
done
[ "$replay" = replay ] || { echo "spawned children named as expected"; exit 0; }
if ! "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
   ! grep -q "replayed to the end" "$tmp/rep.err"; then
    echo "FAIL: the replay did not run to the end:"; cat "$tmp/rep.err"; exit 1
fi
echo "spawned children named as expected, and replayed"
