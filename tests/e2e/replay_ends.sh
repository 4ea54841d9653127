#!/bin/sh
# replay_ends.sh: a replay always ends, and leaves no process behind (replayer/README.md,
# "How a replay ends"): a prefork server whose processes left the process group (setsid),
# recorded, then replayed
#   - with a divergence in the root while its workers wait in accept (PREFORK_DIVERGE=1),
#     and after the root started a process the replayer never heard of, out of the group
#     (PREFORK_DIVERGE=stray): exit 1 with the divergence;
#   - with the client stalled (PREFORK_HANG): exit 1 with the stall report;
#   - halted with --json: stdout holds the JSON report alone, the program's output is on
#     stderr;
#   - stalled with a stranger, ended by SIGTERM (exit 143) and by SIGINT (exit 130).
# Every run is bounded by timeout(1) (124 or 137 would say encore did not end), and after
# each no process of the program may be left: the program runs from a copy in the test's
# own directory, so /proc/PID/exe names ours alone (those found are killed by pid, and fail).
# Usage: replay_ends.sh ENCORE PROG
set -eu
encore=$1
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_ends.XXXXXX")
pid=""
cleanup() {
    [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
    for p in $(ours); do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$tmp"
}
# the pids whose executable is our copy of the program
ours() {
    for d in /proc/[0-9]*; do
        [ "$(readlink "$d/exe" 2>/dev/null)" = "$prog" ] && echo "${d#/proc/}"
    done
    return 0
}
trap cleanup EXIT
prog=$tmp/prefork
cp "$2" "$prog"
[ -r /proc/self/stat ] || { echo "skip: no /proc"; exit 77; }
"$encore" record -q -o "$tmp/s" --name pf -- "$prog" 3 6 setsid > "$tmp/rec.out"
grep -q "3 workers served 6 requests" "$tmp/rec.out" || { echo "FAIL: recording"; exit 1; }

none_left() {
    left=$(ours)
    [ -z "$left" ] || { echo "FAIL: $1: processes left behind: $left"; exit 1; }
}

# expect WHAT STATUS TEXT VAR=VALUE: a replay whose programs get VAR=VALUE (--setenv) ends
# with STATUS, its stderr says TEXT
expect() {
    what=$1 want=$2 text=$3
    shift 3
    rc=0
    timeout -k 5 60 "$encore" replay --setenv "$1" --then kill --stall-timeout 2 "$tmp/s" \
        > "$tmp/out" 2> "$tmp/err" < /dev/null || rc=$?
    [ "$rc" -eq "$want" ] || { echo "FAIL: $what: exit status $rc, expected $want"; cat "$tmp/err"; exit 1; }
    grep -q "$text" "$tmp/err" || { echo "FAIL: $what: no '$text' in:"; cat "$tmp/err"; exit 1; }
    none_left "$what"
    echo "ok: $what"
}
expect "divergence" 1 "divergence" PREFORK_DIVERGE=1
expect "divergence with a stranger" 1 "divergence" PREFORK_DIVERGE=stray
expect "stall" 1 "no progress" PREFORK_HANG=1
expect "stall with a stranger" 1 "no progress" PREFORK_HANG=stray

# --json: stdout carries the report alone, the client's line goes to stderr (the client
# sends its first request after it; the halt needs no accept)
timeout -k 5 60 "$encore" replay --json --then kill --stop 'pf.4: sent >= 1' "$tmp/s" \
    > "$tmp/out" 2> "$tmp/err" < /dev/null || { echo "FAIL: --json halt"; cat "$tmp/err"; exit 1; }
if [ "$(wc -l < "$tmp/out")" -ne 1 ] || ! grep -q '^{"halted":true,' "$tmp/out"; then
    echo "FAIL: --json: stdout is not the report alone:"; cat "$tmp/out"; exit 1
fi
grep -q "pf client: started" "$tmp/err" || { echo "FAIL: --json: the client's output is lost"; exit 1; }
none_left "--json"
echo "ok: --json report alone on stdout"

# SIG STATUS: a replay whose client stalled (and started a stranger) ended by SIG.  The
# client's first line on stdout, read through a FIFO, says the replay is that far.
signalled() {
    rm -f "$tmp/fifo"
    mkfifo "$tmp/fifo"
    timeout -k 5 60 "$encore" replay --setenv PREFORK_HANG=stray --then kill --stall-timeout 600 \
        "$tmp/s" > "$tmp/fifo" 2> "$tmp/err" < /dev/null &
    pid=$!
    exec 3< "$tmp/fifo"
    seen=""
    while IFS= read -r line <&3; do
        case "$line" in *"client: started"*) seen=1; break ;; esac
    done
    [ -n "$seen" ] || { echo "FAIL: $1: the replay ended early:"; cat "$tmp/err"; exit 1; }
    kill "-$1" "$pid"
    rc=0; wait "$pid" || rc=$?
    pid=""
    exec 3<&-
    [ "$rc" -eq "$2" ] || { echo "FAIL: $1: exit status $rc, expected $2"; cat "$tmp/err"; exit 1; }
    grep -q "interrupted by SIG$1" "$tmp/err" || { echo "FAIL: $1: no message"; cat "$tmp/err"; exit 1; }
    none_left "$1"
    echo "ok: SIG$1 ends the replay with $2"
}
signalled TERM 143
signalled INT 130
