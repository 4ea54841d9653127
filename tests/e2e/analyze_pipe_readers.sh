#!/bin/sh
# analyze_pipe_readers.sh: three forked workers reading one task pipe (the kernel decides which
# worker gets which task) and writing their answers to one pipe: the recorder logs each read
# and write of those shared ends at the offset all the holders share (recorder/README.md,
# "Shared pipe ends"), so the analyzer links every receive to its send like any stream's, and
# has nothing to warn of (analyzer/README.md, "Channels").  SQL agrees: each worker's receive
# names the parent's write whose 16 bytes it read (the task number printed is that write's).
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
	if grep -q 'several processes' "$tmp/s$i.ana"; then
		echo "FAIL: recording $i: a warning of a shared pipe:"; cat "$tmp/s$i.ana"; exit 1
	fi
	# 12 tasks and 12 answers, each receive linked to its send
	linked=$(sed -n 's/^ *messages *\([0-9]*\) linked.*/\1/p' "$tmp/s$i.ana")
	[ "$linked" = 24 ] || { echo "FAIL: recording $i: $linked messages linked:"; cat "$tmp/s$i.ana"; exit 1; }
	# which task each worker got, as SQL links it: the k-th write of the parent on the task
	# pipe (the parent's write events after its forks, in order) is task k-1; the workers'
	# output says which worker did it
	"$encore" sql --csv "$tmp/s$i" "SELECT p.name, s.offset / 16 FROM event r JOIN process p ON p.id = r.proc
		JOIN message m ON m.recv = r.id JOIN event s ON s.id = m.send
		WHERE r.kind = 'recv' AND p.name != 'pipe_workers' ORDER BY s.offset" > "$tmp/s$i.sql" ||
		{ cat "$tmp/s$i.sql"; exit 1; }
	n=0
	tail -n +2 "$tmp/s$i.sql" | tr ',' ' ' > "$tmp/s$i.links"
	while read -r name task; do
		w=${name##*.}; w=$((w - 1))
		grep -q "^worker $w did task $(printf %02d "$task") " "$tmp/s$i.out" ||
			{ echo "FAIL: recording $i: SQL links task $task to $name:"; cat "$tmp/s$i.sql" "$tmp/s$i.out"; exit 1; }
		n=$((n + 1))
	done < "$tmp/s$i.links"
	[ "$n" -ge 12 ] || { echo "FAIL: recording $i: $n task receives linked in SQL:"; cat "$tmp/s$i.sql"; exit 1; }
done
echo "ok: 3 recordings of workers sharing a task pipe and an answers pipe: every receive linked to its send"
