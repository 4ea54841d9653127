#!/bin/bash
# beanstalkd.sh: the beanstalkd work queue, a Python producer putting jobs and a consumer
# reserving and deleting them.
set -u
. "$(dirname "$0")/lib.sh"
corpus_need beanstalkd python3
corpus_init beanstalkd "$(beanstalkd -v 2>&1 | sed 's/beanstalkd //')"
port=$(corpus_port)
py=/usr/bin/python3; [ -x $py ] || py=$(python3 -c 'import sys; print(sys.executable)')
cat > "$C_RUN/bs.py" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
f = s.makefile("rwb")
def cmd(line, body=None):
    f.write(line.encode() + b"\r\n")
    if body is not None: f.write(body + b"\r\n")
    f.flush()
    r = f.readline().decode().strip()
    if r.startswith("RESERVED") or r.startswith("OK"):
        r += " " + f.read(int(r.split()[-1]) + 2).decode().strip()
    print(r)
    return r
if sys.argv[2] == "put":
    for i in range(3): cmd("put 0 0 60 %d" % len(b"job %d" % i), b"job %d" % i)
else:
    for i in range(3):
        r = cmd("reserve-with-timeout 5")
        cmd("delete %s" % r.split()[1])
    cmd("stats-tube default")
EOF
corpus_session <<EOF
$(command -v beanstalkd) -l 127.0.0.1 -p $port &
srv=\$!
wait_listen $port
$py $C_RUN/bs.py $port put
$py $C_RUN/bs.py $port work | grep -v -e uptime -e '^OK'
stop \$srv
EOF
C_EXPECT=DELETED
corpus_run
