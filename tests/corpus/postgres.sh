#!/bin/bash
# postgres.sh: PostgreSQL 15 (postgres -D in a temporary directory, as the unprivileged user
# nobody: it refuses root) and psql creating, filling and querying a table over TCP, then
# the postmaster stopped with SIGINT (fast shutdown: it signals its children and waits for
# them, the checkpointer writing the shutdown checkpoint).  Its processes also share memory
# (shared buffers, latches, the proc array), which no recorded call orders.
set -u
. "$(dirname "$0")/lib.sh"
pgbin=""
for d in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
    [ -x "$d/postgres" ] && { pgbin=$d; break; }
done
[ -n "$pgbin" ] || { C_PROG=postgres; corpus_skip "PostgreSQL (postgres, initdb) is not installed"; }
corpus_need psql runuser
corpus_init postgres "$("$pgbin/postgres" --version | sed 's/.*) //')"
C_AS=nobody
port=$(corpus_port)
chown nobody "$C_TMP" "$C_RUN"
# nobody must reach encore and the recorder library too
runuser -u nobody -- test -x "$ENCORE" || corpus_skip "the user nobody cannot run $ENCORE (its directories are closed to others)"
runuser -u nobody -- "$pgbin/initdb" -A trust -U postgres -D "$C_RUN/data" > "$C_TMP/initdb.log" 2>&1 ||
    corpus_skip "initdb failed: $(tail -1 "$C_TMP/initdb.log")"
corpus_session <<EOF
$pgbin/postgres -D $C_RUN/data -k $C_RUN -c listen_addresses=127.0.0.1 -p $port \
    -c logging_collector=off -c shared_buffers=16MB > $C_RUN/postgres.log 2>&1 &
srv=\$!
wait_listen $port
psql -X -q -h 127.0.0.1 -p $port -U postgres -d postgres -c 'CREATE TABLE t (k int, v text)'
psql -X -q -h 127.0.0.1 -p $port -U postgres -d postgres -c "INSERT INTO t SELECT g, 'row ' || g FROM generate_series(1, 100) g"
psql -X -A -t -h 127.0.0.1 -p $port -U postgres -d postgres -c 'SELECT count(*), sum(k), max(v) FROM t'
stop \$srv INT
EOF
C_EXPECT='100|5050|row 99'
# replayed without isolation: isolated as nobody (a user namespace), the shell's first
# redirection into $C_RUN fails with EOVERFLOW and nothing else is measured; $C_RUN is put
# back before every replay anyway (lib.sh)
if "$ENCORE" replay --help 2>&1 | grep -q -- --no-isolate; then C_REPLAY_OPTS=--no-isolate; fi
# seen in the traces: the postmaster forks and its children wake by signals (SIGCHLD, SIGUSR1
# with flags in shared memory), e.g. the checkpointer's epoll_wait ends in EINTR.  What
# diverged, read from kept sessions (replayer/README.md says what replay does of each): the
# auxiliary processes take the first free PGPROC under a spinlock, so one may take another
# than recorded and find its semaphore drained (it waited for ever); the spinlock's backoff
# sleeps (pg_usleep: select on no descriptor) as often as the others held it; and the
# background writer reads whether recovery is over (a flag in shared memory the startup
# process sets) after its 200 ms sleep, or at once when it started late.  The last, when the
# background writer runs later in replay than it did recorded, is still the divergence seen
# ("expected kill, but the process called clock_gettime": its shutdown handler found its
# latch not waited on); a divergence no signal explains is put down to the memory they share.
# Over 20 recordings (13 or 14 replayed): the background writer's first loop read the
# recovery state before the startup process wrote it ("expected clock (clock_gettime), but
# the process called epoll_wait": the recorded one saw recovery done and took the time for its
# standby snapshot); it found its latch set where the recorded one slept its 200 ms out
# ("expected ready (epoll_wait), but the process called clock_gettime"); the checkpointer's
# semaphore reset.  Holding each wall-clock read until the processes that share memory reach
# their first later read (the order the recorded values give) made the background writer
# wait for the end of recovery, but it then found its latch set more often (8 of 20): not kept
C_SHM='shared buffers, latches, the recovery state and the flags its SIGUSR1 points at'
corpus_run
