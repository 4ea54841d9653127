#!/bin/sh
# replay_race.sh: a data race replay cannot reproduce (two threads increment a plain counter
# without a lock; its value decides how many writes follow, tests/e2e/progs/threads.c race)
# ends, never hangs: either the racy value came out the same and the replay ran to the end
# with the recorded output, or the replay stopped with a divergence or a stall report that
# names the thread (replayer/README.md, "Threads"), or every event matched but the output's
# bytes did not, which the content check at exit reports as a warning.  Several recordings, each bounded by
# `timeout`: a hang fails the test.
# Usage: replay_race.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_race.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
reports=0
for run in 1 2 3 4 5; do
    rm -rf "$tmp/s"
    "$encore" record -q -o "$tmp/s" --name race -- "$prog" race 3000000 2> /dev/null |
        cat > "$tmp/rec.out"
    { rc=0; timeout 120 "$encore" replay "$tmp/s" 2> "$tmp/rep.err" || rc=$?; echo $rc > "$tmp/st"; } |
        cat > "$tmp/rep.out"
    if [ "$(cat "$tmp/st")" = 124 ]; then
        echo "FAIL: replay $run hung (killed after 120 s)"; cat "$tmp/rep.err"; exit 1
    fi
    if grep -q "replayed to the end" "$tmp/rep.err" && cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
        continue
    fi
    # the racy value changed only what the last writes hold: every event matched, and the
    # content check at exit says the bytes differ (replayer/lc.c, check_exit_hashes)
    if grep -q "replayed to the end" "$tmp/rep.err" &&
        grep -q "warning: .*every event matched, but the bytes it sent on channel [0-9]* (fd 1)" "$tmp/rep.err"; then
        reports=$((reports + 1))
        continue
    fi
    if ! grep -qi "divergence\|stuck" "$tmp/rep.err" || ! grep -q "thread" "$tmp/rep.err"; then
        echo "FAIL: replay $run neither reproduced the run nor reported a divergence naming a thread:"
        cat "$tmp/rep.err"; diff "$tmp/rec.out" "$tmp/rep.out" | head -5 || true
        exit 1
    fi
    reports=$((reports + 1))
done
echo "ok: 5 racy recordings, $reports ended in a report (a divergence naming the thread, or the content warning), the others reproduced"
