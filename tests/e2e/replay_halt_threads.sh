#!/bin/sh
# replay_halt_threads.sh: halting stops every thread of a halted process, each at its place,
# and the replay ends when told (replayer/README.md, "Threads" and "Halting").  The program
# (progs/halt_threads.c) halts at `mark.sent >= 1` with four other threads blocked in read,
# pthread_cond_wait, poll and pthread_join, and its server held at its start, short of its
# listen, while the client is past its connect (the connect is released at the halt: a
# stand-in listener takes the connection for the server).  Checked, in each of RUNS
# recordings: the halt is `encore inf`'s cut; every thread of the halted process sleeps
# (/proc/PID/task/*/stat) and, where gdb can attach, is stopped inside the controller
# (libencore-replay.so); Enter ends the replay (exit 0, within its timeout, no process left);
# and `--then continue` from the same halt runs to the end with the recorded output (the
# server accepts the connection made at the halt).  MODE unix: the server listens on a Unix
# socket (the stand-in binds its path and removes it again).
# Usage: replay_halt_threads.sh ENCORE PROG RUNS [tcp|unix]
set -eu
encore=$1 prog=$2 runs=${3:-3} mode=${4:-tcp}
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_halt_thr.XXXXXX")
pid=""
cleanup() {
    [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
pred='ht: mark.sent >= 1'
run=1
while [ "$run" -le "$runs" ]; do
    # a port free now (another one when something holds it: the server cannot bind)
    try=0
    while :; do
        port=$(( 20000 + ($$ * 7 + run * 101 + try * 1009) % 20000 ))
        hex=$(printf '%04X' "$port")
        if [ "$mode" = unix ]; then
            port=$tmp/sock
            rm -f "$port"
        elif cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v h=":$hex" '
                { if (substr($2, length($2) - 4) == h) f = 1 } END { exit !f }'; then
            try=$((try + 1)); continue   # in use here (a client connected to it would hang)
        fi
        rm -rf "$tmp/s"
        "$encore" record -q -o "$tmp/s" --name ht -- "$prog" "$port" > "$tmp/rec.out" \
            2> "$tmp/rec.err" && break
        try=$((try + 1))
        grep -q 'bind/listen' "$tmp/rec.err" && [ "$try" -lt 5 ] ||
            { echo "FAIL: recording $run failed"; cat "$tmp/rec.err"; exit 1; }
    done
    grep -q '^conn: answer to request$' "$tmp/rec.out" ||
        { echo "FAIL: recording $run went wrong"; cat "$tmp/rec.out" "$tmp/rec.err"; exit 1; }
    "$encore" inf --json "$tmp/s" "$pred" > "$tmp/inf.json"
    cut=$(grep -o '"cuts":\[{[^}]*}' "$tmp/inf.json")
    case "$cut" in *'"ht.1":0'*) ;; *)
        echo "FAIL: encore inf does not hold the server at its start: $cut"; exit 1 ;;
    esac

    # halted, kept halted (--then stop) until Enter; the report read from a FIFO
    rm -f "$tmp/out" "$tmp/in"
    mkfifo "$tmp/out" "$tmp/in"
    timeout 60 "$encore" replay --json --then stop --stall-timeout 20 --stop "$pred" "$tmp/s" \
        < "$tmp/in" > "$tmp/out" 2> "$tmp/err" &
    pid=$!
    exec 3> "$tmp/in"
    IFS= read -r line < "$tmp/out" || line=""
    case "$line" in *'"status":"halted"'*) ;; *)
        echo "FAIL: recording $run: no halt report: $line"; cat "$tmp/err"; exit 1 ;;
    esac
    got=$(echo "$line" | grep -o '"cuts":\[{[^}]*}')
    [ "$got" = "$cut" ] || { echo "FAIL: halted at $got, encore inf says $cut"; exit 1; }
    hp=$(echo "$line" | grep -o '"name":"ht","pid":[0-9]*' | sed 's/.*://')
    [ -n "$hp" ] && [ -d "/proc/$hp" ] || { echo "FAIL: no pid for ht in $line"; exit 1; }
    n=0
    for t in /proc/"$hp"/task/*; do
        st=$(sed 's/^.*) //' "$t/stat" | cut -d' ' -f1)
        case "$st" in S|t|T) ;; *)
            echo "FAIL: thread ${t##*/} of the halted process is in state $st, not stopped"
            exit 1 ;;
        esac
        n=$((n + 1))
    done
    [ "$n" = 5 ] || { echo "FAIL: the halted process has $n threads, expected 5"; exit 1; }
    gdbnote="gdb not run"
    if command -v gdb > /dev/null 2>&1; then
        timeout 60 gdb -p "$hp" -batch -ex 'thread apply all bt' > "$tmp/gdb.out" 2>&1 || true
        nt=$(grep -c '^Thread [0-9]' "$tmp/gdb.out" || true)
        if [ "$nt" = 5 ]; then
            # every thread's stack goes through the controller: stopped at its place
            awk '/^Thread [0-9]/ { if (t != "" && !lc) bad = bad " " t; t = $2; lc = 0 }
                 /replayer\/lc|libencore-replay/ { lc = 1 }
                 END { if (t != "" && !lc) bad = bad " " t; if (bad != "") { print bad; exit 1 } }' \
                "$tmp/gdb.out" > "$tmp/bad" ||
                { echo "FAIL: thread(s)$(cat "$tmp/bad") not stopped in the controller:";
                  cat "$tmp/gdb.out"; exit 1; }
            gdbnote="gdb: 5 threads in the controller"
        else
            gdbnote="gdb could not attach"
        fi
    fi
    echo >&3
    exec 3>&-
    rc=0; wait "$pid" || rc=$?
    pid=""
    [ "$rc" = 0 ] || { echo "FAIL: recording $run: replay exit $rc after Enter"; cat "$tmp/err"; exit 1; }
    if [ -d "/proc/$hp" ] && ! grep -q '^State:.*Z' "/proc/$hp/status" 2>/dev/null; then
        echo "FAIL: halted process $hp left behind"; exit 1
    fi

    # from the same halt, on to the end: the server gets the connection made at the halt
    rc=0
    timeout 60 "$encore" replay -q --then continue --stall-timeout 20 --stop "$pred" "$tmp/s" \
        > "$tmp/cont.out" 2> "$tmp/cont.err" || rc=$?
    [ "$rc" = 0 ] || { echo "FAIL: recording $run: --then continue exit $rc"; cat "$tmp/cont.err"; exit 1; }
    grep -v '^ \|^Global state' "$tmp/cont.out" > "$tmp/cont.prog" || true
    # the same lines; their order between threads is that of printf into one stdio buffer
    # after each thread's last event, which replay does not order (README.md, Limits: "stdio
    # buffers several threads share"): compared sorted
    sort "$tmp/rec.out" > "$tmp/rec.sorted"
    sort "$tmp/cont.prog" > "$tmp/cont.sorted"
    cmp -s "$tmp/rec.sorted" "$tmp/cont.sorted" ||
        { echo "FAIL: recording $run: output after continue differs:";
          diff "$tmp/rec.out" "$tmp/cont.prog" || true; exit 1; }
    echo "recording $run: halted at $got, 5 threads stopped ($gdbnote), continued to the end"
    run=$((run + 1))
done
echo "ok: $runs recordings halted with every thread stopped, ended when told"
