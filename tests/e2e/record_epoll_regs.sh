#!/bin/sh
# record_epoll_regs.sh: the recorder names the descriptor behind every epoll result
# (recorder/epoll.c) through registrations in several instances, forgotten, changed, closed
# without EPOLL_CTL_DEL and reused: each READY event of record_epoll_regs carries, after its
# one struct epoll_event (12 bytes), the descriptor the program says it must name.
# Usage: record_epoll_regs.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/epoll_regs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$encore" record -q -o "$tmp/s" --name ep -- "$prog" > "$tmp/out"
want=$(sed -n 's/^expect //p' "$tmp/out")
# data=EEEEEEEEDDDDDDDDDDDDDDDDFFFFFFFF: events, data, then the descriptor (little-endian)
got=$("$encore" dump "$tmp/s/ep.trace" | awk '$2 == "ready" && $3 == "epoll_wait" {
    for (i = 1; i <= NF; i++) if ($i ~ /^data=/) d = substr($i, 6)
    h = substr(d, 25, 8); v = 0
    for (k = 7; k >= 1; k -= 2) v = v * 256 + index("0123456789abcdef", substr(h, k, 1)) * 16 - 16 + index("0123456789abcdef", substr(h, k + 1, 1)) - 1
    if (v >= 2147483648) v -= 4294967296
    printf "%s%.0f", sep, v; sep = " " }')
[ -n "$want" ] && [ "$got" = "$want" ] ||
    { echo "FAIL: readiness results name descriptors '$got', the program waited on '$want'"; exit 1; }
echo "ok: every readiness result names its descriptor ($got)"
