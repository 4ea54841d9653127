#!/bin/bash
# stunnel.sh: stunnel (a TLS server side in front of redis-server, a thread per connection)
# and its clients over TLS (openssl s_client sending redis commands), all recorded together.
# Not in run_all.sh: 2 of 3 recordings replay; the third diverged in one of stunnel's
# connection threads, which took another path in OpenSSL's locks (a pthread_once where the
# recording had an rwlock unlock: threads meeting through atomics, README.md, Limits).
set -u
. "$(dirname "$0")/lib.sh"
corpus_need stunnel redis-server openssl
corpus_init stunnel "$(stunnel -version 2>&1 | sed -n 's/^stunnel \([0-9.]*\).*/\1/p' | head -1)"
port=$(corpus_port)
rport=$(corpus_port)
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$C_RUN/key.pem" -out "$C_RUN/cert.pem" \
    -days 2 -subj /CN=localhost > /dev/null 2>&1 || corpus_skip "openssl req failed"
cat > "$C_RUN/stunnel.conf" <<EOF
foreground = yes
pid =
output = $C_RUN/stunnel.log
[redis-tls]
accept = 127.0.0.1:$port
connect = 127.0.0.1:$rport
cert = $C_RUN/cert.pem
key = $C_RUN/key.pem
EOF
corpus_session <<EOF
$(command -v redis-server) --bind 127.0.0.1 --port $rport --save '' --appendonly no --dir $C_RUN --daemonize no --logfile $C_RUN/redis.log &
rsrv=\$!
wait_listen $rport
$(command -v stunnel) $C_RUN/stunnel.conf &
srv=\$!
wait_listen $port
ossl=$(command -v openssl)
printf 'SET greeting hello\r\nINCR n\r\nINCR n\r\nQUIT\r\n' | \$ossl s_client -connect 127.0.0.1:$port -quiet 2>/dev/null
printf 'GET greeting\r\nGET n\r\nQUIT\r\n' | \$ossl s_client -connect 127.0.0.1:$port -quiet 2>/dev/null
stop \$srv
stop \$rsrv
EOF
C_EXPECT=hello
# OpenSSL's DRBG nonces hold addresses (openssl.sh)
if "$ENCORE" record --help 2>/dev/null | grep -q -- --same-layout; then
    C_RECORD_OPTS=--same-layout
fi
corpus_run
