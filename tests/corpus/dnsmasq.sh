#!/bin/bash
# dnsmasq.sh: dnsmasq as a loopback DNS server on its own port (no DHCP, no upstream:
# --no-resolv --address=/test/127.0.0.2), queried by dig over UDP and TCP.
set -u
. "$(dirname "$0")/lib.sh"
corpus_need dnsmasq dig
corpus_init dnsmasq "$(dnsmasq -v | sed -n 's/^Dnsmasq version \([^ ]*\).*/\1/p')"
port=$(corpus_port)
corpus_session <<EOF
$(command -v dnsmasq) -k --conf-file=/dev/null --no-resolv --no-hosts --no-dhcp-interface=lo \
    --listen-address=127.0.0.1 --bind-interfaces --port=$port --address=/test/127.0.0.2 \
    --pid-file=$C_RUN/dnsmasq.pid --log-facility=$C_RUN/dnsmasq.log --user=root &
srv=\$!
wait_listen $port
dig @127.0.0.1 -p $port +short +tries=1 +time=5 www.test A
dig @127.0.0.1 -p $port +short +tries=1 +time=5 +tcp other.test A
stop \$srv
EOF
corpus_run
