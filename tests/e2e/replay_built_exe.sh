#!/bin/sh
# replay_built_exe.sh: a session that makes an executable, then runs it (make building a
# program and running it; here cp of echo): the replay starts without the file, as a fresh
# checkout would, and makes it again before the exec (the GD checked every recorded
# executable up front, and refused: "the recorded executable cannot be read").  Three
# recordings.
# Usage: replay_built_exe.sh ENCORE
set -eu
encore=$1
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_built_exe.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
[ -x /bin/echo ] || { echo "no /bin/echo"; exit 77; }
for run in 1 2 3; do
	rm -rf "$tmp/s" "$tmp/built-echo"
	rc=0
	"$encore" record -q -o "$tmp/s" -- /bin/sh -c \
		"cp /bin/echo '$tmp/built-echo' && '$tmp/built-echo' built and run $run" \
		> "$tmp/rec.out" 2> "$tmp/rec.err" || rc=$?
	if [ $rc != 0 ] || ! grep -qx "built and run $run" "$tmp/rec.out"; then
		echo "FAIL: recording $run (exit $rc):"; cat "$tmp/rec.out" "$tmp/rec.err"; exit 1
	fi
	rm -f "$tmp/built-echo"
	rc=0
	timeout 120 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
	if [ $rc != 0 ] || ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
		echo "FAIL: replay $run (exit $rc):"; cat "$tmp/rep.out" "$tmp/rep.err"; exit 1
	fi
done
echo "ok: 3 recordings of a session that makes the executable it runs replayed from without it"
