#!/bin/sh
# record_budget.sh: --max-bytes bounds the disk a trace uses: a process reading 3 MB of
# /dev/urandom (RANDOM events carry the bytes, which do not compress) recorded with a
# 300 kB budget leaves a trace that reads back whole from its oldest kept event, says how
# many were dropped, and occupies about the budget on disk.
# Usage: record_budget.sh ENCORE CHECK_TRACE
set -eu
encore=$1 check=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_budget.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$encore" record -q --max-bytes 300000 -o "$tmp/s" --name head -- \
    head -c 3000000 /dev/urandom > /dev/null
"$check" --dropped "$tmp/s/head.trace"
kb=$(du -k "$tmp/s/head.trace" | cut -f1)
echo "disk use: $kb kB"
[ "$kb" -le 1024 ] || { echo "FAIL: $kb kB on disk for a 300 kB budget"; exit 1; }
