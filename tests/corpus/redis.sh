#!/bin/bash
# redis.sh: redis-server and redis-cli (SET, GET, INCR, RPUSH/LRANGE), recorded together.
#   redis.sh term       the server stopped by SIGTERM, as a shell script would
#   redis.sh shutdown   the server stopped by its client (SHUTDOWN NOSAVE): no signal
#   redis.sh bench      redis-benchmark (-n 2000 -c 4: four connections at once; SET, GET,
#                       INCR, LPUSH), the totals read back with redis-cli, then SHUTDOWN
#                       NOSAVE (no signal: what is left is the server's threads)
set -u
. "$(dirname "$0")/lib.sh"
corpus_need redis-server redis-cli
how=${1:-term}
case $how in term|shutdown) ;; bench) corpus_need redis-benchmark ;;
    *) echo "usage: redis.sh term|shutdown|bench" >&2; exit 2 ;; esac
name=redis-$how; [ "$how" != bench ] || name=redis-benchmark
corpus_init "$name" "$(redis-server --version | sed -n 's/.* v=\([^ ]*\).*/\1/p')"
port=$(corpus_port)
if [ "$how" = bench ]; then
    # --csv: one line per test, its figures computed from the clock reads replay gives back
    clients="$(command -v redis-benchmark) -h 127.0.0.1 -p $port -n 2000 -c 4 -t set,get,incr,lpush --csv
\$cli -p $port GET counter:__rand_int__
\$cli -p $port LLEN mylist
\$cli -p $port DBSIZE
\$cli -p $port SHUTDOWN NOSAVE; wait \$srv; echo server exit \$?"
elif [ "$how" = term ]; then
    clients='stop $srv'
else
    clients="\$cli -p $port SHUTDOWN NOSAVE; wait \$srv; echo server exit \$?"
fi
if [ "$how" != bench ]; then
    clients="\$cli -p $port SET greeting hello
\$cli -p $port GET greeting
\$cli -p $port INCR counter
\$cli -p $port INCR counter
\$cli -p $port RPUSH list a b c
\$cli -p $port LRANGE list 0 -1
$clients"
fi
corpus_session <<EOF
$(command -v redis-server) --bind 127.0.0.1 --port $port --save '' --appendonly no --dir $C_RUN --daemonize no --logfile $C_RUN/redis.log &
srv=\$!
wait_listen $port
cli=$(command -v redis-cli)
$clients
EOF
C_EXPECT=hello; [ "$how" != bench ] || C_EXPECT='^2000$'
corpus_run
