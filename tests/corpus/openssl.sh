#!/bin/bash
# openssl.sh: `openssl s_server` (TLS 1.3, a self-signed certificate made at set-up, -www:
# a status page) and two `openssl s_client` connections, one asking for the page, one
# exchanging lines: key exchange, certificates and records between recorded processes.
set -u
. "$(dirname "$0")/lib.sh"
corpus_need openssl
corpus_init openssl-s_server "$(openssl version | awk '{print $2}')"
port=$(corpus_port)
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$C_RUN/key.pem" -out "$C_RUN/cert.pem" \
    -days 2 -subj /CN=localhost > /dev/null 2>&1 || corpus_skip "openssl req failed"
corpus_session <<EOF
ossl=$(command -v openssl)
\$ossl s_server -accept 127.0.0.1:$port -cert $C_RUN/cert.pem -key $C_RUN/key.pem -www -naccept 2 -quiet > /dev/null 2>&1 &
srv=\$!
wait_listen $port
printf 'GET / HTTP/1.0\r\n\r\n' | \$ossl s_client -connect 127.0.0.1:$port -quiet -ign_eof 2>/dev/null | head -1
printf 'GET /nothing HTTP/1.0\r\n\r\n' | \$ossl s_client -connect 127.0.0.1:$port -quiet -ign_eof 2>/dev/null | grep -c Cipher
wait \$srv
echo server exit \$?
EOF
C_EXPECT='HTTP/1.0 200'
# OpenSSL 3's DRBG nonces hold addresses (see dnsmasq.sh): without the recorded layout the
# replayed random bytes differ, and with them how many draws a handshake makes (a draw
# out of range is drawn again): 1 recording of 3 replayed so, 3 of 3 with --same-layout
if "$ENCORE" record --help 2>/dev/null | grep -q -- --same-layout; then
    C_RECORD_OPTS=--same-layout
fi
corpus_run
