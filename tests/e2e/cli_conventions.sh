#!/bin/sh
# cli_conventions.sh: the command-line conventions every subcommand (but replay, tested with
# the replayer) keeps, on a real recording of the pipeline example:
#   options  options are taken after the positional arguments as well as before (the same
#            output either way), and `--` ends the options (a directory called -x is a
#            session after it, an unknown option before it: exit 2);
#   record   without `--` the first non-option starts the command and the options after it
#            are the command's; after `--` everything is the command's;
#   version  `encore --version` and `encore version` print "encore VERSION"; every --help
#            ends naming its man page;
#   damaged  analyze, sql, inf, show, export, stable, cut and db on a session with a corrupted
#            chunk still answer, name the damaged file on stderr and exit 1, as dump and
#            check do;
#   dup      check refuses a directory where two files claim the same process image (exit
#            1, naming both), as the commands that load sessions do;
#   man      every option a command's --help lists is in its man page source
#            (docs/man/encore-COMMAND.1.scd), and every command has one.
# Usage: cli_conventions.sh ENCORE PIPELINE MODE [DOCS_MAN_DIR]
set -eu
abs() { echo "$(cd "$(dirname "$1")" && pwd -P)/$(basename "$1")"; }
encore=$(abs "$1") prog=$(abs "$2") mode=$3
unset POSIXLY_CORRECT
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/cli_conv.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
s=$tmp/s
if [ "$mode" = man ]; then
    man=$4
    for c in "" $("$encore" --help | sed -n '/^COMMANDS/,/^$/s/^    \([a-z]*\) .*/\1/p'); do
        page=$man/encore${c:+-$c}.1.scd
        [ -f "$page" ] || fail "no man page source $page"
        # the long options of --help, as the page writes them (scdoc escapes _ and bolds)
        for o in $("$encore" $c --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
            grep -q -- "$o" "$page" || fail "$page does not mention $o (encore $c --help does)"
        done
    done
    echo "every command's options are in its man page"
    exit 0
fi
# (the example's exit status says whether its bug showed: either is fine here)
"$encore" record -q -o "$s" -- "$prog" < /dev/null > /dev/null || true
"$encore" check "$s" > /dev/null || fail "the recording is not whole"
P='pipeline: events >= 2'

case $mode in
options)
    i=0
    while IFS='|' read -r before after; do
        i=$((i + 1))
        eval "set -- $before"
        "$encore" "$@" > "$tmp/b$i" 2> "$tmp/e$i" || fail "encore $before: $(cat "$tmp/e$i")"
        eval "set -- $after"
        "$encore" "$@" > "$tmp/a$i" 2> "$tmp/e$i" || fail "encore $after: $(cat "$tmp/e$i")"
        cmp -s "$tmp/b$i" "$tmp/a$i" || fail "encore $after printed something else than encore $before"
        [ -s "$tmp/a$i" ] || fail "encore $after printed nothing"
    done <<EOF2
dump --json --limit 3 "$s"|dump "$s" --json --limit 3
analyze --json "$s"|analyze "$s" --json
inf --json "$s" "$P"|inf "$s" "$P" --json
cut --json --after pipeline:2 "$s"|cut "$s" --after pipeline:2 --json
sql --csv "$s" 'SELECT count(*) FROM event'|sql "$s" 'SELECT count(*) FROM event' --csv
stable --json --sets "$s"|stable "$s" --sets --json
show --svg - "$s"|show "$s" --svg -
export --format chrome -o - "$s"|export "$s" --format chrome -o -
check "$s"|check -- "$s"
inf --json -- "$s" "$P"|inf "$s" --json -- "$P"
EOF2
    "$encore" db -q "$s" -o "$tmp/x.db" || fail "db with -o after DIR"
    [ -s "$tmp/x.db" ] || fail "db wrote nothing"
    # a directory named like an option: an option before --, the session after it
    cp -r "$s" "$tmp/-x"
    cd "$tmp"
    for c in dump analyze check; do
        set +e; "$encore" $c -x > /dev/null 2> "$tmp/e"; rc=$?; set -e
        [ "$rc" = 2 ] || fail "encore $c -x: exit $rc, expected 2 (unknown option)"
        # getopt's message names encore and the command, then where the options are
        grep -q "^encore $c: invalid option -- 'x'" "$tmp/e" &&
            grep -q "^Try 'encore $c --help'" "$tmp/e" ||
            fail "encore $c -x said: $(cat "$tmp/e")"
        "$encore" $c -- -x > "$tmp/o" 2> "$tmp/e" || fail "encore $c -- -x: $(cat "$tmp/e")"
        [ -s "$tmp/o" ] || fail "encore $c -- -x printed nothing"
    done
    "$encore" inf --json -- -x "$P" | grep -q '"cuts":\[{' || fail "encore inf -- -x P"
    # numbers: no sign, no suffix, no NaN (strtoull took -1 as 2^64-1)
    while IFS='|' read -r args; do
        eval "set -- $args"
        set +e; "$encore" "$@" > /dev/null 2> "$tmp/e"; rc=$?; set -e
        [ "$rc" = 2 ] || fail "encore $args: exit $rc, expected 2 (a bad number): $(cat "$tmp/e")"
    done <<EOF2
dump --limit -1 "$s"
analyze --races -1 "$s"
analyze --races 5x "$s"
cut --after pipeline:-3 "$s"
record --max-bytes -5 -- true
record --hash-every -1 -- true
replay --stall-timeout nan "$s"
replay --stall-timeout 5x "$s"
debug --stall-timeout -1 "$s"
EOF2
    echo "options after positional arguments and -- work for $i command lines"
    ;;
record)
    # the options after the command are the command's, with and without --
    "$encore" record -q -o "$tmp/r1" sh -c 'printf "%s\n" "$@" > "$0"' "$tmp/args1" --json -o x < /dev/null
    printf -- '--json\n-o\nx\n' | cmp -s - "$tmp/args1" || fail "record without --: $(cat "$tmp/args1")"
    [ -f "$tmp/r1/sh.trace" ] || fail "record without --: no sh.trace in -o's directory"
    "$encore" record -q -o "$tmp/r2" -- sh -c 'printf "%s\n" "$@" > "$0"' "$tmp/args2" -q -- y < /dev/null
    printf -- '-q\n--\ny\n' | cmp -s - "$tmp/args2" || fail "record with --: $(cat "$tmp/args2")"
    [ -f "$tmp/r2/sh.trace" ] || fail "record with --: no sh.trace in -o's directory"
    # options before the command are encore's (-q: no summary on stderr)
    "$encore" record -o "$tmp/r3" --name named -- true < /dev/null 2> "$tmp/e"
    [ -f "$tmp/r3/named.trace" ] || fail "record --name before -- ignored"
    grep -q "recorded in" "$tmp/e" || fail "record without -q printed no summary"
    # a script without #! runs under /bin/sh, as a shell runs it
    printf 'echo "script $1"\n' > "$tmp/noshebang"
    chmod +x "$tmp/noshebang"
    "$encore" record -q -o "$tmp/r4" -- "$tmp/noshebang" one > "$tmp/o" 2> "$tmp/e" ||
        fail "record of a script without #!: $(cat "$tmp/e")"
    [ "$(cat "$tmp/o")" = "script one" ] || fail "the script without #! printed: $(cat "$tmp/o")"
    # the default directory: two recordings in one second get one each
    mkdir "$tmp/def"
    (cd "$tmp/def" && "$encore" record -q -- true && "$encore" record -q -- true) ||
        fail "two recordings into the default directory within a second"
    [ "$(ls "$tmp/def" | wc -l)" = 2 ] || fail "two recordings made: $(ls "$tmp/def")"
    # -o into a directory that holds a session joins it, and says so
    "$encore" record -o "$tmp/r3" --name other -- true < /dev/null 2> "$tmp/e"
    grep -q "holds a session already" "$tmp/e" || fail "joining with -o said nothing: $(cat "$tmp/e")"
    # a child that outlives CMD, still recorded: said (then ended by its pid)
    # (CMD ends once the child runs: its trace is open by then)
    # (the child waits for a sleep of its own, no exec: its trace stays open; both by pid)
    "$encore" record -o "$tmp/r5" -- sh -c \
        'sh -c "sleep 60 & echo \$\$ \$! > $0.tmp; mv $0.tmp $0; wait" > /dev/null 2>&1 &
         while [ ! -s "$0" ]; do :; done' "$tmp/bg" \
        < /dev/null 2> "$tmp/e" || fail "record with a background child: $(cat "$tmp/e")"
    kill $(cat "$tmp/bg") 2> /dev/null || true
    grep -q "still run.*recorded" "$tmp/e" || fail "a child left running was not said: $(cat "$tmp/e")"
    # a Go program (its runtime's build id note): warned, recorded all the same
    if [ -n "${FAKE_GO:-}" ]; then
        "$encore" record -q -o "$tmp/r6" -- "$FAKE_GO" > "$tmp/o" 2> "$tmp/e" ||
            fail "record of a Go program: $(cat "$tmp/e")"
        grep -q "is a Go program" "$tmp/e" || fail "no warning for a Go program: $(cat "$tmp/e")"
        "$encore" record -q -o "$tmp/r7" -- true 2> "$tmp/e"
        ! grep -q "Go program" "$tmp/e" || fail "true taken for a Go program"
    fi
    echo "record: options before the command are encore's, after it the command's"
    ;;
version)
    v=$("$encore" --version)
    echo "$v" | grep -Eq '^encore [0-9]+\.[0-9]+\.[0-9]+' || fail "encore --version: '$v'"
    [ "$("$encore" version)" = "$v" ] || fail "encore version differs from --version"
    for c in "" record replay dump check analyze inf cut sql db stable show export; do
        last=$("$encore" $c --help | tail -1)
        [ "$last" = "See encore${c:+-$c}(1)." ] || fail "encore $c --help ends with '$last'"
    done
    "$encore" help inf | tail -1 | grep -qx 'See encore-inf(1).' || fail "encore help inf"
    echo "$v; every --help names its man page"
    ;;
damaged)
    cp -r "$s" "$tmp/d"
    f=$tmp/d/pipeline.trace
    # flip a byte inside the first chunk (it starts at chunks_off, a u64 at header offset 32)
    python3 - "$f" <<'PY'
import struct, sys
with open(sys.argv[1], "r+b") as f:
    off = struct.unpack_from("<Q", f.read(64), 32)[0] + 100
    f.seek(off); b = f.read(1)
    assert len(b) == 1, "no chunk to damage"
    f.seek(off); f.write(bytes([b[0] ^ 0xff]))
PY
    d=$tmp/d
    while read -r c; do
        set +e
        eval "\"\$encore\" $c" > "$tmp/o" 2> "$tmp/e"
        rc=$?
        set -e
        [ "$rc" = 1 ] || fail "encore $c on a damaged session: exit $rc, expected 1"
        # (check's report is its output: the damage is there)
        case $c in check*) cat "$tmp/o" >> "$tmp/e" ;; esac
        grep -q "pipeline.trace.*offset" "$tmp/e" || fail "encore $c: no damage on stderr: $(cat "$tmp/e")"
        case $c in dump*|check*|db*|cut*) ;; *) [ -s "$tmp/o" ] || fail "encore $c printed no answer" ;; esac
    done <<EOF2
dump "$d"
check "$d"
analyze "$d"
analyze --json "$d"
sql -q "$d" 'SELECT count(*) FROM process'
inf "$d" "$P"
show --svg - "$d"
export --format chrome -o - "$d"
stable --sets "$d"
cut --after pipeline:1 "$d"
db -q "$d" -o "$tmp/d.db"
EOF2
    # the undamaged session: 0
    "$encore" analyze "$s" > /dev/null || fail "analyze on the whole session"
    "$encore" sql -q "$s" 'SELECT 1' > /dev/null || fail "sql on the whole session"
    echo "damaged sessions: exit 1 and the damage on stderr everywhere"
    ;;
dup)
    mkdir "$tmp/dup"
    cp "$s"/*.trace "$tmp/dup/"
    cp "$s/pipeline.1.trace" "$tmp/dup/another.trace"
    for c in check dump analyze; do
        set +e; "$encore" $c "$tmp/dup" > /dev/null 2> "$tmp/e"; rc=$?; set -e
        [ "$rc" = 1 ] || fail "encore $c on two files of one process: exit $rc, expected 1"
        grep -q "another.trace" "$tmp/e" && grep -q "pipeline.1.trace" "$tmp/e" ||
            fail "encore $c does not name both files: $(cat "$tmp/e")"
    done
    "$encore" check "$s" > /dev/null || fail "check on the whole session"
    echo "two files claiming one process are refused by check too"
    ;;
*) echo "unknown mode $mode"; exit 2 ;;
esac
