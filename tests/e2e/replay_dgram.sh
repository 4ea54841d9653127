#!/bin/sh
# replay_dgram.sh: datagrams between recorded processes, UDP or Unix (analyzer/README.md,
# "Datagrams"; replayer/README.md, the datagram rows).  A server and 3 clients
# (tests/e2e/progs/udp_pp.c: one client connected, one sending a datagram nobody reads),
# recorded:
#   - `encore analyze` links every datagram received to its send (no external receive) and
#     reports message races between the clients' datagrams, and `encore sql` has them in
#     the message table;
#   - the replay prints the recorded lines (each process's in its recorded order);
#   - replay --stop halts at the cut of `encore inf`, offline and online, for a predicate on a
#     client (the cut holds the server's reply) and on the server.
# With mode exec, PROG is tests/e2e/progs/dgram_exec.c: a Unix datagram socket that went
# through exec; its two datagrams are linked, and the replay prints the recorded lines.
# Usage: replay_dgram.sh ENCORE PROG udp|unix|exec
set -eu
encore=$1 prog=$2 mode=$3
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_dgram.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
s=$tmp/s
dir=""
if [ "$mode" != udp ]; then mkdir "$tmp/w"; dir=$tmp/w; fi

if [ "$mode" = exec ]; then
    "$encore" record -q -o "$s" --name dx -- "$prog" "$dir" > "$tmp/rec"
    "$encore" analyze "$s" > "$tmp/an"
    grep -q "2 linked; 0 external receives; 0 unmatched" "$tmp/an" || {
        echo "FAIL: the datagrams across exec are not linked:"; cat "$tmp/an"; exit 1; }
    "$encore" replay "$s" > "$tmp/rep" 2> "$tmp/err" || { echo "FAIL: replay:"; cat "$tmp/err"; exit 1; }
    cmp -s "$tmp/rec" "$tmp/rep" || { echo "FAIL: other output:"; diff "$tmp/rec" "$tmp/rep"; exit 1; }
    echo "ok: datagrams across exec linked and replayed"
    exit 0
fi

cuts() { grep -o '"cuts":\[{[^}]*}' "$1" | head -1; }

# shellcheck disable=SC2086
"$encore" record -q -o "$s" --name udp -- "$prog" 3 4 $dir > "$tmp/rec"
# 3 clients x (4 requests + bye) to the server, 12 answers back: 27 datagrams received, and
# client 3's late one when the server read it
want=27
grep -q "server: late" "$tmp/rec" && want=28
"$encore" analyze "$s" > "$tmp/an"
grep -q "$want linked; 0 external receives; 0 unmatched" "$tmp/an" || {
    echo "FAIL: the datagrams are not all linked ($want expected):"; cat "$tmp/an"; exit 1; }
n=$("$encore" sql "$s" "SELECT count(*) FROM message m JOIN event e ON e.id = m.recv
                        JOIN channel c ON c.id = e.channel WHERE c.type IN ('udp', 'other')" |
     tail -1 | tr -d ' ')
[ "$n" = "$want" ] || { echo "FAIL: $n $mode messages in SQL, $want expected"; exit 1; }
echo "ok: $want $mode datagrams linked"
# the clients' first requests are concurrent: the server's first receive could have taken
# another client's (a message race)
grep -Eq "races +[1-9]" "$tmp/an" || { echo "FAIL: no message race reported:"; cat "$tmp/an"; exit 1; }

for run in 1 2; do
    "$encore" replay "$s" > "$tmp/rep" 2> "$tmp/err" || {
        echo "FAIL: replay $run:"; cat "$tmp/err"; exit 1; }
    for who in server "client 1" "client 2" "client 3"; do
        grep "^$who" "$tmp/rec" > "$tmp/a" || true; grep "^$who" "$tmp/rep" > "$tmp/b" || true
        cmp -s "$tmp/a" "$tmp/b" || {
            echo "FAIL: replay $run: $who printed another output:"; diff "$tmp/a" "$tmp/b"; exit 1; }
    done
    sort "$tmp/rec" > "$tmp/a"; sort "$tmp/rep" > "$tmp/b"
    cmp -s "$tmp/a" "$tmp/b" || { echo "FAIL: replay $run: other lines"; diff "$tmp/a" "$tmp/b"; exit 1; }
done
echo "ok: the replay prints the recorded output"

for pred in 'udp.3: received >= 3' 'udp.1: received >= 2' 'udp: received >= 7'; do
    "$encore" inf --json "$s" "$pred" > "$tmp/inf"
    a=$(cuts "$tmp/inf")
    [ -n "$a" ] || { echo "FAIL: no cut for '$pred'"; cat "$tmp/inf"; exit 1; }
    case $pred in udp.*:*) # the client's third answer: the server answered it
        echo "$a" | grep -q '"udp":0' && { echo "FAIL: '$pred': $a leaves the server at 0"; exit 1; } ;;
    esac
    for opt in "" --online; do
        # shellcheck disable=SC2086
        "$encore" replay $opt --json --then kill --stop "$pred" "$s" > "$tmp/rep" 2> "$tmp/err" || {
            echo "FAIL: replay $opt --stop '$pred':"; cat "$tmp/err"; exit 1; }
        b=$(cuts "$tmp/rep")
        [ "$a" = "$b" ] || { echo "FAIL: '$pred' ${opt:-offline}: encore inf says $a, replay halted at $b"; exit 1; }
    done
    echo "ok: $pred -> $a"
done
