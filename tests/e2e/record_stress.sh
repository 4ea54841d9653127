#!/bin/sh
# record_stress.sh: runs e2e_stress bare, then recorded; the recorded run reads its
# children's traces back and checks them (signal handlers interrupting the recorder,
# four threads sharing the writer).
# Usage: record_stress.sh ENCORE E2E_STRESS N M
set -eu
encore=$1 prog=$2 n=$3 m=$4
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_stress.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$prog" "$n" "$m" "$tmp/bare"
"$encore" record -q -o "$tmp/s" --name stress -- "$prog" "$n" "$m" "$tmp/rec" "$tmp/s"
