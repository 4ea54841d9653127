#!/bin/bash
# iperf3.sh: the iperf3 network benchmark, a server and two one-second client runs (reports
# every half second, then the server sending): its reports come from clock reads and byte
# counts, TCP_INFO read through getsockopt, and a JSON control channel beside the data
# connection; its timers run when select leaves its timeout at zero.  Both ends print both
# ports: replay binds a client's socket to its recorded port, which the recorded connection's
# TIME_WAIT may still hold for a minute after the recording (the kernel's port then): the
# control connection's, which the client closes, is masked in the server's log, which the
# shell prints at the end.
set -u
. "$(dirname "$0")/lib.sh"
corpus_need iperf3
corpus_init iperf3 "$(iperf3 --version 2>&1 | sed -n 's/^iperf \([0-9.]*\).*/\1/p' | head -1)"
port=$(corpus_port)
corpus_session <<EOF
$(command -v iperf3) -s -p $port -I $C_RUN/iperf3.pid --logfile $C_RUN/server.log &
wait_listen $port
$(command -v iperf3) -c 127.0.0.1 -p $port -t 1 -i 0.5 -l 64k
$(command -v iperf3) -c 127.0.0.1 -p $port -t 1 -R -l 64k
stop_pidfile $C_RUN/iperf3.pid
sed 's/^\(Accepted connection from .*, port\) [0-9]*/\1 P/' $C_RUN/server.log
EOF
C_EXPECT="iperf Done"
corpus_run
