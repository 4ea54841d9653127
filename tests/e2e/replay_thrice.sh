#!/bin/sh
# replay_thrice.sh: a program recorded three times, each recording replayed to the end with
# the recorded output, byte for byte (a stall is given 10 s).  Each recording's output must
# hold a line matching every LINE given (grep -E, whole line): the recorded run did what the
# test is about.  With --root the test needs root (a privilege drop) and skips (77) without.
# Used by the tests whose whole check is this (tests/e2e/meson.build says what each shows).
# Usage: replay_thrice.sh ENCORE [--root] PROG LINE...
set -eu
encore=$1
shift
if [ "$1" = --root ]; then
	shift
	[ "$(id -u)" = 0 ] || { echo "needs root (a privilege drop)"; exit 77; }
fi
prog=$1
shift
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_thrice.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for run in 1 2 3; do
	rm -rf "$tmp/s"
	rc=0
	"$encore" record -q -o "$tmp/s" -- "$prog" > "$tmp/rec.out" 2> "$tmp/rec.err" || rc=$?
	ok=$([ $rc = 0 ] && echo 1 || echo 0)
	for line in "$@"; do
		grep -qxE "$line" "$tmp/rec.out" || ok=0
	done
	if [ $ok = 0 ]; then
		echo "FAIL: recording $run (exit $rc):"; cat "$tmp/rec.out" "$tmp/rec.err"; exit 1
	fi
	rc=0
	timeout 120 "$encore" replay --stall-timeout 10 "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
	if [ $rc != 0 ] || ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
		echo "FAIL: replay $run (exit $rc):"; cat "$tmp/rep.out" "$tmp/rep.err"; exit 1
	fi
done
echo "ok: 3 recordings of $(basename "$prog") replayed with the recorded output"
