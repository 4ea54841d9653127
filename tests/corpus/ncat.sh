#!/bin/bash
# ncat.sh: Nmap's ncat as a connection broker (--broker: one process, a select loop relaying
# what each client sends to every other), a receiving client and three sending clients one
# after another, then the broker stopped with SIGTERM (the receiver sees the end).  The
# shell waits until the broker has the receiver's connection (an established socket on
# the port in /proc/net/tcp, as wait_listen reads it) before the first sender, and until
# the receiver's file holds the last sender's last line before stopping the broker: no sleep.
# The SIGTERM may come while the broker sends: its death waits for the send's event
# (recorder/rec.h, REC_DATA_CALL; before it, 1 replay in 30 lost that send).
set -u
. "$(dirname "$0")/lib.sh"
corpus_need ncat
corpus_init ncat "$(ncat --version 2>&1 | sed -n 's/^Ncat: Version \([^ ]*\).*/\1/p')"
port=$(corpus_port)
corpus_session <<EOF
wait_established() {
    _h=\$(printf '%04X' "\$1") _n=0
    while [ \$_n -lt 20000 ]; do
        while read -r _sl _loc _rem _st _rest; do
            case "\$_loc:\$_st" in *:\$_h:01) return 0 ;; esac
        done < /proc/net/tcp
        _n=\$((_n + 1))
    done
    echo "wait_established: no connection to port \$1" >&2
    return 1
}
wait_line() {
    _n=0
    while [ \$_n -lt 200000 ]; do
        while read -r _l; do [ "\$_l" = "\$2" ] && return 0; done < "\$1"
        _n=\$((_n + 1))
    done
    echo "wait_line: no '\$2' in \$1" >&2
    return 1
}
$(command -v ncat) -l --broker 127.0.0.1 $port &
srv=\$!
wait_listen $port
$(command -v ncat) --recv-only 127.0.0.1 $port > $C_RUN/outB &
rcv=\$!
wait_established $port
echo "hello from A" | ncat --send-only 127.0.0.1 $port
echo "hello from C" | ncat --send-only 127.0.0.1 $port
seq 1 500 | ncat --send-only 127.0.0.1 $port
wait_line $C_RUN/outB 500
stop \$srv
wait_all \$rcv
head -2 $C_RUN/outB
cksum < $C_RUN/outB
EOF
C_EXPECT='hello from C'
corpus_run
