#!/bin/sh
# replay_pass_unregistered.sh: a server that listens after dropping its privileges, then
# passes the connection it accepted to a worker that sends on it (tests/e2e/progs/
# pass_unregistered.c, vsftpd's passive data connections): recorded, then replayed to the
# end with the same output (the server waited for ever for a connection its client, which
# took it for an outside server, does not make in replay; the worker's sends then failed on
# the stand-in it was passed).  Three recordings; root only (77 otherwise).
# Usage: replay_pass_unregistered.sh ENCORE PROG
set -eu
encore=$1 prog=$2
[ "$(id -u)" = 0 ] || { echo "needs root (a privilege drop)"; exit 77; }
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_pass_unreg.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for run in 1 2 3; do
	rm -rf "$tmp/s"
	rc=0
	"$encore" record -q -o "$tmp/s" -- "$prog" > "$tmp/rec.out" 2> "$tmp/rec.err" || rc=$?
	if [ $rc != 0 ] || ! grep -qx "served" "$tmp/rec.out" ||
		! grep -qx "client got 7490 bytes" "$tmp/rec.out"; then
		echo "FAIL: recording $run (exit $rc):"; cat "$tmp/rec.out" "$tmp/rec.err"; exit 1
	fi
	rc=0
	timeout 120 "$encore" replay --stall-timeout 10 "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
	if [ $rc != 0 ] || ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
		echo "FAIL: replay $run (exit $rc):"; cat "$tmp/rep.out" "$tmp/rep.err"; exit 1
	fi
done
echo "ok: 3 recordings of a connection accepted after a privilege drop and passed on, replayed"
