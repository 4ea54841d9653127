#!/bin/bash
# h2o.sh: the h2o web server (-m worker: no master process; 2 event-loop threads accepting
# on one socket) serving static files over HTTP/1.1 (curl) and cleartext HTTP/2 (curl
# --http2-prior-knowledge, nghttp with three streams on one connection), then SIGTERM.
set -u
. "$(dirname "$0")/lib.sh"
corpus_need h2o curl nghttp
corpus_init h2o "$(h2o --version | sed -n 's/^h2o version //p')"
port=$(corpus_port)
mkdir -p "$C_RUN/www"
echo "hello from h2o" > "$C_RUN/www/index.html"
seq 1 5000 | sed 's/$/ lines of big/' > "$C_RUN/www/big.txt"
cat > "$C_RUN/h2o.conf" <<EOF
listen:
  host: 127.0.0.1
  port: $port
num-threads: 2
user: root
pid-file: $C_RUN/h2o.pid
error-log: $C_RUN/error.log
hosts:
  default:
    paths:
      /:
        file.dir: $C_RUN/www
EOF
corpus_session <<EOF
$(command -v h2o) -m worker -c $C_RUN/h2o.conf &
srv=\$!
wait_listen $port
curl -sS http://127.0.0.1:$port/index.html
curl -sS http://127.0.0.1:$port/big.txt | cksum
curl -sS --http2-prior-knowledge -w '%{http_version} %{http_code}\n' http://127.0.0.1:$port/index.html
curl -sS -o /dev/null -w '%{http_code}\n' http://127.0.0.1:$port/missing
nghttp -s http://127.0.0.1:$port/index.html http://127.0.0.1:$port/big.txt http://127.0.0.1:$port/nope | grep -c responseEnd
stop \$srv
EOF
C_EXPECT='hello from h2o'
corpus_run
