#!/bin/sh
# replay_scan_input.sh: scanf over input from outside the session (tests/e2e/progs/
# scan_input.c: the JVM's fscanf scan of /proc/meminfo, and numbers on a piped stdin) replays
# with the recorded output: the characters each scanf consumed are in the trace
# (recorder/stdio.c, scan_after; replayer/lc_stdio.c, scan_feed).  Three recordings, a
# different stdin each time.
# Usage: replay_scan_input.sh ENCORE PROG
set -eu
encore=$1 prog=$2
[ -r /proc/meminfo ] || { echo "skip: no /proc/meminfo"; exit 77; }
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_scan_input.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for i in 1 2 3; do
	seq 1 $((i * 7)) | "$encore" record -q -o "$tmp/s$i" -- "$prog" > "$tmp/rec$i.out"
	grep -q "^stdin: $((i * 7)) numbers" "$tmp/rec$i.out" &&
		grep -qx "errno after the first scan: 0" "$tmp/rec$i.out" ||
		{ echo "FAIL: recording $i printed:"; cat "$tmp/rec$i.out"; exit 1; }
	rc=0
	"$encore" replay "$tmp/s$i" < /dev/null > "$tmp/rep$i.out" 2> "$tmp/rep$i.err" || rc=$?
	if [ $rc != 0 ] || ! cmp -s "$tmp/rec$i.out" "$tmp/rep$i.out"; then
		echo "FAIL: replay $i (exit $rc):"; cat "$tmp/rep$i.err"
		diff "$tmp/rec$i.out" "$tmp/rep$i.out" || true
		exit 1
	fi
done
echo "ok: 3 recordings scanning /proc/meminfo and stdin replayed with the recorded output"
