# halt_at_inf.sh: sourced by the prefork and shared-pipe tests (replay_sharedacc.sh,
# replay_pipe_workers.sh).  halt_at_inf SESSION REC PREDICATE...: takes the first PREDICATE
# that holds somewhere in SESSION (`encore inf`), replays SESSION halted at that cut (offline,
# --then kill) and fails unless the halt is exactly `encore inf`'s cut.  Leaves the cut in
# $tmp/inf.json.  Needs $encore and $tmp.
cuts() { grep -o '"cuts":\[{[^}]*}' "$1" | head -1; }   # the first cut
halt_at_inf() {
    s=$1 rec=$2
    shift 2
    for p in "$@"; do
        "$encore" inf --json "$s" "$p" > "$tmp/inf.json" 2>/dev/null || true
        [ -n "$(cuts "$tmp/inf.json")" ] && break
    done
    [ -n "$(cuts "$tmp/inf.json")" ] || { echo "FAIL: recording $rec: no predicate holds"; exit 1; }
    if ! timeout 120 "$encore" replay --json --then kill --stall-timeout 10 --cut "$tmp/inf.json" \
            "$s" > "$tmp/halt.json" 2> "$tmp/halt.err"; then
        echo "FAIL: recording $rec: the replay did not halt at the cut:"; cat "$tmp/halt.err"
        cat "$tmp/halt.json"; exit 1
    fi
    a=$(cuts "$tmp/inf.json"); b=$(cuts "$tmp/halt.json")
    if [ -z "$a" ] || [ "$a" != "$b" ]; then
        echo "FAIL: recording $rec: encore inf says $a, the replay halted at $b"; exit 1
    fi
}
