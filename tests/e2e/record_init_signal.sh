#!/bin/sh
# record_init_signal.sh: the init of a PID namespace (a container's first process; vsftpd's
# sessions, cloned with CLONE_NEWPID) is sent SIGTERM at the default action, which the kernel
# ignores there: recorded, it survives as bare and its trace goes on to its exit, no death
# logged (recorder/proc.c, fatal_handler: the recorder's handler, which the kernel lets in,
# logged a death that did not happen and closed the trace).  Skipped (77) where
# `unshare --pid --fork` cannot run.
# Usage: record_init_signal.sh ENCORE PROG
set -eu
encore=$1 prog=$2
command -v unshare >/dev/null || { echo "SKIP: no unshare"; exit 77; }
unshare --pid --fork true 2>/dev/null || { echo "SKIP: unshare --pid not allowed here"; exit 77; }
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_init_signal.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$encore" record -q -o "$tmp/s" -- unshare --pid --fork "$prog" > "$tmp/out" 2> "$tmp/err"
grep -qx "pid 1 survived" "$tmp/out" || { echo "FAIL: the program printed:"; cat "$tmp/out" "$tmp/err"; exit 1; }
"$encore" dump "$tmp/s" > "$tmp/dump"
init=$(awk '/^process / && $4 == "1" { print $2 }' "$tmp/dump")
[ -n "$init" ] || { echo "FAIL: no process recorded as pid 1"; cat "$tmp/dump"; exit 1; }
awk -v p="$init" '/^process /{ on = ($2 == p) } on' "$tmp/dump" > "$tmp/init"
if grep -qE '^ +[0-9]+ +signal +signal = ' "$tmp/init" || ! grep -qE '^ +[0-9]+ +exit +exit = 0' "$tmp/init"; then
	echo "FAIL: the init's trace does not end in its exit:"; cat "$tmp/init"; exit 1
fi
echo "ok: the init survived the SIGTERM it was sent, recorded to its exit"
