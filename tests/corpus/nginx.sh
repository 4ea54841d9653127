#!/bin/bash
# nginx.sh: nginx 1.x serving static files to curl, recorded with its clients in one session.
#   nginx.sh off   master_process off: one process serves (epoll, sendfile)
#   nginx.sh on    master_process on, 2 workers: the master passes its channel sockets to
#                  the workers (SCM_RIGHTS); reloaded with SIGHUP between the clients (the
#                  master starts two new workers and stops the old ones), then stopped
#                  with SIGQUIT (graceful), as `nginx -s reload` and `nginx -s quit` do; the
#                  signals its processes logged are counted at the end
set -u
. "$(dirname "$0")/lib.sh"
mode=${1:-off}
corpus_need nginx curl
corpus_init "nginx-master-$mode" "$(nginx -v 2>&1 | sed 's/.*nginx\///')"
port=$(corpus_port)
mkdir -p "$C_RUN/www" "$C_RUN/tmp"
seq 1 2000 | sed 's/$/ lines of a static page/' > "$C_RUN/www/index.html"
echo small > "$C_RUN/www/small.txt"
if [ "$mode" = on ]; then workers=2 level=notice; else workers=1 level=error; fi
cat > "$C_RUN/nginx.conf" <<EOF
daemon off;
master_process $mode;
worker_processes $workers;
pid $C_RUN/nginx.pid;
error_log $C_RUN/error.log $level;
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
if [ "$mode" = on ]; then
    # the reload, whichever workers (old or new) then answer; the signals each process
    # logged ("signal 1 (SIGHUP) received from ...") counted once nginx is gone
    clients="curl -sS http://127.0.0.1:$port/small.txt
kill -HUP \$srv
curl -sS http://127.0.0.1:$port/index.html | cksum
curl -sS -o /dev/null -w '%{http_code}\\n' http://127.0.0.1:$port/missing
stop \$srv QUIT
grep -o 'signal [0-9]* (SIG[A-Z]*) received' $C_RUN/error.log | sort | uniq -c"
else
    clients="curl -sS http://127.0.0.1:$port/index.html | cksum
curl -sS http://127.0.0.1:$port/small.txt
curl -sS -o /dev/null -w '%{http_code}\\n' http://127.0.0.1:$port/missing
stop \$srv"
fi
corpus_session <<EOF
$(command -v nginx) -p $C_RUN -e $C_RUN/error.log -c $C_RUN/nginx.conf &
srv=\$!
wait_listen $port
$clients
EOF
C_EXPECT=small
corpus_run
