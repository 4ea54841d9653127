#!/bin/bash
# haproxy.sh: haproxy in front of a small Python HTTP backend (one process, not threaded),
# curl as the client; all three recorded in one session.
#   haproxy.sh 1   nbthread 1, two curls one after the other
#   haproxy.sh 2   nbthread 2 (haproxy 2.6's default on 2 CPUs), four curls at once, so
#                  that both threads serve
set -u
. "$(dirname "$0")/lib.sh"
nbt=${1:-1}
case $nbt in 1|2) ;; *) echo "usage: haproxy.sh 1|2" >&2; exit 2 ;; esac
corpus_need haproxy curl python3
name=haproxy; [ "$nbt" = 1 ] || name=haproxy-nbthread$nbt
corpus_init $name "$(haproxy -v 2>&1 | sed -n 's/^HAProxy version \([^ ]*\).*/\1/p')"
port=$(corpus_port) bport=$(corpus_port)
py=/usr/bin/python3; [ -x $py ] || py=$(python3 -c 'import sys; print(sys.executable)')
cat > "$C_RUN/backend.py" <<'EOF'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    def do_GET(self):
        body = ("backend says %s\n" % self.path).encode() * 100
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
EOF
cat > "$C_RUN/haproxy.cfg" <<EOF
global
    nbthread $nbt
defaults
    mode http
    timeout connect 5s
    timeout client 10s
    timeout server 10s
frontend fe
    bind 127.0.0.1:$port
    default_backend be
backend be
    server b1 127.0.0.1:$bport
EOF
if [ "$nbt" = 1 ]; then
    clients="curl -sS http://127.0.0.1:$port/one | cksum
curl -sS http://127.0.0.1:$port/two | cksum"
else
    # each client's answer in a file of its own, shown in order once all are done
    clients="c=
for k in 1 2 3 4; do curl -sS -o $C_RUN/out.\$k http://127.0.0.1:$port/c\$k & c=\"\$c \$!\"; done
wait_all \$c
for k in 1 2 3 4; do cksum < $C_RUN/out.\$k; done"
fi
corpus_session <<EOF
$py $C_RUN/backend.py $bport &
be=\$!
wait_listen $bport
$(command -v haproxy) -f $C_RUN/haproxy.cfg &
srv=\$!
wait_listen $port
$clients
stop \$srv
stop \$be
EOF
C_EXPECT='^[0-9]* [1-9][0-9]*$'
corpus_run
