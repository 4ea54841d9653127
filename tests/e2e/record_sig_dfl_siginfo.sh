#!/bin/sh
# record_sig_dfl_siginfo.sh: a handler that sets SIG_DFL with SA_SIGINFO set and sends the
# signal again (PHP's php -S on SIGTERM) dies of it recorded and replayed, as bare: the
# preloads took that action for a handler, kept their trampoline, and the process waited for
# ever (tests/e2e/progs/sig_dfl_siginfo.c).
# Usage: record_sig_dfl_siginfo.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/sig_dfl_siginfo.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
rc=0
"$prog" > "$tmp/bare.out" || rc=$?
[ "$rc" = 143 ] || { echo "SKIP: bare, the program exited $rc, not 143"; exit 77; }
rc=0
timeout 30 "$encore" record -q -o "$tmp/s" -- "$prog" > "$tmp/rec.out" 2> "$tmp/rec.err" || rc=$?
if [ "$rc" != 143 ] || ! cmp -s "$tmp/bare.out" "$tmp/rec.out"; then
	echo "FAIL: recorded, the program exited $rc (bare 143):"; cat "$tmp/rec.out" "$tmp/rec.err"; exit 1
fi
rc=0
timeout 60 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
if [ "$rc" != 0 ] || ! grep -q "replayed to the end" "$tmp/rep.err" || ! cmp -s "$tmp/bare.out" "$tmp/rep.out"; then
	echo "FAIL: the replay exited $rc:"; cat "$tmp/rep.err"; exit 1
fi
echo "ok: SIG_DFL set with SA_SIGINFO is the default, recorded and replayed"
