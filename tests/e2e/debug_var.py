#!/usr/bin/env python3
# debug_var.py: `encore debug --json` with predicates on the program's memory (var.NAME), on
# a recorded multi-process program (tests/e2e/progs/replay_pp.c, whose globals pp_got and
# pp_acks always equal its last "got" and "ack" marks).  Checks (docs/man/encore-debug.1.scd):
#   - `stop` on a var. predicate then `continue` halts at the cut `encore replay --online
#     --stop` reaches, and at `encore inf`'s cut for the same predicate on marks; its terms
#     give the variable's value read in the process (the mark's value there);
#   - a second `continue` reaches the next state where it holds again, the state the same
#     session reaches with the predicate on marks (found offline); `back` returns;
#   - a disjunctive var. predicate halts where the disjunct that fired is at its own Inf (as
#     replay_online.sh checks `replay --online --stop`);
#   - with a var. predicate and one on marks set, continue shows the earlier state, as the
#     same session on marks does;
#   - `trace C print E` with var. terms reports exactly the states and values the same trace
#     on marks reports (evaluated offline), through continue and step;
#   - a var. predicate that never holds: continue says so and is at the end;
#   - refused input (an unknown variable, sent(P) with var., two var. predicates) answers
#     {"ok":false} and the console goes on.
# Usage: debug_var.py ENCORE PROG
import json
import os
import shutil
import subprocess
import sys
import tempfile

encore, prog = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(dir=os.environ.get("ENCORE_TEST_TMPDIR", "/tmp"), prefix="debug_var.")
sess = os.path.join(tmp, "s")
failures = []


def fail(msg):
    print("FAIL: " + msg)
    failures.append(msg)


def run(*args):
    return subprocess.run([encore] + list(args), check=True, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL).stdout


def debug(cmds, timeout=180):
    """Run one session; every command must answer exactly one JSON line."""
    p = subprocess.run([encore, "debug", "--json", sess], input="".join(c + "\n" for c in cmds),
                       capture_output=True, text=True, timeout=timeout)
    answers = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
    if len(answers) != len(cmds):
        fail("expected %d answers, got %d: %s\nstderr: %s" % (len(cmds), len(answers), p.stdout,
                                                             p.stderr))
        return None
    return answers


def cut_of(a):
    return a.get("cuts", [None])[0]


def online_cut(pred):
    out = json.loads(run("replay", "--json", "--then", "kill", "--online", "--stop", pred,
                         sess).splitlines()[-1])
    return out["cuts"][0]


def inf_cut(pred):
    out = json.loads(run("inf", "--json", sess, pred))
    return out["cuts"][0] if out["cuts"] else None


subprocess.run([encore, "record", "-q", "-o", sess, "--name", "pp", "--", prog, "3", "8"],
               check=True, capture_output=True, text=True, timeout=120)

V = "pp: var.pp_got >= 4 && pp.2: sent >= 2"
M = "pp: mark.got >= 4 && pp.2: sent >= 2"

# --- stop on var., continue twice, back --------------------------------------------------------
a = debug(["stop " + V, "continue", "continue", "back", "quit"])
m = debug(["stop " + M, "continue", "continue", "quit"])
if a and m:
    c1, c2 = cut_of(a[1]), cut_of(a[2])
    if a[1].get("breakpoint") != 1 or a[1].get("predicate") != V:
        fail("continue does not say which predicate holds: %s" % a[1])
    if c1 != online_cut(V):
        fail("continue on %s gave %s, replay --online --stop %s" % (V, c1, online_cut(V)))
    if c1 != inf_cut(M):
        fail("continue on %s gave %s, encore inf on marks %s" % (V, c1, inf_cut(M)))
    want = m[1].get("terms", {}).get("pp", {}).get("mark.got")
    if want is None or a[1].get("terms", {}).get("pp", {}).get("var.pp_got") != want:
        fail("the terms at the halt %s do not read var.pp_got = mark.got = %s" % (
            a[1].get("terms"), want))
    if c2 == c1 or c2 != cut_of(m[2]):
        fail("second continue on var. gave %s, on marks %s" % (c2, cut_of(m[2])))
    if cut_of(a[3]) != c1:
        fail("back after two continues gave %s, not %s" % (cut_of(a[3]), c1))
    print("ok: stop on var. %s then %s, back" % (c1, c2))

# --- a disjunction (halt markers: which disjunct fires first depends on timing): the one that
# fired is at its own Inf, as replay_online.sh checks `replay --online --stop` -------------
D = "pp.1: var.pp_acks >= 3 || pp.3: var.pp_acks >= 6"
a = debug(["stop " + D, "continue", "quit"])
if a:
    c = cut_of(a[1]) or {}
    w1, w3 = inf_cut("pp.1: mark.ack >= 3"), inf_cut("pp.3: mark.ack >= 6")
    fired = a[1].get("fired")
    if fired not in ("pp.1", "pp.3") or c.get(fired) != (w1 if fired == "pp.1" else w3)[fired]:
        fail("continue on %s gave %s, fired %s: want pp.1 at %d or pp.3 at %d" % (
            D, c, fired, w1["pp.1"], w3["pp.3"]))
    print("ok: disjunction %s" % c)

# --- a var. predicate and one on marks: the earlier state, as the same session on marks
early = "pp.1: mark.ack == 2 and last(mark)"
a = debug(["stop " + V, "stop " + early, "continue", "continue", "quit"])
m = debug(["stop " + M, "stop " + early, "continue", "continue", "quit"])
if a and m:
    for i in (2, 3):
        if a[i].get("breakpoint") != m[i].get("breakpoint") or cut_of(a[i]) != cut_of(m[i]):
            fail("with %s and %s set, continue gave %s (predicate %s), on marks %s (%s)" % (
                V, early, cut_of(a[i]), a[i].get("breakpoint"), cut_of(m[i]),
                m[i].get("breakpoint")))
    print("ok: var. and marks together: %s then %s" % (cut_of(a[2]), cut_of(a[3])))

# --- trace with var. terms against the same trace on marks --------------------------------------
a = debug(["trace pp: var.pp_got >= 2 and last(mark) print var.pp_got",
           "trace pp: mark.got >= 2 and last(mark) print mark.got",
           "trace pp.1: var.pp_acks >= 3 print events",
           "trace pp.1: mark.ack >= 3 print events",
           "stop " + V, "continue", "step pp 20", "restart", "step pp 30", "quit"])
if a:
    for i in (5, 6, 8):
        tr = a[i].get("traced", [])
        for live, off in ((1, 2), (3, 4)):
            got = [(t["state"], t["value"]) for t in tr if t["trace"] == live]
            want = [(t["state"], t["value"]) for t in tr if t["trace"] == off]
            if got != want:
                fail("%s: trace %d (var.) reported %s, trace %d (marks) %s" % (
                    a[i]["command"], live, got, off, want))
    if not [t for t in a[5].get("traced", []) if t["trace"] == 1]:
        fail("continue passed no state of trace 1: the test checks nothing")
    print("ok: trace with var. terms %s" % a[5].get("traced"))

# --- a var. predicate that never holds: continue says so, at the end ------------------------------
a = debug(["stop pp: var.pp_got >= 1000", "continue", "quit"])
if a:
    ends = {pr["name"]: pr["events"] for pr in a[1].get("processes", [])}
    if a[1].get("end") is not True or a[1].get("halted") is not False or cut_of(a[1]) != ends:
        fail("a var. predicate that never holds: %s" % a[1])
    print("ok: never holds: at the end %s" % cut_of(a[1]))

# --- refused input, and the console goes on ------------------------------------------------------
a = debug(["stop pp: var.no_such_var >= 1", "continue", "delete 1",
           "stop pp: var.pp_got >= 1 && pp.1: sent(pp) >= 1",
           "stop pp: var.pp_got >= 1", "stop pp.1: var.pp_acks >= 1",
           "trace pp: var.no_such_var >= 1 print events", "state", "quit"])
if a:
    for i, what in ((1, "no_such_var"), (3, "sent(P)"), (5, "one such predicate"),
                    (6, "no_such_var")):
        if a[i].get("ok") is not False or what not in a[i].get("error", ""):
            fail("answer %d should be refused naming %s: %s" % (i, what, a[i]))
    if a[7].get("ok") is not True or any(cut_of(a[7]).values()):
        fail("the console did not stay at the start after refusals: %s" % a[7])
    print("ok: refusals")

shutil.rmtree(tmp, ignore_errors=True)
sys.exit(1 if failures else 0)
