#!/bin/sh
# record_unwind_scope.sh: recorded and replayed, the program finds the C++ exception ABI
# (_Unwind_RaiseException) where it finds it bare (libgcc_s), not in the libunwind the
# preloads use (interpose/unwind.h: opened with RTLD_LOCAL; linked in, it came first and
# knot-resolver's LuaJIT crashed unwinding through it).
# Usage: record_unwind_scope.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/unwind_scope.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$prog" > "$tmp/bare.out"
"$encore" record -q -o "$tmp/s" -- "$prog" > "$tmp/rec.out"
cmp -s "$tmp/bare.out" "$tmp/rec.out" ||
	{ echo "FAIL: bare, _Unwind_RaiseException is in $(cat "$tmp/bare.out"); recorded, in $(cat "$tmp/rec.out")"; exit 1; }
"$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || { cat "$tmp/rep.err"; exit 1; }
cmp -s "$tmp/bare.out" "$tmp/rep.out" ||
	{ echo "FAIL: bare, _Unwind_RaiseException is in $(cat "$tmp/bare.out"); replayed, in $(cat "$tmp/rep.out")"; exit 1; }
echo "ok: _Unwind_RaiseException from $(cat "$tmp/bare.out"), bare, recorded and replayed"
