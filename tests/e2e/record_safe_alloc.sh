#!/bin/sh
# record_safe_alloc.sh: a program whose own allocator calls an intercepted function (like
# jemalloc reading the clock in its thread-cache work) from a new call site each time runs
# recorded exactly as bare: resolving a new call site never re-enters the allocator (the
# program aborts if it does), and the call sites still carry function names (named offline
# from the executable's symbol table).
# Usage: record_safe_alloc.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_safe_alloc.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$prog" 3000 > "$tmp/bare.out"
for depth in 4 1 32; do
    rc=0
    "$encore" record -q -o "$tmp/s$depth" --depth "$depth" -- "$prog" 3000 \
        > "$tmp/rec.out" 2> "$tmp/rec.err" || rc=$?
    if [ "$rc" != 0 ]; then
        echo "FAIL: recorded with --depth $depth, the program exited $rc:"; cat "$tmp/rec.err"
        exit 1
    fi
    cmp -s "$tmp/bare.out" "$tmp/rec.out" || { echo "FAIL: output differs (--depth $depth)"; exit 1; }
    "$encore" check "$tmp/s$depth" > /dev/null
    # every clock read is named: tick_N (or nocfi_clock), the function that made it
    "$encore" dump "$tmp/s$depth" > "$tmp/dump"
    clocks=$(grep -c ' clock_gettime ' "$tmp/dump" || true)
    named=$(grep -c ' clock_gettime .* in \(tick_[0-9]*\|nocfi_clock\)$' "$tmp/dump" || true)
    if [ "$clocks" -lt 100 ] || [ "$clocks" != "$named" ]; then
        echo "FAIL: --depth $depth: $named of $clocks clock reads named tick_N"
        grep ' clock_gettime ' "$tmp/dump" | grep -v ' in tick_' | head -5
        exit 1
    fi
done
echo "ok: $clocks clock reads from new call sites inside the allocator, all named"
