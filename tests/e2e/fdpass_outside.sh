#!/bin/sh
# fdpass_outside.sh: a descriptor passed by a process outside the session
# (replayer/README.md, PASS): the recorded client connects to a helper run bare, which passes
# it one end of a socketpair holding a line.  In replay the helper is not there: the client's
# receive gives back the recorded ancillary data, the descriptor is a stand-in at its recorded
# number, and what the client reads from it comes from the trace.  Output identical, twice.
# Usage: fdpass_outside.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/fdpass_outside.XXXXXX")
helper=
trap '[ -n "$helper" ] && kill "$helper" 2>/dev/null; rm -rf "$tmp"' EXIT

"$prog" helper "$tmp/sock" &
helper=$!
"$encore" record -q -o "$tmp/s" --name out -- "$prog" outside "$tmp/sock" > "$tmp/rec.out"
wait "$helper"
helper=
grep -q 'read from it: a line from a process outside' "$tmp/rec.out" || {
    echo "FAIL: the recorded run did not get the line:"; cat "$tmp/rec.out"; exit 1; }
"$encore" dump "$tmp/s" | grep -q ' pass  *recvmsg ' || { echo "FAIL: no PASS event"; exit 1; }
for run in 1 2; do
    "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || {
        echo "FAIL: replay $run:"; cat "$tmp/rep.err"; exit 1; }
    cmp -s "$tmp/rec.out" "$tmp/rep.out" || {
        echo "FAIL: replay $run printed something else:"; diff "$tmp/rec.out" "$tmp/rep.out" || true
        exit 1; }
done
echo "ok: a descriptor from outside replayed with a stand-in"
