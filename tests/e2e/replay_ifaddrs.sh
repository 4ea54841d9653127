#!/bin/sh
# replay_ifaddrs.sh: the machine's network interfaces are external input
# (schemas/trace-format.md, "Interfaces").  A program that lists them (getifaddrs,
# if_nameindex, if_nametoindex, if_indextoname) is recorded here and replayed in a new network
# namespace, which has only a loopback interface that is down: it prints what the recorded
# run printed, and the trace names the calls.
# Usage: replay_ifaddrs.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_ifaddrs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if [ "$(id -u)" = 0 ]; then ns="unshare -n"; else ns="unshare -rn"; fi
$ns true 2> /dev/null || { echo "SKIP: no network namespace can be made here"; exit 77; }
"$prog" > "$tmp/here.out"
$ns "$prog" > "$tmp/ns.out"
if cmp -s "$tmp/here.out" "$tmp/ns.out"; then
    echo "SKIP: this machine's interfaces are those of an empty network namespace"; exit 77
fi
"$encore" record -q -o "$tmp/s" -- "$prog" > "$tmp/rec.out"
cmp -s "$tmp/here.out" "$tmp/rec.out" || { echo "FAIL: recording changed the output"; exit 1; }
"$encore" dump "$tmp/s" > "$tmp/dump.txt"
for c in getifaddrs if_nameindex if_nametoindex if_indextoname; do
    grep -q "input    $c " "$tmp/dump.txt" || { echo "FAIL: no $c event"; cat "$tmp/dump.txt"; exit 1; }
done
# the replay writes nothing: isolation is not what is tested (and may be refused in the
# namespace)
if ! $ns "$encore" replay --no-isolate "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err"; then
    echo "FAIL: replay:"; cat "$tmp/rep.err"; exit 1
fi
if ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
    echo "FAIL: the replay saw other interfaces:"; diff "$tmp/rec.out" "$tmp/rep.out" | head -20
    exit 1
fi
echo "ok: $(wc -l < "$tmp/rec.out") lines of interfaces replayed in another network namespace"
