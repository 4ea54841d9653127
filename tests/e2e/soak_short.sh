#!/bin/sh
# soak_short.sh: the short version of the soak suite (bench/soak.sh, see bench/README.md).
# Each real server installed here (redis-server, nginx, lighttpd, memcached, PostgreSQL) is
# recorded under a bounded number of requests from its load tool (redis-benchmark, ab,
# memaslap, pgbench; the clients are not recorded).  Fails when a recorded server crashes or
# the load tool sees an error, never on timing; a server not installed is skipped (named in
# the log), and the test is skipped (77) when none is.
# Usage: soak_short.sh ENCORE SOAK_SH
set -eu
encore=$1
soak=$2
command -v python3 >/dev/null || { echo "SKIP: python3 missing (picks free ports)"; exit 77; }
exec bash "$soak" --check --encore "$encore"
