#!/bin/sh
# replay_bash_chain.sh: a chain of bash scripts that exec one another through
# `#!/usr/bin/env bash`, with command substitutions in each (the way pyenv's shims start a
# python): bash resets its SIGCHLD handler to the default before each exec, and a child's
# SIGCHLD that came while the recorder was busy must not run the handler bash had removed
# (recorder/signals.c, flush), and a forked child whose trace has handler runs must see them
# even when its events land where its parent's were (replayer/lc.h, lc.loads).  Six
# recordings, each replayed to the end with the recorded output.
# Usage: replay_bash_chain.sh ENCORE
set -eu
encore=$1
command -v bash > /dev/null || { echo "skip: bash not installed"; exit 77; }
[ -x /usr/bin/env ] || { echo "skip: /usr/bin/env missing"; exit 77; }
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_bash_chain.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/a" <<'S'
#!/usr/bin/env bash
set -e
here="$(cd "$(dirname "$0")" && pwd)"
v="$(readlink -f "$0" || true)"
exec "$here/b" "$@"
S
cat > "$tmp/b" <<'S'
#!/usr/bin/env bash
set -e
n="$(echo "$1" | tr a-z A-Z)"
for i in 1 2 3; do m="$(printf '%s-%s' "$n" "$i")"; done
exec "$(dirname "$0")/c" "$m"
S
cat > "$tmp/c" <<'S'
#!/usr/bin/env bash
echo "got $1 $(basename "$0")"
S
chmod 700 "$tmp/a" "$tmp/b" "$tmp/c"
for run in 1 2 3 4 5 6; do
    rm -rf "$tmp/s"
    "$encore" record -q -o "$tmp/s" -- "$tmp/a" hello > "$tmp/rec.out" 2> "$tmp/rec.err"
    if ! grep -qx "got HELLO-3 c" "$tmp/rec.out"; then
        echo "FAIL: recording $run printed something else:"; cat "$tmp/rec.out" "$tmp/rec.err"
        exit 1
    fi
    rc=0
    timeout 120 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
    if [ $rc != 0 ] || ! grep -q "replayed to the end" "$tmp/rep.err" ||
        ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
        echo "FAIL: replay $run (exit $rc):"; cat "$tmp/rep.err"
        diff "$tmp/rec.out" "$tmp/rep.out" || true
        exit 1
    fi
done
echo "ok: 6 recordings of a bash exec chain replayed with the recorded output"
