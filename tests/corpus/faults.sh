#!/bin/bash
# faults.sh: real servers recorded under faults, with their clients in one session (lib.sh):
#   faults.sh nginx-kill    nginx, master and 2 workers: curl clients; a worker SIGKILLed
#                           by the recorded shell (the one that answered a request: its
#                           pid in a header); the master starts another; the clients go
#                           on; then SIGQUIT
#   faults.sh redis-kill9   redis-server under redis-benchmark; clients that fail: a
#                           Python client that sends half a command and exits, one that
#                           sends a whole one and resets the connection (SO_LINGER 0)
#                           before reading the reply, a redis-cli SIGKILLed while blocked in
#                           BLPOP; then the server itself SIGKILLed mid-load (its trace is
#                           not closed), the benchmark seeing the connections drop
#   faults.sh nginx-stop    nginx, master and 2 workers under ab (4 clients): a worker
#                           SIGSTOPped by the shell, a request served by the other, SIGCONT
#   faults.sh nginx-emfile  nginx (one process) started under `ulimit -n 16`, 20 ab clients
#                           at once: accept fails with EMFILE (nginx logs it and stops
#                           accepting for a while), every request is served in the end
#   faults.sh postgres-kill9  PostgreSQL: a backend (a client's, in pg_sleep) SIGKILLed by
#                           the shell; the postmaster's crash recovery ends and restarts
#                           every backend; psql retries until it answers, then SIGINT
set -u
. "$(dirname "$0")/lib.sh"
mode=${1:-}
# nginx_site MASTER WORKERS: a static site in $C_RUN (a 2000-line page, a small file) and
# nginx.conf serving it on $port: master_process MASTER, WORKERS workers, each reply naming
# the process that made it (X-Pid).
nginx_site() {
    mkdir -p "$C_RUN/www" "$C_RUN/tmp"
    seq 1 2000 | sed 's/$/ lines of a static page/' > "$C_RUN/www/index.html"
    echo small > "$C_RUN/www/small.txt"
    cat > "$C_RUN/nginx.conf" <<EOF
daemon off;
master_process $1;
worker_processes $2;
pid $C_RUN/nginx.pid;
error_log $C_RUN/error.log notice;
events { worker_connections 64; }
http {
    access_log $C_RUN/access.log;
    client_body_temp_path $C_RUN/tmp/body;
    proxy_temp_path $C_RUN/tmp/proxy;
    fastcgi_temp_path $C_RUN/tmp/fastcgi;
    uwsgi_temp_path $C_RUN/tmp/uwsgi;
    scgi_temp_path $C_RUN/tmp/scgi;
    server {
        listen 127.0.0.1:$port;
        root $C_RUN/www;
        add_header X-Pid \$pid;
    }
}
EOF
}
case $mode in
nginx-kill)
    corpus_need nginx curl
    corpus_init "fault-$mode" "nginx $(nginx -v 2>&1 | sed 's/.*nginx\///')"
    port=$(corpus_port)
    nginx_site on 2
    corpus_session <<EOF
$(command -v nginx) -p $C_RUN -e $C_RUN/error.log -c $C_RUN/nginx.conf &
srv=\$!
wait_listen $port
curl -sS http://127.0.0.1:$port/small.txt
# the worker that answered (nginx's \$pid in a header) is killed
w=\$(curl -sS -o /dev/null -w '%header{x-pid}' http://127.0.0.1:$port/small.txt)
kill -KILL \$w
curl -sS http://127.0.0.1:$port/index.html | cksum
curl -sS -o /dev/null -w '%{http_code}\\n' http://127.0.0.1:$port/missing
curl -sS http://127.0.0.1:$port/small.txt
stop \$srv QUIT
grep -o 'exited on signal 9' $C_RUN/error.log
EOF
    C_EXPECT='exited on signal 9'
    # halted at the new worker's first event: the cut holds the master's wait for the
    # killed worker, and so the shell's kill (analyzer/edges.c, link_kill_wait)
    corpus_run 'sh.1.3: events >= 1' ;;
redis-kill9)
    corpus_need redis-server redis-cli redis-benchmark python3
    corpus_init "fault-$mode" "redis $(redis-server --version | sed -n 's/.* v=\([^ ]*\).*/\1/p')"
    port=$(corpus_port)
    cat > "$C_RUN/bad.py" <<EOF
# a client that fails: "half" sends half a command and exits; "reset" sends a whole one and
# closes with SO_LINGER 0 (a TCP reset) before reading the reply
import socket, struct, sys
s = socket.create_connection(("127.0.0.1", $port))
if sys.argv[1] == "half":
    s.sendall(b"*3\r\n\$3\r\nSET\r\n\$4\r\nhalf")
    sys.exit(0)
s.sendall(b"*3\r\n\$3\r\nSET\r\n\$5\r\nreset\r\n\$1\r\n1\r\n")
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
s.close()
print("reset sent")
EOF
    corpus_session <<EOF
$(command -v redis-server) --bind 127.0.0.1 --port $port --save '' --appendonly no --dir $C_RUN --daemonize no --logfile $C_RUN/redis.log &
srv=\$!
wait_listen $port
cli=$(command -v redis-cli)
$(command -v redis-benchmark) -h 127.0.0.1 -p $port -n 100000 -c 4 -t set,get -q > /dev/null 2>&1 &
bench=\$!
python3 $C_RUN/bad.py half
python3 $C_RUN/bad.py reset
\$cli -p $port BLPOP nolist 0 > /dev/null &
blocked=\$!
\$cli -p $port SET greeting hello
\$cli -p $port GET greeting
kill -KILL \$blocked; wait \$blocked; echo "blocked client exit \$?"
\$cli -p $port INCR counter
kill -KILL \$srv; wait \$srv; echo "server exit \$?"
wait \$bench; echo "benchmark ended"
EOF
    C_EXPECT='server exit 137'
    corpus_run ;;
nginx-stop|nginx-emfile)
    corpus_need nginx curl ab
    corpus_init "fault-$mode" "nginx $(nginx -v 2>&1 | sed 's/.*nginx\///')"
    port=$(corpus_port)
    if [ "$mode" = nginx-stop ]; then nginx_site on 2; else nginx_site off 1; fi
    if [ "$mode" = nginx-stop ]; then
        # a worker stopped (SIGSTOP) while ab's clients run, continued (SIGCONT) after the
        # next request the other worker serves; ab's totals printed
        corpus_session <<EOF
$(command -v nginx) -p $C_RUN -e $C_RUN/error.log -c $C_RUN/nginx.conf &
srv=\$!
wait_listen $port
$(command -v ab) -q -n 400 -c 4 http://127.0.0.1:$port/small.txt > $C_RUN/ab.out 2>&1 &
load=\$!
w=\$(curl -sS -o /dev/null -w '%header{x-pid}' http://127.0.0.1:$port/small.txt)
kill -STOP \$w
curl -sS http://127.0.0.1:$port/index.html | cksum
kill -CONT \$w
wait \$load; echo "ab exit \$?"
grep -E '^(Complete|Failed) requests' $C_RUN/ab.out
curl -sS http://127.0.0.1:$port/small.txt
stop \$srv QUIT
EOF
        C_EXPECT='Complete requests: *400'
    else
        # 16 descriptors: nginx's own take about 8, so 20 clients at once meet EMFILE on
        # accept (nginx logs it and stops accepting for a while); every request is served
        corpus_session <<EOF
(ulimit -n 16; exec $(command -v nginx) -p $C_RUN -e $C_RUN/error.log -c $C_RUN/nginx.conf) &
srv=\$!
wait_listen $port
$(command -v ab) -q -n 200 -c 20 http://127.0.0.1:$port/small.txt > $C_RUN/ab.out 2>&1; echo "ab exit \$?"
grep -E '^(Complete|Failed) requests' $C_RUN/ab.out
curl -sS http://127.0.0.1:$port/small.txt
stop \$srv
grep -c 'Too many open files' $C_RUN/error.log
EOF
        C_EXPECT='Complete requests: *200'
        # a hard limit of 16 (the shell's ulimit -n sets both): the preloads keep one
        # descriptor each, at the same number (interpose/fdclass.c, ip_dup_high); the
        # replay's controller hands connections of later accepts to the GD rather than
        # keeping them, and reads the epoll registrations it cannot read from /proc from
        # the program's epoll_ctl calls (replayer/lc_nondet.c)
    fi
    corpus_run ;;
postgres-kill9)
    pgbin=""
    for d in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
        [ -x "$d/postgres" ] && { pgbin=$d; break; }
    done
    [ -n "$pgbin" ] || { C_PROG=fault-$mode; corpus_skip "PostgreSQL (postgres, initdb) is not installed"; }
    corpus_need psql runuser
    corpus_init "fault-$mode" "postgres $("$pgbin/postgres" --version | sed 's/.*) //')"
    C_AS=nobody
    port=$(corpus_port)
    chown nobody "$C_TMP" "$C_RUN"
    runuser -u nobody -- test -x "$ENCORE" || corpus_skip "the user nobody cannot run $ENCORE (its directories are closed to others)"
    runuser -u nobody -- "$pgbin/initdb" -A trust -U postgres -D "$C_RUN/data" > "$C_TMP/initdb.log" 2>&1 ||
        corpus_skip "initdb failed: $(tail -1 "$C_TMP/initdb.log")"
    # a backend SIGKILLed by the recorded shell (its pid from pg_stat_activity, as
    # PostgreSQL's getpid gave it): the postmaster ends every other backend and restarts
    # after crash recovery; psql retries until it answers again
    psql="psql -X -A -t -h 127.0.0.1 -p $port -U postgres -d postgres"
    corpus_session <<EOF
$pgbin/postgres -D $C_RUN/data -k $C_RUN -c listen_addresses=127.0.0.1 -p $port \
    -c logging_collector=off -c shared_buffers=16MB > $C_RUN/postgres.log 2>&1 &
srv=\$!
wait_listen $port
$psql -q -c 'CREATE TABLE t (k int, v text)'
$psql -q -c "INSERT INTO t SELECT g, 'row ' || g FROM generate_series(1, 100) g"
$psql -c 'SELECT pg_sleep(600)' > /dev/null 2>&1 &
sleeper=\$!
b=
while [ -z "\$b" ]; do
    b=\$($psql -c "SELECT pid FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%' AND pid <> pg_backend_pid()")
done
kill -KILL \$b
wait \$sleeper; echo "sleeping client exit \$?"
n=0
until $psql -c 'SELECT count(*), sum(k), max(v) FROM t' 2> /dev/null; do n=\$((n + 1)); done
grep -c 'terminated by signal 9' $C_RUN/postgres.log
stop \$srv INT
EOF
    C_EXPECT='100|5050|row 99'
    if "$ENCORE" replay --help 2>&1 | grep -q -- --no-isolate; then C_REPLAY_OPTS=--no-isolate; fi
    C_SHM='shared buffers, latches, the recovery state and the flags its SIGUSR1 points at'
    corpus_run ;;
*)
    echo "usage: faults.sh nginx-kill|redis-kill9|nginx-stop|nginx-emfile|postgres-kill9" >&2; exit 2 ;;
esac
