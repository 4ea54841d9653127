#!/bin/bash
# nghttpd.sh: nghttpd (nghttp2's HTTP/2 server, cleartext h2 with prior knowledge, one
# thread) serving files to nghttp (one stream, then three in one connection, one a 404) and
# to curl --http2-prior-knowledge, then SIGTERM.
set -u
. "$(dirname "$0")/lib.sh"
corpus_need nghttpd nghttp curl
corpus_init nghttpd "$(nghttpd --version | sed -n 's/^nghttpd nghttp2\/\([^ ]*\).*/\1/p')"
port=$(corpus_port)
mkdir -p "$C_RUN/www"
echo "file a" > "$C_RUN/www/a.txt"
seq 1 5000 | sed 's/$/ lines of b/' > "$C_RUN/www/b.txt"
corpus_session <<EOF
$(command -v nghttpd) --no-tls -n 1 -d $C_RUN/www $port &
srv=\$!
wait_listen $port
nghttp http://127.0.0.1:$port/a.txt
nghttp -s http://127.0.0.1:$port/a.txt http://127.0.0.1:$port/b.txt http://127.0.0.1:$port/nope | grep -c responseEnd
curl -s --http2-prior-knowledge http://127.0.0.1:$port/b.txt | cksum
stop \$srv
EOF
C_EXPECT='file a'
corpus_run
