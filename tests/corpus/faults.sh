#!/bin/bash
# faults.sh: real servers recorded under faults, with their clients in one session (lib.sh):
#   faults.sh nginx-kill    nginx, master and 2 workers: curl clients; a worker SIGKILLed
#                           by the recorded shell (the one that answered a request: its
#                           pid in a header); the master starts another; the clients go
#                           on; then SIGQUIT
set -u
. "$(dirname "$0")/lib.sh"
mode=${1:-}
case $mode in
nginx-kill)
    corpus_need nginx curl
    corpus_init "fault-$mode" "nginx $(nginx -v 2>&1 | sed 's/.*nginx\///')"
    port=$(corpus_port)
    mkdir -p "$C_RUN/www" "$C_RUN/tmp"
    seq 1 2000 | sed 's/$/ lines of a static page/' > "$C_RUN/www/index.html"
    echo small > "$C_RUN/www/small.txt"
    cat > "$C_RUN/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 2;
pid $C_RUN/nginx.pid;
error_log $C_RUN/error.log notice;
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
        add_header X-Pid \$pid;
    }
}
EOF
    corpus_session <<EOF
$(command -v nginx) -p $C_RUN -e $C_RUN/error.log -c $C_RUN/nginx.conf &
srv=\$!
wait_listen $port
curl -sS http://127.0.0.1:$port/small.txt
# the worker that answered (nginx's \$pid in a header) is killed
w=\$(curl -sS -o /dev/null -w '%header{x-pid}' http://127.0.0.1:$port/small.txt)
kill -KILL \$w
curl -sS http://127.0.0.1:$port/index.html | cksum
curl -sS -o /dev/null -w '%{http_code}\\n' http://127.0.0.1:$port/missing
curl -sS http://127.0.0.1:$port/small.txt
stop \$srv QUIT
grep -o 'exited on signal 9' $C_RUN/error.log
EOF
    C_EXPECT='exited on signal 9'
    corpus_run ;;
*)
    echo "usage: faults.sh nginx-kill" >&2; exit 2 ;;
esac
