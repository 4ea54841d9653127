#!/bin/sh
# replay_pack.sh: replay from a pack (replayer/README.md, "Isolation and packed files";
# the layout of schemas/pack.md).  pack_app (a program linked against libgreet.so through its
# rpath, reading a configuration file) is installed in a temporary prefix and recorded; the
# pack is made by hand from the layout (objects by SHA-256, manifest lines per host); the
# prefix is removed; the replay prints what the recorded run printed.  A different binary at
# the recorded path afterwards does not matter (the build-id check looks at the packed one),
# and --no-pack refuses it.
#   hosts: two "hosts" (two machine ids, each recorded in a mount namespace where
#   /etc/machine-id says so), with different configuration files at the same path, merged
#   into one session: each host's process reads its own file in replay.
# Usage: replay_pack.sh ENCORE APP_SRC LIB_SRC single|hosts
set -eu
encore=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") app_src=$2 lib_src=$3 mode=$4
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_pack.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
command -v cc > /dev/null || { echo "SKIP: no C compiler to build the program in a prefix"; exit 77; }
command -v sha256sum > /dev/null || { echo "SKIP: no sha256sum"; exit 77; }

prefix=$tmp/prefix
install_app() { # install_app VARIANT: the program, its library and its configuration
    mkdir -p "$prefix/bin" "$prefix/lib" "$prefix/etc"
    cc -shared -fPIC -o "$prefix/lib/libgreet.so" "$lib_src"
    cc -DVARIANT="\"$1\"" -o "$prefix/bin/pack_app" "$app_src" -L"$prefix/lib" -lgreet \
        -Wl,-rpath,"$prefix/lib"
}
pack_add() { # pack_add SESSION HOST KIND PATH: the object and its manifest line
    sha=$(sha256sum "$4" | cut -d' ' -f1)
    mkdir -p "$1/pack/objects"
    chmod 700 "$1/pack"
    [ -e "$1/pack/objects/$sha" ] || { cp "$4" "$1/pack/objects/$sha"; chmod 400 "$1/pack/objects/$sha"; }
    [ -e "$1/pack/manifest" ] || printf 'encore-pack 1\n' > "$1/pack/manifest"
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$2" "$3" "$sha" "$(stat -c %a "$4")" \
        "$(stat -c %s "$4")" "$4" >> "$1/pack/manifest"
    chmod 600 "$1/pack/manifest"
}
replay_same() { # replay_same SESSION EXPECTED [sorted]
    if ! "$encore" replay "$1" > "$tmp/rep.out" 2> "$tmp/rep.err"; then
        if grep -q "replay is not isolated\|need a mount namespace" "$tmp/rep.err"; then
            echo "SKIP: $(cat "$tmp/rep.err")"; exit 77
        fi
        echo "FAIL: replay of the packed session:"; cat "$tmp/rep.err"; exit 1
    fi
    if [ "${3:-}" = sorted ]; then
        sort "$tmp/rep.out" > "$tmp/rep.sorted"; sort "$2" > "$tmp/exp.sorted"
        cmp -s "$tmp/exp.sorted" "$tmp/rep.sorted" ||
            { echo "FAIL: the replay printed something else:"; diff "$tmp/exp.sorted" "$tmp/rep.sorted"; exit 1; }
    else
        cmp -s "$2" "$tmp/rep.out" ||
            { echo "FAIL: the replay printed something else:"; diff "$2" "$tmp/rep.out"; exit 1; }
    fi
    grep -q "packed files mounted" "$tmp/rep.err" || { echo "FAIL: no word of the pack"; exit 1; }
}

case $mode in
single)
    install_app one
    printf 'alpha\nbeta\n' > "$prefix/etc/app.conf"
    "$encore" record -q -o "$tmp/s" -- "$prefix/bin/pack_app" "$prefix/etc/app.conf" > "$tmp/rec.out"
    grep -q '^hello, beta (one)$' "$tmp/rec.out" || { echo "FAIL: the program did not run"; exit 1; }
    host=$(cat /etc/machine-id 2> /dev/null || true)
    pack_add "$tmp/s" "$host" exe "$prefix/bin/pack_app"
    pack_add "$tmp/s" "$host" lib "$prefix/lib/libgreet.so"
    pack_add "$tmp/s" "$host" file "$prefix/etc/app.conf"
    rm -rf "$prefix"
    # without the pack the executable is missing: refused
    if "$encore" replay --no-pack "$tmp/s" > /dev/null 2> "$tmp/err"; then
        echo "FAIL: --no-pack replayed a session whose files are gone"; exit 1
    fi
    grep -q "cannot be read" "$tmp/err" || { echo "FAIL: --no-pack:"; cat "$tmp/err"; exit 1; }
    replay_same "$tmp/s" "$tmp/rec.out"
    [ ! -e "$prefix" ] || { echo "FAIL: the replay left $prefix behind"; exit 1; }
    echo "ok: prefix removed, the packed session replays with identical output"
    # another build at the recorded path: the packed one is checked and run
    install_app two
    printf 'gamma\n' > "$prefix/etc/app.conf"
    replay_same "$tmp/s" "$tmp/rec.out"
    if "$encore" replay --no-pack "$tmp/s" > /dev/null 2> "$tmp/err"; then
        echo "FAIL: --no-pack replayed another binary"; exit 1
    fi
    grep -q "the executable changed since the recording" "$tmp/err" ||
        { echo "FAIL: --no-pack with another binary:"; cat "$tmp/err"; exit 1; }
    echo "ok: another binary and configuration at the recorded paths: the packed ones replay"
    # a damaged manifest line is refused before anything runs, naming the line
    cp "$tmp/s/pack/manifest" "$tmp/manifest.good"
    printf 'x\texe\tnot-a-hash\t755\t1\t/bin/true\n' >> "$tmp/s/pack/manifest"
    if "$encore" replay "$tmp/s" > /dev/null 2> "$tmp/err"; then
        echo "FAIL: a damaged manifest was used"; exit 1
    fi
    grep -q "line 5 of the pack's manifest is damaged" "$tmp/err" ||
        { echo "FAIL: damaged manifest:"; cat "$tmp/err"; exit 1; }
    cp "$tmp/manifest.good" "$tmp/s/pack/manifest"
    echo "ok: a damaged manifest is refused, naming its line"
    ;;
hosts)
    # two hosts: two machine ids, each recorded where /etc/machine-id says so
    if [ "$(id -u)" = 0 ]; then ns="unshare -m"; else ns="unshare -rm"; fi
    $ns true 2> /dev/null || { echo "SKIP: no mount namespace to give a recording another machine id"; exit 77; }
    [ -f /etc/machine-id ] || { echo "SKIP: no /etc/machine-id to stand in for"; exit 77; }
    install_app one
    : > "$tmp/rec.out"
    for h in a b; do
        printf '%032d\n' 0 | tr 0 "$h" > "$tmp/mid-$h"
        printf 'host %s\n' "$h" > "$prefix/etc/app.conf"
        $ns sh -c 'mount --bind "$1" /etc/machine-id && shift && exec "$@"' sh "$tmp/mid-$h" \
            "$encore" record -q -o "$tmp/rec-$h" --name "app-$h" -- "$prefix/bin/pack_app" \
            "$prefix/etc/app.conf" >> "$tmp/rec.out"
        hid=$(cat "$tmp/mid-$h")
        pack_add "$tmp/rec-$h" "$hid" exe "$prefix/bin/pack_app"
        pack_add "$tmp/rec-$h" "$hid" lib "$prefix/lib/libgreet.so"
        pack_add "$tmp/rec-$h" "$hid" file "$prefix/etc/app.conf"
    done
    grep -q '^hello, host b (one)$' "$tmp/rec.out" || { echo "FAIL: the program did not run"; exit 1; }
    # merged by copying: traces, objects, and the manifests' lines
    mkdir -m 700 "$tmp/s"
    cp "$tmp"/rec-a/*.trace "$tmp"/rec-b/*.trace "$tmp/s/"
    mkdir -p -m 700 "$tmp/s/pack/objects"
    cp -n "$tmp"/rec-a/pack/objects/* "$tmp"/rec-b/pack/objects/* "$tmp/s/pack/objects/" 2> /dev/null || true
    { echo 'encore-pack 1'; tail -n +2 "$tmp/rec-a/pack/manifest"; tail -n +2 "$tmp/rec-b/pack/manifest"; } \
        > "$tmp/s/pack/manifest"
    chmod 600 "$tmp/s/pack/manifest"
    rm -rf "$prefix"
    replay_same "$tmp/s" "$tmp/rec.out" sorted
    echo "ok: two hosts merged, each process read its own host's configuration in replay"
    ;;
*)
    echo "usage: replay_pack.sh ENCORE APP_SRC LIB_SRC single|hosts"; exit 2 ;;
esac
