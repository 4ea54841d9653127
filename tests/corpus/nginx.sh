#!/bin/bash
# nginx.sh: nginx 1.x serving static files to curl, recorded with its clients in one session.
#   nginx.sh off   master_process off: one process serves (epoll, sendfile)
#   nginx.sh on    master_process on, 2 workers: the master passes its channel sockets to
#                  the workers (SCM_RIGHTS) and signals them to stop
set -u
. "$(dirname "$0")/lib.sh"
mode=${1:-off}
corpus_need nginx curl
corpus_init "nginx-master-$mode" "$(nginx -v 2>&1 | sed 's/.*nginx\///')"
port=$(corpus_port)
mkdir -p "$C_RUN/www" "$C_RUN/tmp"
seq 1 2000 | sed 's/$/ lines of a static page/' > "$C_RUN/www/index.html"
echo small > "$C_RUN/www/small.txt"
if [ "$mode" = on ]; then workers=2; else workers=1; fi
cat > "$C_RUN/nginx.conf" <<EOF
daemon off;
master_process $mode;
worker_processes $workers;
pid $C_RUN/nginx.pid;
error_log $C_RUN/error.log;
events { worker_connections 64; }
http {
    access_log $C_RUN/access.log;
    client_body_temp_path $C_RUN/tmp/body;
    proxy_temp_path $C_RUN/tmp/proxy;
    fastcgi_temp_path $C_RUN/tmp/fastcgi;
    uwsgi_temp_path $C_RUN/tmp/uwsgi;
    scgi_temp_path $C_RUN/tmp/scgi;
    server {
        listen 127.0.0.1:$port;
        root $C_RUN/www;
    }
}
EOF
corpus_session <<EOF
$(command -v nginx) -p $C_RUN -e $C_RUN/error.log -c $C_RUN/nginx.conf &
srv=\$!
wait_listen $port
curl -sS http://127.0.0.1:$port/index.html | cksum
curl -sS http://127.0.0.1:$port/small.txt
curl -sS -o /dev/null -w '%{http_code}\n' http://127.0.0.1:$port/missing
stop \$srv
EOF
C_EXPECT=small
corpus_run
