#!/bin/bash
# memcached.sh: memcached and a Python client speaking its text protocol (set, get, incr).
set -u
. "$(dirname "$0")/lib.sh"
corpus_need memcached python3
corpus_init memcached "$(memcached -V | sed 's/memcached //')"
port=$(corpus_port)
py=/usr/bin/python3; [ -x $py ] || py=$(python3 -c 'import sys; print(sys.executable)')
cat > "$C_RUN/mc.py" <<'EOF'
import socket, sys
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
        if l.strip() in (b"END", b"STORED", b"NOT_FOUND") or l[:1].isdigit(): break
    print(line.split()[0], " | ".join(out))
cmd("set k%s 0 0 5" % sys.argv[2], b"hello")
cmd("get k%s" % sys.argv[2])
cmd("set n 0 0 1", b"7")
cmd("incr n 5")
EOF
corpus_session <<EOF
$(command -v memcached) -u nobody -l 127.0.0.1 -p $port -U 0 -t 1 &
srv=\$!
wait_listen $port
$py $C_RUN/mc.py $port 1
$py $C_RUN/mc.py $port 2
stop \$srv
EOF
C_EXPECT=STORED
corpus_run
