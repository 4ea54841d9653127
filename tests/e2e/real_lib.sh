# real_lib.sh: shared by the tests/e2e/real_*.sh tests, which record programs nobody here
# wrote (python, perl, make, socat, shell pipelines) and replay them.  Sourced, not run.
#
# Every helper runs encore under `timeout`; the processes a test starts in the background
# are remembered by pid (real_bg) and ended by pid at exit, with the temporary directory.
# A test whose program is not installed exits 77 (meson's "skipped") through real_need.

case "$encore" in /*) ;; *) encore=$PWD/$encore ;; esac  # tests cd
real_t=60                                   # seconds any one command may take
real_pids=""
real_tmp=""

real_cleanup() {
    for p in $real_pids; do kill "$p" 2>/dev/null || true; done
    for p in $real_pids; do wait "$p" 2>/dev/null || true; done
    [ -z "$real_tmp" ] || rm -rf "$real_tmp"
}

# real_init NAME: a fresh temporary directory in $real_tmp, removed at exit.
real_init() {
    real_tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/real_$1.XXXXXX")
    trap real_cleanup EXIT
    trap 'exit 130' INT TERM
}

real_fail() { echo "FAIL: $*"; exit 1; }

# real_need PROG...: skip the test (77) when a program is missing.
real_need() {
    for p in "$@"; do
        command -v "$p" > /dev/null 2>&1 || { echo "SKIP: $p is not installed"; exit 77; }
    done
}

# real_path PROG: PROG's absolute path as the shell finds it (handed to `encore record`, whose
# own PATH search takes a directory of that name, e.g. /usr/lib/x86_64-linux-gnu/perl)
real_path() { command -v "$1"; }

# real_bg CMD...: start CMD in the background, remember its pid in $real_pids and $real_last.
real_bg() {
    "$@" &
    real_last=$!
    real_pids="$real_pids $real_last"
}

# real_wait_pid PID: wait for a background process of ours; its status in $real_status.
real_wait_pid() {
    real_status=0
    wait "$1" || real_status=$?
    real_pids=$(echo "$real_pids" | tr ' ' '\n' | grep -vx "$1" | tr '\n' ' ' || true)
}

# real_poll N CMD...: run CMD until it succeeds, at most N times (a bounded poll for a
# condition, e.g. a server's socket appearing; not a timing assumption).
real_poll() {
    n=$1; shift
    while [ "$n" -gt 0 ]; do
        "$@" 2> /dev/null && return 0
        n=$((n - 1))
        sleep 0.05
    done
    return 1
}

# real_check DIR: `encore check` finds every trace file whole and closed.
real_check() {
    timeout "$real_t" "$encore" check "$1" > "$real_tmp/check.out" 2>&1 ||
        { cat "$real_tmp/check.out"; real_fail "encore check $1"; }
    if grep -v ', closed, ok$' "$real_tmp/check.out" | grep -q .; then
        cat "$real_tmp/check.out"; real_fail "encore check: a trace is not whole and closed"
    fi
}

# real_analyze DIR: `encore analyze` into $real_tmp/analyze.out; sets real_events,
# real_matched, real_external, real_linked, real_unmatched from its summary.
real_analyze() {
    timeout "$real_t" "$encore" analyze "$1" > "$real_tmp/analyze.out" 2>&1 ||
        { cat "$real_tmp/analyze.out"; real_fail "encore analyze $1"; }
    real_events=$(sed -n 's/^  events *\([0-9]*\).*/\1/p' "$real_tmp/analyze.out")
    real_matched=$(sed -n 's/^  channels .*(\([0-9]*\) matched.*/\1/p' "$real_tmp/analyze.out")
    real_external=$(sed -n 's/^  channels .*, \([0-9]*\) external).*/\1/p' "$real_tmp/analyze.out")
    real_linked=$(sed -n 's/^  messages *\([0-9]*\) linked.*/\1/p' "$real_tmp/analyze.out")
    real_unmatched=$(sed -n 's/^  messages .*; \([0-9]*\) unmatched.*/\1/p' "$real_tmp/analyze.out")
    [ -n "$real_events" ] && [ -n "$real_linked" ] && [ -n "$real_unmatched" ] ||
        { cat "$real_tmp/analyze.out"; real_fail "cannot read encore analyze's summary"; }
}

# real_sql DIR QUERY: the single value a query returns (csv output, header dropped).
real_sql() {
    timeout "$real_t" "$encore" sql --csv "$1" "$2" > "$real_tmp/sql.out" 2>&1 ||
        { cat "$real_tmp/sql.out"; real_fail "encore sql '$2'"; }
    sed -n 2p "$real_tmp/sql.out"
}

# real_counts DIR: encore analyze, encore dump and encore sql agree on the number of events
# and of messages.
real_counts() {
    real_analyze "$1"
    timeout "$real_t" "$encore" dump "$1" > "$real_tmp/dump.out" 2>&1 ||
        { cat "$real_tmp/dump.out"; real_fail "encore dump $1"; }
    d=$(grep -c '^ *[0-9][0-9]*  ' "$real_tmp/dump.out" || true)
    s=$(real_sql "$1" 'SELECT count(*) FROM event')
    [ "$d" = "$real_events" ] && [ "$s" = "$real_events" ] ||
        real_fail "event counts differ: analyze $real_events, dump $d, sql $s"
    m=$(real_sql "$1" 'SELECT count(*) FROM message')
    [ "$m" = "$real_linked" ] || real_fail "messages: analyze links $real_linked, sql has $m"
}

# real_replay DIR EXPECTED [sorted]: replay DIR to the end (stdin /dev/null: what came from
# stdin when recorded must come from the trace); its stdout must be EXPECTED's bytes
# (compared sorted with `sorted`: several processes share stdout and interleave freely).
real_replay() {
    # shellcheck disable=SC2086
    timeout "$real_t" "$encore" replay -q ${real_replay_opts:-} --stall-timeout 20 "$1" < /dev/null \
        > "$real_tmp/replay.out" 2> "$real_tmp/replay.err" ||
        { cat "$real_tmp/replay.err"; real_fail "encore replay $1"; }
    if [ "${3:-}" = sorted ]; then
        sort "$2" > "$real_tmp/a.sorted"; sort "$real_tmp/replay.out" > "$real_tmp/b.sorted"
        cmp -s "$real_tmp/a.sorted" "$real_tmp/b.sorted" ||
            { diff "$real_tmp/a.sorted" "$real_tmp/b.sorted"; real_fail "replay output differs"; }
    else
        cmp -s "$2" "$real_tmp/replay.out" ||
            { diff "$2" "$real_tmp/replay.out"; real_fail "replay output differs"; }
    fi
}

# real_halt DIR PRED: `encore replay --stop PRED` halts exactly at `encore inf`'s cut, and
# leaves no replayed process behind.
real_halt() {
    timeout "$real_t" "$encore" inf --json "$1" "$2" > "$real_tmp/inf.json" 2>&1 ||
        { cat "$real_tmp/inf.json"; real_fail "encore inf '$2'"; }
    timeout "$real_t" "$encore" replay --json --then kill --stall-timeout 20 --stop "$2" "$1" \
        < /dev/null > "$real_tmp/halt.json" 2> "$real_tmp/halt.err" ||
        { cat "$real_tmp/halt.err"; real_fail "encore replay --stop '$2'"; }
    a=$(grep -o '"cuts":\[{[^}]*}' "$real_tmp/inf.json" | head -1)
    b=$(grep -o '"cuts":\[{[^}]*}' "$real_tmp/halt.json" | head -1)
    [ -n "$a" ] && [ "$a" = "$b" ] || real_fail "'$2': encore inf says $a, replay halted at $b"
    grep -q '"status":"halted"' "$real_tmp/halt.json" || real_fail "'$2': nothing halted"
    for p in $(grep -o '"pid":[0-9]*' "$real_tmp/halt.json" | cut -d: -f2); do
        [ "$p" -gt 0 ] && kill -0 "$p" 2>/dev/null && real_fail "replayed process $p left behind"
    done
    echo "ok: halted at Inf($2) = $a"
}
