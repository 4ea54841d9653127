#!/bin/sh
# real_socat.sh: socat (a relay nobody here wrote, select-driven, non-blocking) as two roots
# of one session: an echo server on a Unix socket (UNIX-LISTEN ... PIPE) and a client that
# relays its stdin to it and the echo to its stdout.  Checks: traces whole; analyze/dump/sql
# agree; the connection is matched and the client's stdin is the session's only external
# input, logged whole; replay (stdin /dev/null: the input comes from the trace) prints the
# same bytes; a halt at Inf(P).
# Usage: real_socat.sh ENCORE
set -eu
encore=$1
. "$(dirname "$0")/real_lib.sh"
real_need socat
real_init socat

sock=$real_tmp/echo.sock
real_bg timeout "$real_t" "$encore" record -q --session "$real_tmp/s" --name srv -- \
    "$(real_path socat)" "UNIX-LISTEN:$sock" PIPE > "$real_tmp/srv.out" 2>&1 < /dev/null
srv=$real_last
real_poll 400 test -S "$sock" || real_fail "the server never made its socket"
seq 1 300 | sed 's/$/ bottles/' > "$real_tmp/in"
# stdin a pipe (a regular file as stdin is not a channel: replay would read the file again)
cat "$real_tmp/in" | timeout "$real_t" "$encore" record -q --session "$real_tmp/s" --name cl -- \
    "$(real_path socat)" -b 1024 - "UNIX-CONNECT:$sock" > "$real_tmp/rec.out" || real_fail "encore record (client)"
real_wait_pid "$srv"
[ "$real_status" = 0 ] || { cat "$real_tmp/srv.out"; real_fail "the server ended with $real_status"; }
cmp -s "$real_tmp/in" "$real_tmp/rec.out" || real_fail "the recorded echo differs from the input"

real_check "$real_tmp/s"
real_counts "$real_tmp/s"
[ "$real_unmatched" = 0 ] || real_fail "$real_unmatched unmatched receives"
size=$(wc -c < "$real_tmp/in")
# the client's stdin: logged whole as external input
got=$(real_sql "$real_tmp/s" "SELECT coalesce(sum(e.result), 0) FROM event e
                              JOIN process p ON p.id = e.proc
                              WHERE p.name = 'cl' AND e.kind = 'input' AND e.result > 0")
[ "$got" = "$size" ] || real_fail "cl's stdin: $got bytes logged as input, $size were read"
# the Unix connection, both ways: every byte the client sent came back
q="SELECT coalesce(sum(e.result), 0) FROM event e JOIN process p ON p.id = e.proc
   JOIN channel c ON c.id = e.channel WHERE c.type = 'unix' AND e.result > 0"
for pk in 'cl send' 'srv recv' 'srv send' 'cl recv'; do
    set -- $pk
    n=$(real_sql "$real_tmp/s" "$q AND p.name = '$1' AND e.kind = '$2'")
    [ "$n" = "$size" ] || real_fail "$1: $2 of $n bytes on the Unix socket, not $size"
done
echo "ok: recorded, $size bytes relayed each way, stdin logged whole"

rm -f "$sock"
real_replay "$real_tmp/s" "$real_tmp/rec.out"
echo "ok: both roots replayed to the end, output identical"
rm -f "$sock"
real_halt "$real_tmp/s" 'srv: received >= 1 && cl: sent >= 1'
