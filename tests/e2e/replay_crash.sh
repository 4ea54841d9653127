#!/bin/sh
# replay_crash.sh: a replayed process that dies where the recorded one did not (its input
# file changed: file contents are not recorded, and --ignore-changed-files lets the replay
# start although the file changed) ends the replay early, and the report says how it
# died (the signal, or the exit status) and where, not only the state it reached.  And a
# root that died of SIGPIPE writing to a reader outside the session replays to that death.
# Usage: replay_crash.sh ENCORE PROG   (PROG crash FILE: abort() when FILE says "crash";
#   PROG yes: writes lines until SIGPIPE)
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_crash.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo ok > "$tmp/in"
"$encore" record -q -o "$tmp/s" --name cr -- "$prog" crash "$tmp/in" > "$tmp/rec.out"
grep -q '^no crash$' "$tmp/rec.out" || { echo "FAIL: the recorded run crashed"; exit 1; }
echo crash > "$tmp/in"
rc=0
timeout 60 "$encore" replay --ignore-changed-files --stall-timeout 20 "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
[ "$rc" = 1 ] || { echo "FAIL: replay exit status $rc, expected 1"; cat "$tmp/rep.err"; exit 1; }
grep -q 'ended early' "$tmp/rep.err" && grep -q 'cr ended at state 2 of 4, killed by signal 6 (Aborted)' "$tmp/rep.err" || {
    echo "FAIL: the report does not say how cr died:"; cat "$tmp/rep.err"; exit 1; }
echo "ok: $(grep 'cr ended' "$tmp/rep.err")"

# A root that died of SIGPIPE writing into a pipe whose reader was outside the session
# (`yes | head`): replayed with its stdout a file, it dies of SIGPIPE at the same point
# (nobody to wait for), and the replay ends as recorded.
"$encore" record -q -o "$tmp/y" --name yes -- "$prog" yes | head -n 1 > /dev/null
timeout 60 "$encore" replay --stall-timeout 20 "$tmp/y" > "$tmp/y.out" 2> "$tmp/y.err" || {
    echo "FAIL: the replay of a death by SIGPIPE:"; cat "$tmp/y.err"; exit 1; }
grep -q 'replayed to the end' "$tmp/y.err" || { echo "FAIL: no summary"; cat "$tmp/y.err"; exit 1; }
echo "ok: death by SIGPIPE with stdout a file: $(wc -c < "$tmp/y.out") bytes, as recorded"
