#!/bin/sh
# replay_isolate.sh: a replay touches nothing outside the session (replayer/README.md,
# "Isolation and packed files").  A recorded shell creates, appends to, deletes and renames
# files and makes a directory; the directory is restored as it was before the recording, the
# session replayed, and the directory listed and hashed again: unchanged, while the replay's
# output is the recorded one.  --keep-scratch keeps what the replay wrote (the new file's
# bytes, a whiteout for the deleted one); --no-isolate writes for real.  Run as root, the
# same again as an unprivileged user (a user namespace then) when setpriv can drop to one.
#   --refused: where no user namespace may be made (user.max_user_namespaces = 0, set in a
#   user namespace of the test's own), an unprivileged replay is refused, saying why and that
#   --no-isolate accepts it, and nothing was written; with --no-isolate it replays.
# Usage: replay_isolate.sh ENCORE [--as-user | --refused]
set -eu
# isolation itself is tested: the harness's fallback to an unisolated replay is not wanted
unset ENCORE_NO_ISOLATE
encore=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_isolate.XXXXXX")
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
owner=

restore() { # the work directory as it was before the recording
    rm -rf "$tmp/w"
    mkdir -p "$tmp/w/keep"
    echo "delete me" > "$tmp/w/gone"
    echo "first line" > "$tmp/w/log"
    echo "old name" > "$tmp/w/old"
    echo "untouched" > "$tmp/w/keep/same"
    [ -z "$owner" ] || chown -R "$owner" "$tmp/w"
}
snapshot() { # names, types, modes, sizes and hashes of everything under w
    (cd "$tmp/w" && find . -printf '%p %y %m %s\n' | sort &&
        find . -type f -exec sha256sum {} + | sort)
}

run() { # run ENCORE-WRAPPER...: the whole check, with "$@" before encore
    restore
    "$@" "$encore" record -q -o "$tmp/s" -- sh -c 'cd "$1" && echo created > new &&
        echo second line >> log && rm gone && mv old renamed && mkdir newdir &&
        echo inside > newdir/f && cat log && ls' sh "$tmp/w" > "$tmp/rec.out"
    [ -f "$tmp/w/new" ] && [ ! -e "$tmp/w/gone" ] || { echo "FAIL: the recording did not write"; exit 1; }
    restore
    snapshot > "$tmp/before"
    if ! "$@" "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err"; then
        if grep -q "replay is not isolated" "$tmp/rep.err"; then
            echo "SKIP: $(cat "$tmp/rep.err")"; exit 77
        fi
        echo "FAIL: replay:"; cat "$tmp/rep.err"; exit 1
    fi
    cmp -s "$tmp/rec.out" "$tmp/rep.out" ||
        { echo "FAIL: the replay printed something else:"; diff "$tmp/rec.out" "$tmp/rep.out"; exit 1; }
    snapshot > "$tmp/after"
    if ! cmp -s "$tmp/before" "$tmp/after"; then
        echo "FAIL: the replay changed the file system:"; diff "$tmp/before" "$tmp/after"; exit 1
    fi
    [ ! -e "$tmp/s/.encore-replay" ] || { echo "FAIL: .encore-replay left behind"; exit 1; }
    echo "ok: replayed ($(wc -l < "$tmp/rep.out") lines identical), $tmp/w unchanged"

    # --keep-scratch: the files the replay wrote, under host-ID/fs/NAME/upper
    "$@" "$encore" replay -q --keep-scratch "$tmp/k" "$tmp/s" > /dev/null 2> "$tmp/rep.err" ||
        { echo "FAIL: replay --keep-scratch:"; cat "$tmp/rep.err"; exit 1; }
    snapshot > "$tmp/after"
    cmp -s "$tmp/before" "$tmp/after" || { echo "FAIL: --keep-scratch changed the file system"; exit 1; }
    new=$(find "$tmp/k" -path "*/upper/*/w/new" -type f)
    [ -n "$new" ] && [ "$(cat "$new")" = created ] ||
        { echo "FAIL: the new file is not in the kept scratch area:"; find "$tmp/k"; exit 1; }
    [ "$(cat "$(dirname "$new")/newdir/f")" = inside ] || { echo "FAIL: newdir/f not kept"; exit 1; }
    [ -c "$(dirname "$new")/gone" ] || { echo "FAIL: the deletion left no whiteout"; exit 1; }
    grep -q "kept in $tmp/k" "$tmp/rep.err" || { echo "FAIL: no word of the kept area"; exit 1; }
    rm -rf "$tmp/k"
    echo "ok: --keep-scratch kept the written files and a whiteout for the deleted one"

    # --no-isolate: the replay writes for real, as it did before isolation existed
    "$@" "$encore" replay -q --no-isolate "$tmp/s" > /dev/null 2> "$tmp/rep.err" ||
        { echo "FAIL: replay --no-isolate:"; cat "$tmp/rep.err"; exit 1; }
    [ "$(cat "$tmp/w/new")" = created ] && [ ! -e "$tmp/w/gone" ] ||
        { echo "FAIL: --no-isolate did not write for real"; exit 1; }
    echo "ok: --no-isolate wrote for real"
    rm -rf "$tmp/s"
}

refused() { # in a user namespace whose user.max_user_namespaces is 0, as uid 65534
    echo 0 > /proc/sys/user/max_user_namespaces
    user="setpriv --reuid=65534 --regid=65534 --clear-groups"
    owner=65534:65534
    chown "$owner" "$tmp"
    restore
    $user "$encore" record -q -o "$tmp/s" -- sh -c 'cd "$1" && echo created > new' sh "$tmp/w"
    restore
    snapshot > "$tmp/before"
    if $user "$encore" replay "$tmp/s" > /dev/null 2> "$tmp/rep.err"; then
        echo "FAIL: replayed although no namespace could be made"; exit 1
    fi
    grep -q "replay is not isolated: files the replayed programs write would be written for real (no user namespace: .*); pass --no-isolate to accept that" "$tmp/rep.err" ||
        { echo "FAIL: the refusal does not say why:"; cat "$tmp/rep.err"; exit 1; }
    snapshot > "$tmp/after"
    cmp -s "$tmp/before" "$tmp/after" || { echo "FAIL: the refused replay wrote"; exit 1; }
    echo "ok: refused: $(cat "$tmp/rep.err")"
    $user "$encore" replay -q --no-isolate "$tmp/s" > /dev/null 2> "$tmp/rep.err" ||
        { echo "FAIL: replay --no-isolate:"; cat "$tmp/rep.err"; exit 1; }
    [ "$(cat "$tmp/w/new")" = created ] || { echo "FAIL: --no-isolate did not write"; exit 1; }
    echo "ok: --no-isolate replays there"
}

if [ "${2:-}" = --refused ]; then
    if [ "${3:-}" = --inside ]; then refused; exit 0; fi
    [ "$(id -u)" = 0 ] || { echo "SKIP: needs root to make the test's user namespace"; exit 77; }
    command -v setpriv > /dev/null && command -v unshare > /dev/null ||
        { echo "SKIP: no setpriv or unshare"; exit 77; }
    unshare -U true 2> /dev/null || { echo "SKIP: no user namespace may be made here"; exit 77; }
    # a user namespace mapping root and 65534, where the test may lower the limit; the maps
    # are written from here once it exists (one write each), then it runs the check
    mkfifo "$tmp/up" "$tmp/go"
    unshare -U sh -c 'echo up > "$1"; read -r x < "$2"; shift 2; exec "$@"' sh "$tmp/up" "$tmp/go" \
        sh "$0" "$1" --refused --inside > "$tmp/inside.out" 2>&1 & ns=$!
    read -r x < "$tmp/up"
    printf '0 0 1\n65534 65534 1\n' > "$tmp/map"
    if ! dd if="$tmp/map" of="/proc/$ns/uid_map" bs=4096 status=none 2> /dev/null ||
       ! dd if="$tmp/map" of="/proc/$ns/gid_map" bs=4096 status=none 2> /dev/null; then
        echo go > "$tmp/go"; wait "$ns" || true
        echo "SKIP: cannot map uids in a user namespace"; exit 77
    fi
    echo go > "$tmp/go"
    st=0; wait "$ns" || st=$?
    cat "$tmp/inside.out"
    exit "$st"
fi

if [ "${2:-}" = --as-user ]; then
    # the unprivileged path: a user namespace, mounts below a directory split
    [ "$(id -u)" = 0 ] || { run; exit 0; }
    command -v setpriv > /dev/null || { echo "SKIP: no setpriv to drop to an unprivileged user"; exit 77; }
    user="setpriv --reuid=65534 --regid=65534 --clear-groups"
    $user true 2> /dev/null || { echo "SKIP: cannot run as uid 65534"; exit 77; }
    $user test -x "$encore" || { echo "SKIP: uid 65534 cannot run $encore"; exit 77; }
    # in a user namespace overlayfs cannot copy up a directory of root's (the build tree's
    # parents): the work directory goes where users write, /tmp (replayer/README.md)
    rm -rf "$tmp"
    tmp=$(mktemp -d /tmp/replay_isolate.XXXXXX)
    chmod 755 "$tmp"
    chown 65534:65534 "$tmp"
    owner=65534:65534
    # shellcheck disable=SC2086
    run $user
else
    run
fi
