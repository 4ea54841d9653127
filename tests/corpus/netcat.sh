#!/bin/bash
# netcat.sh: OpenBSD netcat (Debian's nc.openbsd) moving a 1 MB file each way over loopback
# TCP: a listener writing what it receives to a file while a client sends the file (-N: a
# shutdown at its end), then a listener sending the file (-N) to a client that writes it
# out; cksum of both copies.
set -u
. "$(dirname "$0")/lib.sh"
corpus_need nc.openbsd cksum
corpus_init netcat-openbsd "$(dpkg-query -W -f '${Version}' netcat-openbsd 2>/dev/null || echo unknown)"
port=$(corpus_port)
port2=$(corpus_port)
head -c 1048576 /dev/urandom > "$C_RUN/src.bin"
corpus_session <<EOF
nc=$(command -v nc.openbsd)
\$nc -l 127.0.0.1 $port > $C_RUN/dst.bin &
srv=\$!
wait_listen $port
\$nc -N 127.0.0.1 $port < $C_RUN/src.bin; echo "client exit \$?"
wait_all \$srv
\$nc -N -l 127.0.0.1 $port2 < $C_RUN/src.bin &
srv=\$!
wait_listen $port2
\$nc 127.0.0.1 $port2 < /dev/null > $C_RUN/dst2.bin; echo "client exit \$?"
wait_all \$srv
cksum < $C_RUN/src.bin
cksum < $C_RUN/dst.bin
cksum < $C_RUN/dst2.bin
EOF
C_EXPECT='client exit 0'
corpus_run
