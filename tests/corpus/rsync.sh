#!/bin/bash
# rsync.sh: an rsync daemon (--no-detach, a module of a few files) and an rsync client
# pulling the module over rsync://, then a second client pulling only what changed.
set -u
. "$(dirname "$0")/lib.sh"
corpus_need rsync
corpus_init rsync "$(rsync --version | sed -n 's/^rsync  *version \([^ ]*\).*/\1/p')"
port=$(corpus_port)
mkdir -p "$C_RUN/src/sub" "$C_RUN/dst"
seq 1 5000 > "$C_RUN/src/numbers"
echo hello > "$C_RUN/src/sub/hello"
head -c 100000 /dev/zero | tr '\0' x > "$C_RUN/src/xs"
cat > "$C_RUN/rsyncd.conf" <<EOF
use chroot = no
pid file = $C_RUN/rsyncd.pid
log file = $C_RUN/rsyncd.log
[data]
    path = $C_RUN/src
    read only = yes
EOF
# as root the daemon switches to root for the module, as asked; not run as root it cannot
[ "$(id -u)" -ne 0 ] || printf '    uid = root\n    gid = root\n' >> "$C_RUN/rsyncd.conf"
corpus_session <<EOF
$(command -v rsync) --daemon --no-detach --config=$C_RUN/rsyncd.conf --port=$port --address=127.0.0.1 &
srv=\$!
wait_listen $port
rsync -r rsync://127.0.0.1:$port/data/ $C_RUN/dst/
cat $C_RUN/dst/numbers $C_RUN/dst/sub/hello $C_RUN/dst/xs | cksum
rsync -r --list-only rsync://127.0.0.1:$port/data/ | sed 's/.* //' | sort
stop \$srv
EOF
C_EXPECT=numbers
# the daemon's failure shows EINTR (SIGCHLD) then its SIGTERM; the client's receiver child
# also ends at a signal of its parent (rsync's SIGUSR2), which replay delivers elsewhere
C_HINT='asynchronous signals (probably: the SIGUSR2 with which rsync ends its receiver child)'

corpus_run
