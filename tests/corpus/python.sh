#!/bin/bash
# python.sh: CPython programs.
#   python.sh asyncio  an asyncio TCP server (asyncio.start_server) serving three client
#                      processes (asyncio.open_connection), then ending by itself
#   python.sh pool     multiprocessing.Pool(2).map (fork, pipes, and the pool's threads)
#   python.sh threading  http.server.ThreadingHTTPServer (a thread per request) serving four
#                      curls at once, then ending by itself once it has served them (each
#                      answer names the thread that made it: the output depends on
#                      scheduling); the request threads wait at a barrier until all four
#                      requests are in, so that they serve together (the server counts them
#                      under a lock and says so)
#   python.sh futures    ThreadingHTTPServer serving 16 requests to a second Python process,
#                      whose concurrent.futures.ThreadPoolExecutor of four urllib clients
#                      fetches them (threads as clients); the pool joins its workers at
#                      shutdown in the order of a set, which follows addresses (README.md,
#                      Limits, "Threads"): not every recording replays
set -u
. "$(dirname "$0")/lib.sh"
scen=${1:-asyncio}
corpus_need python3
[ "$scen" != threading ] || corpus_need curl
py=/usr/bin/python3; [ -x $py ] || py=$(python3 -c 'import sys; print(sys.executable)')
corpus_init "python-$scen" "$($py --version | sed 's/Python //')"
port=$(corpus_port)
cat > "$C_RUN/aio.py" <<'EOF'
import asyncio, sys
port = int(sys.argv[2])
async def serve(n):
    done = asyncio.Event(); left = [n]
    async def handle(r, w):
        while (line := await r.readline()):
            w.write(line.upper()); await w.drain()
        w.close(); await w.wait_closed()
        left[0] -= 1
        if left[0] == 0: done.set()
    srv = await asyncio.start_server(handle, "127.0.0.1", port)
    async with srv:
        await done.wait()
    print("served", n, flush=True)
async def client(k):
    r, w = await asyncio.open_connection("127.0.0.1", port)
    for i in range(5):
        w.write(b"line %d of client %s\n" % (i, k.encode())); await w.drain()
        print((await r.readline()).decode().strip())
    w.close(); await w.wait_closed()
if sys.argv[1] == "serve": asyncio.run(serve(int(sys.argv[3])))
else: asyncio.run(client(sys.argv[3]))
EOF
cat > "$C_RUN/pool.py" <<'EOF'
import multiprocessing as mp, hashlib
def work(i):
    return i, hashlib.sha1(b"x" * i).hexdigest()[:8]
if __name__ == "__main__":
    mp.set_start_method("fork")
    with mp.Pool(2) as p:
        for i, h in p.map(work, range(20)): print(i, h)
EOF
cat > "$C_RUN/thr.py" <<'EOF'
import http.server, sys, threading
# every request waits at a barrier until all are in the server: the request threads serve
# together, not one after the other (a quick handler would be done before the next
# connection is accepted); how many were at once is counted under a lock
n = int(sys.argv[2])
barrier = threading.Barrier(n)
lock = threading.Lock()
active, peak = [0], [0]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        barrier.wait()
        body = ("%s served by %s\n" % (self.path, threading.current_thread().name)).encode() * 50
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        with lock:
            active[0] -= 1
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H)
s.daemon_threads = False  # so that server_close waits for the request threads
for i in range(n): s.handle_request()
s.server_close()
print("served", n, flush=True)
print("at most", peak[0], "at once", flush=True)
EOF
cat > "$C_RUN/fsrv.py" <<'EOF'
import http.server, sys
n = int(sys.argv[2])
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("%s\n" % self.path).encode() * 20
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H)
s.daemon_threads = False
for i in range(n): s.handle_request()
s.server_close()
print("served", n, flush=True)
EOF
cat > "$C_RUN/fcli.py" <<'EOF'
import sys, urllib.request, concurrent.futures, zlib
port, n = int(sys.argv[1]), int(sys.argv[2])
def get(i):
    with urllib.request.urlopen("http://127.0.0.1:%d/r%d" % (port, i)) as r:
        return i, zlib.crc32(r.read())
with concurrent.futures.ThreadPoolExecutor(4) as ex:
    res = sorted(ex.map(get, range(n)))
for i, c in res: print(i, "%08x" % c)
EOF
case $scen in
futures)
    corpus_session <<EOF
$py $C_RUN/fsrv.py $port 16 &
srv=\$!
wait_listen $port
$py $C_RUN/fcli.py $port 16
wait \$srv
EOF
    C_SORTED=1  # the server's last line and the client's lines share the shell's stdout
    ;;
threading)
    corpus_session <<EOF
$py $C_RUN/thr.py $port 4 > $C_RUN/served &
srv=\$!
wait_listen $port
c=
for k in 1 2 3 4; do curl -sS -o $C_RUN/out.\$k http://127.0.0.1:$port/r\$k & c="\$c \$!"; done
wait_all \$c
wait \$srv
for k in 1 2 3 4; do head -1 $C_RUN/out.\$k; cksum < $C_RUN/out.\$k; done
cat $C_RUN/served
EOF
    ;;
asyncio)
    corpus_session <<EOF
$py $C_RUN/aio.py serve $port 3 &
srv=\$!
wait_listen $port
for k in a b c; do $py $C_RUN/aio.py client $port \$k; done
wait \$srv
EOF
    ;;
pool)
    corpus_session <<EOF
$py $C_RUN/pool.py
EOF
    ;;
*) echo "usage: python.sh asyncio|futures|pool|threading" >&2; exit 2 ;;
esac
case $scen in
    asyncio) C_EXPECT='LINE 4 OF CLIENT C' ;; pool) C_EXPECT='^19 ' ;; threading) C_EXPECT='^at most 4 at once' ;;
    futures) C_EXPECT='^served 16' ;;
esac
corpus_run
