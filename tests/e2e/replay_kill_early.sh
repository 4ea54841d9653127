#!/bin/sh
# replay_kill_early.sh: a shell kills (SIGTERM, left at its default action) a process that
# has made 3000 events, once a file it makes last exists; the process died of it when
# recorded.  Replayed without isolation (--no-isolate: the files the recording created are
# not hidden) the file is there from the start (the recorded run made it), so the shell's
# kill comes at once, while the process is still early in its events: it must not
# end there, but at its recorded death point (replayer/lc_signals.c, lc_signal_arm_fatal),
# and the replay run to the end.  Three recordings, each ending in its SIGNAL event.
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
	# (the kill comes as the process makes the file, its path record being written: the
	# trace still ends in the death, proc.c's deferred fatal signal)
	"$encore" dump "$tmp/s" | grep -qE '^ +[0-9]+ +signal +signal = 15 ' ||
		{ echo "FAIL: recording $run: no SIGNAL event for the kill"; "$encore" dump "$tmp/s" | tail -3; exit 1; }
	rc=0
	timeout 120 "$encore" replay --no-isolate "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
	if [ $rc != 0 ] || ! grep -q "replayed to the end" "$tmp/rep.err" ||
		! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
		echo "FAIL: replay $run (exit $rc):"; cat "$tmp/rep.err"; exit 1
	fi
done
echo "ok: 3 recordings of a process killed at its default action replayed to their recorded end"
