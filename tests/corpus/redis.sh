#!/bin/bash
# redis.sh: redis-server and redis-cli (SET, GET, INCR, LPUSH/LRANGE), recorded together.
set -u
. "$(dirname "$0")/lib.sh"
corpus_need redis-server redis-cli
corpus_init redis "$(redis-server --version | sed -n 's/.* v=\([^ ]*\).*/\1/p')"
port=$(corpus_port)
corpus_session <<EOF
$(command -v redis-server) --bind 127.0.0.1 --port $port --save '' --appendonly no --dir $C_RUN --daemonize no --logfile $C_RUN/redis.log &
srv=\$!
wait_listen $port
cli=$(command -v redis-cli)
\$cli -p $port SET greeting hello
\$cli -p $port GET greeting
\$cli -p $port INCR counter
\$cli -p $port INCR counter
\$cli -p $port RPUSH list a b c
\$cli -p $port LRANGE list 0 -1
stop \$srv
EOF
corpus_run
