#!/bin/sh
# replay_session.sh: a session of two roots recorded separately (`encore record --session`):
# a TCP server and its client, started from two "shells".  `encore replay` starts both again;
# the server gets its recorded port back (it asked for any port: the client was told the
# recorded number on its command line), the client connects to it, and each prints what it
# printed when recorded.  The port goes through a FIFO (blocking reads, no sleep).
# Usage: replay_session.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_sess.XXXXXX")
pids=""
cleanup() { for p in $pids; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT
mkfifo "$tmp/port"
"$encore" record -q --session "$tmp/s" --name server -- "$prog" serve "$tmp/port" > "$tmp/srv.rec" &
srv=$!; pids="$srv"
read -r port < "$tmp/port"
"$encore" record -q --session "$tmp/s" --name client -- "$prog" client "$port" 6 > "$tmp/cl.rec"
wait "$srv"; pids=""
cat "$tmp/srv.rec" "$tmp/cl.rec" > "$tmp/all.rec"

cat "$tmp/port" > "$tmp/port.rep" & rd=$!; pids="$rd"   # the replayed server writes its port
# the port goes to a FIFO read outside the replay: not through an overlay (--no-isolate)
"$encore" replay --no-isolate --stall-timeout 30 "$tmp/s" > "$tmp/all.rep" 2> "$tmp/err" || {
    echo "FAIL: replay:"; cat "$tmp/err"; exit 1; }
wait "$rd"; pids=""
[ "$(cat "$tmp/port.rep")" = "$port" ] || { echo "FAIL: port $(cat "$tmp/port.rep"), recorded $port"; exit 1; }
for who in server client; do
    grep "^$who:" "$tmp/all.rec" > "$tmp/a"; grep "^$who:" "$tmp/all.rep" > "$tmp/b"
    cmp -s "$tmp/a" "$tmp/b" || { echo "FAIL: $who printed something else:"; diff "$tmp/a" "$tmp/b"; exit 1; }
    [ -s "$tmp/a" ] || { echo "FAIL: $who printed nothing"; exit 1; }
done
# halting across the two roots, as encore inf says
p='server: received >= 3 && client: received >= 2'
"$encore" inf --json "$tmp/s" "$p" > "$tmp/inf"
cat "$tmp/port" > /dev/null & rd=$!; pids="$rd"
"$encore" replay --no-isolate --json --then kill --stop "$p" "$tmp/s" > "$tmp/halt" 2> "$tmp/err" || {
    echo "FAIL: halt:"; cat "$tmp/err"; exit 1; }
wait "$rd" || true; pids=""
a=$(grep -o '"cuts":\[{[^]]*\]' "$tmp/inf"); b=$(grep -o '"cuts":\[{[^]]*\]' "$tmp/halt")
[ -n "$a" ] && [ "$a" = "$b" ] || { echo "FAIL: halted at $b, encore inf: $a"; exit 1; }
echo "ok: two roots, port $port, halt $b"
