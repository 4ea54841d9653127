#!/bin/sh
# replay_raw_clone.sh: a process that forks with syscall(SYS_clone) (and with clone3), as
# vsftpd does (tests/e2e/progs/raw_clone.c): recorded, the child has a trace of its own and
# every trace is whole (`encore check`; the child used to write into its parent's and damage
# it); replayed, the same output.  Three recordings of each.  Then clone3 with argument
# pointers the kernel cannot read: recorded and replayed, each call fails with EFAULT as it
# does bare (the preloads read the struct with a checked read; they faulted before).
# Usage: replay_raw_clone.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_raw_clone.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
ran=""
for how in clone clone3; do
	for run in 1 2 3; do
		rm -rf "$tmp/s"
		rc=0
		"$encore" record -q -o "$tmp/s" -- "$prog" $how > "$tmp/rec.out" 2> "$tmp/rec.err" || rc=$?
		if [ $rc = 77 ]; then
			echo "$how: not supported by this kernel"; continue 2
		fi
		if [ $rc != 0 ] || ! grep -qx "child exited 7" "$tmp/rec.out"; then
			echo "FAIL: $how: recording $run (exit $rc):"; cat "$tmp/rec.out" "$tmp/rec.err"; exit 1
		fi
		if ! "$encore" check "$tmp/s" > "$tmp/check.out" 2>&1 ||
			! ls "$tmp/s"/*.1.trace > /dev/null 2>&1; then
			echo "FAIL: $how: recording $run: the traces are not whole or the child has none:"
			cat "$tmp/check.out"; ls "$tmp/s"; exit 1
		fi
		rc=0
		timeout 120 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
		if [ $rc != 0 ] || ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
			echo "FAIL: $how: replay $run (exit $rc):"; cat "$tmp/rep.err"; exit 1
		fi
	done
	ran="$ran $how"
done
bad=""
rc=0
"$prog" clone3bad > "$tmp/bare.out" 2>&1 || rc=$?
if [ $rc = 0 ]; then
	for run in 1 2 3; do
		rm -rf "$tmp/s"
		rc=0
		"$encore" record -q -o "$tmp/s" -- "$prog" clone3bad > "$tmp/rec.out" 2> "$tmp/rec.err" || rc=$?
		if [ $rc != 0 ] || ! cmp -s "$tmp/bare.out" "$tmp/rec.out" ||
			[ "$(grep -c ': -1 Bad address$' "$tmp/rec.out")" != 3 ]; then
			echo "FAIL: clone3 with bad pointers, recording $run (exit $rc, bare gave:)"
			cat "$tmp/bare.out"; echo "recorded:"; cat "$tmp/rec.out" "$tmp/rec.err"; exit 1
		fi
		rc=0
		timeout 120 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
		if [ $rc != 0 ] || ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
			echo "FAIL: clone3 with bad pointers, replay $run (exit $rc):"
			cat "$tmp/rep.out" "$tmp/rep.err"; exit 1
		fi
	done
	bad=", clone3 with bad pointers EFAULT as bare"
fi
[ -n "$ran$bad" ] || exit 77
echo "ok: 3 recordings each of a fork by raw$ran, the child traced apart, replayed$bad"
