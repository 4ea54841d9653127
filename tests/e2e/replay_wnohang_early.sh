#!/bin/bash
# replay_wnohang_early.sh: a process that blocks SIGCHLD under a handler and polls with
# waitpid(WNOHANG) before its first handler run, as make does (tests/e2e/progs/
# wnohang_early.c): its child waits for a byte this script writes only once the poll is
# done, so the poll finds nothing when recorded; in replay the byte comes from the trace and
# the child ends first, and the poll must still find nothing (the process reaped the child
# there and diverged); said through stdio, the line must not run the handler run due next
# (it ran in pselect when recorded).  Three recordings of each.
# Usage: replay_wnohang_early.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_wnohang.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for how in write stdio; do
for run in 1 2 3; do
	rm -rf "$tmp/s" "$tmp/in" "$tmp/out"
	mkfifo "$tmp/in" "$tmp/out"
	"$encore" record -q -o "$tmp/s" -- "$prog" $how < "$tmp/in" > "$tmp/rec.out" 2> "$tmp/out" &
	rp=$!
	exec 3> "$tmp/in" 4< "$tmp/out"
	IFS= read -r first <&4   # "polled", on stderr
	printf x >&3
	exec 3>&-
	cat <&4 > "$tmp/rec.err"
	exec 4<&-
	rc=0
	wait $rp || rc=$?
	if [ $rc != 0 ] || ! grep -qx "polled: nothing yet" "$tmp/rec.out" ||
		! grep -qx "reaped the child, exit 0" "$tmp/rec.out"; then
		echo "FAIL: $how: recording $run (exit $rc):"; cat "$tmp/rec.out" "$tmp/rec.err"; exit 1
	fi
	rc=0
	timeout 120 "$encore" replay --stall-timeout 10 "$tmp/s" < /dev/null > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
	if [ $rc != 0 ] || ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
		echo "FAIL: $how: replay $run (exit $rc):"; cat "$tmp/rep.out" "$tmp/rep.err"; exit 1
	fi
done
done
echo "ok: 3 recordings each (write, stdio) of a WNOHANG poll before the first SIGCHLD handler run replayed"
