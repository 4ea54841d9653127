#!/bin/sh
# analyze_pipe_readers.sh: three forked workers reading one task pipe (the kernel decides which
# worker gets which task) record each read at its own byte count, so their offsets overlap;
# the analyzer must not link those receives to the sends at those offsets (which task a worker
# got is not in the traces) and must say so (analyzer/README.md, "Channels"; README.md,
# "Limits").  The answers pipe, written by the three workers at once, is left unlinked too.
# Usage: analyze_pipe_readers.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/analyze_pipe_readers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

for i in 1 2 3; do
	"$encore" record -q -o "$tmp/s$i" -- "$prog" > "$tmp/s$i.out"
	[ "$(grep -c '^worker [0-2] did task ' "$tmp/s$i.out")" = 12 ] ||
		{ echo "FAIL: recording $i printed:"; cat "$tmp/s$i.out"; exit 1; }
	"$encore" analyze "$tmp/s$i" > "$tmp/s$i.ana" 2>&1 || { cat "$tmp/s$i.ana"; exit 1; }
	grep -q 'read by several processes at once' "$tmp/s$i.ana" ||
		{ echo "FAIL: recording $i: no warning of the shared task pipe:"; cat "$tmp/s$i.ana"; exit 1; }
	grep -q 'written by several processes at once' "$tmp/s$i.ana" ||
		{ echo "FAIL: recording $i: no warning of the shared answers pipe:"; cat "$tmp/s$i.ana"; exit 1; }
	# no receive of a worker is linked to a send: every message linked would be a guess
	linked=$(sed -n 's/^ *messages *\([0-9]*\) linked.*/\1/p' "$tmp/s$i.ana")
	[ "$linked" = 0 ] || { echo "FAIL: recording $i: $linked messages linked:"; cat "$tmp/s$i.ana"; exit 1; }
done
echo "ok: 3 recordings of workers sharing a task pipe: their receives are not linked, with a warning"
