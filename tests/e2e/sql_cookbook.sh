#!/bin/sh
# sql_cookbook.sh: every cookbook query of schemas/sql.md, run with `encore sql --csv` against
# a token ring recorded for the test (tests/e2e/progs/sql_ring.c), compared with
# tests/e2e/sql_cookbook.expected.  Run-to-run noise is normalised: values of columns named
# pid or ending in _ns become '*'.  To regenerate the expected output after changing the
# cookbook: SQL_COOKBOOK_WRITE=1 sql_cookbook.sh ... (then review the diff).
# Usage: sql_cookbook.sh ENCORE SQL_RING SQL_MD EXPECTED
set -eu
encore=$1 ring=$2 md=$3 expected=$4
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/sql_cookbook.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# the ring exits 1 because ring.2 fails (its planted bug): that is expected
status=0
echo 2 | "$encore" record -q -o "$tmp/s" --name ring -- "$ring" >"$tmp/ring.out" || status=$?
[ "$status" = 1 ] || { echo "FAIL: the ring exited with $status, expected 1"; cat "$tmp/ring.out"; exit 1; }

# split the cookbook into one file per ```sql block
awk -v dir="$tmp" '
  /^```sql$/ { n++; f = sprintf("%s/q%02d.sql", dir, n); inq = 1; next }
  /^```$/    { inq = 0; next }
  inq        { print > f }' "$md"
nq=$(ls "$tmp"/q*.sql 2>/dev/null | wc -l)
[ "$nq" -ge 10 ] || { echo "FAIL: only $nq cookbook queries in $md (at least 10 expected)"; exit 1; }

: >"$tmp/actual"
for q in "$tmp"/q*.sql; do
    n=$(basename "$q" .sql)
    echo "== $n" >>"$tmp/actual"
    if ! "$encore" sql -q --csv "$tmp/s" "$(cat "$q")" >"$tmp/out" 2>"$tmp/err"; then
        echo "FAIL: cookbook query $n failed:"; cat "$q" "$tmp/err"; exit 1
    fi
    # normalise noise by column name (CSV header): pid, *_ns
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) noisy[i] = ($i == "pid" || $i ~ /_ns$/); print; next }
             { for (i = 1; i <= NF; i++) if (noisy[i] && $i != "") $i = "*"; print }' OFS=, \
        "$tmp/out" >>"$tmp/actual"
done

if [ "${SQL_COOKBOOK_WRITE:-}" = 1 ]; then
    cp "$tmp/actual" "$expected"
    echo "wrote $expected"
    exit 0
fi
if ! diff -u "$expected" "$tmp/actual"; then
    echo "FAIL: cookbook output differs from $expected"
    exit 1
fi
echo "all $nq cookbook queries give the expected output"
