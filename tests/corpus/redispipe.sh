#!/bin/bash
# redispipe.sh: redis-server fed by `redis-cli --pipe` (mass insertion: 2000 SET and RPUSH
# commands in the Redis protocol, written while the replies are read), the data read back
# with redis-cli, then SHUTDOWN NOSAVE.
set -u
. "$(dirname "$0")/lib.sh"
corpus_need redis-server redis-cli
corpus_init redis-pipe "$(redis-server --version | sed -n 's/.* v=\([^ ]*\).*/\1/p')"
port=$(corpus_port)
for i in $(seq 1 1000); do
    printf 'SET key:%d value-%d\r\nRPUSH list item-%d\r\n' "$i" "$i" "$i"
done > "$C_RUN/cmds.txt"
corpus_session <<EOF
$(command -v redis-server) --bind 127.0.0.1 --port $port --save '' --appendonly no --dir $C_RUN --daemonize no --logfile $C_RUN/redis.log &
srv=\$!
wait_listen $port
cli=$(command -v redis-cli)
\$cli -p $port --pipe < $C_RUN/cmds.txt
\$cli -p $port DBSIZE
\$cli -p $port GET key:777
\$cli -p $port LLEN list
\$cli -p $port LRANGE list 500 502
\$cli -p $port SHUTDOWN NOSAVE; wait \$srv; echo server exit \$?
EOF
C_EXPECT='^value-777$'
corpus_run
