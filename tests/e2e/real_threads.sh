#!/bin/sh
# real_threads.sh: CPython's ThreadingHTTPServer (a thread per request, the server loop in a
# thread of its own, CPython's locks on semaphores) with four concurrent curl clients, all
# in one recorded session; each recording replays to the end with the recorded output (the
# handler names the thread that served it), and halts at a simple predicate exactly at
# `encore inf`'s cut with every thread stopped (replayer/README.md, "Threads").  The switch
# interval is long: CPython's forced GIL switch (a thread that waited 5 ms for the GIL asks
# the holder to drop it through an atomic flag, which replay does not order: README.md,
# "Threads") would make some replays diverge where the holder saw the request; the threads
# still take turns at every blocking call (accept, recv, send, lock waits).
# Usage: real_threads.sh ENCORE
set -eu
encore=$1
. "$(dirname "$0")/real_lib.sh"
if [ -x /usr/bin/python3 ]; then
    py=/usr/bin/python3
else
    real_need python3
    py=$(python3 -c 'import sys; print(sys.executable)')
fi
real_need curl
real_init threads
real_t=120
base=$(basename "$py")

cat > "$real_tmp/srv.py" <<'PY'
import http.server, subprocess, sys, threading
sys.setswitchinterval(1000)  # no forced GIL switch (see the top of this file)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("hello %s from %s\n" % (self.path, threading.current_thread().name)).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
t = threading.Thread(target=s.serve_forever)
t.start()
out = sys.argv[1]
ps = [subprocess.Popen(["curl", "-s", "-o", "%s.%d" % (out, i),
                        "http://127.0.0.1:%d/r%d" % (s.server_address[1], i)]) for i in range(4)]
for p in ps:
    p.wait()
s.shutdown()
t.join()
for i in range(4):
    print(open("%s.%d" % (out, i)).read(), end="")
PY

for run in 1 2 3; do
    rm -rf "$real_tmp/s" "$real_tmp"/o.*
    timeout "$real_t" "$encore" record -q -o "$real_tmp/s" -- "$py" "$real_tmp/srv.py" \
        "$real_tmp/o" < /dev/null > "$real_tmp/rec.out" 2> "$real_tmp/rec.err" ||
        { cat "$real_tmp/rec.err"; real_fail "encore record (run $run)"; }
    [ "$(wc -l < "$real_tmp/rec.out")" = 4 ] || real_fail "run $run: not four answers"
    real_check "$real_tmp/s"
    rm -f "$real_tmp"/o.*
    real_replay "$real_tmp/s" "$real_tmp/rec.out"
    echo "ok: recording $run replayed to the end, identical"
done
real_halt "$real_tmp/s" "$base: sent >= 2"
