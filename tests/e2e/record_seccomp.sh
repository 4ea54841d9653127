#!/bin/sh
# record_seccomp.sh: recording goes on under a program's own seccomp filter
# (recorder/README.md, "Limits"; recorder/guard.c).  PROG (progs/sandboxed.c) installs a
# filter like sshd's pre-auth sandbox (its loop's calls only, anything else kills it), then
# exchanges 3000 messages with a recorded peer.
#   prctl, syscall, tsync   recorded completely: output and status as bare, check ok (no
#                           truncation, every trace closed), a SANDBOX event in the trace;
#                           replayed to the end, every event reproduced, the same output
#   newfd                   the program makes a pipe under the filter, which forbids the
#                           recorder's description of it: the trace stops there, cleanly,
#                           saying seccomp; the program runs on as bare; replay follows the
#                           trace up to there (then the process runs free)
# Usage: record_seccomp.sh ENCORE PROG MODE
set -eu
encore=$1 prog=$2 mode=$3
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_seccomp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
sess="$tmp/sess"

fail() {
    echo "FAIL ($mode): $1"
    for f in bare.out rec.out rec.err check.out replay.out; do
        [ -f "$tmp/$f" ] && { echo "--- $f"; cat "$tmp/$f"; }
    done
    exit 1
}

case $mode in
newfd) args="tsync newfd" ;;
*) args=$mode ;;
esac
bare_rc=0 rec_rc=0 check_rc=0
# shellcheck disable=SC2086
"$prog" $args > "$tmp/bare.out" 2>&1 || bare_rc=$?
grep -q 'round trips: 3000' "$tmp/bare.out" || fail "the program does not run bare"
# shellcheck disable=SC2086
"$encore" record -o "$sess" --name sb -- "$prog" $args > "$tmp/rec.out" 2> "$tmp/rec.err" ||
    rec_rc=$?
[ "$bare_rc" = "$rec_rc" ] || fail "status $rec_rc recorded, $bare_rc bare"
cmp -s "$tmp/bare.out" "$tmp/rec.out" || fail "recorded output differs from bare"
"$encore" check "$sess" > "$tmp/check.out" 2>&1 || check_rc=$?
"$encore" dump "$sess/sb.trace" | grep -q ' sandbox .*= 0 ' || fail "no SANDBOX event"
case $mode in
newfd)
    [ "$check_rc" != 0 ] || fail "check exited 0"
    grep -q 'sb.trace: .*TRUNCATED after event [0-9]*: seccomp filter installed' "$tmp/check.out" ||
        fail "check does not say the trace stopped at the pipe"
    grep -q "encore record: trace $sess/sb.trace truncated after event [0-9]*: seccomp" "$tmp/rec.err" ||
        fail "record does not say the trace stopped"
    # the stop is where the pipe was made, after the loop (12000 events and more)
    n=$(sed -n 's/.*sb.trace: .*TRUNCATED after event \([0-9]*\).*/\1/p' "$tmp/check.out")
    [ "$n" -gt 12000 ] || fail "the trace stopped early, after event $n"
    ;;
*)
    [ "$check_rc" = 0 ] || fail "check exited $check_rc"
    grep -q 'sb.trace: .* closed, ok' "$tmp/check.out" || fail "the sandboxed trace is not whole"
    grep -q 'truncated' "$tmp/rec.err" && fail "record says a trace was truncated"
    ;;
esac
if [ -n "${ENCORE_REPLAY_LIB:-}" ]; then
    "$encore" replay "$sess" > "$tmp/replay.out" 2>&1 || fail "replay failed"
    grep -q 'replayed to the end, every recorded event reproduced' "$tmp/replay.out" ||
        fail "replay did not reach the end"
    if [ "$mode" != newfd ]; then # (past the stop it runs free: its output is its own)
        grep -q "round trips: 3000" "$tmp/replay.out" || fail "the replayed program did not finish"
        grep -q "$(grep '^sum:' "$tmp/bare.out")" "$tmp/replay.out" || fail "replayed output differs"
    fi
fi
echo "ok ($mode)"
