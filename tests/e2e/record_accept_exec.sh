#!/bin/sh
# record_accept_exec.sh: a server that accepts a loopback connection, forks and execs a
# program on it (git daemon's upload-pack, inetd) while the recorded client may not have
# registered its connection yet.  The accepted end is undecided until its first receive
# (recorder/chan.c, rec_chan_in_external) and stays undecided across the exec: the exec'd
# `cat` reads from a recorded peer, so the session holds no external input, and the replay
# prints what the recording did.  Taken for an outside peer, cat's reads were replayed from
# the trace and the client's bytes left unread, which can reset the connection.
# Usage: record_accept_exec.sh ENCORE
set -eu
encore=$1
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_accept_exec.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

py=/usr/bin/python3
[ -x "$py" ] || { echo "SKIP: no /usr/bin/python3"; exit 77; }
[ -x /bin/cat ] || { echo "SKIP: no /bin/cat"; exit 77; }
cat > "$tmp/acc.py" <<'EOF'
import socket, os, sys, hashlib
if sys.argv[1] == "srv":
    l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(4)
    w = int(sys.argv[2]); os.write(w, b"%d\n" % l.getsockname()[1]); os.close(w)
    for _ in range(3):
        c, _a = l.accept()
        pid = os.fork()
        if pid == 0:                       # the connection as cat's stdin and stdout
            os.dup2(c.fileno(), 0); os.dup2(c.fileno(), 1)
            os.execv("/bin/cat", ["cat"])
        c.close(); os.waitpid(pid, 0)
else:
    r, w = os.pipe(); os.set_inheritable(w, True)
    pid = os.fork()
    if pid == 0:
        os.close(r); os.execv(sys.executable, [sys.executable, sys.argv[0], "srv", str(w)])
    os.close(w); port = int(os.read(r, 32)); os.close(r)
    for i in range(3):
        s = socket.create_connection(("127.0.0.1", port))
        d = bytes(range(256)) * 400
        s.sendall(d); s.shutdown(socket.SHUT_WR)
        got = b""
        while True:
            b = s.recv(65536)
            if not b: break
            got += b
        print(i, len(got), hashlib.sha1(got).hexdigest()[:12], flush=True)
    os.waitpid(pid, 0)
EOF
"$encore" record -q -o "$tmp/s" -- "$py" "$tmp/acc.py" cli > "$tmp/rec.out"
[ "$(grep -c ' 102400 ' "$tmp/rec.out")" = 3 ] || { echo "FAIL: the recorded run went wrong:"; cat "$tmp/rec.out"; exit 1; }
"$encore" dump "$tmp/s" > "$tmp/dump"
n=$(grep -c '^ *[0-9]*  input ' "$tmp/dump" || true)
if [ "$n" != 0 ]; then
    echo "FAIL: $n receives from the recorded client logged as external input:"
    grep '^ *[0-9]*  input ' "$tmp/dump" | head -5
    exit 1
fi
"$encore" replay -q "$tmp/s" < /dev/null > "$tmp/rep.out"
cmp "$tmp/rec.out" "$tmp/rep.out" || { echo "FAIL: the replay printed something else"; exit 1; }
echo "ok: the exec'd program's reads are receives from the recorded client; replay agrees"
