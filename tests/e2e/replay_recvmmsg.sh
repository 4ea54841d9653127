#!/bin/sh
# replay_recvmmsg.sh: recvmmsg's datagrams are receive events (each through the preload's
# recvmsg, interpose/interpose.h): recorded, the parent's receives match the child's sends;
# replayed, each call gets as many as it got.  Five recordings.
# Usage: replay_recvmmsg.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_recvmmsg.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for run in 1 2 3 4 5; do
	rm -rf "$tmp/s"
	"$encore" record -q -o "$tmp/s" --name mm -- "$prog" 20 > "$tmp/rec.out"
	n=$("$encore" dump "$tmp/s/mm.trace" | grep -c ' recv *recvmsg' || true)
	[ "$n" -ge 20 ] || { echo "FAIL: run $run: $n receive events for 20 datagrams"; exit 1; }
	"$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
		{ echo "FAIL: run $run: replay:"; cat "$tmp/rep.err"; exit 1; }
	cmp -s "$tmp/rec.out" "$tmp/rep.out" ||
		{ echo "FAIL: run $run: the replay printed something else:"; diff "$tmp/rec.out" "$tmp/rep.out"; exit 1; }
done
echo "ok: recvmmsg recorded per message and replayed, 5 recordings"
