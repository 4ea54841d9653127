#!/bin/sh
# tstp_cont.sh: a shell stops its background job with SIGTSTP (default action: a stop),
# continues it and waits for it (replayer/lc_pids.c: no stop sent for real in replay, SIGCONT
# is).  The sleep is the job's work, not a synchronisation.
sleep 0.3 &
p=$!
kill -TSTP $p
kill -CONT $p
wait $p
echo "done $?"
