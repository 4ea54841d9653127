#!/bin/sh
# replay_refuse.sh: clear refusals and reports: a damaged trace and a changed
# binary are refused before anything runs; a process that does something else than its trace
# stops the replay with a report naming the process, the event and the difference; a
# predicate on a process the session does not have is an error.
# Usage: replay_refuse.sh ENCORE PROG PROG_VARIANT
set -eu
encore=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") prog=$2 variant=$3
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_refuse.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
expect_fail() { # expect_fail TEXT CMD...: CMD fails with TEXT on stderr
    text=$1; shift
    if "$@" > "$tmp/out" 2> "$tmp/err"; then
        echo "FAIL: '$*' succeeded"; exit 1
    fi
    grep -qF "$text" "$tmp/err" || { echo "FAIL: '$*' did not say '$text':"; cat "$tmp/err"; exit 1; }
    echo "ok: $(head -1 "$tmp/err")"
}
cp "$prog" "$tmp/prog"
"$encore" record -q -o "$tmp/s" --name pp -- "$tmp/prog" 2 4 > /dev/null
cp -r "$tmp/s" "$tmp/bad"

# a changed binary (another build-id at the recorded path)
cp "$variant" "$tmp/prog"
expect_fail "the executable changed since the recording" "$encore" replay "$tmp/s"
cp "$prog" "$tmp/prog"

# a damaged trace: overwrite bytes all along a child's trace, past its header
f="$tmp/bad/pp.1.trace"
size=$(wc -c < "$f")
off=512
while [ $off -lt "$size" ]; do
    printf 'XXXXXXXX' | dd of="$f" bs=1 seek=$off conv=notrunc 2> /dev/null
    off=$((off + 509))
done
expect_fail "damaged" "$encore" replay "$tmp/bad"

# a divergence: child 2 sends one byte more than it did when recorded
expect_fail "process pp.2" "$encore" replay --setenv REPLAY_PP_EXTRA=1 --stall-timeout 30 "$tmp/s"
grep -qF "event" "$tmp/err" || { echo "FAIL: the divergence does not name the event"; exit 1; }

# a process that hangs outside the trace: no silent wait, the report says who waits for what
expect_fail "no progress" "$encore" replay --setenv REPLAY_PP_HANG=1 --stall-timeout 1 "$tmp/s"
grep -q "pp.2 (pid [0-9]*) at state" "$tmp/err" && grep -q "from pp.2" "$tmp/err" || {
    echo "FAIL: the stall report does not say who waits for whom:"; cat "$tmp/err"; exit 1; }

# unknown process in a cut
echo '{"cuts":[{"nosuch":1}]}' > "$tmp/cut.json"
expect_fail "nosuch" "$encore" replay --cut "$tmp/cut.json" "$tmp/s"

# the recorded working directory is gone
mkdir "$tmp/wd"
(cd "$tmp/wd" && "$encore" record -q -o "$tmp/s2" --name pp -- "$tmp/prog" 1 1 > /dev/null)
rmdir "$tmp/wd"
expect_fail "cannot enter its recorded directory" "$encore" replay "$tmp/s2"

# and the recorded session still replays
"$encore" replay -q "$tmp/s" > /dev/null
