#!/bin/bash
# unbound.sh: unbound as a loopback authoritative-only resolver on its own port (local-data,
# no upstream, one thread), queried over UDP and TCP by dig.
set -u
. "$(dirname "$0")/lib.sh"
corpus_need unbound dig
corpus_init unbound-dig "$(unbound -V 2>&1 | sed -n 's/^Version \(.*\)/\1/p')"
port=$(corpus_port)
cat > "$C_RUN/unbound.conf" <<EOF
server:
    interface: 127.0.0.1
    port: $port
    do-ip6: no
    num-threads: 1
    username: ""
    chroot: ""
    directory: "$C_RUN"
    pidfile: "$C_RUN/unbound.pid"
    use-syslog: no
    logfile: "$C_RUN/unbound.log"
    do-daemonize: no
    auto-trust-anchor-file: ""
    access-control: 127.0.0.0/8 allow
    local-zone: "test." static
    local-data: "www.test. A 127.0.0.2"
    local-data: "other.test. A 127.0.0.3"
    local-data: "txt.test. TXT \"hello from unbound\""
remote-control:
    control-enable: no
EOF
corpus_session <<EOF
$(command -v unbound) -d -c $C_RUN/unbound.conf &
srv=\$!
wait_listen $port
dig @127.0.0.1 -p $port +short +tries=1 +time=5 www.test A
dig @127.0.0.1 -p $port +short +tries=1 +time=5 +tcp other.test A
dig @127.0.0.1 -p $port +short +tries=1 +time=5 txt.test TXT
dig @127.0.0.1 -p $port +tries=1 +time=5 none.test A | grep -o 'status: [A-Z]*'
stop \$srv
EOF
C_EXPECT=127.0.0.3
# dig's query id depends on addresses (see dnsmasq.sh): recorded with --same-layout
if "$ENCORE" record --help 2>/dev/null | grep -q -- --same-layout; then
    C_RECORD_OPTS=--same-layout
fi
corpus_run
