#!/usr/bin/env python3
# debug_session.py: `encore debug --json` driven by scripted sessions on a recorded
# multi-process program (tests/e2e/progs/replay_pp.c).  Checks (docs/man/encore-debug.1.scd):
#   - the first `continue` halts at `encore inf`'s cut; the next one at the least consistent
#     cut after it where the predicate holds with every named process moved on, which
#     `encore inf` computes independently with `and events > K` added to each simple predicate
#     (joined with the current cut);
#   - every state after `step`/`next` is consistent (`encore cut --after` of the state is the
#     state) and advances the stepped process exactly (N events; to its next send or receive);
#   - `restart` then `continue` gives the same state, `back` the previous one, `goto` a cut of
#     `encore inf`;
#   - `trace C print E` reports exactly the states where C became true, with E's value, as
#     `encore sql` finds them;
#   - bad input answers {"ok":false} and the console goes on;
#   - `output PROC` is the recorded run's output, and nothing of it reaches the console;
#   - no replayed process is left after the end of input, SIGTERM, SIGINT, or a replayed
#     process killed under the debugger.
# Usage: debug_session.py ENCORE PROG
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

encore, prog = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(dir=os.environ.get("ENCORE_TEST_TMPDIR", "/tmp"), prefix="debug_session.")
sess = os.path.join(tmp, "s")
failures = []


def fail(msg):
    print("FAIL: " + msg)
    failures.append(msg)


def run(*args, **kw):
    return subprocess.run([encore] + list(args), check=True, capture_output=True, text=True,
                          timeout=120, **kw).stdout


def debug(cmds, timeout=120):
    """Run one session; every command must answer exactly one JSON line."""
    p = subprocess.run([encore, "debug", "--json", sess], input="".join(c + "\n" for c in cmds),
                       capture_output=True, text=True, timeout=timeout)
    lines = [l for l in p.stdout.splitlines() if l.strip()]
    answers = [json.loads(l) for l in lines]
    if len(answers) != len([c for c in cmds if c.strip()]):
        fail("expected %d answers, got %d: %s\nstderr: %s" % (len(cmds), len(answers), p.stdout,
                                                             p.stderr))
    return p, answers


def cut_of(a):
    return a["cuts"][0]


def inf_cut(pred):
    out = json.loads(run("inf", "--json", sess, pred))
    return out["cuts"][0] if out["cuts"] else None


def consistent(cut):
    refs = ",".join("%s:%d" % (p, k) for p, k in cut.items() if k > 0)
    if not refs:
        return True
    got = json.loads(run("cut", "--json", sess, "--after", refs))["cut"]
    return all(got.get(p, 0) == k for p, k in cut.items())


def pids_alive(answers):
    pids = {pr["pid"] for a in answers if "processes" in a for pr in a["processes"] if pr["pid"]}
    alive = []
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as f:
                # a zombie is not left running; a reused pid would not be ours (rare)
                if f.read().split(") ")[1][0] != "Z":
                    alive.append(pid)
        except OSError:
            pass
    return alive


recorded = subprocess.run([encore, "record", "-q", "-o", sess, "--name", "pp", "--", prog, "3",
                           "8"], check=True, capture_output=True, text=True, timeout=120).stdout

# --- continue, continue again, restart, back -------------------------------------------------
P = "pp: mark.got >= 4 && pp.2: sent >= 2"
p, a = debug(["state", "stop " + P, "continue", "continue", "continue", "restart", "continue",
              "back", "quit"])
if len(a) == 9:
    start, c1, c2, c3 = cut_of(a[0]), cut_of(a[2]), cut_of(a[3]), cut_of(a[4])
    if any(start.values()):
        fail("the session does not start at state 0: %s" % start)
    if c1 != inf_cut(P):
        fail("first continue %s, encore inf %s" % (c1, inf_cut(P)))
    for prev, nxt in ((c1, c2), (c2, c3)):
        strict = "pp: mark.got >= 4 and events > %d && pp.2: sent >= 2 and events > %d" % (
            prev["pp"], prev["pp.2"])
        want = inf_cut(strict)
        want = {q: max(want[q], prev[q]) for q in prev}
        if nxt != want:
            fail("continue from %s gave %s, want %s" % (prev, nxt, want))
        if not consistent(nxt):
            fail("continue gave an inconsistent cut %s" % nxt)
    if a[2].get("breakpoint") != 1 or a[2].get("predicate") != P:
        fail("continue does not say which predicate holds: %s" % a[2])
    # its terms, from the trace, are those replay --stop reads in the halted processes
    rp = json.loads(run("replay", "--json", "--then", "kill", "--stop", P, sess,
                        stdin=subprocess.DEVNULL).splitlines()[-1])
    want = {pr["name"]: pr["terms"] for pr in rp["processes"] if pr["terms"]}
    if a[2].get("terms") != want:
        fail("continue's terms %s, replay --stop's %s" % (a[2].get("terms"), want))
    if cut_of(a[6]) != c1:
        fail("restart then continue gave %s, not %s" % (cut_of(a[6]), c1))
    if cut_of(a[7]) != start:
        fail("back after restart+continue gave %s, not the start" % cut_of(a[7]))
    print("ok: continue x3 %s %s %s, restart, back" % (c1, c2, c3))

# print: a global by its symbol (var.NAME) and through gdb; pp_got is always the last "got"
# mark of pp (progs/replay_pp.c)
p, a = debug(["stop " + P, "continue", "print pp var.pp_got", "print pp pp_got",
              "print pp var.no_such_symbol"])
if len(a) == 5:
    k = cut_of(a[1])["pp"]
    got = json.loads(run("sql", "--json", sess, "SELECT m.value AS v FROM mark m JOIN process p "
                         "ON p.id = m.proc WHERE p.name = 'pp' AND m.key = 'got' AND m.idx <= %d "
                         "ORDER BY m.idx DESC LIMIT 1" % k))
    want = str(got[0]["v"]) if got else "0"
    if a[2].get("value") != want:
        fail("print pp var.pp_got at state %d: %s, the marks say %s" % (k, a[2], want))
    if shutil.which("gdb") and a[3].get("value") != want:
        fail("print pp pp_got (gdb) at state %d: %s, the marks say %s" % (k, a[3], want))
    if a[4].get("ok") is not False or "no_such_symbol" not in a[4].get("error", ""):
        fail("print of an unknown symbol: %s" % a[4])
    print("ok: print pp_got = %s" % want)

# linked predicates: continue goes to their Inf(P) (Miller & Choi 3.4)
L = "pp.1: mark.ack >= 2 -> pp.2: mark.ack >= 1"
p, a = debug(["stop " + L, "continue"])
if len(a) == 2:
    want = inf_cut(L)
    if want is None and not a[1].get("end"):
        fail("continue with a linked predicate that never holds: %s" % a[1])
    if want is not None and cut_of(a[1]) != want:
        fail("continue with a linked predicate: %s, encore inf %s" % (cut_of(a[1]), want))

# --- backtraces: files and lines as addr2line gives them --------------------------------------
if shutil.which("addr2line"):
    p, a = debug(["stop pp.1: mark.ack == 3", "continue", "bt pp", "bt pp.1"])
    checked = 0
    for ans in a[2:]:
        # frames of the program grouped by PC: the functions inlined there, then the holder,
        # as `addr2line -i -f` lists them
        groups = []
        for frame in ans.get("backtrace", "").splitlines():
            m = re.match(r"#\d+ 0x[0-9a-f]+ (\S+) \((.*):(\d+)\) in (\S+)\+0x([0-9a-f]+)$", frame)
            if not m or m.group(4) != os.path.basename(prog):
                continue
            entry = (m.group(1), os.path.basename(m.group(2)), m.group(3))
            if groups and groups[-1][0] == m.group(5):
                groups[-1][1].append(entry)
            else:
                groups.append((m.group(5), [entry]))
        for rel, entries in groups:
            out = subprocess.run(["addr2line", "-i", "-f", "-e", prog, "%x" % (int(rel, 16) - 1)],
                                 capture_output=True, text=True).stdout.splitlines()
            out = [l.split(" (discriminator")[0].strip() for l in out]
            want = [(out[i], os.path.basename(out[i + 1].rsplit(":", 1)[0]),
                     out[i + 1].rsplit(":", 1)[1]) for i in range(0, len(out) - 1, 2)]
            if entries != want:
                fail("backtrace at %s+0x%s: %s, addr2line -i says %s" % (
                    os.path.basename(prog), rel, entries, want))
            checked += len(entries)
    if not checked:
        fail("no backtrace frame with a file and line: %s" % a[2:])
    print("ok: %d backtrace lines match addr2line" % checked)

# --- step, next, back, goto ------------------------------------------------------------------
goto = os.path.join(tmp, "cut.json")
with open(goto, "w") as f:
    f.write(run("inf", "--json", sess, "pp.3: mark.ack >= 5"))
cmds = ["step pp", "step pp 5", "step pp.1", "next pp.1", "next pp", "step pp.2 3", "back",
        "goto " + goto, "back", "back", "back"]
p, a = debug(cmds)
if len(a) == len(cmds):
    prev = {q: 0 for q in cut_of(a[0])}
    for cmd, ans in zip(cmds[:6], a[:6]):
        cut = cut_of(ans)
        words = cmd.split()
        proc = words[1]
        if words[0] == "step":
            n = int(words[2]) if len(words) > 2 else 1
            if cut[proc] != prev[proc] + n:
                fail("%s: %s went from %d to %d" % (cmd, proc, prev[proc], cut[proc]))
        else:
            last = next(pr["last"] for pr in ans["processes"] if pr["name"] == proc)
            if cut[proc] <= prev[proc] or (" send " not in last and " recv " not in last):
                fail("%s: %s is at %d (%s), not at its next send or receive" % (
                    cmd, proc, cut[proc], last))
        if any(cut[q] < prev[q] for q in cut):
            fail("%s: a process went back: %s -> %s" % (cmd, prev, cut))
        if not consistent(cut):
            fail("%s: inconsistent state %s" % (cmd, cut))
        prev = cut
    if cut_of(a[6]) != cut_of(a[4]):
        fail("back gave %s, not %s" % (cut_of(a[6]), cut_of(a[4])))
    if cut_of(a[7]) != inf_cut("pp.3: mark.ack >= 5"):
        fail("goto gave %s, not the cut of the file" % cut_of(a[7]))
    # back again and again: the states shown before, latest first
    for i, want in ((8, a[6]), (9, a[3]), (10, a[2])):
        if cut_of(a[i]) != cut_of(want):
            fail("back #%d gave %s, not %s" % (i - 7, cut_of(a[i]), cut_of(want)))
    print("ok: step, next, back, goto")

# --- trace against encore sql ----------------------------------------------------------------
# pp: last(recv) becomes true at each receive that follows another kind of event
p, a = debug(["trace pp: last(recv) print received", "stop pp: mark.got >= 100000", "continue",
              "output pp", "continue"])
if len(a) == 5:
    # the programs' output is collected apart, whole, and is the recorded run's
    if a[3].get("output") != recorded or p.stdout.count(recorded.splitlines()[0]) != 1:
        fail("output pp is not the recorded run's output: %r" % a[3])
    if a[4].get("end") is not True or a[4].get("traced"):
        fail("continue at the end: %s" % a[4])
    got = [(t["state"], t["value"]) for t in a[2]["traced"] if t["process"] == "pp"]
    rows = json.loads(run("sql", "--json", sess,
                          "SELECT e.idx AS k, (SELECT count(*) FROM event r WHERE r.proc = e.proc "
                          "AND r.idx <= e.idx AND r.kind = 'recv' AND r.result > 0) AS n "
                          "FROM event e JOIN process p ON p.id = e.proc WHERE p.name = 'pp' AND "
                          "e.kind = 'recv' AND NOT EXISTS (SELECT 1 FROM event b WHERE "
                          "b.proc = e.proc AND b.idx = e.idx - 1 AND b.kind = 'recv') "
                          "AND e.idx > 1 ORDER BY e.idx"))
    want = [(r["k"], r["n"]) for r in rows]
    if got != want or not want:
        fail("trace reported %s, encore sql says %s" % (got, want))
    if not a[2].get("end"):
        fail("a predicate that never holds did not replay to the end: %s" % a[2])
    print("ok: trace, %d points" % len(got))

# --- bad input --------------------------------------------------------------------------------
cmds = ["frobnicate", "stop pp: sent >=", "stop nobody: sent >= 1", "step nobody",
        "step pp.1 100000", "delete 7", "goto /nonexistent.json", "back", "state"]
p, a = debug(cmds)
if len(a) == len(cmds):
    for cmd, ans in zip(cmds[:-1], a[:-1]):
        if ans.get("ok") is not False or not ans.get("error"):
            fail("%s: no error: %s" % (cmd, ans))
    if "column" not in a[1]["error"]:
        fail("a bad predicate does not give its column: %s" % a[1])
    if "nobody" not in a[2]["error"] or "nobody" not in a[3]["error"]:
        fail("an unknown process is not named: %s %s" % (a[2], a[3]))
    if "end" not in a[4]["error"]:
        fail("a step past the end does not say so: %s" % a[4])
    if a[-1].get("ok") is not True:
        fail("the console did not go on after bad input: %s" % a[-1])
    print("ok: bad input")

# --- no process left: end of input, SIGTERM, a replayed process killed --------------------------
p, a = debug(["stop pp.1: mark.ack >= 3", "continue"])
if pids_alive(a):
    fail("processes left after the end of input: %s" % pids_alive(a))
for how in ("term", "int", "crash"):
    d = subprocess.Popen([encore, "debug", "--json", sess], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    d.stdin.write("stop pp.1: mark.ack >= 3\ncontinue\n")
    d.stdin.flush()
    answers = [json.loads(d.stdout.readline()), json.loads(d.stdout.readline())]
    if how in ("term", "int"):
        sig = signal.SIGTERM if how == "term" else signal.SIGINT
        d.send_signal(sig)
        rc = d.wait(timeout=60)
        if rc != 128 + sig:
            fail("%s: exit status %d" % (sig.name, rc))
    else:
        victim = next(pr["pid"] for pr in answers[1]["processes"] if pr["name"] == "pp.2")
        os.kill(victim, signal.SIGKILL)
        d.stdin.write("step pp.2\nstate\n")
        d.stdin.flush()
        ans = json.loads(d.stdout.readline())
        if ans.get("ok") is not False:
            fail("a killed process is not reported: %s" % ans)
        answers.append(json.loads(d.stdout.readline()))
        if answers[-1].get("ok") is not True:
            fail("the console did not go on after a crash: %s" % answers[-1])
        d.stdin.close()
        d.wait(timeout=60)
    if pids_alive(answers):
        fail("processes left after %s: %s" % (how, pids_alive(answers)))
print("ok: no process left (end of input, SIGTERM, SIGINT, crash)")

shutil.rmtree(tmp, ignore_errors=True)
sys.exit(1 if failures else 0)
