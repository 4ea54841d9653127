#!/bin/bash
# tinyproxy.sh: tinyproxy 1.11 (an HTTP proxy, a thread per connection) in front of a
# Python http.server, curl going through it: the proxy, its threads and the origin server
# recorded in one session.
set -u
. "$(dirname "$0")/lib.sh"
corpus_need tinyproxy curl python3
py=/usr/bin/python3; [ -x $py ] || py=$(command -v python3)
corpus_init tinyproxy "$(tinyproxy -v | sed -n 's/^tinyproxy \(.*\)/\1/p')"
port=$(corpus_port)
oport=$(corpus_port)
mkdir -p "$C_RUN/www"
seq 1 2000 | sed 's/$/ lines of a page behind the proxy/' > "$C_RUN/www/index.html"
echo small > "$C_RUN/www/small.txt"
cat > "$C_RUN/tinyproxy.conf" <<EOF
Port $port
Listen 127.0.0.1
Timeout 60
LogFile "$C_RUN/tinyproxy.log"
LogLevel Info
PidFile "$C_RUN/tinyproxy.pid"
MaxClients 10
StartServers 2
MinSpareServers 1
MaxSpareServers 4
Allow 127.0.0.1
DisableViaHeader Yes
EOF
corpus_session <<EOF
cd $C_RUN/www
$py -m http.server --bind 127.0.0.1 $oport > /dev/null 2>&1 &
origin=\$!
wait_listen $oport
$(command -v tinyproxy) -d -c $C_RUN/tinyproxy.conf &
srv=\$!
wait_listen $port
curl -sS -x http://127.0.0.1:$port http://127.0.0.1:$oport/index.html | cksum
curl -sS -x http://127.0.0.1:$port http://127.0.0.1:$oport/small.txt
curl -sS -x http://127.0.0.1:$port -o /dev/null -w '%{http_code}\n' http://127.0.0.1:$oport/missing
stop \$srv
stop \$origin
EOF
C_EXPECT=small
corpus_run
