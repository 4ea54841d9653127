#!/bin/sh
# replay_group_kill.sh: a shell waits for its child, which sends SIGTERM to its whole process
# group (kill 0): both die, the shell inside its wait, before the line after it.  Replay must
# end the shell there too: it caught the signal until the recorded death point and its wait
# went on, so the shell printed the status of a wait it never saw end (replayer/lc_pids.c,
# death_in_wait), while the replay said every recorded event was reproduced.  Three
# recordings (the child's kill races the shell's wait).  Apache's prefork parent, stopped
# with SIGTERM, kills its process group so: the recorded shell that started it died too.
# Usage: replay_group_kill.sh ENCORE
set -eu
encore=$1
command -v setsid >/dev/null || { echo "SKIP: no setsid (util-linux)"; exit 77; }
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_group_kill.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cat > "$tmp/k.sh" <<'SH'
echo start
/bin/sh -c 'kill -TERM 0' &
wait $!
echo "after wait $?"
SH
for i in 1 2 3; do
    rm -rf "$tmp/s"
    # its own session: the kill reaches the recorded processes and no other
    rc=0
    setsid -w timeout 60 "$encore" record -q -o "$tmp/s" -- /bin/bash "$tmp/k.sh" \
        > "$tmp/rec.out" 2> "$tmp/rec.err" || rc=$?
    [ "$(cat "$tmp/rec.out")" = start ] ||
        fail "recording $i: the shell was not killed in its wait (exit $rc): $(cat "$tmp/rec.out")"
    rc=0
    setsid -w timeout 60 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
    if [ $rc != 0 ] || ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
        cat "$tmp/rep.err"
        fail "replay $i exited $rc, printed: $(cat "$tmp/rep.out")"
    fi
done
echo "ok: 3 recordings: the shell dies in its wait in replay too"
