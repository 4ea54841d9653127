#!/bin/sh
# record_budget_match.sh: a session recorded under a disk budget (--max-bytes) that dropped
# the chunks defining its channel still matches every message it kept (schemas/trace-format.md,
# "Disk budget": the checkpoint of live channels); replay refuses it, naming the dropped range.
# budget_pp's root drops its socketpair's definition and the 500-byte greeting it received; its
# later receives must continue at offset 500, so that each pong meets its send.  Then
# replay_pp with every trace cut (children too, after their parent closed its ends): a
# receive whose send was dropped is neither external nor unmatched, but counted apart.
# Usage: record_budget_match.sh ENCORE BUDGET_PP REPLAY_PP
set -eu
encore=$1 prog=$2 pp=$3
. "$(dirname "$0")/real_lib.sh"
real_init budget_match

timeout "$real_t" "$encore" record -q --max-bytes 300000 -o "$real_tmp/s" --name pp -- \
    "$prog" 200 > "$real_tmp/out" || real_fail "encore record"
grep -qx '200 rounds' "$real_tmp/out" || real_fail "the program did not finish its rounds"
timeout "$real_t" "$encore" check "$real_tmp/s" > "$real_tmp/check.out" 2>&1 ||
    { cat "$real_tmp/check.out"; real_fail "encore check"; }
grep -q '^.*/pp.trace: .*events dropped by the disk budget, ok$' "$real_tmp/check.out" ||
    { cat "$real_tmp/check.out"; real_fail "pp's trace dropped nothing: the test proves nothing"; }

real_analyze "$real_tmp/s"
grep -q '^  channels   1 (1 matched, 0 external)' "$real_tmp/analyze.out" ||
    { cat "$real_tmp/analyze.out"; real_fail "the socketpair is not matched after the drop"; }
[ "$real_external" = 0 ] && [ "$real_unmatched" = 0 ] ||
    { cat "$real_tmp/analyze.out"; real_fail "external $real_external, unmatched $real_unmatched"; }
# every kept receive of both processes is linked: 200 pongs in pp, at least 200 pings in pp.1
# (the child's greeting send stays, its receive in pp was dropped: nothing to link)
[ "$real_linked" -ge 400 ] || { cat "$real_tmp/analyze.out"; real_fail "$real_linked linked"; }
off=$(real_sql "$real_tmp/s" "SELECT min(e.offset) FROM event e JOIN process p ON p.id = e.proc
                              WHERE p.name = 'pp' AND e.kind = 'recv'")
[ "$off" = 500 ] || real_fail "pp's first kept receive is at offset $off, not 500"
echo "ok: after the drop, $real_linked messages linked, none external or unmatched"

if timeout "$real_t" "$encore" replay -q "$real_tmp/s" < /dev/null > "$real_tmp/replay.out" \
    2> "$real_tmp/replay.err"; then
    real_fail "encore replay ran a session whose oldest events were dropped"
fi
grep -q 'pp lost events 1-[0-9]* to the disk budget (--max-bytes)' "$real_tmp/replay.err" ||
    { cat "$real_tmp/replay.err"; real_fail "replay's refusal does not name the dropped range"; }
echo "ok: replay refused: $(head -1 "$real_tmp/replay.err")"

# every process cut: the parent's definitions, fork events and use of the first child's
# channel went, and some kept receives have their sends in dropped events
timeout "$real_t" "$encore" record -q --max-bytes 8000 -o "$real_tmp/s2" --name rp -- \
    "$pp" 2 20000 > /dev/null || real_fail "encore record (replay_pp)"
n=$(timeout "$real_t" "$encore" check "$real_tmp/s2" | grep -c 'events dropped by the disk budget, ok$' || true)
[ "$n" = 3 ] || real_fail "$n of 3 traces dropped events: the test proves nothing"
real_analyze "$real_tmp/s2"
[ "$real_external" = 0 ] && [ "$real_unmatched" = 0 ] ||
    { cat "$real_tmp/analyze.out"; real_fail "cut traces: external $real_external, unmatched $real_unmatched"; }
[ "$real_linked" -gt 0 ] || real_fail "cut traces: nothing linked"
grep -q 'receives got bytes whose sends the disk budget (--max-bytes) dropped' "$real_tmp/analyze.out" ||
    { cat "$real_tmp/analyze.out"; real_fail "the receives that lost their sends are not reported"; }
echo "ok: every trace cut, $real_linked messages linked, the rest reported as dropped sends"
