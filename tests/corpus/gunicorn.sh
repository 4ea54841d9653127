#!/bin/bash
# gunicorn.sh: gunicorn (a Python WSGI server: a master forking 2 sync workers that accept on
# one shared listening socket, and watch their heartbeat files in --worker-tmp-dir) serving
# a small app to 6 sequential curl requests, then the master stopped with SIGTERM.
set -u
. "$(dirname "$0")/lib.sh"
corpus_need python3 gunicorn curl
py=/usr/bin/python3; [ -x $py ] || py=$(command -v python3)
corpus_init gunicorn "$($py $(command -v gunicorn) --version 2>&1 | sed -n 's/.*(version \([^)]*\)).*/\1/p')"
port=$(corpus_port)
cat > "$C_RUN/app.py" <<'EOF'
import zlib
def application(environ, start_response):
    path = environ.get("PATH_INFO", "")
    body = ("path %s crc %d\n" % (path, zlib.crc32(path.encode()))).encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
EOF
corpus_session <<EOF
cd $C_RUN
$py $(command -v gunicorn) -w 2 -b 127.0.0.1:$port --worker-tmp-dir $C_RUN --log-level warning app:application &
srv=\$!
wait_listen $port
for p in / /a /b/c /hello /x/y/z /last; do curl -s http://127.0.0.1:$port\$p; done
stop \$srv
EOF
C_EXPECT='path /last crc'
corpus_run
