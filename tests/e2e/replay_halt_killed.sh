#!/bin/sh
# replay_halt_killed.sh: a halt whose cut holds a process that a signal ended (its last
# recorded event its death): the halted replay's cut, as `encore replay --json` gives it, is
# `encore inf`'s, the death counted (replayer/gd.c, rep_proc_info).
# Usage: replay_halt_killed.sh ENCORE PROG   (PROG is tests/e2e/progs/halt_killed.c)
set -eu
encore=$1 prog=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_halt_killed.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$encore" record -q -o "$tmp/s" --name hk -- "$prog" > "$tmp/rec.out"
grep -qx 'first child: killed' "$tmp/rec.out" || { echo "FAIL: recording:"; cat "$tmp/rec.out"; exit 1; }
pred='hk.2: received >= 1'
"$encore" inf --json "$tmp/s" "$pred" > "$tmp/inf.json"
a=$(grep -o '"cuts":\[{[^}]*}' "$tmp/inf.json" | head -1)
case "$a" in *'"hk.1":'*) ;; *) echo "FAIL: inf's cut does not hold hk.1: $a"; exit 1 ;; esac
timeout 120 "$encore" replay --json --then kill --stall-timeout 10 --stop "$pred" "$tmp/s" \
    < /dev/null > "$tmp/halt.json" 2> "$tmp/halt.err" || true
b=$(grep -o '"cuts":\[{[^}]*}' "$tmp/halt.json" | head -1)
if [ "$a" != "$b" ] || ! grep -q '"status":"halted"' "$tmp/halt.json"; then
    echo "FAIL: inf $a, halted at $b"; cat "$tmp/halt.err"; exit 1
fi
echo "ok: halted at inf's cut $b"
