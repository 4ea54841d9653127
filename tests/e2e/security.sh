#!/bin/sh
# security.sh: sessions are other people's data (docs/security.md).
#   owner: a session another uid owns (chown 65534, so root only: skipped otherwise), a
#          world-writable one and a group-writable one are refused by replay, debug, sql, db
#          and as the source of pack --merge
#          with exit status 1 and a message naming --trust, and accepted with --trust (sql
#          then caches nothing in the directory).
#   links: symbolic links planted at every name encore creates in a session
#          (.encore-session, .encore-registry, .encore-replay, .encore-replay/ctl and
#          status, .encore.db) pointing at a file and a directory the test owns elsewhere:
#          encore refuses or works around (another user's .encore-replay is refused too, as
#          root), and the file's content and mode and the
#          directory's content stay as they were; everything encore created is 0600 or
#          0700, the registry 0711 (under umask 000, so the modes are encore's), the
#          replay's files checked while it is halted (its report read from a FIFO, no sleep).
# Usage: security.sh ENCORE PROG owner|links
set -eu
encore=$1 prog=$2 what=$3
umask 000
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/security.XXXXXX")
chmod 0700 "$tmp"
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$tmp/err" ] && cat "$tmp/err"; exit 1; }
mode() { stat -c %a "$1"; }

# expect_refused TEXT CMD...: CMD exits 1 with TEXT on stderr
expect_refused() {
    text=$1; shift
    rc=0; "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
    [ "$rc" -eq 1 ] || fail "'$*' exited $rc, expected 1"
    grep -qF -- "$text" "$tmp/err" || fail "'$*' did not say '$text'"
    echo "ok: refused: $(head -1 "$tmp/err")"
}
# expect_ok CMD...: CMD exits 0
expect_ok() {
    "$@" > "$tmp/out" 2> "$tmp/err" || fail "'$*' failed"
}

"$encore" record -q -o "$tmp/s" --name pp -- "$prog" 2 4 > /dev/null

if [ "$what" = owner ]; then
    for how in others group foreign; do
        rm -rf "$tmp/c" "$tmp/out.db"
        cp -a "$tmp/s" "$tmp/c"
        case $how in
        others) chmod 0777 "$tmp/c"; why="$tmp/c is writable by others (mode 0777)" ;;
        group) chmod 0770 "$tmp/c"; why="$tmp/c is writable by its group (mode 0770)" ;;
        foreign)
            if [ "$(id -u)" -ne 0 ]; then
                echo "skip: a foreign-owned session needs root to chown"
                [ -n "${checked:-}" ] || exit 77
                continue
            fi
            chown 65534 "$tmp/c"; why="$tmp/c is owned by uid 65534, not you" ;;
        esac
        expect_refused "$why; pass --trust to replay it anyway" "$encore" replay -q "$tmp/c"
        expect_refused "$why; pass --trust to replay it anyway" sh -c \
            'echo quit | "$1" debug --json "$2"' sh "$encore" "$tmp/c"
        expect_refused "$why; pass --trust to query it anyway" \
            "$encore" sql "$tmp/c" 'SELECT count(*) FROM process'
        expect_refused "$why; pass --trust to load it anyway" "$encore" db -q "$tmp/c" -o "$tmp/out.db"
        expect_refused "$why; pass --trust to pack it anyway" "$encore" pack -q --merge "$tmp/c" "$tmp/s"
        [ ! -e "$tmp/s/pack" ] || fail "a refused merge made $tmp/s/pack"
        if [ -e "$tmp/c/.encore.db" ] || [ -e "$tmp/out.db" ]; then
            fail "a refusal wrote a database"
        fi
        [ ! -e "$tmp/c/.encore-replay" ] || fail "a refused replay made its directory"

        expect_ok "$encore" replay -q --then kill --trust "$tmp/c"
        expect_ok sh -c 'echo quit | "$1" debug --json --trust "$2"' sh "$encore" "$tmp/c"
        grep -q '"ok":true' "$tmp/out" || fail "debug --trust: $(cat "$tmp/out")"
        expect_ok "$encore" sql --trust "$tmp/c" 'SELECT count(*) FROM process'
        grep -qx ' *3' "$tmp/out" || fail "sql --trust: expected 3 processes, got: $(cat "$tmp/out")"
        [ ! -e "$tmp/c/.encore.db" ] || fail "sql --trust cached a database in a directory not closed to others"
        expect_ok "$encore" db -q --trust "$tmp/c" -o "$tmp/out.db"
        [ "$(mode "$tmp/out.db")" = 600 ] || fail "db wrote $tmp/out.db with mode $(mode "$tmp/out.db")"
        echo "ok: $how: accepted with --trust"
        checked=1
    done
    # a session of one's own is accepted without --trust, and the cache is made there, 0600
    expect_ok "$encore" sql "$tmp/s" 'SELECT count(*) FROM process'
    [ "$(mode "$tmp/s/.encore.db")" = 600 ] || fail ".encore.db has mode $(mode "$tmp/s/.encore.db")"
    echo "ok: one's own session needs no --trust"
    exit 0
fi

[ "$what" = links ] || { echo "usage: security.sh ENCORE PROG owner|links"; exit 2; }

# what the links point at: a file and a directory of the test's, checked after each step
printf 'precious\n' > "$tmp/target"
chmod 0640 "$tmp/target"
mkdir "$tmp/elsewhere"
chmod 0755 "$tmp/elsewhere"
untouched() {
    [ "$(cat "$tmp/target")" = precious ] || fail "$1: the link's target file was written"
    [ "$(mode "$tmp/target")" = 640 ] || fail "$1: the link's target file changed mode"
    [ -z "$(ls -A "$tmp/elsewhere")" ] || fail "$1: files appeared in the link's target directory: $(ls -A "$tmp/elsewhere")"
    [ "$(mode "$tmp/elsewhere")" = 755 ] || fail "$1: the link's target directory changed mode"
}

# the session's own names, 0600 and 0700 (the registry 0711: searchable, not listable)
[ "$(mode "$tmp/s")" = 700 ] || fail "session directory mode $(mode "$tmp/s")"
for f in "$tmp/s/.encore-session" "$tmp/s"/*.trace "$tmp/s/.encore-registry"/*; do
    [ "$(mode "$f")" = 600 ] || fail "$f has mode $(mode "$f")"
done
[ "$(mode "$tmp/s/.encore-registry")" = 711 ] || fail ".encore-registry mode $(mode "$tmp/s/.encore-registry")"
echo "ok: record made 0700 and 0600"

# .encore-session: a link there is refused
mkdir "$tmp/r1"
chmod 0700 "$tmp/r1"
ln -s "$tmp/target" "$tmp/r1/.encore-session"
rc=0; "$encore" record -q -o "$tmp/r1" --name pp -- "$prog" 1 1 > /dev/null 2> "$tmp/err" || rc=$?
[ "$rc" -ne 0 ] || fail "record accepted a link at .encore-session"
untouched ".encore-session"
echo "ok: .encore-session link refused"

# .encore-registry: the link is removed (not its target), the directory made
mkdir "$tmp/r2"
chmod 0700 "$tmp/r2"
ln -s "$tmp/elsewhere" "$tmp/r2/.encore-registry"
"$encore" record -q -o "$tmp/r2" --name pp -- "$prog" 2 4 > /dev/null 2> "$tmp/err" ||
    fail "record with a link at .encore-registry failed"
untouched ".encore-registry"
if [ -L "$tmp/r2/.encore-registry" ] || [ ! -d "$tmp/r2/.encore-registry" ]; then
    fail ".encore-registry is not a directory after recording"
fi
[ "$(mode "$tmp/r2/.encore-registry")" = 711 ] || fail ".encore-registry mode $(mode "$tmp/r2/.encore-registry")"
set -- "$tmp/r2/.encore-registry"/pid.*
[ -f "$1" ] || fail "the registry was not used"
echo "ok: .encore-registry link worked around"

# .encore-replay as a link to a directory: refused, nothing made there
ln -s "$tmp/elsewhere" "$tmp/s/.encore-replay"
expect_refused ".encore-replay: is a symbolic link" "$encore" replay -q --then kill "$tmp/s"
untouched ".encore-replay"
rm "$tmp/s/.encore-replay"
# ... as a link to a file: refused too
ln -s "$tmp/target" "$tmp/s/.encore-replay"
expect_refused ".encore-replay: is a symbolic link" "$encore" replay -q --then kill "$tmp/s"
untouched ".encore-replay"
rm "$tmp/s/.encore-replay"

# ... as another user's directory (root only: chown): refused
if [ "$(id -u)" -eq 0 ]; then
    mkdir "$tmp/s/.encore-replay"
    chown 65534 "$tmp/s/.encore-replay"
    expect_refused ".encore-replay: is not your directory (owner uid 65534)" \
        "$encore" replay -q --then kill "$tmp/s"
    [ -z "$(ls -A "$tmp/s/.encore-replay")" ] || fail "files made in another user's .encore-replay"
    rmdir "$tmp/s/.encore-replay"
fi

# ctl and status as links in a directory of ours (left by a replay that died, 0755): the
# names are replaced, never what they point at; the directory becomes 0700
mkdir "$tmp/s/.encore-replay"
chmod 0755 "$tmp/s/.encore-replay"
ln -s "$tmp/target" "$tmp/s/.encore-replay/ctl"
ln -s "$tmp/target" "$tmp/s/.encore-replay/status"
mkfifo "$tmp/rout" "$tmp/rin"
"$encore" replay --json --then stop --stop 'pp: mark.got >= 3' "$tmp/s" \
    < "$tmp/rin" > "$tmp/rout" 2> "$tmp/err" &
pid=$!
exec 3> "$tmp/rin"           # encore waits for Enter on it
IFS= read -r line < "$tmp/rout" || true
echo "$line" | grep -q '"halted":true' || fail "no halt report: $line"
# halted: the replay's own files exist now
[ "$(mode "$tmp/s/.encore-replay")" = 700 ] || fail ".encore-replay mode $(mode "$tmp/s/.encore-replay")"
[ -S "$tmp/s/.encore-replay/ctl" ] || fail ".encore-replay/ctl is not a socket"
if [ -L "$tmp/s/.encore-replay/status" ] || [ ! -f "$tmp/s/.encore-replay/status" ]; then
    fail ".encore-replay/status is not a regular file"
fi
[ "$(mode "$tmp/s/.encore-replay/ctl")" = 600 ] || fail "ctl mode $(mode "$tmp/s/.encore-replay/ctl")"
[ "$(mode "$tmp/s/.encore-replay/status")" = 600 ] || fail "status mode $(mode "$tmp/s/.encore-replay/status")"
echo >&3                     # Enter: end them
exec 3>&-
rc=0; wait "$pid" || rc=$?
pid=""
[ "$rc" -eq 0 ] || fail "the halted replay exited $rc"
untouched ".encore-replay/ctl and status"
[ ! -e "$tmp/s/.encore-replay" ] || fail ".encore-replay left behind"
echo "ok: ctl and status links replaced, 0700 and 0600 while halted"

# .encore.db: the link is replaced by a 0600 cache, its target untouched; an old cache with
# wider permissions is rebuilt 0600
ln -s "$tmp/target" "$tmp/s/.encore.db"
expect_ok "$encore" sql "$tmp/s" 'SELECT count(*) FROM process'
grep -qx ' *3' "$tmp/out" || fail "sql: expected 3 processes, got: $(cat "$tmp/out")"
untouched ".encore.db"
if [ -L "$tmp/s/.encore.db" ] || [ ! -f "$tmp/s/.encore.db" ]; then
    fail ".encore.db is not a regular file"
fi
[ "$(mode "$tmp/s/.encore.db")" = 600 ] || fail ".encore.db mode $(mode "$tmp/s/.encore.db")"
chmod 0644 "$tmp/s/.encore.db"
expect_ok "$encore" sql "$tmp/s" 'SELECT count(*) FROM process'
[ "$(mode "$tmp/s/.encore.db")" = 600 ] || fail "an 0644 cache was kept: mode $(mode "$tmp/s/.encore.db")"
echo "ok: .encore.db link replaced, cache 0600"

# encore db: the written file is 0600 too, and a link at its name is replaced
ln -s "$tmp/target" "$tmp/out.db"
expect_ok "$encore" db -q "$tmp/s" -o "$tmp/out.db"
untouched "db -o"
if [ -L "$tmp/out.db" ] || [ ! -f "$tmp/out.db" ]; then
    fail "out.db is not a regular file"
fi
[ "$(mode "$tmp/out.db")" = 600 ] || fail "out.db mode $(mode "$tmp/out.db")"
echo "ok: db writes 0600"
