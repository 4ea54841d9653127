#!/bin/sh
# replay_wait.sh: children and the wait family (replayer/README.md, "Halting"; analyzer/README.md,
# the wait edge).  A parent runs clients one after the other and reaps each (tests/e2e/progs/
# replay_wait.c), alone ("w") and driven by sh ("sh", the shape `srv | { c1; c2; ... }`):
#   - the replay gives the recorded output, every wait reaping the recorded child (the driver's
#     last waitpid(-1) may have reaped the server or the last client first: the parent's lines
#     come in the recorded order);
#   - for a predicate on a later client, the cut of `encore inf` holds the exit of every earlier
#     client (the parent reaped it before forking the later one);
#   - replay --stop halts exactly there, offline and online (the GD pulls the child a wait
#     needs), with no stall, and --then kill leaves no process behind (checked by pid).
# Usage: replay_wait.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_wait.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

cuts() { grep -o '"cuts":\[{[^}]*}' "$1" | head -1; }
alive() { # the pids of a --json halt report that still exist
    for p in $(grep -o '"pid":[0-9]*' "$1" | cut -d: -f2); do
        [ "$p" -gt 0 ] && kill -0 "$p" 2>/dev/null && echo "$p"
    done; true
}
events() { # events of process $2 in session $1
    "$encore" analyze --json "$1" | grep -o "\"name\":\"$2\",\"events\":[0-9]*" | cut -d: -f3
}

# record NAME ARGS...: record, then replay to the end with the same output
record() {
    name=$1; shift
    mkdir "$tmp/$name.w"
    "$encore" record -q -o "$tmp/$name" --name "$name" -- "$prog" "$tmp/$name.w" "$@" \
        > "$tmp/$name.rec"
    "$encore" replay "$tmp/$name" > "$tmp/$name.rep" 2> "$tmp/$name.err" || {
        echo "FAIL: replay of $name:"; cat "$tmp/$name.err"; exit 1; }
    # processes sharing stdout interleave freely: the same lines, and the parent's own in order
    sort "$tmp/$name.rec" > "$tmp/a"; sort "$tmp/$name.rep" > "$tmp/b"
    grep reaped "$tmp/$name.rec" > "$tmp/c" || true; grep reaped "$tmp/$name.rep" > "$tmp/d" || true
    cmp -s "$tmp/a" "$tmp/b" && cmp -s "$tmp/c" "$tmp/d" || {
        echo "FAIL: $name replayed another output:"; diff "$tmp/$name.rec" "$tmp/$name.rep"; exit 1; }
    echo "ok: $name replays its output"
}

# halt NAME PREDICATE EARLIER...: the cut holds each EARLIER process whole (its exit), and the
# replay halts there, offline and online
halt() {
    name=$1 pred=$2; shift 2
    s=$tmp/$name
    "$encore" inf --json "$s" "$pred" > "$tmp/inf"
    a=$(cuts "$tmp/inf")
    [ -n "$a" ] || { echo "FAIL: no cut for '$pred'"; cat "$tmp/inf"; exit 1; }
    for q in "$@"; do
        n=$(events "$s" "$q")
        echo "$a" | grep -q "\"$q\":$n[,}]" || {
            echo "FAIL: '$pred': the cut $a leaves $q short of its exit (event $n)"; exit 1; }
    done
    for mode in offline online; do
        opt=""; [ $mode = online ] && opt=--online
        # shellcheck disable=SC2086
        "$encore" replay $opt --json --then kill --stop "$pred" "$s" > "$tmp/rep" 2> "$tmp/err" || {
            echo "FAIL: replay $opt --stop '$pred':"; cat "$tmp/err"; exit 1; }
        b=$(cuts "$tmp/rep")
        [ "$a" = "$b" ] || { echo "FAIL: '$pred' ($mode): encore inf says $a, replay halted at $b"; exit 1; }
        grep -q '"status":"halted"' "$tmp/rep" || { echo "FAIL: nothing halted"; exit 1; }
        left=$(alive "$tmp/rep")
        [ -z "$left" ] || { echo "FAIL: processes left behind: $left"; exit 1; }
    done
    echo "ok: $pred -> $a"
}

record w 5
halt w 'w.4: received >= 1' w.2 w.3
halt w 'w.6: sent >= 1' w.2 w.3 w.4 w.5
halt w 'w.3: exited' w.2
record sh shell 3
halt sh 'sh.2.2: received >= 1' sh.2.1
halt sh 'sh.2: sent >= 1' sh.2.1 sh.2.2   # (sh.2 execs the last client)
