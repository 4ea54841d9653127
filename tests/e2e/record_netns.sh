#!/bin/sh
# record_netns.sh: two recorded "hosts".  Creates two network namespaces joined by a veth pair
# (10.231.0.1 and 10.231.0.2), records a server in one and a client in the other into one
# session (--session), and checks both traces against the programs' reports: each end logs
# the other's address, and bytes from the other host are INPUT.  Traffic stays between
# the namespaces' own addresses; the namespaces (and with them the veth pair) are removed
# at exit.  Skipped (status 77) where namespaces cannot be made.
# Usage: record_netns.sh ENCORE CHECK_TRACE E2E_NET
set -u
encore=$1 check=$2 prog=$3
if ! command -v ip >/dev/null 2>&1; then echo "SKIP: no ip(8)"; exit 77; fi
a=encore-e2e-a-$$ b=encore-e2e-b-$$ va=enc$$a vb=enc$$b
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_netns.XXXXXX")
server=
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null
    ip netns del "$a" 2>/dev/null
    ip netns del "$b" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
# A test killed on timeout (SIGTERM) or interrupted must not leave namespaces behind.
trap 'exit 1' INT TERM HUP
if ! ip netns add "$a" 2>/dev/null; then echo "SKIP: cannot create network namespaces here"; exit 77; fi
ip netns add "$b" || exit 1
set -e
ip link add "$va" type veth peer name "$vb"
ip link set "$va" netns "$a"
ip link set "$vb" netns "$b"
ip -n "$a" addr add 10.231.0.1/24 dev "$va"
ip -n "$b" addr add 10.231.0.2/24 dev "$vb"
ip -n "$a" link set lo up
ip -n "$b" link set lo up
ip -n "$a" link set "$va" up
ip -n "$b" link set "$vb" up
mkdir "$tmp/rep"
mkfifo "$tmp/ready"

ip netns exec "$a" "$encore" record -q --hash-every 1 --session "$tmp/s" --name server -- \
    "$prog" server 10.231.0.1 "$tmp/rep" > "$tmp/ready" &
server=$!
read word port < "$tmp/ready"
[ "$word" = ready ]
ip netns exec "$b" "$encore" record -q --hash-every 1 --session "$tmp/s" --name client -- \
    "$prog" client 10.231.0.1 "$port" "$tmp/rep"
wait "$server"
server=
"$check" "$tmp/s" "$tmp/rep"
