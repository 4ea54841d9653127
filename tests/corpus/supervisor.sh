#!/bin/bash
# supervisor.sh: a process supervisor restarting its child on SIGCHLD, as daemontools,
# runit or supervisord do: a Python parent whose SIGCHLD handler reaps the child and starts
# it again, twice, then gives up.  The child is a small TCP server that serves one client
# and crashes (exit status 3; the third one ends normally); the recorded shell sends a
# client to each of the three generations.  The supervisor's log is shown at the end.
set -u
. "$(dirname "$0")/lib.sh"
corpus_need python3
py=/usr/bin/python3; [ -x $py ] || py=$(python3 -c 'import sys; print(sys.executable)')
corpus_init supervisor "python $($py --version | sed 's/Python //')"
port=$(corpus_port)
cat > "$C_RUN/supervise.py" <<'EOF'
import os, signal, sys
port, child, log = sys.argv[1], sys.argv[2], open(sys.argv[3], "w", buffering=1)
gen = restarts = 0
done = False
def start():
    global gen
    gen += 1
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, child, port, str(gen)])
def on_sigchld(signum, frame):
    # reap every child that ended (SIGCHLDs merge), restart while restarts are left
    global restarts, done
    while True:
        try:
            pid, st = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        log.write("generation %d ended with status %d\n" % (gen, os.waitstatus_to_exitcode(st)))
        if restarts < 2:
            restarts += 1
            log.write("restarting it (%d of 2)\n" % restarts)
            start()
        else:
            log.write("gave up after %d restarts\n" % restarts)
            done = True
# the handler runs in the main loop; the wakeup descriptor ends its blocking read
r, w = os.pipe()
os.set_blocking(w, False)
signal.set_wakeup_fd(w)
signal.signal(signal.SIGCHLD, on_sigchld)
start()
while not done:
    os.read(r, 64)
EOF
cat > "$C_RUN/child.py" <<'EOF'
import os, socket, sys
port, gen = int(sys.argv[1]), int(sys.argv[2])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen(1)
c, _ = s.accept()
s.close()                 # before answering: once its client has the answer, nothing listens
line = c.makefile("rb").readline()
c.sendall(b"generation %d: %s" % (gen, line.upper()))
c.close()
os._exit(3 if gen < 3 else 0)
EOF
cat > "$C_RUN/client.py" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"request %s\n" % sys.argv[2].encode())
print(s.makefile("rb").readline().decode().strip())
EOF
corpus_session <<EOF
$py $C_RUN/supervise.py $port $C_RUN/child.py $C_RUN/supervisor.log &
sup=\$!
for k in 1 2 3; do
    wait_listen $port
    $py $C_RUN/client.py $port \$k
done
wait \$sup
echo "supervisor exit \$?"
cat $C_RUN/supervisor.log
EOF
C_EXPECT='gave up after 2 restarts'
# the third generation (sh.1.3: the supervisor is the shell's first child) has its request:
# the cut holds both restarts, each made by a handler run after a child's end
corpus_run 'sh.1.3: received >= 1'
