#!/bin/sh
# record_unrecorded.sh: nothing goes unrecorded silently, and programs that sandbox themselves
# run recorded as bare (recorder/README.md, "Limits"; schemas/trace-format.md, "Truncation").
#   privdrop      (root) a program drops to uid 65534, then forks: its output is the bare
#                 run's; record warns and check flags (exit 1) the child, naming it, the fork's
#                 event and "privileges dropped"
#   seccomp-prctl, seccomp-syscall
#                 a program installs a seccomp filter that kills it on the recorder's own calls
#                 and keeps working: output and status are the bare run's; record and check
#                 say the trace stopped after the event before the filter, naming seccomp;
#                 replay follows it up to there and lets the process run free, saying so
#   dup2          a program dup2s onto every descriptor from 5 to 1023 (the trace's among
#                 them, under a soft limit of 1024): output as bare, the trace whole (check ok)
#   setuid-exec   (root) a program executes a set-user-ID copy of id(1) owned by 65534: the
#                 new image is noted by record and flagged by check, naming the exec's event
#   sshd          (root, sshd and ssh installed) a login through a recorded sshd prints "hi";
#                 the pre-auth child's seccomp sandbox (RLIMIT_FSIZE 0, then a filter that
#                 kills it on the recorder's writes) is recorded through: its trace holds
#                 the SANDBOX event and goes on to its EXIT, closed; nothing is truncated
# Usage: record_unrecorded.sh ENCORE PROG MODE   (PROG is tests/e2e/progs/unrecorded.c)
set -eu
encore=$1 prog=$2 mode=$3
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_unrecorded.XXXXXX")
sshd_pid=
cleanup() {
    if [ -n "$sshd_pid" ]; then kill "$sshd_pid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT
sess="$tmp/sess"

need_root() {
    if [ "$(id -u)" != 0 ]; then echo "SKIP: $mode needs root"; exit 77; fi
}

fail() {
    echo "FAIL ($mode): $1"
    for f in bare.out rec.out rec.err check.out; do
        [ -f "$tmp/$f" ] && { echo "--- $f"; cat "$tmp/$f"; }
    done
    exit 1
}

# run NAME ARGS...: bare, then recorded; compares output and status.
run() {
    bare_rc=0 rec_rc=0
    "$prog" "$@" > "$tmp/bare.out" 2>&1 || bare_rc=$?
    "$encore" record -o "$sess" --name unrec -- "$prog" "$@" > "$tmp/rec.out" 2> "$tmp/rec.err" ||
        rec_rc=$?
    # encore record's own lines go to its stderr; the program's output to stdout
    grep -v '^encore record' "$tmp/rec.err" >> "$tmp/rec.out" || true
    cmp -s "$tmp/bare.out" "$tmp/rec.out" || fail "recorded output differs from bare"
    [ "$bare_rc" = "$rec_rc" ] || fail "status $rec_rc recorded, $bare_rc bare"
    check_rc=0
    "$encore" check "$sess" > "$tmp/check.out" 2>&1 || check_rc=$?
}

case $mode in
privdrop)
    need_root
    run privdrop
    grep -q 'read: from the child' "$tmp/rec.out" || fail "the child did not write"
    grep -q "encore record: warning: process unrec\.1 (forked at event [0-9]* of unrec) was not recorded: privileges dropped" \
        "$tmp/rec.err" || fail "no warning naming unrec.1 from record"
    [ "$check_rc" != 0 ] || fail "check exited 0"
    grep -q 'event [0-9]* (fork): process unrec\.1 was NOT RECORDED: privileges dropped' \
        "$tmp/check.out" || fail "check does not name unrec.1"
    ;;
seccomp-prctl|seccomp-syscall)
    run seccomp "${mode#seccomp-}"
    [ "$rec_rc" = 3 ] || fail "status $rec_rc"
    grep -q 'after the filter: 2000 round trips' "$tmp/rec.out" || fail "the program did not go on"
    grep -q "encore record: trace $sess/unrec.trace truncated after event [1-9][0-9]*: seccomp filter installed.*process unrec ran on unrecorded" \
        "$tmp/rec.err" || fail "no seccomp line from record"
    [ "$check_rc" != 0 ] || fail "check exited 0"
    grep -q 'unrec.trace: .*TRUNCATED after event [1-9][0-9]*: seccomp filter installed' "$tmp/check.out" ||
        fail "check does not say the trace stopped at the filter"
    # the stop is just before the filter: the last event is the read of "before"
    last=$("$encore" dump "$sess/unrec.trace" | grep -E '^ +[0-9]+ ' | tail -1)
    case $last in
    *"recv "*"read "*) ;;
    *) fail "the last event before the filter is not the program's read: $last" ;;
    esac
    # replay follows the trace up to the filter, then lets the process run free, saying so
    if [ -n "${ENCORE_REPLAY_LIB:-}" ]; then
        "$encore" replay "$sess" > "$tmp/replay.out" 2>&1 ||
            { cp "$tmp/replay.out" "$tmp/check.out"; fail "replay failed"; }
        grep -q 'replayed to the end, every recorded event reproduced' "$tmp/replay.out" ||
            { cp "$tmp/replay.out" "$tmp/check.out"; fail "replay did not reach the end"; }
        grep -q 'truncated after event [0-9]* (seccomp filter installed.*then runs free' \
            "$tmp/replay.out" || { cp "$tmp/replay.out" "$tmp/check.out"; fail "replay does not say it"; }
    fi
    ;;
dup2)
    ulimit -Sn 1024
    run dup2
    grep -q 'open: 1019' "$tmp/rec.out" || fail "the program's descriptors are not all open"
    grep -q 'open after close_range: 0$' "$tmp/rec.out" || fail "close_range left descriptors"
    [ "$check_rc" = 0 ] || fail "check exited $check_rc"
    grep -q 'unrec.trace: .* closed, ok' "$tmp/check.out" || fail "the root's trace is not whole"
    grep -q 'unrec.1.trace: .* closed, ok' "$tmp/check.out" || fail "the child's trace is not whole"
    "$encore" dump "$sess/unrec.trace" | grep -q ' exit ' || fail "no EXIT event in the trace"
    ;;
setuid-exec)
    need_root
    # id(1), not a program of this build: a sanitizer runtime refuses to run set-user-ID
    id=$(command -v id)
    cp "$id" "$tmp/suid"
    chown 65534 "$tmp/suid"
    chmod 4755 "$tmp/suid"
    chmod 755 "$tmp"
    if [ "$("$tmp/suid" -u)" != 65534 ]; then
        echo "SKIP: set-user-ID bits are not honoured here (nosuid mount?)"; exit 77
    fi
    run exec "$tmp/suid" -u
    [ "$(cat "$tmp/rec.out")" = 65534 ] || fail "the set-user-ID program did not run"
    grep -q "encore record: warning: image 1 of process unrec (exec at event [0-9]*) was not recorded: exec of a set-user-ID" \
        "$tmp/rec.err" || fail "no warning from record"
    [ "$check_rc" != 0 ] || fail "check exited 0"
    grep -q 'event [0-9]* (exec): image 1 of process unrec was NOT RECORDED: exec of a set-user-ID' \
        "$tmp/check.out" || fail "check does not flag the exec"
    ;;
sshd)
    need_root
    sshd=$(command -v sshd || echo /usr/sbin/sshd)
    if [ ! -x "$sshd" ] || ! command -v ssh > /dev/null || ! command -v ssh-keygen > /dev/null; then
        echo "SKIP: sshd, ssh or ssh-keygen missing"; exit 77
    fi
    mkdir -p /run/sshd 2>/dev/null || true
    ssh-keygen -q -t ed25519 -N '' -f "$tmp/hostkey"
    ssh-keygen -q -t ed25519 -N '' -f "$tmp/userkey"
    cp "$tmp/userkey.pub" "$tmp/authkeys"
    chmod 755 "$tmp"
    # sshd says on stderr when it listens: read through a FIFO (a blocking read, no sleep),
    # then drained into rec.err with encore record's own lines
    port=$(( 20000 + $$ % 20000 ))
    mkfifo "$tmp/err.fifo"
    "$encore" record -o "$sess" --name sshd -- "$sshd" -D -e -p "$port" -h "$tmp/hostkey" \
        -o ListenAddress=127.0.0.1 -o "AuthorizedKeysFile=$tmp/authkeys" \
        -o PermitRootLogin=prohibit-password -o StrictModes=no -o UsePAM=no \
        -o "PidFile=$tmp/sshd.pid" > "$tmp/rec.out" 2> "$tmp/err.fifo" &
    rec_pid=$!
    exec 3< "$tmp/err.fifo"
    listening=
    while IFS= read -r line <&3; do
        printf '%s\n' "$line" >> "$tmp/rec.err"
        case $line in *"Server listening"*) listening=1; break ;; esac
    done
    cat <&3 >> "$tmp/rec.err" &
    drain_pid=$!
    exec 3<&-
    if [ -z "$listening" ]; then
        wait "$rec_pid" || true
        wait "$drain_pid" || true
        grep -q 'Address already in use' "$tmp/rec.err" && { echo "SKIP: port $port taken"; exit 77; }
        fail "sshd did not start"
    fi
    out=$(ssh -p "$port" -i "$tmp/userkey" -o StrictHostKeyChecking=no \
        -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o ConnectTimeout=20 \
        root@127.0.0.1 echo hi 2> "$tmp/ssh.err") || true
    [ -s "$tmp/sshd.pid" ] && sshd_pid=$(cat "$tmp/sshd.pid")
    [ -n "$sshd_pid" ] || sshd_pid=$(ls "$sess/.encore-registry" | sed -n 's/^pid\.//p' | head -1)
    kill "$sshd_pid" 2>/dev/null || true
    wait "$rec_pid" || true
    wait "$drain_pid" || true
    sshd_pid=
    [ "$out" = hi ] || fail "the login through the recorded sshd failed: $(cat "$tmp/ssh.err")"
    # the pre-auth child's sandbox is recorded through: a SANDBOX event, the trace whole
    grep -q "truncated after event" "$tmp/rec.err" && fail "record says a trace was truncated"
    check_rc=0
    "$encore" check "$sess" > "$tmp/check.out" 2>&1 || check_rc=$?
    [ "$check_rc" = 0 ] || fail "check exited $check_rc"
    sandboxed=
    for t in "$sess"/*.trace; do
        if "$encore" dump "$t" | grep -q ' sandbox  *prctl = 0 '; then sandboxed=$t; fi
    done
    [ -n "$sandboxed" ] || fail "no trace holds the pre-auth child's sandbox"
    grep -q "$sandboxed: .* closed, ok" "$tmp/check.out" || fail "the sandboxed trace is not whole"
    "$encore" dump "$sandboxed" | grep -q ' exit  *exit = 0' || fail "no EXIT after the sandbox"
    ;;
*)
    echo "unknown mode $mode"; exit 2 ;;
esac
echo "ok ($mode)"
