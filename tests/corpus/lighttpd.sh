#!/bin/bash
# lighttpd.sh: lighttpd 1.4 serving static files to curl, recorded with its clients.
set -u
. "$(dirname "$0")/lib.sh"
corpus_need lighttpd curl
corpus_init lighttpd "$(lighttpd -v 2>&1 | sed -n 's/^lighttpd\/\([^ ]*\).*/\1/p')"
port=$(corpus_port)
mkdir -p "$C_RUN/www"
seq 1 2000 | sed 's/$/ lines of a static page/' > "$C_RUN/www/index.html"
echo small > "$C_RUN/www/small.txt"
cat > "$C_RUN/lighttpd.conf" <<EOF
server.document-root = "$C_RUN/www"
server.bind = "127.0.0.1"
server.port = $port
server.errorlog = "$C_RUN/error.log"
server.pid-file = "$C_RUN/lighttpd.pid"
server.max-worker = 0
index-file.names = ( "index.html" )
EOF
corpus_session <<EOF
$(command -v lighttpd) -D -f $C_RUN/lighttpd.conf &
srv=\$!
wait_listen $port
curl -sS http://127.0.0.1:$port/index.html | cksum
curl -sS http://127.0.0.1:$port/small.txt
curl -sS -o /dev/null -w '%{http_code}\n' http://127.0.0.1:$port/missing
stop \$srv
EOF
C_EXPECT=small
corpus_run
