# replay_same.sh: sourced by the signal and timer tests (replay_signals.sh, replay_sigwait.sh,
# replay_timers.sh).  replay_same SESSION: replays SESSION twice; each replay must run to the
# end and print exactly SESSION.out (what the recording printed).  Needs $encore and $tmp.
replay_same() {
    s=$1
    for run in 1 2; do
        "$encore" replay "$s" > "$tmp/rep.out" 2> "$tmp/rep.err" || {
            echo "FAIL: replay $run of $s did not run to the end:"; cat "$tmp/rep.err"; exit 1; }
        cmp -s "$s.out" "$tmp/rep.out" || {
            echo "FAIL: replay $run of $s printed something else:"
            diff "$s.out" "$tmp/rep.out" | head -20 || true; exit 1; }
    done
}
