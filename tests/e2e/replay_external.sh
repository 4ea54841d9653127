#!/bin/sh
# replay_external.sh: peers outside the session (replayer/README.md: "bytes from unrecorded peers are
# returned from the trace without touching the outside world").  A TCP client is recorded
# talking to a server that is not recorded, then replayed with no server at all; and a
# server is recorded serving an unrecorded client, then replayed with no client.  Both must
# print what they printed when recorded.  The background processes are the test's own,
# waited for by pid; the port comes through a FIFO (a blocking read, no sleep).
# Usage: replay_external.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_ext.XXXXXX")
pids=""
cleanup() { for p in $pids; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT

# 1. recorded client, unrecorded server
mkfifo "$tmp/port1"
"$prog" serve "$tmp/port1" > /dev/null & srv=$!; pids="$srv"
read -r port < "$tmp/port1"
"$encore" record -q -o "$tmp/c" --name cl -- "$prog" client "$port" 6 > "$tmp/c.rec"
wait "$srv"; pids=""
"$encore" replay "$tmp/c" > "$tmp/c.rep" 2> "$tmp/c.err" || { cat "$tmp/c.err"; exit 1; }
cmp -s "$tmp/c.rec" "$tmp/c.rep" || { echo "FAIL: client:"; diff "$tmp/c.rec" "$tmp/c.rep"; exit 1; }
echo "ok: client replayed without its server ($(wc -l < "$tmp/c.rec") lines)"

# 2. recorded server, unrecorded client
mkfifo "$tmp/port2"
"$encore" record -q -o "$tmp/s" --name srv -- "$prog" serve "$tmp/port2" > "$tmp/s.rec" & rec=$!; pids="$rec"
read -r port < "$tmp/port2"
"$prog" client "$port" 6 > /dev/null
wait "$rec"; pids=""
cat "$tmp/port2" > /dev/null & rd=$!; pids="$rd"   # the replayed server writes its port again
# ... into the FIFO a process outside the replay reads: not through an overlay (--no-isolate)
"$encore" replay --no-isolate "$tmp/s" > "$tmp/s.rep" 2> "$tmp/s.err" || { cat "$tmp/s.err"; exit 1; }
wait "$rd"; pids=""
cmp -s "$tmp/s.rec" "$tmp/s.rep" || { echo "FAIL: server:"; diff "$tmp/s.rec" "$tmp/s.rep"; exit 1; }
echo "ok: server replayed without its client ($(wc -l < "$tmp/s.rec") lines)"
