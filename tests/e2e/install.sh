#!/bin/sh
# install.sh: `meson install` into a temporary DESTDIR, then the INSTALLED encore records and
# replays the pipeline example, with no ENCORE_*_LIB override: the libraries every recorded
# and replayed process loads (ld.so's LD_DEBUG=libs lines) must be the installed ones under
# libdir/encore, and with the installed recorder library removed `encore record` must fail
# naming it instead of using the build tree's.  Also: the build tree's encore still finds the
# build tree's libraries, and the installed files (man pages for every command, encore.pc,
# the schemas) are where README.md says.
# Usage: install.sh BUILD_DIR BINDIR_PATH PKGLIBDIR_PATH MANDIR_PATH DOCDIR_PATH PIPELINE
#   (the *_PATH arguments are the absolute install paths, before DESTDIR)
set -eu
build=$(cd "$1" && pwd -P) bin=$2 pkglib=$3 man=$4 doc=$5
prog=$(cd "$(dirname "$6")" && pwd -P)/$(basename "$6")
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
unset ENCORE_RECORD_LIB ENCORE_REPLAY_LIB

if ! meson install -C "$build" --no-rebuild --quiet --destdir "$tmp/root" > "$tmp/install.log" 2>&1; then
    cat "$tmp/install.log"
    echo "SKIP: meson install --destdir failed (above)"; exit 77
fi
root=$tmp/root
encore=$root$bin/encore
[ -x "$encore" ] || { echo "FAIL: no $encore"; exit 1; }
for f in libencore-record.so libencore-replay.so encore_sql.so; do
    [ -f "$root$pkglib/$f" ] || { echo "FAIL: $f not in $pkglib"; exit 1; }
done

# what every process loaded, from ld.so's own lines (not the programs' output)
loaded() { sed -n 's/^ *[0-9]*:[[:space:]]*calling init: \(.*libencore-.*\.so\)$/\1/p' "$1" | sort -u; }

cd "$tmp"
# (the example exits 1 when its bug showed: a whole recording either way)
rc=0
LD_DEBUG=libs "$encore" record -q -o "$tmp/s" -- "$prog" < /dev/null > rec.out 2> rec.err || rc=$?
[ "$rc" -le 1 ] && "$encore" check "$tmp/s" > /dev/null || {
    echo "FAIL: installed encore record (exit $rc)"; grep -v '^ *[0-9]*:' rec.err; exit 1; }
LD_DEBUG=libs "$encore" replay -q --then kill "$tmp/s" < /dev/null > rep.out 2> rep.err || {
    echo "FAIL: installed encore replay"; grep -v '^ *[0-9]*:' rep.err; exit 1; }
cmp -s rec.out rep.out || { echo "FAIL: the replay printed something else"; diff rec.out rep.out | head; exit 1; }
[ -s rec.out ] || { echo "FAIL: the example printed nothing"; exit 1; }
[ "$(loaded rec.err)" = "$root$pkglib/libencore-record.so" ] ||
    { echo "FAIL: recorded processes loaded: $(loaded rec.err)"; exit 1; }
[ "$(loaded rep.err)" = "$root$pkglib/libencore-replay.so" ] ||
    { echo "FAIL: replayed processes loaded: $(loaded rep.err)"; exit 1; }

# no fallback to another tree: without its own library the installed encore says so
rm "$root$pkglib/libencore-record.so"
if "$encore" record -q -o "$tmp/s2" -- "$prog" < /dev/null > /dev/null 2> rec2.err; then
    echo "FAIL: recorded without the installed library (from where?)"; exit 1
fi
grep -q "$root$pkglib/libencore-record.so" rec2.err ||
    { echo "FAIL: the error does not name the missing library:"; cat rec2.err; exit 1; }

# the build tree's encore still uses the build tree's libraries
LD_DEBUG=libs "$build/cli/encore" record -q -o "$tmp/s3" -- "$prog" < /dev/null > /dev/null 2> rec3.err ||
    true
[ "$(loaded rec3.err)" = "$(cd "$build/recorder" && pwd -P)/libencore-record.so" ] ||
    { echo "FAIL: the build tree's encore loaded: $(loaded rec3.err)"; exit 1; }

# a man page per command of `encore --help`, encore.pc, the schemas
for c in $("$encore" --help | sed -n '/^COMMANDS/,/^$/s/^    \([a-z]*\) .*/\1/p') ""; do
    page=encore${c:+-$c}.1
    if [ -n "$(command -v scdoc)" ] && [ ! -f "$root$man/man1/$page" ]; then
        echo "FAIL: no man page $page"; exit 1
    fi
done
pc=$(find "$root" -name encore.pc)
[ -n "$pc" ] || { echo "FAIL: no encore.pc"; exit 1; }
# a program using encore_mark compiles against the installed header through encore.pc
# (its prefix moved under DESTDIR)
if command -v pkg-config > /dev/null && command -v cc > /dev/null; then
    printf '#include <encore.h>\nint main(void) { encore_mark("k", 1); return 0; }\n' > mark.c
    export PKG_CONFIG_PATH="${pc%/*}"
    flags=$(pkg-config --define-variable=prefix="$root$(pkg-config --variable=prefix encore)" \
        --cflags encore)
    # shellcheck disable=SC2086
    cc $flags -o mark mark.c || { echo "FAIL: cannot build with $flags"; exit 1; }
    ./mark || { echo "FAIL: a program calling encore_mark without encore"; exit 1; }
fi
for f in trace-format.md predicates.md sql.md stability.md trace.sql; do
    [ -f "$root$doc/$f" ] || { echo "FAIL: $f not in $doc"; exit 1; }
done
echo "installed encore recorded and replayed with $root$pkglib"
