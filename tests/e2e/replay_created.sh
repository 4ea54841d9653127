#!/bin/sh
# replay_created.sh: a replay sees the file system as the recording's start did, not the
# files the recorded run itself created (replayer/README.md, "Isolation and packed files";
# the recorder's path records, recorder/README.md "Paths created").  create_once creates a
# file with O_CREAT|O_EXCL unless it is there, makes a directory unless it is there, and
# prints which branch it took:
#   recorded where nothing was, it created them; replayed afterwards (they are there now) it
#   takes the same branch, the replay says how many files it hid, and the real files are
#   untouched;
#   recorded again (they are there now), it finds them; replayed, it finds them too: nothing
#   the second recording found is hidden;
#   --recreate: a file the run removed and then created again was there at the start: the
#   replay finds it to remove;
#   --no-isolate hides nothing, and says so in one line;
#   a file that was there before, appended to and then read by the recording, is named;
#   a file there before that the recording renamed is renamed back for the replay.
# --as-user: the same as uid 65534 (a user namespace: overlayfs whites the files out there
# too), in a directory of its own under /tmp (one of root's it could not copy up).
# Usage: replay_created.sh ENCORE CREATE_ONCE [--as-user]
set -eu
# isolation itself is tested: the harness's fallback to an unisolated replay is not wanted
unset ENCORE_NO_ISOLATE
encore=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
prog=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
as=
if [ "${3:-}" = --as-user ]; then
    [ "$(id -u)" = 0 ] || { echo "SKIP: needs root to drop to uid 65534"; exit 77; }
    command -v setpriv > /dev/null || { echo "SKIP: no setpriv"; exit 77; }
    as="setpriv --reuid=65534 --regid=65534 --clear-groups"
    $as test -x "$encore" && $as test -x "$prog" ||
        { echo "SKIP: uid 65534 cannot run $encore or $prog"; exit 77; }
    tmp=$(mktemp -d /tmp/replay_created.XXXXXX)
else
    tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_created.XXXXXX")
fi
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/w"
[ -z "$as" ] || chown -R 65534:65534 "$tmp"

snapshot() { # names, types, sizes and hashes of everything under w
    (cd "$tmp/w" && find . -printf '%p %y %s\n' | sort && find . -type f -exec sha256sum {} + | sort)
}
replay_same() { # replay_same SESSION RECORDED-OUTPUT: replays, printing what was recorded
    if ! $as "$encore" replay "$1" > "$tmp/rep.out" 2> "$tmp/rep.err"; then
        if grep -q "replay is not isolated" "$tmp/rep.err"; then
            echo "SKIP: $(cat "$tmp/rep.err")"; exit 77
        fi
        echo "FAIL: replay of $1:"; cat "$tmp/rep.err"; exit 1
    fi
    cmp -s "$2" "$tmp/rep.out" ||
        { echo "FAIL: the replay of $1 printed something else:"; diff "$2" "$tmp/rep.out"; exit 1; }
}

# 1. nothing there: the run creates once, cache, out and log
$as "$encore" record -q -o "$tmp/s1" -- "$prog" "$tmp/w" > "$tmp/rec1.out"
grep -q "^once: created" "$tmp/rec1.out" && grep -q "^cache: made" "$tmp/rec1.out" ||
    { echo "FAIL: the first recording did not create:"; cat "$tmp/rec1.out"; exit 1; }
snapshot > "$tmp/before"
replay_same "$tmp/s1" "$tmp/rec1.out"
grep -q "^encore replay: 4 files the recording created hidden from the replay" "$tmp/rep.err" ||
    { echo "FAIL: the replay did not say it hid 4 files:"; cat "$tmp/rep.err"; exit 1; }
snapshot > "$tmp/after"
cmp -s "$tmp/before" "$tmp/after" ||
    { echo "FAIL: the replay changed the real files:"; diff "$tmp/before" "$tmp/after"; exit 1; }
echo "ok: recorded creating, replayed creating (4 files hidden), the real files untouched"

# 2. everything there: the run finds them, and so does its replay
$as "$encore" record -q -o "$tmp/s2" -- "$prog" "$tmp/w" > "$tmp/rec2.out"
grep -q "^once: there already" "$tmp/rec2.out" && grep -q "^cache: there already" "$tmp/rec2.out" ||
    { echo "FAIL: the second recording did not find the files:"; cat "$tmp/rec2.out"; exit 1; }
replay_same "$tmp/s2" "$tmp/rec2.out"
! grep -q "hidden" "$tmp/rep.err" || { echo "FAIL: the replay hid files:"; cat "$tmp/rep.err"; exit 1; }
echo "ok: recorded finding them, replayed finding them (nothing hidden)"

# 3. removed, then created again: it was there at the start, and stays visible
$as "$encore" record -q -o "$tmp/s3" -- "$prog" "$tmp/w" --recreate > "$tmp/rec3.out"
grep -q "^unlink once: removed" "$tmp/rec3.out" && grep -q "^once: created" "$tmp/rec3.out" ||
    { echo "FAIL: the third recording did not remove and create:"; cat "$tmp/rec3.out"; exit 1; }
replay_same "$tmp/s3" "$tmp/rec3.out"
echo "ok: a file removed then created again stays visible to the replay"

# 4. --no-isolate cannot hide: one line says so (the replay then takes the other branch)
$as "$encore" replay --no-isolate "$tmp/s1" > "$tmp/rep.out" 2> "$tmp/rep.err" || true
n=$(grep -c "warning: 4 files the recording created exist now and the replay sees them (--no-isolate cannot hide them)" "$tmp/rep.err" || true)
[ "$n" = 1 ] || { echo "FAIL: --no-isolate did not say it once:"; cat "$tmp/rep.err"; exit 1; }
echo "ok: --no-isolate says the 4 files are seen"

# 5. a file there before, appended to then read: the replay reads it as it is now, and says so
echo "first" > "$tmp/w/appended"
[ -z "$as" ] || chown 65534:65534 "$tmp/w/appended"
$as "$encore" record -q -o "$tmp/s5" -- sh -c 'echo more >> "$1" && cat "$1"' sh "$tmp/w/appended" \
    > "$tmp/rec5.out"
$as "$encore" replay "$tmp/s5" > "$tmp/rep.out" 2> "$tmp/rep.err" || true
grep -q "warning: 1 file that was there before the recording, changed by it and then read, is read as it is now, not as the recording read it: .*/w/appended$" "$tmp/rep.err" ||
    { echo "FAIL: the changed file is not named:"; cat "$tmp/rep.err"; exit 1; }
echo "ok: a file there before, changed then read by the recording, is named"

# 6. a file there before, renamed by the recording (a configuration moved aside): the replay
# finds it under its old name again, and the real files are untouched
echo "setting=1" > "$tmp/w/config"
[ -z "$as" ] || chown 65534:65534 "$tmp/w/config"
$as "$encore" record -q -o "$tmp/s6" -- sh -c 'cd "$1" && if [ -f config ]; then
    mv config config.old && echo moved; else echo none; fi; cat config.old' sh "$tmp/w" > "$tmp/rec6.out"
grep -q "^moved" "$tmp/rec6.out" || { echo "FAIL: the recording did not move it:"; cat "$tmp/rec6.out"; exit 1; }
snapshot > "$tmp/before"
replay_same "$tmp/s6" "$tmp/rec6.out"
grep -q "^encore replay: 1 file the recording made by renaming put back under its old name" "$tmp/rep.err" ||
    { echo "FAIL: the replay did not say it put the file back:"; cat "$tmp/rep.err"; exit 1; }
snapshot > "$tmp/after"
cmp -s "$tmp/before" "$tmp/after" ||
    { echo "FAIL: the replay changed the real files:"; diff "$tmp/before" "$tmp/after"; exit 1; }
echo "ok: a file the recording renamed is back under its old name for the replay"
