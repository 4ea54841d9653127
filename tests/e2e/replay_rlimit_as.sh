#!/bin/sh
# replay_rlimit_as.sh: a process that limits its address space to 1 GiB (RLIMIT_AS), then
# maps 64 MiB (tests/e2e/progs/rlimit_as.c): recorded, then replayed to the end with the
# same output (the local controller reserved 4 GiB up front, and the program's mmap failed
# in replay).  Three recordings.
# Usage: replay_rlimit_as.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_rlimit_as.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for run in 1 2 3; do
	rm -rf "$tmp/s"
	rc=0
	"$encore" record -q -o "$tmp/s" -- "$prog" > "$tmp/rec.out" 2> "$tmp/rec.err" || rc=$?
	if [ $rc != 0 ] || ! grep -q "^mapped 64 MiB" "$tmp/rec.out"; then
		echo "FAIL: recording $run (exit $rc):"; cat "$tmp/rec.out" "$tmp/rec.err"; exit 1
	fi
	rc=0
	timeout 120 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
	if [ $rc != 0 ] || ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
		echo "FAIL: replay $run (exit $rc):"; cat "$tmp/rep.out" "$tmp/rep.err"; exit 1
	fi
done
echo "ok: 3 recordings of a process under a 1 GiB RLIMIT_AS replayed, its mmap too"
