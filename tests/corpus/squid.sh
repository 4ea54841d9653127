#!/bin/bash
# squid.sh: the Squid 5 caching proxy (-N: one process, no daemon; it drops to the user
# proxy and sets up its shared memory segments in /dev/shm) between curl and a Python
# http.server origin: each file fetched twice through it (a miss, then a hit from its
# memory cache), then SIGTERM (shutdown_lifetime 0) and the access log's result codes.
# Squid runs as proxy when it listens: the recorder can make no registry entry for its port
# (recorder/chan.c, reg_chan), so its connections are outside ones to both ends, their bytes
# logged as input, and no message reaches squid (the default halt is at another process).
set -u
. "$(dirname "$0")/lib.sh"
corpus_need squid python3 curl
py=/usr/bin/python3; [ -x $py ] || py=$(command -v python3)
corpus_init squid "$(squid -v | sed -n 's/^Squid Cache: Version //p')"
port=$(corpus_port)
oport=$(corpus_port)
# the segments a killed squid leaves (squid-cf__metadata.shm, ...): its own names, removed
# before and after every run
squid_shm() { rm -f /dev/shm/squid-cf__*; }
squid_shm
C_CLEANUP_HOOK=squid_shm
mkdir -p "$C_RUN/www" "$C_RUN/logs"
echo "hello through squid" > "$C_RUN/www/a.txt"
seq 1 5000 | sed 's/$/ lines of big/' > "$C_RUN/www/big.txt"
cat > "$C_RUN/squid.conf" <<EOF
http_port 127.0.0.1:$port
http_access allow all
cache_effective_user proxy
pinger_enable off
cache_mem 8 MB
access_log stdio:$C_RUN/logs/access.log
cache_log $C_RUN/logs/cache.log
cache_store_log none
pid_filename $C_RUN/squid.pid
coredump_dir $C_RUN
shutdown_lifetime 0 seconds
dns_nameservers 127.0.0.1
refresh_pattern . 60 100% 600 override-expire ignore-no-store
EOF
chown -R proxy "$C_RUN/logs"
chmod 777 "$C_RUN"
corpus_session <<EOF
cd $C_RUN/www
$py -m http.server --bind 127.0.0.1 $oport > /dev/null 2>&1 &
origin=\$!
wait_listen $oport
$(command -v squid) -N -f $C_RUN/squid.conf &
srv=\$!
wait_listen $port
for f in a.txt a.txt big.txt big.txt; do
    curl -sS -x http://127.0.0.1:$port http://127.0.0.1:$oport/\$f | cksum
done
curl -sS -o /dev/null -w '%{http_code}\n' -x http://127.0.0.1:$port http://127.0.0.1:$oport/missing
stop \$srv
stop \$origin
awk '{ print \$4, \$7 }' $C_RUN/logs/access.log
EOF
C_EXPECT='TCP_MEM_HIT/200'
corpus_run
