#!/bin/sh
# replay_kill_early.sh: a shell kills (SIGTERM, left at its default action) a process that
# has made 3000 events, once a file it makes last exists; the process died of it when
# recorded.  In replay the file is there from the start (the recorded run made it), so the
# shell's kill comes at once, while the process is still early in its events: it must not
# end there, but at its recorded death point (replayer/lc_signals.c, lc_signal_arm_fatal),
# and the replay run to the end.  Three recordings.
# Usage: replay_kill_early.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_kill_early.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for run in 1 2 3; do
	rm -rf "$tmp/s" "$tmp/ready"
	"$encore" record -q -o "$tmp/s" -- /bin/sh -c \
		"\"$prog\" 3000 \"$tmp/ready\" & p=\$!
		 while [ ! -e \"$tmp/ready\" ]; do :; done
		 kill \$p; wait \$p; echo \"exit \$?\"" > "$tmp/rec.out"
	grep -qx "exit 143" "$tmp/rec.out" || { echo "FAIL: recording $run printed:"; cat "$tmp/rec.out"; exit 1; }
	rc=0
	timeout 120 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
	if [ $rc != 0 ] || ! grep -q "replayed to the end" "$tmp/rep.err" ||
		! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
		echo "FAIL: replay $run (exit $rc):"; cat "$tmp/rep.err"; exit 1
	fi
done
echo "ok: 3 recordings of a process killed at its default action replayed to their recorded end"
