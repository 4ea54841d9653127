#!/bin/sh
# sql_cli.sh: `encore sql` and `encore db` on a recorded token ring (tests/e2e/progs/
# sql_ring.c): the cache in the session directory (built once, reused while the traces are
# unchanged, rebuilt when one changes), read-only queries, output formats, errors with
# SQLite's message and a non-zero exit, the shell on stdin, standalone databases written
# whole (temporary file renamed), and the loadable extension in the sqlite3 shell.
# Usage: sql_cli.sh ENCORE SQL_RING ENCORE_SQL_EXT
set -eu
encore=$1 ring=$2 ext=$3
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/sql_cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
s=$tmp/s

echo 2 | "$encore" record -q -o "$s" --name ring -- "$ring" >/dev/null || true
[ -e "$s/ring.trace" ] || fail "no ring.trace recorded"

# 1. aligned columns (numbers right-aligned), and the cache appears
"$encore" sql -q "$s" "SELECT name, nevents FROM process ORDER BY name" >"$tmp/out"
cat >"$tmp/want" <<'EOF'
name    nevents
------  -------
ring         34
ring.1       20
ring.2       20
ring.3       20
EOF
diff -u "$tmp/want" "$tmp/out" || fail "aligned output"
[ -f "$s/.encore.db" ] || fail "no cached database in the session directory"
ino1=$(stat -c %i "$s/.encore.db")

# 2. the cache is reused while the traces are unchanged...
"$encore" sql -q "$s" "SELECT 1" >/dev/null
[ "$(stat -c %i "$s/.encore.db")" = "$ino1" ] || fail "cache rebuilt though no trace changed"
# ... and rebuilt (a new file renamed into place) when one changes
touch -d '2001-01-01' "$s/ring.2.trace"
"$encore" sql -q "$s" "SELECT 1" >/dev/null
[ "$(stat -c %i "$s/.encore.db")" != "$ino1" ] || fail "cache not rebuilt after a trace changed"
ls "$s" | grep -q 'tmp' && fail "a temporary file was left in the session: $(ls -a "$s")"

# 3. CSV and JSON
"$encore" sql -q --csv "$s" "SELECT name, exit_status FROM process_summary WHERE exit_status <> 0 ORDER BY name" >"$tmp/out"
printf 'name,exit_status\nring,1\nring.2,3\n' >"$tmp/want"
diff -u "$tmp/want" "$tmp/out" || fail "csv output"
"$encore" sql -q --json "$s" "SELECT name, parent_name, 1.5 AS x FROM process WHERE name IN ('ring', 'ring.1') ORDER BY name" >"$tmp/out"
printf '[{"name":"ring","parent_name":null,"x":1.5},\n{"name":"ring.1","parent_name":"ring","x":1.5}]\n' >"$tmp/want"
diff -u "$tmp/want" "$tmp/out" || fail "json output"
"$encore" sql -q --csv "$s" "SELECT 'a,b' AS t, 'say \"hi\"' AS u, x'00ff' AS b" >"$tmp/out"
printf 't,u,b\n"a,b","say ""hi""",00ff\n' >"$tmp/want"
diff -u "$tmp/want" "$tmp/out" || fail "csv quoting"

# 4. causality from the command line: the token marks are ordered, the reports concurrent
got=$("$encore" sql -q --csv "$s" "SELECT hb(a.event, b.event) AS fwd, hb(b.event, a.event) AS back FROM mark a, mark b WHERE a.key = 'token' AND a.value = 1 AND b.key = 'token' AND b.value = 7")
[ "$got" = "$(printf 'fwd,back\n1,0')" ] || fail "hb on marks: $got"

# 5. a bad query: SQLite's message, exit status 1
status=0
"$encore" sql -q "$s" "SELECT * FROM nope" >"$tmp/out" 2>"$tmp/err" || status=$?
[ "$status" = 1 ] || fail "bad query exited $status"
grep -q "no such table: nope" "$tmp/err" || fail "bad query message: $(cat "$tmp/err")"
status=0
"$encore" sql -q "$s" "SELECT hb(1, 100000)" >"$tmp/out" 2>"$tmp/err" || status=$?
[ "$status" = 1 ] && grep -q "no event with id 100000" "$tmp/err" || fail "hb on an unknown id: $(cat "$tmp/err")"

# 6. read-only: a query never changes the trace database
status=0
"$encore" sql -q "$s" "DELETE FROM event" >"$tmp/out" 2>"$tmp/err" || status=$?
[ "$status" = 1 ] && grep -qi "readonly" "$tmp/err" || fail "DELETE was not refused: $(cat "$tmp/err")"
[ "$("$encore" sql -q --csv "$s" "SELECT count(*) FROM event")" = "$(printf 'count(*)\n94')" ] ||
    fail "events changed"

# 7. the shell: statements from stdin, dot commands, an error does not stop it
printf '.mode csv\nSELECT count(*) AS n\n  FROM process;\nSELECT * FROM nope;\nSELECT 42 AS answer;\n.quit\n' |
    "$encore" sql -q "$s" >"$tmp/out" 2>"$tmp/err" || true
printf 'n\n4\nanswer\n42\n' >"$tmp/want"
diff -u "$tmp/want" "$tmp/out" || fail "shell output"
grep -q "no such table: nope" "$tmp/err" || fail "shell error message"

# 8. encore db: a standalone database, then queried by file
"$encore" db -q "$s" -o "$tmp/t.db"
[ "$("$encore" sql --csv "$tmp/t.db" "SELECT count(*) FROM causal_past(94)")" = "$(printf 'count(*)\n84')" ] ||
    fail "causal_past on the standalone database: $("$encore" sql --csv "$tmp/t.db" "SELECT count(*) FROM causal_past(94)")"
ls "$tmp" | grep -q 'tmp\.' && fail "encore db left a temporary file"
status=0
"$encore" db -q "$s" -o "$tmp/no/such/dir/t.db" 2>"$tmp/err" || status=$?
[ "$status" = 1 ] || fail "encore db into a missing directory exited $status"
[ ! -e "$tmp/no/such/dir/t.db" ] || fail "partial database left"
status=0
"$encore" db -q "$s" 2>"$tmp/err" || status=$?
[ "$status" = 2 ] || fail "encore db without -o exited $status"
"$encore" db --help | grep -q "SYNOPSIS" || fail "encore db --help"
"$encore" sql --help | grep -q "causal_past" || fail "encore sql --help"

# a file that is no database, a trace file, two output formats: refused, saying what
echo hello > "$tmp/notdb"
status=0
"$encore" sql "$tmp/notdb" 'SELECT 1' 2>"$tmp/err" || status=$?
[ "$status" = 1 ] && grep -q "notdb: cannot open as an SQLite database" "$tmp/err" ||
    fail "sql on a file that is no database exited $status: $(cat "$tmp/err")"
status=0
"$encore" sql "$(ls "$s"/*.trace | head -1)" 'SELECT 1' 2>"$tmp/err" || status=$?
[ "$status" = 2 ] && grep -q "is a trace file: give its session directory" "$tmp/err" ||
    fail "sql on a trace file exited $status: $(cat "$tmp/err")"
status=0
"$encore" sql --csv --json "$s" 'SELECT 1' 2>"$tmp/err" || status=$?
[ "$status" = 2 ] || fail "sql --csv --json exited $status"

# 9. the extension in any SQLite client
if command -v sqlite3 >/dev/null 2>&1; then
    got=$(sqlite3 -batch -cmd ".load $ext" "$tmp/t.db" "SELECT count(*) FROM message_race WHERE concurrent(send, rival) OR hb(send, rival) OR hb(rival, send); SELECT sum(hb(m.send, m.recv)) = count(*) FROM message m;")
    [ "$got" = "$(printf '7\n1')" ] || fail "sqlite3 with the extension: $got"
else
    echo "sqlite3 not installed: extension check skipped"
fi
echo "encore sql / encore db behave"
