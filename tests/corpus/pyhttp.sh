#!/bin/bash
# pyhttp.sh: `python3 -m http.server` (the standard library's file server: a thread per
# request) under load from ApacheBench (40 requests), plus curl, then SIGTERM.
#   pyhttp.sh 1   ab -c 1: one request at a time (the request thread's shutdown and the next
#                 connect, recorder/chan.c)
#   pyhttp.sh 4   ab -c 4: four at a time (a request thread opens the page file while the
#                 main thread accepts: the numbers opens take are events with threads,
#                 recorder/chan.c rec_fdnum; 2 of 3 recordings replayed before them)
set -u
. "$(dirname "$0")/lib.sh"
corpus_need python3 ab curl
py=/usr/bin/python3; [ -x $py ] || py=$(command -v python3)
conc=${1:-1}
case $conc in 1|4) ;; *) echo "usage: pyhttp.sh 1|4" >&2; exit 2 ;; esac
corpus_init python-http.server-ab-c$conc "$($py --version | sed 's/Python //'), ab $(ab -V | sed -n 's/.*Version \([^ ]*\).*/\1/p')"
port=$(corpus_port)
mkdir -p "$C_RUN/www"
seq 1 2000 | sed 's/$/ lines of a static page/' > "$C_RUN/www/index.html"
echo small > "$C_RUN/www/small.txt"
corpus_session <<EOF
cd $C_RUN/www
$py -m http.server --bind 127.0.0.1 $port > /dev/null 2>&1 &
srv=\$!
wait_listen $port
ab -q -n 40 -c $conc http://127.0.0.1:$port/index.html | grep -E '^(Complete|Failed|Non-2xx|Document Length)'
curl -sS http://127.0.0.1:$port/small.txt
curl -sS -o /dev/null -w '%{http_code}\n' http://127.0.0.1:$port/missing
stop \$srv
EOF
C_EXPECT='^Complete requests: *40'
corpus_run
