#!/bin/sh
# record_unix_late_accept.sh: a Unix-socket connection a forked worker accepts after its
# client closed it is matched with that client's connect (progs/unix_late_accept.c): the
# client's SO_PEERCRED pid names the process that listened, the worker's parent, and was
# taken for a mismatch, so the connection stayed unmatched and its replay accepted whatever
# came first (a prefork server's workers then took one another's clients: replay_ends
# diverged about half the time).  Checked through `encore sql`, and the session replays.
# Usage: record_unix_late_accept.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_unix_late_accept.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$encore" record -q -o "$tmp/s" --name ul -- "$prog" > "$tmp/rec.out" 2> "$tmp/rec.err" ||
    { echo "FAIL: recording:"; cat "$tmp/rec.err"; exit 1; }
grep -q "worker got 'quit'" "$tmp/rec.out" || { echo "FAIL: recorded output"; cat "$tmp/rec.out"; exit 1; }
n=$("$encore" sql "$tmp/s" "select count(*) as n from connection" | tail -1 | tr -d ' ')
[ "$n" = 1 ] || { echo "FAIL: $n connections matched, 1 expected"; exit 1; }
"$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
    { echo "FAIL: replay:"; cat "$tmp/rep.err"; exit 1; }
cmp -s "$tmp/rec.out" "$tmp/rep.out" || { echo "FAIL: replay output differs"; exit 1; }
echo "ok: the late accept matched with its client's connect, replayed"
