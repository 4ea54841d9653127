#!/bin/sh
# pack.sh: `encore pack` and the check of changed files (schemas/pack.md, README.md "Replay a
# production failure on your laptop").  A program linked against a small library of its own,
# reading a configuration file through a symbolic link, installed in a temporary prefix, is
# recorded; `encore pack` lists the executable, the library and the file (with the link's
# path too) under the hashes sha256sum computes, objects 0400, manifest 0600, directories 0700;
# packing again adds nothing; after the configuration changes, the replay of an unpacked copy
# refuses, naming the file, unless --ignore-changed-files, and so does the replay of a pack
# that lacks the file or of a packed session with --no-pack; a damaged trace makes pack refuse.
# Usage: pack.sh ENCORE DEMO_C DEMO_LIB_C
set -eu
encore=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") demo_c=$2 lib_c=$3
command -v "${CC:-cc}" > /dev/null 2>&1 || { echo "SKIP: no C compiler"; exit 77; }
command -v sha256sum > /dev/null 2>&1 || { echo "SKIP: no sha256sum"; exit 77; }
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/pack.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
expect_fail() { # expect_fail TEXT CMD...: CMD fails with TEXT on stderr
    text=$1; shift
    if "$@" > "$tmp/out" 2> "$tmp/err"; then
        cat "$tmp/err"; fail "'$*' succeeded"
    fi
    grep -qF -- "$text" "$tmp/err" || { cat "$tmp/err"; fail "'$*' did not say '$text'"; }
    echo "ok: $(head -1 "$tmp/err")"
}

# the program, installed in a prefix of its own
p=$tmp/prefix
mkdir -p "$p/bin" "$p/lib" "$p/etc"
"${CC:-cc}" -shared -fPIC -o "$p/lib/libpackdemo.so" "$lib_c"
"${CC:-cc}" -o "$p/bin/packdemo" "$demo_c" -L"$p/lib" -lpackdemo -Wl,-rpath,"$p/lib"
printf 'listen 8080\nname demo\n' > "$p/etc/demo.conf"
ln -s demo.conf "$p/etc/link.conf"

"$encore" record -q -o "$tmp/s" -- "$p/bin/packdemo" "$p/etc/link.conf" > "$tmp/rec.out"
grep -qx 'LISTEN 8080' "$tmp/rec.out" || fail "the program did not run: $(cat "$tmp/rec.out")"
cp -r "$tmp/s" "$tmp/unpacked"
cp -r "$tmp/s" "$tmp/bad"

"$encore" pack "$tmp/s" > "$tmp/pack1.out" 2> "$tmp/pack1.err" ||
    { cat "$tmp/pack1.out" "$tmp/pack1.err"; fail "encore pack"; }
cat "$tmp/pack1.out"
man=$tmp/s/pack/manifest
[ "$(head -1 "$man")" = "encore-pack 1" ] || fail "manifest header: $(head -1 "$man")"
host=$(tr -d '\n' < /etc/machine-id 2> /dev/null || true)
# line KIND PATH FILE: the manifest has KIND PATH with FILE's hash, size and mode
line() {
    sum=$(sha256sum < "$3" | cut -d' ' -f1)
    size=$(wc -c < "$3" | tr -d ' ')
    mode=$(stat -c %a "$3")
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$host" "$1" "$sum" "$mode" "$size" "$2" > "$tmp/want"
    grep -qxF -f "$tmp/want" "$man" || { cat "$man"; fail "no line: $(cat "$tmp/want")"; }
    [ "$(sha256sum < "$tmp/s/pack/objects/$sum" | cut -d' ' -f1)" = "$sum" ] ||
        fail "object $sum does not hold $2"
    [ "$(stat -c %a "$tmp/s/pack/objects/$sum")" = 400 ] || fail "object $sum is not 0400"
}
line exe "$p/bin/packdemo" "$p/bin/packdemo"
line lib "$p/lib/libpackdemo.so" "$p/lib/libpackdemo.so"
line file "$p/etc/demo.conf" "$p/etc/demo.conf"
line file "$p/etc/link.conf" "$p/etc/demo.conf"   # the path the program used
libc=$(awk -F'\t' '$2 == "lib" && $6 ~ /\/libc\.so/ { print $6; exit }' "$man")
[ -n "$libc" ] || fail "libc is not packed"
awk -F'\t' '$2 == "lib" && $6 ~ /ld-linux|ld\.so/ { f = 1 } END { exit !f }' "$man" ||
    fail "the dynamic loader is not packed"
if grep -q 'libencore-record' "$man"; then fail "the recorder's own library was packed"; fi
[ "$(stat -c %a "$man")" = 600 ] || fail "manifest is not 0600"
[ "$(stat -c %a "$tmp/s/pack")" = 700 ] || fail "pack/ is not 0700"
[ "$(stat -c %a "$tmp/s/pack/objects")" = 700 ] || fail "pack/objects is not 0700"
grep -q '^packed [0-9]* files' "$tmp/pack1.out" || fail "no summary line"

# again: nothing to add, nothing rewritten
cp "$man" "$tmp/man1"
"$encore" pack "$tmp/s" > "$tmp/pack2.out" 2>&1 || { cat "$tmp/pack2.out"; fail "pack again"; }
grep -q '^nothing to add' "$tmp/pack2.out" || { cat "$tmp/pack2.out"; fail "pack again added"; }
cmp -s "$man" "$tmp/man1" || fail "pack again changed the manifest"
echo "ok: $(cat "$tmp/pack2.out")"

# merge: the pack of another session (as another host's would be) joins this one's
printf 'other\n' > "$p/etc/other.conf"
"$encore" record -q -o "$tmp/b" -- "$p/bin/packdemo" "$p/etc/other.conf" > /dev/null
"$encore" pack -q "$tmp/b" > /dev/null || fail "pack b"
cp -r "$tmp/b" "$tmp/b2"
"$encore" pack --merge "$tmp/b" "$tmp/s" > "$tmp/merge.out" 2>&1 || { cat "$tmp/merge.out"; fail "merge"; }
grep -qF "added file $p/etc/other.conf" "$tmp/merge.out" || { cat "$tmp/merge.out"; fail "merge did not add other.conf"; }
line file "$p/etc/other.conf" "$p/etc/other.conf"
line file "$p/etc/demo.conf" "$p/etc/demo.conf"   # this session's lines stay
"$encore" pack --merge "$tmp/b" "$tmp/s" > "$tmp/merge2.out" 2>&1 || fail "merge again"
grep -q '^nothing to add' "$tmp/merge2.out" || { cat "$tmp/merge2.out"; fail "merge again added"; }
# an object whose content does not match its name is refused
cp "$man" "$tmp/man2"
sum=$(awk -F'\t' '$2 == "file" { print $3; exit }' "$tmp/b2/pack/manifest")
rm -rf "$tmp/s/pack/objects/$sum"
chmod u+w "$tmp/b2/pack/objects/$sum" && echo tampered > "$tmp/b2/pack/objects/$sum"
expect_fail "is damaged" "$encore" pack --merge "$tmp/b2" "$tmp/s"
cmp -s "$man" "$tmp/man2" || fail "a refused merge changed the manifest"
"$encore" pack --merge "$tmp/b" "$tmp/s" > /dev/null 2>&1 || fail "merge after the refusal"

# another host: a mount namespace where /etc/machine-id says another id (skipped where user
# namespaces are not allowed).  Its session is packed there; here, pack skips its process,
# naming the host, and --merge adds its pack to a directory holding both hosts' traces.
echo 0123456789abcdef0123456789abcdef > "$tmp/machine-id"
if unshare -rm sh -c "mount --bind '$tmp/machine-id' /etc/machine-id" 2> /dev/null; then
    printf 'host b\n' > "$p/etc/hostb.conf"
    unshare -rm sh -c "mount --bind '$tmp/machine-id' /etc/machine-id &&
        '$encore' record -q -o '$tmp/hb' --name hostb -- '$p/bin/packdemo' '$p/etc/hostb.conf' > /dev/null &&
        '$encore' pack -q '$tmp/hb' > /dev/null" || fail "record and pack on host b"
    grep -q '^0123456789abcdef0123456789abcdef	file	' "$tmp/hb/pack/manifest" ||
        { cat "$tmp/hb/pack/manifest"; fail "host b's manifest does not carry its host id"; }
    mkdir -m 700 "$tmp/all"
    cp "$tmp/s"/*.trace "$tmp/hb"/*.trace "$tmp/all/" 2> /dev/null ||
        fail "both hosts' traces have the same names"
    "$encore" pack -q "$tmp/all" > "$tmp/all.out" 2> "$tmp/all.err" || { cat "$tmp/all.err"; fail "pack all"; }
    grep -qF "recorded on host" "$tmp/all.err" || { cat "$tmp/all.err"; fail "host b's process not named"; }
    if grep -q '^0123456789abcdef' "$tmp/all/pack/manifest"; then fail "host b's files packed on host a"; fi
    "$encore" pack -q --merge "$tmp/hb" "$tmp/all" > /dev/null || fail "merge host b"
    grep -q "^0123456789abcdef0123456789abcdef	file	.*	$p/etc/hostb.conf\$" "$tmp/all/pack/manifest" ||
        { cat "$tmp/all/pack/manifest"; fail "host b's file is not in the merged manifest"; }
    grep -q "^$host	file	.*	$p/etc/demo.conf\$" "$tmp/all/pack/manifest" ||
        fail "host a's file is not in the merged manifest"
    echo "ok: two hosts' packs merged"
else
    echo "(no user namespaces: the second host is not tested)"
fi

# the unpacked copy replays while the file is unchanged...
"$encore" replay -q "$tmp/unpacked" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
    { cat "$tmp/rep.err"; fail "replay of the unpacked session"; }
# ...and refuses once it changed (same size: the content is compared), naming it
printf 'listen 8081\nname demo\n' > "$p/etc/demo.conf"
# (named by the path the program opened: the link)
expect_fail "$p/etc/link.conf changed since the recording (content)" \
    "$encore" replay "$tmp/unpacked"
grep -qF -- "--ignore-changed-files" "$tmp/err" || fail "the refusal does not name the option"
# the packed session is not checked (its replay is to use the packed files)
if "$encore" replay -q "$tmp/s" > "$tmp/out" 2> "$tmp/err"; then :; fi
if grep -qF "changed since the recording" "$tmp/err"; then
    cat "$tmp/err"; fail "the packed session was checked against the file system"
fi
if "$encore" replay --ignore-changed-files -q "$tmp/unpacked" > "$tmp/out" 2> "$tmp/err"; then :; fi
if grep -qF "changed since the recording" "$tmp/err"; then
    fail "--ignore-changed-files still refused"
fi
printf 'listen 8080\nname demo and more\n' > "$p/etc/demo.conf"
expect_fail "$p/etc/link.conf changed since the recording (size)" "$encore" replay "$tmp/unpacked"
# pack now: the file is named and left out, the rest is already there
expect_fail "$p/etc/demo.conf changed since the recording (size); not packed" \
    "$encore" pack "$tmp/unpacked"
# a pack without that file: the replay reads it from here, so it is checked
[ -f "$tmp/unpacked/pack/manifest" ] || fail "pack wrote no manifest for the files it packed"
expect_fail "changed since the recording (size)" "$encore" replay "$tmp/unpacked"
# --no-pack: this machine's files are used, so they are checked
expect_fail "changed since the recording (size)" "$encore" replay --no-pack "$tmp/s"

# a damaged trace: pack refuses, and writes nothing
f=$(ls "$tmp/bad"/*.trace | head -1)
size=$(wc -c < "$f")
off=512
while [ "$off" -lt "$size" ]; do
    printf 'XXXXXXXX' | dd of="$f" bs=1 seek="$off" conv=notrunc 2> /dev/null
    off=$((off + 509))
done
expect_fail "damaged" "$encore" pack "$tmp/bad"
[ ! -e "$tmp/bad/pack" ] || fail "pack wrote into a damaged session"
echo "PASS"
