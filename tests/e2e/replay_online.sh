#!/bin/sh
# replay_online.sh: the online halting protocol (replayer/README.md; Manabe & Imase 3.2 and Appendix
# B; Miller & Choi 2.2).  On one recording of replay_pp:
#   1. conjunctive predicates: `encore replay --online --stop P` (live evaluation, passive
#      processes pulled by control messages) halts at the cut `encore inf` computes offline;
#   2. var.SYMBOL predicates (read from the program's memory): the program keeps pp_got and
#      pp_acks equal to its "got"/"ack" marks, so `var.pp_got` halts where `mark.got` does;
#   3. disjunctive predicates with halt markers: the process whose disjunct fired is at the
#      state `encore inf` gives for that disjunct alone;
#   4. after each, no replayed process is left (by pid).
# Usage: replay_online.sh ENCORE PROG
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_online.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$encore" record -q -o "$tmp/s" --name pp -- "$prog" 3 8 > /dev/null

cuts() { grep -o '"cuts":\[{[^]]*\]' "$1" | head -1; }
left() {
    for p in $(grep -o '"pid":[0-9]*' "$1" | cut -d: -f2); do
        if [ "$p" -gt 0 ] && kill -0 "$p" 2>/dev/null; then echo "FAIL: $p left behind"; exit 1; fi
    done
}
replay() { # replay OUT P: online replay to a halt
    "$encore" replay --online --json --then kill --stall-timeout 30 --stop "$2" "$tmp/s" \
        > "$1" 2> "$1.err" || { echo "FAIL: replay --online --stop '$2':"; cat "$1.err"; exit 1; }
    left "$1"
}
same() { # same ONLINE_P OFFLINE_P
    "$encore" inf --json "$tmp/s" "$2" > "$tmp/inf"
    if ! grep -q '"cuts":\[{' "$tmp/inf"; then
        # P never holds in this recording (it depends on the message order): online must
        # say so too, with a clear message and a non-zero exit
        if "$encore" replay --online --json --then kill --stall-timeout 30 --stop "$1" "$tmp/s" \
            > "$tmp/rep" 2> "$tmp/rep.err"; then
            echo "FAIL: '$1' never holds offline, online halted"; exit 1
        fi
        grep -q "never hold" "$tmp/rep.err" || { echo "FAIL: '$1':"; cat "$tmp/rep.err"; exit 1; }
        left "$tmp/rep"
        echo "ok: $1 -> never holds (offline and online)"
        return
    fi
    replay "$tmp/rep" "$1"
    a=$(cuts "$tmp/inf"); b=$(cuts "$tmp/rep")
    [ -n "$a" ] && [ "$a" = "$b" ] || { echo "FAIL: '$1' halted at $b, encore inf '$2' says $a"; exit 1; }
    echo "ok: $1 -> $b"
}

for p in 'pp: mark.got >= 4 && pp.2: sent >= 2' \
         'pp.1: mark.ack >= 3 && pp.3: received >= 1' \
         'pp: received >= 10' 'pp.2: sent >= 5' 'pp: events >= 1' \
         'pp.3: exited && pp: mark.got >= 2' 'pp.1: last(recv) && pp.2: bytes_sent >= 100' \
         'pp: in(main) and last(recv) && pp.1: sent >= 2' \
         'pp: received(pp.2) >= 3 && pp.1: sent >= 2' 'pp.2: sent(pp) >= 4 && pp.3: received(pp) >= 2'; do
    same "$p" "$p"
done
same 'pp: var.pp_got >= 4 && pp.2: sent >= 2' 'pp: mark.got >= 4 && pp.2: sent >= 2'
# the halt report gives the values of the predicate's terms, read in the halted processes
# (a process pulled past the state where its predicate first held shows later values)
v=$(grep -o '"terms":{"var.pp_got":[0-9]*}' "$tmp/rep" | grep -o '[0-9]*}' | tr -d '}')
s=$(grep -o '"terms":{"sent":[0-9]*}' "$tmp/rep" | grep -o '[0-9]*}' | tr -d '}')
[ -n "$v" ] && [ "$v" -ge 4 ] && [ -n "$s" ] && [ "$s" -ge 2 ] || {
    echo "FAIL: term values at the halt:"; grep -o '"terms":{[^}]*}' "$tmp/rep"; exit 1; }
same 'pp.1: var.pp_acks >= 3 && pp.3: received >= 1' 'pp.1: mark.ack >= 3 && pp.3: received >= 1'
same 'pp.2: var.pp_acks == 5' 'pp.2: mark.ack == 5'

# disjunctive, halt markers: the disjunct that fired holds where its own Inf says
for d in 'pp: mark.got >= 3 || pp.2: sent >= 3' 'pp.3: mark.ack >= 2 || pp.1: mark.ack >= 6'; do
    replay "$tmp/rep" "$d"
    fired=$(grep -o '"fired":"[^"]*"' "$tmp/rep" | cut -d'"' -f4)
    [ -n "$fired" ] || { echo "FAIL: '$d': no disjunct fired"; exit 1; }
    sp=$(echo "$d" | tr '|' '\n' | grep -v '^$' | sed 's/^ *//; s/ *$//' | grep "^$fired:")
    "$encore" inf --json "$tmp/s" "$sp" > "$tmp/inf"
    want=$(grep -o "\"$fired\":[0-9]*" "$tmp/inf" | head -1)
    got=$(cuts "$tmp/rep" | grep -o "\"$fired\":[0-9]*")
    [ "$want" = "$got" ] || { echo "FAIL: '$d': $fired fired at $got, its Inf is $want"; exit 1; }
    echo "ok: $d -> fired $got"
done

# two disjuncts on one process: its predicate is their `or`
replay "$tmp/rep" 'pp.1: mark.ack >= 3 || pp.1: received >= 100 || pp.2: sent >= 50'
"$encore" inf --json "$tmp/s" 'pp.1: mark.ack >= 3 or received >= 100' > "$tmp/inf"
want=$(grep -o '"pp.1":[0-9]*' "$tmp/inf" | head -1)
got=$(cuts "$tmp/rep" | grep -o '"pp.1":[0-9]*')
grep -q '"fired":"pp.1"' "$tmp/rep" && [ "$want" = "$got" ] || {
    echo "FAIL: two disjuncts on pp.1: $got, want $want"; cat "$tmp/rep"; exit 1; }
echo "ok: two disjuncts on one process -> $got"

# linked predicates (Miller & Choi 3.6), step by step: each conjunctive step halts at its Inf
# from the previous step's cut, after the events that made it true; the last step's cut is
# what encore inf says (a process named in several steps, var. terms, a step that never holds)
same 'pp.1: sent >= 2 -> pp: mark.got >= 3' 'pp.1: sent >= 2 -> pp: mark.got >= 3'
same 'pp.1: sent >= 2 -> pp: var.pp_got >= 3' 'pp.1: sent >= 2 -> pp: mark.got >= 3'
# (these hold in every recording: each step has states after the previous one's, through
# the root's acknowledgements; the last never does: pp.1 sends before anything pp.3 does)
same 'pp: mark.got >= 2 -> pp.2: received >= 3 -> pp.2: sent >= 4 && pp: received >= 12' \
     'pp: mark.got >= 2 -> pp.2: received >= 3 -> pp.2: sent >= 4 && pp: received >= 12'
same 'pp.2: mark.ack >= 2 -> pp.2: mark.ack >= 1 -> pp: mark.got >= 20 && pp.1: received(pp) >= 1' \
     'pp.2: mark.ack >= 2 -> pp.2: mark.ack >= 1 -> pp: mark.got >= 20 && pp.1: received(pp) >= 1'
same 'pp: mark.got >= 2 -> pp.1: mark.ack >= 8' 'pp: mark.got >= 2 -> pp.1: mark.ack >= 8'
same 'pp.3: exited -> pp.1: sent >= 1' 'pp.3: exited -> pp.1: sent >= 1'

# errors: an unknown variable is reported by the process; online, a general predicate and a
# linked one with a disjunctive step are refused with what to do instead
rc=0
"$encore" replay --json --then kill --stop 'pp: var.no_such_var >= 1' "$tmp/s" \
    > "$tmp/o" 2> "$tmp/e" || rc=$?
[ $rc = 2 ] || { echo "FAIL: unknown variable: exit $rc, not 2 (the user's error)"; cat "$tmp/e"; exit 1; }
grep -q "^encore replay: the halting predicate: process pp: var.no_such_var: " "$tmp/e" ||
    { echo "FAIL: no message for the unknown variable"; cat "$tmp/e"; exit 1; }
# the predicate's fault, not the replay's: no divergence, no stack of an unrelated call
if grep -q "divergence\|the call was made from" "$tmp/e"; then
    echo "FAIL: the unknown variable reported as a divergence:"; cat "$tmp/e"; exit 1
fi
if "$encore" replay --online --stop 'pp: sent >= 1 -> pp.1: sent >= 1 || pp.2: sent >= 1' "$tmp/s" \
    > "$tmp/o" 2> "$tmp/e"; then echo "FAIL: disjunctive step accepted online"; exit 1; fi
grep -q "step 2 is a disjunction" "$tmp/e" || { echo "FAIL: no message for the step"; cat "$tmp/e"; exit 1; }
if "$encore" replay --online --stop 'pp: sent >= 1 && pp.1: sent >= 1 || pp.2: sent >= 1' "$tmp/s" \
    > "$tmp/o" 2> "$tmp/e"; then echo "FAIL: general predicate accepted online"; exit 1; fi
grep -q "general predicate" "$tmp/e" || { echo "FAIL: no message for the general predicate"; cat "$tmp/e"; exit 1; }
[ "$(wc -l < "$tmp/e")" -eq 1 ] || { echo "FAIL: more than one line:"; cat "$tmp/e"; exit 1; }
echo "ok: errors"
