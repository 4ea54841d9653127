# lib.sh: shared by the corpus scenarios (tests/corpus/*.sh), each of which records a real
# server together with its clients in ONE session (a recorded /bin/sh runs them, as a user
# would), replays the session to the end, compares the outputs, and halts at a simple
# predicate compared with `encore inf --json`.  Sourced by bash, not run.
#
# A scenario sets itself up in $C_RUN (configuration, data), writes the body of the recorded
# shell script with corpus_session, and calls corpus_run.  It may set C_EXPECT (a pattern the
# recorded output must hold, or the recording counts as failed: the recorder broke the
# programs), C_SORTED=1 (compare outputs sorted) and C_HINT (the cause of its failure found
# by reading the traces, shown when the automatic attribution says "other"), C_SHM (what
# the scenario's processes share in memory: a cause when no other is named), C_AS (a user
# to record and replay as), C_REPLAY_OPTS (options of every `encore replay`), C_RECORD_OPTS
# (options of every `encore record`: --same-layout for dig).  $C_RUN is
# copied aside once set up and put back before every recording and every replay: a replayed
# server reads the files of the replay's time, so they must be the files the recorded run
# started with.
#
# The body runs under /bin/sh with these helpers (shell builtins only, so that waiting for a
# server forks nothing and connects to nothing: the recorded processes are the scenario's):
#   wait_listen PORT   until a TCP socket listens on PORT (read from /proc/net/tcp)
#   wait_path PATH     until PATH exists (a Unix socket, a pid file)
#   stop PID [SIG]     SIG (default TERM) to a child of the shell, then wait for it
#   wait_all PID...    wait for each of several clients the shell started in the background
#                      (a bare `wait` would wait for the server too)
#   stop_pidfile F     SIGTERM to the daemon whose pid F holds, then wait until it is gone
#
# Every scenario prints one result line (see corpus_result), and exits 0 when the session
# replayed to the end with identical outputs in every recording, 1 otherwise, 77 when its
# program is missing.  Environment:
#   ENCORE           the encore executable (default: build/cli/encore of this tree)
#   CORPUS_TRIES     recordings per scenario (default 3; each is recorded and replayed)
#   CORPUS_KEEP      a directory: copy each failing session there instead of removing it
#   CORPUS_NO_HALT   set: no halt (CI checks that the scenarios known to replay still do)
#   CORPUS_DEBUG     set: keep the temporary directory

C_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ENCORE=${ENCORE:-$C_DIR/../../build/cli/encore}
case "$ENCORE" in /*) ;; *) ENCORE=$PWD/$ENCORE ;; esac
C_TRIES=${CORPUS_TRIES:-3}
C_T=60                          # seconds any one encore command may take
C_TMP=""
C_PIDS=""
C_PROG="" C_VERSION="" C_SORTED="" C_EXPECT="" C_HINT="" C_SCRATCH=""

c_cleanup() {
    [ -n "${CORPUS_DEBUG:-}" ] && { echo "corpus: kept $C_TMP" >&2; return; }
    local p
    for p in $C_PIDS; do kill "$p" 2>/dev/null || true; done
    for p in $C_PIDS; do wait "$p" 2>/dev/null || true; done
    [ -n "${C_CLEANUP_HOOK:-}" ] && "$C_CLEANUP_HOOK"
    if [ -n "$C_TMP" ]; then
        chmod -R u+w "$C_TMP" 2>/dev/null || true
        rm -rf "$C_TMP"
    fi
}

# c_bounded CMD...: CMD under `timeout` (its own process group), then whatever is left of
# that group ended by its id: a recorded program that ignores SIGTERM when the time is up
# (dig spins on under the recorder) is not left behind.
c_bounded() {
    local tp st=0
    timeout "$C_T" "$@" &
    tp=$!
    wait "$tp" || st=$?
    kill -KILL -- "-$tp" 2>/dev/null || true
    return "$st"
}

# corpus_result RECORDED REPLAYED HALTED TRIES NOTE: the scenario's one line, tab-separated,
# read by `./run.sh corpus`:
#   RESULT  program  version  recorded  replayed  halted  tries  note
corpus_result() {
    printf 'RESULT\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$C_PROG" "$C_VERSION" "$1" "$2" "$3" "$4" "$5"
}

# corpus_need PROG...: the scenario is skipped (77, with a result line) without PROG.
corpus_need() {
    local p
    [ -n "$C_PROG" ] || C_PROG=$(basename "$0" .sh) # (before corpus_init: the row's name)
    for p in "$@"; do
        if ! command -v "$p" >/dev/null 2>&1; then
            corpus_result "skipped" "-" "-" 0 "$p is not installed"
            exit 77
        fi
    done
}

# corpus_skip REASON: skip the scenario (77) for a reason of the machine.
corpus_skip() {
    corpus_result "skipped" "-" "-" 0 "$1"
    exit 77
}

# corpus_init PROGRAM VERSION: a fresh temporary directory $C_TMP (removed at exit), with
# $C_RUN for the scenario's files.
corpus_init() {
    C_PROG=$1 C_VERSION=$2
    [ -x "$ENCORE" ] || { echo "corpus: $ENCORE is not built; run ./run.sh build" >&2; exit 2; }
    C_TMP=$(mktemp -d "${TMPDIR:-/tmp}/encore-corpus-$1.XXXXXX")
    chmod 755 "$C_TMP"
    C_RUN=$C_TMP/run
    mkdir -p "$C_RUN"
    trap c_cleanup EXIT
    trap 'exit 130' INT TERM
}

# corpus_port: a free TCP port on loopback (the kernel's choice, released at once).
corpus_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# corpus_session: the body of the recorded shell script, from stdin (after the helpers).
corpus_session() {
    cat > "$C_TMP/session.sh" <<'EOF'
# the recorded session: a shell starts the server and its clients (see tests/corpus/lib.sh)
wait_listen() {
    _h=$(printf '%04X' "$1") _n=0
    while [ $_n -lt 20000 ]; do
        for _f in /proc/net/tcp /proc/net/tcp6; do
            while read -r _sl _loc _rem _st _rest; do
                case "$_loc:$_st" in *:$_h:0A) return 0 ;; esac
            done < $_f
        done
        _n=$((_n + 1))
    done
    echo "wait_listen: nothing listens on port $1" >&2
    return 1
}
wait_path() {
    _n=0
    while [ ! -e "$1" ] && [ $_n -lt 20000000 ]; do _n=$((_n + 1)); done
    [ -e "$1" ] || { echo "wait_path: $1 never appeared" >&2; return 1; }
}
stop() { kill -"${2:-TERM}" "$1"; wait "$1"; echo "server exit $?" >&2; }
wait_all() { for _p in "$@"; do wait "$_p" || echo "client $_p: exit $?" >&2; done; }
stop_pidfile() {
    _p=
    read -r _p < "$1"
    kill -TERM "$_p"
    _n=0
    while kill -0 "$_p" 2>/dev/null && [ $_n -lt 20000000 ]; do _n=$((_n + 1)); done
}
EOF
    cat >> "$C_TMP/session.sh"
}

# c_reset: put $C_RUN back as it was set up (see the paragraph at the top).
c_reset() {
    [ -z "${C_CLEANUP_HOOK:-}" ] || "$C_CLEANUP_HOOK" # (what the last run left, if anything)
    chmod -R u+w "$C_RUN" 2>/dev/null || true
    rm -rf "$C_RUN"
    cp -a "$C_TMP/run.orig" "$C_RUN"
}

# c_encore ARGS...: encore (bounded in time) reading a recorded session, as the user who
# recorded it (C_AS): encore refuses to read another user's session.
c_encore() {
    timeout "$C_T" ${C_AS:+runuser -u "$C_AS" --} "$ENCORE" "$@"
}

# c_threads DIR PROC: how many threads PROC ran in the session DIR, from the thread column
# of `encore sql` (empty where this encore has none: the thread support is not there).
c_threads() {
    c_encore sql --csv "$1" "SELECT max(e.thread) + 1 FROM event e
        JOIN process p ON p.id = e.proc WHERE p.name = '$2'" 2>/dev/null | sed -n 2p
}

# c_classify MESSAGE DIR REPLAY_STDERR: the cause of a failure (threads, asynchronous
# signals, children, shared memory, seccomp, privilege drop, descriptor passing...), from
# encore's message (the divergence or stall text), what `encore record` and `encore replay`
# said besides, and the events of the session DIR around the one the message names (a
# signal handler's clock read, an EINTR or the process's end there: an asynchronous signal).
# The rules go from what names its cause outright to what only suggests it.
c_classify() {
    local msg=$1 dir=${2:-} err=${3:-} proc ev thr ch ctx="" said n
    # "process P, event N", or "process P, thread T, event N" where events carry threads
    proc=$(echo "$msg" | sed -n 's/.*process \([^ ,]*\),\( thread [0-9]*,\)\{0,1\} event [0-9].*/\1/p')
    thr=$(echo "$msg" | sed -n 's/.*process [^ ,]*, thread \([0-9]*\), event [0-9].*/\1/p')
    ev=$(echo "$msg" | sed -n 's/.*, event \([0-9]*\):.*/\1/p')
    # the replay's whole report (a stall names what each process and thread waits for) and
    # the recordings' warnings (processes the recorder stopped following, threads)
    said="$msg
$(head -60 "$err" 2>/dev/null)
$(cat "$C_TMP"/rec*.err 2>/dev/null)"
    if [ -n "$proc" ] && [ -n "$ev" ] && [ -d "$dir" ]; then
        ctx=$(c_encore dump "$dir" 2>/dev/null | awk -v p="$proc" -v e="$ev" '
            $1 == "process" { on = ($2 == p) } on && $1 ~ /^[0-9]+$/ && $1 >= e - 1 && $1 <= e + 8')
    fi
    # processes the recorder could not follow: what they did is not in the trace at all
    case "$said" in
        *"seccomp filter installed"*)
            echo "seccomp sandbox (recording stops where the filter is installed; the process runs free in replay)"; return ;;
        *"privileges dropped"*)
            echo "privilege drop (a process the recorder could not follow)"; return ;;
        *"was not recorded: "*|*"NOT RECORDED: "*)
            echo "a process the recorder could not follow ($(echo "$said" |
                sed -n 's/.*\(was not recorded\|NOT RECORDED\): //p' | head -1))"; return ;;
    esac
    # texts that name a signal's or a thread's event
    case "$msg" in
        *"expected handler"*|*"handler of signal"*|*"expected kill ("*|*"expected timer ("*|\
        *"death by signal"*|*sigwait*|*sigsuspend*|*"signal "[0-9]*|*SIG[A-Z][A-Z]*)
            echo "asynchronous signals"; return ;;
        *"expected thread ("*|*"expected sync ("*|*pthread_*|*"the thread called"*|\
        *"thread ended"*|*"of object"*|*" turn"*|*"thread "[0-9]*"'s"*)
            echo "threads"; return ;;
    esac
    # a channel end several processes read at once (forked workers on one task pipe): which
    # bytes each reader got is not in the traces, and replay may hand one another's
    if [ -d "$dir" ] && case "$msg" in *divergence*|*"no progress"*) true ;; *) false ;; esac &&
        c_encore analyze "$dir" 2>&1 | grep -q "read by several processes at once"; then
        echo "a pipe read by several processes at once (which reader got which bytes is not recorded)"; return
    fi
    case "$msg" in
        *"no progress for"*)
            case "$said" in
                *" turn"*|*"thread "[0-9]*"'s"*) echo "threads (the stall: a thread waits for its turn)"; return ;;
                *handler*|*"signal "[0-9]*|*"waiting for a signal"*)
                    echo "asynchronous signals (the stall: a process waits for a signal)"; return ;;
            esac ;;
    esac
    # a read that failed with EAGAIN on a just-accepted connection, before the first byte
    # told the recorder the peer was recorded: logged as external input, and in replay the
    # next receive finds the stream closed ("the peer closed the stream after 0 of N ...")
    ch=$(echo "$msg" | sed -n 's/.*receive on channel \([0-9]*\) .*peer closed.*/\1/p')
    if [ -n "$ch" ] && c_encore dump "$dir" 2>/dev/null | awk -v p="$proc" '
            $1 == "process" { on = ($2 == p) } on' | grep -q " input .* ch=$ch = -1 errno=11"; then
        echo "early EAGAIN read on an accepted connection logged as external input"; return
    fi
    # what the replayed programs logged (nginx: "recvmsg() returned invalid ancillary data"),
    # in $C_RUN or, replayed isolated, in the scratch area the replay kept ($C_SCRATCH)
    if grep -rqs -D skip 'ancillary' "$C_RUN" ${C_SCRATCH:+"$C_SCRATCH"}; then
        echo "descriptor passing (the replayed program logged:$(grep -rhos -D skip '[^]:]*ancillary data' \
            "$C_RUN" ${C_SCRATCH:+"$C_SCRATCH"} | head -1))"; return
    fi
    case "$msg" in
        *ancillary*|*SCM_RIGHTS*|*"descriptor pass"*) echo "descriptor passing"; return ;;
        *"asked for"*|*MSG_PEEK*|*MSG_TRUNC*) echo "MSG_PEEK/MSG_TRUNC"; return ;;
    esac
    # the replayed process ended where the recorded one went on: a signal from outside its
    # control (the shell's SIGTERM, really sent in replay) ended it elsewhere
    case "$msg" in
        *"but the process called exit"|*"but the process called _exit"|*"but the process ended"*|\
        *"but the process died"*)
            echo "asynchronous signals (probably: the process ended at a signal, elsewhere than recorded)"; return ;;
    esac
    # the diverging process ran threads: a thread other than the main one diverged, the
    # trace says it ran several (the thread column), or the recorder warned
    if [ -n "$thr" ] && [ "$thr" != 0 ]; then
        echo "threads (thread $thr diverged)"; return
    fi
    if [ -n "$proc" ]; then
        if grep -q "process $proc (pid [0-9]*) used threads" "$C_TMP"/rec*.err 2>/dev/null; then
            echo "threads (the diverging process started threads)"; return
        fi
        n=$(c_threads "$dir" "$proc")
        if [ -n "$n" ] && [ "$n" -gt 1 ] 2>/dev/null; then
            echo "threads (the diverging process ran $n threads)"; return
        fi
    fi
    case "$msg" in
        *"expected wait ("*|*"called wait"*) echo "children (the order of a wait and a child's end)"; return ;;
    esac
    # the process waits where the recording ended within a few events: the SIGTERM
    # that stopped the server came while it waited (its handler set a flag, or killed it)
    case "$ctx" in
        *"errno=4 "*|*sigsafe*|*signal*|*handler*|*_sig*|*" exit "*|*death*) echo "asynchronous signals"; return ;;
    esac
    # the scenario's processes share memory (C_SHM: what they share), which nothing orders: a
    # wait the recorded run skipped (a latch already set there) is read as that, not as a signal
    if [ -n "${C_SHM:-}" ] && case "$msg" in *divergence*|*"no progress"*) true ;; *) false ;; esac; then
        echo "shared memory between processes ($C_SHM)"; return
    fi
    # the replayed process went on waiting where the recorded one did something else: what
    # ended the recorded wait was not a call (a handler run: the postmaster forks from its
    # SIGCHLD handler)
    case "$msg" in
        *"but the process called "*select|*"but the process called "*poll|*"but the process called epoll_wait"|\
        *"but the process called "*pause|*"but the process called "*sigsuspend)
            echo "asynchronous signals (probably: a handler ended the recorded wait)"; return ;;
    esac
    case "$msg" in
        *signal*) echo "asynchronous signals" ;;
        *connect*|*SO_ERROR*|*EINPROGRESS*) echo "failed connects" ;;
        *udp*|*UDP*|*datagram*|*recvfrom*|*sendto*) echo "UDP" ;;
        *shm*|*"shared memory"*|*mmap*) echo "shared memory" ;;
        *) echo "other" ;;
    esac
}

# corpus_run [PREDICATE]: record the session $C_TRIES times; replay each to the end and
# compare its stdout with the recording's (sorted when C_SORTED=1); halt the first
# replayable one at PREDICATE (default: the server's process that received the most
# messages, at its second) and compare the halted cut with `encore inf --json`.
corpus_run() {
    local pred=${1:-} cause="" c m="" st i rec_ok=0 rep_ok=0 first_fail="" rec_fail="" good="" note="" halted="-"
    cp -a "$C_RUN" "$C_TMP/run.orig"
    # what an isolated replay wrote (the programs' logs) is kept for c_classify to read
    local scratch=""
    case " ${C_REPLAY_OPTS:-} " in *" --no-isolate "*) ;; *)
        ! "$ENCORE" replay --help 2>&1 | grep -q -- --keep-scratch || scratch=1 ;;
    esac
    for i in $(seq 1 "$C_TRIES"); do
        local s=$C_TMP/s$i
        c_reset
        st=0
        (cd "$C_RUN" && c_bounded ${C_AS:+runuser -u "$C_AS" --} "$ENCORE" record -q ${C_RECORD_OPTS:-} \
                -o "$s" --name sh -- /bin/sh "$C_TMP/session.sh") \
                < /dev/null > "$C_TMP/rec$i.out" 2> "$C_TMP/rec$i.err" || st=$?
        if [ "$st" != 0 ]; then
            m=$(grep -v '^server exit' "$C_TMP/rec$i.err" | head -1)
            [ "$st" != 124 ] || m="timed out after ${C_T}s${m:+: $m}"
            rec_fail="recording $i: ${m:-status $st}"
            echo "corpus: $C_PROG: recording $i failed: ${m:-status $st}" >&2
            sed 's/^/  | /' "$C_TMP/rec$i.err" | tail -20 >&2
            continue
        fi
        if [ -n "$C_EXPECT" ] && ! grep -q -- "$C_EXPECT" "$C_TMP/rec$i.out"; then
            # the programs misbehaved while recorded: the recorder broke them
            m=$(grep -v '^server exit' "$C_TMP/rec$i.err" | head -1)
            rec_fail="recording $i: the recorded run went wrong (no '$C_EXPECT' in its output)${m:+: $m}"
            echo "corpus: $C_PROG: $rec_fail" >&2
            continue
        fi
        rec_ok=$((rec_ok + 1))
        c_reset
        C_SCRATCH=""
        [ -z "$scratch" ] || C_SCRATCH=$C_TMP/scratch$i
        if (cd "$C_RUN" && c_bounded ${C_AS:+runuser -u "$C_AS" --} "$ENCORE" replay -q \
                --stall-timeout 15 ${C_REPLAY_OPTS:-} ${C_SCRATCH:+--keep-scratch "$C_SCRATCH"} "$s") < /dev/null > "$C_TMP/rep$i.out" 2> "$C_TMP/rep$i.err"; then
            if [ -n "$C_SORTED" ]; then
                sort "$C_TMP/rec$i.out" > "$C_TMP/a"; sort "$C_TMP/rep$i.out" > "$C_TMP/b"
            else
                cp "$C_TMP/rec$i.out" "$C_TMP/a"; cp "$C_TMP/rep$i.out" "$C_TMP/b"
            fi
            if cmp -s "$C_TMP/a" "$C_TMP/b"; then
                rep_ok=$((rep_ok + 1))
                [ -n "$good" ] || good=$s
                continue
            fi
            m="output differs: $(diff "$C_TMP/a" "$C_TMP/b" | grep '^[<>]' | head -1)"
        else
            m=$(c_replay_msg "$C_TMP/rep$i.err")
            [ -n "$m" ] || m="no message from encore replay (timed out after ${C_T}s?)"
        fi
        m=$(echo "$m" | sed 's/^encore replay: //; s/ (pid [0-9]*)//')
        [ -n "$first_fail" ] || first_fail=$m
        # every recording's cause, each named once
        c=$(c_classify "$m" "$s" "$C_TMP/rep$i.err")
        [ "$c" != other ] || [ -z "$C_HINT" ] || c=$C_HINT
        case "; $cause;" in *"; ${c%% (*};"*|*"; ${c%% (*} ("*) ;; *) cause="${cause:+$cause; }$c" ;; esac
        echo "corpus: $C_PROG: replay of recording $i failed: $m" >&2
        if [ -n "${CORPUS_KEEP:-}" ]; then
            mkdir -p "$CORPUS_KEEP"
            rm -rf "$CORPUS_KEEP/$C_PROG-$i"
            cp -a "$s" "$CORPUS_KEEP/$C_PROG-$i"
            cp "$C_TMP/session.sh" "$C_TMP"/re?$i.* "$CORPUS_KEEP/$C_PROG-$i/" 2>/dev/null || true
        fi
    done

    if [ "$rec_ok" = 0 ]; then
        corpus_result "no (0/$C_TRIES): ${rec_fail#recording *: }" "-" "-" "$C_TRIES" \
            "${C_HINT:-recording failed}"
        return 1
    fi
    if [ -n "${CORPUS_NO_HALT:-}" ]; then
        halted="skipped (CORPUS_NO_HALT)"
    elif [ -n "$good" ]; then
        [ -n "$pred" ] || pred=$(c_default_pred "$good")
        if [ -z "$pred" ]; then
            halted="skipped (no message between recorded processes to halt at)"
        else
            halted=$(c_halt "$good" "$pred")
        fi
    else
        halted="skipped (no recording replayed)"
    fi
    if [ "$rep_ok" != "$rec_ok" ]; then
        note="$cause"
        local th
        th=$(sed -n 's/.*process \([^ ]*\) (pid [0-9]*) used threads.*/\1/p' "$C_TMP"/rec*.err 2>/dev/null |
             sort -u | tr '\n' ' ')
        case "$note" in *threads*) ;; *) [ -z "$th" ] || note="$note; threads started in ${th% }" ;; esac
        corpus_result "yes ($rec_ok/$C_TRIES)" "no ($rep_ok/$rec_ok): $first_fail" "$halted" \
            "$C_TRIES" "$note"
        return 1
    fi
    corpus_result "yes ($rec_ok/$C_TRIES)" "yes ($rep_ok/$rec_ok)" "$halted" "$C_TRIES" "${rec_fail:+$rec_fail}"
    case "$halted" in no*) return 1 ;; esac
    return 0
}

# c_replay_msg FILE: what `encore replay` said of its failure in FILE (its stderr): the first
# message that is not a warning; for a stall, with the first process of the report that
# waits for something other than a child's end (the shell's wait only follows from the
# others'), and that has not ended or not started (those wait for nothing).
c_replay_msg() {
    local m
    m=$(grep 'encore replay:' "$1" | grep -v '^encore replay: warning:' | head -1)
    [ -n "$m" ] || m=$(head -1 "$1")
    case "$m" in *"the replay is stuck:")
        m="$m$(sed -n '/the replay is stuck:$/,$p' "$1" | sed -n '2,$p' |
            grep -v 'waiting in wait()\|: ended at state\|: not started' | grep -m1 '^  ' |
            sed 's/^ */ /')" ;;
    esac
    echo "$m" | sed 's/ (pid [0-9]*)//g'
}

# c_default_pred DIR: "PROC: received >= K" for the recorded process of the scenario's
# program with the most received messages (any process when none of it received one), K
# at most 2.
c_default_pred() {
    local row names
    # the processes one of whose images runs the program (the first image is the shell's
    # most often: process.exe names it only): `encore dump` lists each image
    names=$(c_encore dump --limit 1 "$1" 2>/dev/null | awk -v prog="${C_PROG%%-*}" '
        /^process / { p = $2 }
        /^  image [0-9]*: / && index($3, prog) { print "'"'"'" p "'"'"'" }' | sort -u | paste -sd, -)
    [ -n "$names" ] || names="''"
    row=$(c_encore sql --csv "$1" "
        SELECT p.name, count(*) AS n FROM message m JOIN event e ON e.id = m.recv
        JOIN process p ON p.id = e.proc
        GROUP BY p.name ORDER BY (p.name IN ($names)) DESC, (p.exe LIKE '%${C_PROG%%-*}%') DESC,
                                 n DESC, p.name LIMIT 1" \
        2>/dev/null | sed -n 2p)
    [ -n "$row" ] || return 0
    # 2, not more: a later receive may come from a client the shell starts after waiting
    # for an earlier one, a wait() the analyzer does not order (README.md, Limits)
    local n=${row##*,}
    [ "$n" -le 2 ] || n=2
    echo "${row%%,*}: received >= $n"
}

# c_halt DIR PRED: "yes (PRED)" when `encore replay --stop PRED` halts at `encore inf`'s
# cut, "no (...)" otherwise.
c_halt() {
    local s=$1 pred=$2 a b
    if ! c_encore inf --json "$s" "$pred" > "$C_TMP/inf.json" 2> "$C_TMP/inf.err"; then
        echo "no ('$pred': encore inf: $(head -1 "$C_TMP/inf.err"))"; return
    fi
    c_reset
    if ! (cd "$C_RUN" && c_bounded ${C_AS:+runuser -u "$C_AS" --} "$ENCORE" replay --json \
            --then kill --stall-timeout 15 ${C_REPLAY_OPTS:-} --stop "$pred" "$s") < /dev/null \
            > "$C_TMP/halt.json" 2> "$C_TMP/halt.err"; then
        echo "no ('$pred': $(c_replay_msg "$C_TMP/halt.err" | grep . || echo "status $?"))"; return
    fi
    a=$(grep -o '"cuts":\[{[^}]*}' "$C_TMP/inf.json" | head -1)
    b=$(grep -o '"cuts":\[{[^}]*}' "$C_TMP/halt.json" | head -1)
    if [ -n "$a" ] && [ "$a" = "$b" ] && grep -q '"status":"halted"' "$C_TMP/halt.json"; then
        echo "yes ($pred)"
    else
        echo "no ('$pred': inf $a, halted at $b)"
    fi
}
