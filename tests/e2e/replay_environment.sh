#!/bin/sh
# replay_environment.sh: a replay gives each process the environment it started with when
# recorded, whoever replays it and from whatever environment (replayer/README.md,
# "Environment"): a program that prints its whole environment (the recorder's own variables
# included, in order) replays with identical output under `env -i` with another HOME, and its
# system() and popen() children, which glibc starts from `environ` past the interposers,
# still run under the replay (a popen child's `env` shows no ENCORE_REPLAY: it sees its own
# recorded environment too).  Before, the output showed the replaying shell's variables.
# Usage: replay_environment.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_environment.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
ENVT_X=recorded HOME=/recorded/home "$encore" record -q -o "$tmp/s" -- "$prog" \
    > "$tmp/rec.out" 2> "$tmp/rec.err" || { echo "FAIL: recording:"; cat "$tmp/rec.err"; exit 1; }
grep -q '^ENVT_X=recorded$' "$tmp/rec.out" || { echo "FAIL: the recording lacks ENVT_X"; exit 1; }
grep -q '^system: set-by-program recorded /recorded/home$' "$tmp/rec.out" ||
    { echo "FAIL: system() child in the recording:"; cat "$tmp/rec.out"; exit 1; }
rc=0
env -i PATH=/usr/bin:/bin HOME=/elsewhere ENVT_Y=replay-only \
    ${ENCORE_RECORD_LIB:+ENCORE_RECORD_LIB=$ENCORE_RECORD_LIB} \
    ${ENCORE_REPLAY_LIB:+ENCORE_REPLAY_LIB=$ENCORE_REPLAY_LIB} \
    ${LD_LIBRARY_PATH:+LD_LIBRARY_PATH=$LD_LIBRARY_PATH} \
    ${ENCORE_NO_ISOLATE:+ENCORE_NO_ISOLATE=$ENCORE_NO_ISOLATE} \
    timeout 120 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
if [ $rc != 0 ]; then
    echo "FAIL: replay exited $rc:"; cat "$tmp/rep.err"; exit 1
fi
if ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
    echo "FAIL: the replay's output differs:"; diff "$tmp/rec.out" "$tmp/rep.out" | head -20; exit 1
fi
if grep -q 'ENVT_Y\|/elsewhere' "$tmp/rep.out"; then
    echo "FAIL: the replay showed the replaying environment"; exit 1
fi
# --setenv: the program gets the value asked for, prints another line, the replay says so
rc=0
timeout 120 "$encore" replay --setenv ENVT_X=changed "$tmp/s" > "$tmp/rep2.out" 2> "$tmp/rep2.err" || rc=$?
if [ $rc != 1 ] || ! grep -q divergence "$tmp/rep2.err"; then
    echo "FAIL: replay --setenv ENVT_X=changed exited $rc (1, a divergence, expected):"
    cat "$tmp/rep2.err"; exit 1
fi
echo "ok: the recorded environment given back, system() and popen() children replayed, --setenv"
