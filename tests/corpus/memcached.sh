#!/bin/bash
# memcached.sh: memcached with N worker threads (-t N, default 4) under a get/set load:
# four Python clients at once, each on its own connection setting, getting and counting
# (incr of one shared counter) over its text protocol, then one more reading the totals.
#   memcached.sh [N]
set -u
. "$(dirname "$0")/lib.sh"
nt=${1:-4}
case $nt in [1-9]) ;; *) echo "usage: memcached.sh [THREADS]" >&2; exit 2 ;; esac
corpus_need memcached python3
name=memcached; [ "$nt" = 1 ] || name=memcached-t$nt
corpus_init $name "$(memcached -V | sed 's/memcached //')"
port=$(corpus_port)
py=/usr/bin/python3; [ -x $py ] || py=$(python3 -c 'import sys; print(sys.executable)')
cat > "$C_RUN/mc.py" <<'EOF'
import socket, sys, zlib
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
f = s.makefile("rwb")
def cmd(line, data=None):
    f.write(line.encode() + b"\r\n")
    if data is not None: f.write(data + b"\r\n")
    f.flush()
    out = []
    while True:
        l = f.readline()
        out.append(l.decode().strip())
        if l.strip() in (b"END", b"STORED", b"NOT_FOUND") or line.startswith("incr"): break
    return out
k = sys.argv[2]
if k == "init":
    print("init", cmd("set counter 0 0 1", b"0")[0])
    sys.exit(0)
if k == "totals":
    print("counter", cmd("get counter")[1])
    print("stored", cmd("get k1.0 k2.49 k3.99 k4.50")[1::2])
    sys.exit(0)
stored = hits = 0; crc = 0
for i in range(100):
    v = b"value %d of client %s" % (i, k.encode())
    stored += cmd("set k%s.%d 0 0 %d" % (k, i, len(v)), v) == ["STORED"]
    r = cmd("get k%s.%d" % (k, i))
    hits += r[-1] == "END" and len(r) == 3 and r[1] == v.decode()
    crc = zlib.crc32("".join(r).encode(), crc)
    cmd("incr counter 1")
print("client %s: %d stored, %d read back, crc %08x" % (k, stored, hits, crc))
EOF
corpus_session <<EOF
$(command -v memcached) -u nobody -l 127.0.0.1 -p $port -U 0 -t $nt &
srv=\$!
wait_listen $port
$py $C_RUN/mc.py $port init
c=
for k in 1 2 3 4; do $py $C_RUN/mc.py $port \$k > $C_RUN/out.\$k & c="\$c \$!"; done
wait_all \$c
cat $C_RUN/out.1 $C_RUN/out.2 $C_RUN/out.3 $C_RUN/out.4
$py $C_RUN/mc.py $port totals
stop \$srv
EOF
C_EXPECT='^counter 400'
corpus_run
