#!/bin/sh
# replay_scan_long.sh: a scanf conversion of 10000 characters over a piped stdin (several
# refills of the FILE's 4 KiB buffer, progs/scan_long.c) is never replayed wrong in silence:
# either the replay prints what the recording printed, or encore says that the process used
# stdio on that channel without its bytes recorded (recorder/README.md, "stdio").  Before,
# the trace held the last refill's bytes as the whole scan, and the replay printed another
# length without a word.  A scan within one refill (10 characters) still replays exactly.
# Usage: replay_scan_long.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_scan_long.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for n in 10 10000; do
	head -c "$n" /dev/zero | tr '\0' a > "$tmp/in"
	echo >> "$tmp/in"
	cat "$tmp/in" | "$encore" record -q -o "$tmp/s$n" -- "$prog" > "$tmp/rec.out"
	grep -qx "scanf 1: $n characters" "$tmp/rec.out" ||
		{ echo "FAIL: recording of $n printed:"; cat "$tmp/rec.out"; exit 1; }
	rc=0
	"$encore" replay "$tmp/s$n" < /dev/null > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
	if [ $rc = 0 ] && cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
		continue
	fi
	if [ "$n" = 10 ] || ! grep -q "used stdio on channel" "$tmp/rep.err"; then
		echo "FAIL: the replay of $n characters (exit $rc) printed:"; cat "$tmp/rep.out"
		cat "$tmp/rep.err"; exit 1
	fi
done
echo "ok: a scan within one refill replayed exactly, one across several refills said so"
