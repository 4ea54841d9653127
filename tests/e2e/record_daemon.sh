#!/bin/sh
# record_daemon.sh: records e2e_daemon; `encore record` returns when the parent leaves, and
# the command substitution waits for the daemon (it holds stdout until it is done).
# Usage: record_daemon.sh ENCORE CHECK_TRACE E2E_DAEMON
set -eu
encore=$1 check=$2 prog=$3
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_daemon.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/rep"
out=$("$encore" record -q --hash-every 1 -o "$tmp/s" --name daemon -- "$prog" "$tmp/rep")
[ "$out" = "daemon done" ] || { echo "FAIL: output '$out'"; exit 1; }
"$check" --killed daemon "$tmp/s" "$tmp/rep"
