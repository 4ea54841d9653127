#!/bin/sh
# real_python.sh: CPython (a language runtime nobody here wrote) recorded and replayed.
# Scenarios:
#   http     http.server in a forked child, urllib client in the parent (one root, TCP)
#   session  the same server and client started as two roots of one session
#            (`encore record --session`), the client told the port by the test
#   mp       multiprocessing.Process workers over multiprocessing.Pipe (fork, socketpairs)
#   asyncio  asyncio streams over socketpairs, one process (epoll)
#   subprocess  subprocess.run / Popen.communicate / check_output (fork+exec, pipes, poll)
#   unix     a Unix stream server (socketserver) and three client roots of one session
#   extclient  http.server recorded alone, its clients outside the session (not recorded)
#   curl     http.server and two curl roots of one session (curl connects non-blocking,
#            before the replayed server listens)
#   unittest CPython's own test suite, the single-threaded modules test_epoll, test_select,
#            test_pipes and test_popen (Debian package libpython3.X-testsuite; else skipped)
# Checks: every trace whole and closed; analyze/dump/sql agree on events and messages; no
# unmatched receive; for TCP, the bytes one side sent are the bytes the other received;
# replay to the end prints the recorded output (sorted when two roots share stdout); a halt
# at a conjunctive predicate is exactly `encore inf`'s cut.
# Usage: real_python.sh ENCORE SCENARIO
set -eu
encore=$1 scen=$2
. "$(dirname "$0")/real_lib.sh"
if [ -x /usr/bin/python3 ]; then
    py=/usr/bin/python3
else
    real_need python3
    # the interpreter itself, not a wrapper script (pyenv's shims are bash)
    py=$(python3 -c 'import sys; print(sys.executable)')
fi
real_init "py_$scen"
base=$(basename "$py")

cat > "$real_tmp/httpd.py" <<'EOF'
import http.server, os, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if SHOW_CLIENT:                    # the address accept gave (outside clients: recorded)
            print("client", self.client_address[0], flush=True)
        body = ("hello %s\n" % self.path).encode() * 300
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
SHOW_CLIENT = len(sys.argv) > 3 and sys.argv[1] == "serve" and sys.argv[3] == "show-client"
def serve(n, tell):
    srv = http.server.HTTPServer(("127.0.0.1", 0), H)   # port 0: the kernel's choice
    tell(srv.server_address[1])
    for _ in range(n): srv.handle_request()
    srv.server_close()
def get(port, paths):
    import urllib.request, hashlib
    for p in paths:
        with urllib.request.urlopen("http://127.0.0.1:%d/%s" % (port, p)) as f:
            d = f.read()
            print(p, f.status, len(d), hashlib.sha1(d).hexdigest(), flush=True)
if __name__ == "__main__":
    if sys.argv[1] == "fork":              # server in a child, the port through a pipe
        n = int(sys.argv[2]); r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            serve(n, lambda port: (os.write(w, b"%d\n" % port), os.close(w)))
            os._exit(0)
        os.close(w); port = int(os.read(r, 64)); os.close(r)
        get(port, ["req%d" % i for i in range(n)])
        _, st = os.waitpid(pid, 0)
        print("server exit", st)
    elif sys.argv[1] == "serve":           # a root of its own: prints its port
        serve(int(sys.argv[2]), lambda port: print(port, flush=True))
        print("served", sys.argv[2])
    else:                                  # a root of its own: told the port
        get(int(sys.argv[2]), sys.argv[3:])
EOF

cat > "$real_tmp/mp.py" <<'EOF'
import multiprocessing as mp
def worker(conn, k):
    while True:
        x = conn.recv()
        if x is None: break
        conn.send((k, x * x, "w%d" % k * (x % 7)))
    conn.close()
if __name__ == "__main__":
    mp.set_start_method("fork")
    ps = []
    for k in range(3):
        a, b = mp.Pipe()
        p = mp.Process(target=worker, args=(b, k)); p.start(); b.close()
        ps.append((p, a))
    tot = 0
    for i in range(30):
        p, a = ps[i % 3]
        a.send(i); k, y, s = a.recv(); tot += y
        print(i, k, y, len(s))
    for p, a in ps:
        a.send(None); p.join()
        print("worker exit", p.exitcode)
    print("total", tot)
EOF

cat > "$real_tmp/aio.py" <<'EOF'
import asyncio, socket
async def upper(sock):
    r, w = await asyncio.open_connection(sock=sock)
    while (line := await r.readline()):
        w.write(line.upper()); await w.drain()
    w.close()
async def client(sock, n):
    r, w = await asyncio.open_connection(sock=sock)
    out = []
    for i in range(n):
        w.write(b"msg %d from %d\n" % (i, n)); await w.drain()
        out.append(await r.readline())
    w.close()
    return out
async def main():
    pairs = [socket.socketpair() for _ in range(3)]
    servers = [asyncio.create_task(upper(b)) for a, b in pairs]
    res = await asyncio.gather(*[client(a, 5 + k) for k, (a, b) in enumerate(pairs)])
    await asyncio.gather(*servers)
    for k, r in enumerate(res): print(k, b"".join(r).decode().replace("\n", ","))
asyncio.run(main())
EOF

rec() { # rec NAME OUT ARGS...: record one root into $real_tmp/s
    n=$1 o=$2; shift 2
    timeout "$real_t" "$encore" record -q -o "$real_tmp/s" --name "$n" -- "$@" \
        > "$o" < /dev/null || real_fail "encore record $*"
}

# tcp_balance A B: the bytes A sent over TCP are the bytes B received over TCP
tcp_balance() {
    q="SELECT coalesce(sum(e.result), 0) FROM event e JOIN process p ON p.id = e.proc
       JOIN channel c ON c.id = e.channel WHERE c.type = 'tcp' AND e.result > 0"
    s=$(real_sql "$real_tmp/s" "$q AND e.kind = 'send' AND p.name = '$1'")
    r=$(real_sql "$real_tmp/s" "$q AND e.kind = 'recv' AND p.name = '$2'")
    [ "$s" -gt 0 ] && [ "$s" = "$r" ] || real_fail "$1 sent $s bytes over TCP, $2 received $r"
    echo "ok: $1 sent $s bytes over TCP, $2 received them all"
}

case $scen in
http)
    rec "$base" "$real_tmp/rec.out" "$py" "$real_tmp/httpd.py" fork 4
    grep -q '^req3 200 ' "$real_tmp/rec.out" && grep -q '^server exit 0$' "$real_tmp/rec.out" ||
        { cat "$real_tmp/rec.out"; real_fail "the recorded run did not serve its 4 requests"; }
    real_check "$real_tmp/s"
    real_counts "$real_tmp/s"
    [ "$real_unmatched" = 0 ] && [ "$real_external" = 0 ] ||
        real_fail "$real_unmatched unmatched receives, $real_external external channels"
    tcp_balance "$base.1" "$base"
    tcp_balance "$base" "$base.1"
    real_replay "$real_tmp/s" "$real_tmp/rec.out"
    echo "ok: replayed to the end, output identical"
    real_halt "$real_tmp/s" "$base.1: sent >= 3"
    real_halt "$real_tmp/s" "$base: received >= 3 && $base.1: sent >= 4"
    ;;
session)
    real_bg timeout "$real_t" "$encore" record -q --session "$real_tmp/s" --name srv -- \
        "$py" "$real_tmp/httpd.py" serve 3 > "$real_tmp/srv.out" < /dev/null
    srv=$real_last
    real_poll 400 grep -q '^[0-9]' "$real_tmp/srv.out" || real_fail "the server never told its port"
    port=$(head -1 "$real_tmp/srv.out")
    timeout "$real_t" "$encore" record -q --session "$real_tmp/s" --name cl -- \
        "$py" "$real_tmp/httpd.py" get "$port" a b c > "$real_tmp/cl.out" < /dev/null ||
        real_fail "encore record (client)"
    real_wait_pid "$srv"
    [ "$real_status" = 0 ] || real_fail "the recorded server ended with status $real_status"
    grep -q '^served 3$' "$real_tmp/srv.out" || real_fail "the server did not serve 3 requests"
    cat "$real_tmp/srv.out" "$real_tmp/cl.out" > "$real_tmp/rec.out"
    real_check "$real_tmp/s"
    real_counts "$real_tmp/s"
    [ "$real_unmatched" = 0 ] && [ "$real_external" = 0 ] ||
        real_fail "$real_unmatched unmatched receives, $real_external external channels"
    n=$(real_sql "$real_tmp/s" "SELECT count(*) FROM process")
    [ "$n" = 2 ] || real_fail "expected 2 processes in the session, found $n"
    tcp_balance srv cl
    tcp_balance cl srv
    # the replayed server binds the recorded port again: it must be free
    real_replay "$real_tmp/s" "$real_tmp/rec.out" sorted
    echo "ok: both roots replayed to the end, output identical"
    real_halt "$real_tmp/s" "srv: sent >= 2 && cl: received >= 1"
    ;;
mp)
    rec "$base" "$real_tmp/rec.out" "$py" "$real_tmp/mp.py"
    grep -q '^total 8555$' "$real_tmp/rec.out" || { cat "$real_tmp/rec.out"; real_fail "wrong total"; }
    real_check "$real_tmp/s"
    real_counts "$real_tmp/s"
    [ "$real_unmatched" = 0 ] && [ "$real_external" = 0 ] ||
        real_fail "$real_unmatched unmatched receives, $real_external external channels"
    n=$(real_sql "$real_tmp/s" "SELECT count(*) FROM process")
    [ "$n" = 4 ] || real_fail "expected 4 processes (parent and 3 workers), found $n"
    real_replay "$real_tmp/s" "$real_tmp/rec.out"
    echo "ok: replayed to the end, output identical"
    real_halt "$real_tmp/s" "$base.2: sent >= 5 && $base.3: received >= 2"
    ;;
asyncio)
    rec "$base" "$real_tmp/rec.out" "$py" "$real_tmp/aio.py"
    grep -q '^2 MSG 0 FROM 7,' "$real_tmp/rec.out" || { cat "$real_tmp/rec.out"; real_fail "wrong output"; }
    real_check "$real_tmp/s"
    real_counts "$real_tmp/s"
    [ "$real_unmatched" = 0 ] && [ "$real_external" = 0 ] ||
        real_fail "$real_unmatched unmatched receives, $real_external external channels"
    # 18 lines each way over the three socketpairs, at least one message per line
    [ "$real_linked" -ge 36 ] || real_fail "only $real_linked messages linked, 36 lines went over"
    real_replay "$real_tmp/s" "$real_tmp/rec.out"
    echo "ok: replayed to the end, output identical"
    real_halt "$real_tmp/s" "$base: sent >= 10"
    ;;
subprocess)
    cat > "$real_tmp/sub.py" <<'EOF'
import subprocess
p = subprocess.Popen(["sh", "-c", "cat; echo done >&2"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
o, e = p.communicate(b"x" * 50000)
print(len(o), e, p.returncode)
data = b"".join(b"%d\n" % i for i in range(3000))
r = subprocess.run(["sort", "-rn"], input=data, capture_output=True)
print(len(r.stdout), r.stdout[:20], r.returncode)
print(subprocess.check_output(["echo", "hi"]))
EOF
    rec "$base" "$real_tmp/rec.out" "$py" "$real_tmp/sub.py"
    grep -q "^50000 b'done.n' 0$" "$real_tmp/rec.out" || { cat "$real_tmp/rec.out"; real_fail "wrong output"; }
    real_check "$real_tmp/s"
    real_counts "$real_tmp/s"
    n=$(real_sql "$real_tmp/s" "SELECT count(*) FROM process")
    [ "$n" -ge 4 ] || real_fail "expected python and at least its 3 children, found $n processes"
    # cat (read(2)/write(2)) got the 50000 bytes python wrote to its stdin, and python got
    # them back
    for pk in "$base.1.1 recv" "$base.1.1 send" "$base recv"; do
        set -- $pk
        got=$(real_sql "$real_tmp/s" "SELECT coalesce(sum(e.result), 0) FROM event e
                                      JOIN process p ON p.id = e.proc JOIN channel c ON
                                      c.id = e.channel WHERE c.type = 'pipe' AND p.name = '$1'
                                      AND e.kind = '$2' AND e.result > 0")
        [ "$got" -ge 50000 ] || real_fail "$1: $2 of $got bytes on pipes, 50000 went through cat"
    done
    real_replay "$real_tmp/s" "$real_tmp/rec.out"
    echo "ok: replayed to the end, output identical"
    # (sort, later, writes through stdio, which the recorder does not see: a cut past
    # python's reading of sort's output would wait for a sender the analyzer does not know;
    # and cat's output fits in the pipe: cat can exit while python, halted, reads no more)
    real_halt "$real_tmp/s" "$base.1.1: exited"
    ;;
unittest)
    "$py" -c 'import test.test_epoll, test.test_select, test.test_pipes, test.test_popen' \
        2> /dev/null || { echo "SKIP: CPython's test suite is not installed"; exit 77; }
    # unittest reports on stderr: the shell makes it the recorded stdout
    rec unittest "$real_tmp/rec.out" "$(real_path sh)" -c "exec '$py' -m unittest -v \
        test.test_epoll test.test_select test.test_pipes test.test_popen 2>&1"
    tail -1 "$real_tmp/rec.out" | grep -q '^OK' || { cat "$real_tmp/rec.out"; real_fail "tests failed"; }
    ok=$(grep -c ' ok$' "$real_tmp/rec.out" || true)
    real_check "$real_tmp/s"
    real_counts "$real_tmp/s"
    [ "$real_external" = 0 ] || real_fail "$real_external external channels"
    real_replay "$real_tmp/s" "$real_tmp/rec.out"
    echo "ok: CPython's tests recorded and replayed, $ok passed both times, output identical"
    ;;
unix)
    # a Unix stream server (socketserver, one process) and three client roots connecting
    # at once in replay: each accept must return the recorded client's connection
    cat > "$real_tmp/ux.py" <<'EOF'
import socketserver, socket, sys, os
path = sys.argv[2]
if sys.argv[1] == "serve":
    class H(socketserver.StreamRequestHandler):
        def handle(self):
            for line in self.rfile:
                self.wfile.write(line.strip()[::-1] + b"\n")
    s = socketserver.UnixStreamServer(path, H)
    print("ready", flush=True)
    for _ in range(int(sys.argv[3])): s.handle_request()
    s.server_close(); os.unlink(path)
    print("served", sys.argv[3])
else:
    # each client writes its answers to a file of its own: three roots sharing one stdout in
    # replay interleave freely, files compare exactly
    c = socket.socket(socket.AF_UNIX); c.connect(path)
    f = c.makefile("rwb")
    with open(sys.argv[3], "w") as out:
        for w in sys.argv[4:]:
            f.write(w.encode() + b"\n"); f.flush()
            out.write(w + " " + f.readline().decode().strip() + "\n")
EOF
    sock=$real_tmp/ux.sock
    real_bg timeout "$real_t" "$encore" record -q --session "$real_tmp/s" --name srv -- \
        "$py" "$real_tmp/ux.py" serve "$sock" 3 > "$real_tmp/srv.out" < /dev/null
    srv=$real_last
    real_poll 400 grep -q '^ready' "$real_tmp/srv.out" || real_fail "the server never got ready"
    for c in 1 2 3; do
        # shellcheck disable=SC2046
        timeout "$real_t" "$encore" record -q --session "$real_tmp/s" --name "cl$c" -- \
            "$py" "$real_tmp/ux.py" cl "$sock" "$real_tmp/cl$c.ans" \
            $(seq -f "w${c}x%g" "$((c + 1))") < /dev/null > /dev/null ||
            real_fail "encore record (client $c)"
        cp "$real_tmp/cl$c.ans" "$real_tmp/cl$c.rec"
    done
    real_wait_pid "$srv"
    [ "$real_status" = 0 ] || real_fail "the recorded server ended with status $real_status"
    grep -q '^w3x4 4x3w$' "$real_tmp/cl3.rec" || { cat "$real_tmp/cl3.rec"; real_fail "wrong answers"; }
    real_check "$real_tmp/s"
    real_counts "$real_tmp/s"
    [ "$real_unmatched" = 0 ] && [ "$real_external" = 0 ] ||
        real_fail "$real_unmatched unmatched receives, $real_external external channels"
    n=$(real_sql "$real_tmp/s" "SELECT count(*) FROM channel WHERE type = 'unix' AND status = 'matched'")
    [ "$n" = 6 ] || real_fail "expected 3 matched Unix connections (6 ends), found $n ends"
    # the answers are files the replay writes: written for real, not into the scratch area
    real_replay_opts=--no-isolate
    for r in 1 2 3; do
        rm -f "$real_tmp"/cl?.ans
        real_replay "$real_tmp/s" "$real_tmp/srv.out"
        for c in 1 2 3; do
            cmp -s "$real_tmp/cl$c.rec" "$real_tmp/cl$c.ans" ||
                { diff "$real_tmp/cl$c.rec" "$real_tmp/cl$c.ans"; real_fail "replay $r: client $c's answers differ"; }
        done
    done
    real_replay_opts=
    echo "ok: the server and its 3 client roots replayed to the end 3 times, output identical"
    real_halt "$real_tmp/s" "srv: received >= 2 && cl3: sent >= 1"
    ;;
extclient)
    # the server recorded alone, its clients outside the session (not recorded: a browser,
    # curl): replay answers its readiness waits on the listening socket from the trace and
    # accepts stand-ins, nobody connects
    real_bg timeout "$real_t" "$encore" record -q -o "$real_tmp/s" --name srv -- \
        "$py" "$real_tmp/httpd.py" serve 2 show-client > "$real_tmp/srv.out" < /dev/null
    srv=$real_last
    real_poll 400 grep -q '^[0-9]' "$real_tmp/srv.out" || real_fail "the server never told its port"
    port=$(head -1 "$real_tmp/srv.out")
    timeout "$real_t" "$py" "$real_tmp/httpd.py" get "$port" a b > "$real_tmp/cl.out" < /dev/null ||
        real_fail "the client outside the session"
    real_wait_pid "$srv"
    [ "$real_status" = 0 ] || real_fail "the recorded server ended with status $real_status"
    grep -q '^served 2$' "$real_tmp/srv.out" || real_fail "the server did not serve 2 requests"
    grep -q '^client 127.0.0.1$' "$real_tmp/srv.out" || real_fail "the server printed no client"
    real_check "$real_tmp/s"
    real_counts "$real_tmp/s"
    [ "$real_external" -ge 2 ] || real_fail "expected 2 external connections, found $real_external"
    real_replay "$real_tmp/s" "$real_tmp/srv.out"
    echo "ok: the server of clients outside the session replayed to the end, output identical"
    ;;
curl)
    # curl (a second root of the session, recorded against the recorded server): in replay it
    # starts with the server and connects (non-blocking) before the server listens; its
    # connect is retried until it does
    real_need curl
    real_bg timeout "$real_t" "$encore" record -q --session "$real_tmp/s" --name srv -- \
        "$py" "$real_tmp/httpd.py" serve 2 > "$real_tmp/srv.out" < /dev/null
    srv=$real_last
    real_poll 400 grep -q '^[0-9]' "$real_tmp/srv.out" || real_fail "the server never told its port"
    port=$(head -1 "$real_tmp/srv.out")
    curl=$(real_path curl)
    # each curl root writes its answer to a file of its own (-o): in replay the three roots
    # share one stdout, where their writes would interleave freely
    for c in 1 2; do
        timeout "$real_t" "$encore" record -q --session "$real_tmp/s" --name "cl$c" -- \
            "$curl" -sS -o "$real_tmp/cl$c.out" "http://127.0.0.1:$port/c$c" < /dev/null ||
            real_fail "encore record (curl $c)"
        mv "$real_tmp/cl$c.out" "$real_tmp/cl$c.rec"
    done
    real_wait_pid "$srv"
    [ "$real_status" = 0 ] || real_fail "the recorded server ended with status $real_status"
    grep -q '^served 2$' "$real_tmp/srv.out" || real_fail "the server did not serve 2 requests"
    grep -q '^hello /c2$' "$real_tmp/cl2.rec" || real_fail "curl got no answer"
    real_check "$real_tmp/s"
    real_counts "$real_tmp/s"
    [ "$real_unmatched" = 0 ] && [ "$real_external" = 0 ] ||
        real_fail "$real_unmatched unmatched receives, $real_external external channels"
    # the answers are files the replay writes: written for real, not into the scratch area
    real_replay_opts=--no-isolate
    real_replay "$real_tmp/s" "$real_tmp/srv.out"
    real_replay_opts=
    for c in 1 2; do
        cmp -s "$real_tmp/cl$c.rec" "$real_tmp/cl$c.out" ||
            real_fail "curl $c's answer differs in replay"
    done
    echo "ok: the server and two curl roots replayed to the end, output identical"
    ;;
*)
    echo "usage: real_python.sh ENCORE http|session|mp|asyncio|subprocess|unittest|unix|extclient|curl"
    exit 2 ;;
esac
