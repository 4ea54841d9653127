#!/bin/bash
# dnsmasq.sh: dnsmasq as a loopback DNS server on its own port (no DHCP, no upstream:
# --no-resolv --address=/test/127.0.0.2), queried over UDP and TCP.
#   dnsmasq.sh dig      by dig (BIND 9)
#   dnsmasq.sh python   by a small Python resolver (one UDP and one TCP query), a client
#                       without threads
set -u
. "$(dirname "$0")/lib.sh"
client=${1:-dig}
corpus_need dnsmasq
py=/usr/bin/python3; [ -x $py ] || py=$(command -v python3)
if [ "$client" = dig ]; then corpus_need dig; else corpus_need python3; fi
corpus_init "dnsmasq-$client" "$(dnsmasq -v | sed -n 's/^Dnsmasq version \([^ ]*\).*/\1/p')"
port=$(corpus_port)
cat > "$C_RUN/q.py" <<'EOF'
import socket, struct, sys
def query(name, tcp):
    q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
    q += b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0"
    q += struct.pack(">HH", 1, 1)
    addr = ("127.0.0.1", int(sys.argv[1]))
    if tcp:
        s = socket.create_connection(addr); s.sendall(struct.pack(">H", len(q)) + q)
        n = struct.unpack(">H", s.recv(2, socket.MSG_WAITALL))[0]; r = s.recv(n, socket.MSG_WAITALL)
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(5)
        s.sendto(q, addr); r = s.recv(512)
    s.close()
    print(name, "tcp" if tcp else "udp", ".".join(str(b) for b in r[-4:]))
query("www.test", False)
query("other.test", True)
EOF
if [ "$client" = dig ]; then
    q="dig @127.0.0.1 -p $port +short +tries=1 +time=5 www.test A
dig @127.0.0.1 -p $port +short +tries=1 +time=5 +tcp other.test A"
else
    q="$py $C_RUN/q.py $port"
fi
corpus_session <<EOF
$(command -v dnsmasq) -k --conf-file=/dev/null --no-resolv --no-hosts --no-dhcp-interface=lo \
    --listen-address=127.0.0.1 --bind-interfaces --port=$port --address=/test/127.0.0.2 \
    --pid-file=$C_RUN/dnsmasq.pid --log-facility=$C_RUN/dnsmasq.log --user=root &
srv=\$!
wait_listen $port
$q
stop \$srv
EOF
C_EXPECT=127.0.0.2
# dig's OpenSSL seed (48 bytes of syscall(SYS_getrandom) in libisc's constructor, before the
# preload's) replays (the early_random event), but its query id also depends on addresses:
# OpenSSL 3's DRBG nonces hold a heap pointer and the thread's id (recorder/README.md, "Calls
# past the usual interposers").  Recorded with randomisation off (encore record
# --same-layout, schemas/trace-format.md "Address layout") they are the recorded ones in
# replay; without, ASLR moves them, the replayed query differs and dnsmasq waits for the
# recorded datagram (0 of 8 recordings replayed, 21 of 22 with the option).  dig's threads
# (libisc's netmgr over libuv: the main thread and two loop threads) also meet through atomics
# between their events: a reference count whose last holder closes the UDP socket, libuv's
# pending flag that decides whether uv_async_send writes the loop's eventfd.  Replay runs
# each thread's code between its events where the trace puts it (replayer/README.md,
# "Threads": free code); before, 14 of 20 recordings replayed ("expected close (syscall), but
# the process called clock_gettime"; "expected sync (pthread_mutex_lock), but the process
# called write of an eventfd"), 20 of 20 after.  Left, now and then: dnsmasq waits for a
# query with another id (the addresses again, as a replayed thread took its memory)
if [ "$client" = dig ]; then
    if "$ENCORE" record --help 2>/dev/null | grep -q -- --same-layout; then
        C_RECORD_OPTS=--same-layout
    fi
    C_HINT='addresses: dig (BIND 9) takes its query id from OpenSSL, whose DRBG nonces hold addresses: recorded without --same-layout (ASLR on), the replayed query differs, dnsmasq waits for the recorded one'
fi

corpus_run
