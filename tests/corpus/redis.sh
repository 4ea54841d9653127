#!/bin/bash
# redis.sh: redis-server and redis-cli (SET, GET, INCR, RPUSH/LRANGE), recorded together.
#   redis.sh term       the server stopped by SIGTERM, as a shell script would
#   redis.sh shutdown   the server stopped by its client (SHUTDOWN NOSAVE): no signal
set -u
. "$(dirname "$0")/lib.sh"
corpus_need redis-server redis-cli
how=${1:-term}
corpus_init "redis-$how" "$(redis-server --version | sed -n 's/.* v=\([^ ]*\).*/\1/p')"
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
$( [ "$how" = term ] && echo 'stop $srv' || echo "\$cli -p $port SHUTDOWN NOSAVE; wait \$srv; echo server exit \$?")
EOF
C_EXPECT=hello
corpus_run
