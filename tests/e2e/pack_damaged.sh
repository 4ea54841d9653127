#!/bin/sh
# pack_damaged.sh: a packed object that is damaged (cut or overwritten: its size is not the
# manifest's) is never mounted: replay refuses, naming the file and saying to pack again,
# and `encore pack` run again replaces the damaged object, after which the replay reads the
# recorded bytes (schemas/pack.md).
# Usage: pack_damaged.sh ENCORE
set -eu
encore=$1
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/pack_damaged.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "the recorded line" > "$tmp/cfg"
"$encore" record -q -o "$tmp/s" -- cat "$tmp/cfg" > "$tmp/rec.out"
"$encore" pack -q "$tmp/s" > /dev/null
obj=$(awk -F '\t' -v p="$tmp/cfg" '$6 == p { print $3 }' "$tmp/s/pack/manifest")
[ -n "$obj" ] || { echo "FAIL: $tmp/cfg not in the manifest"; exit 1; }
chmod u+w "$tmp/s/pack/objects/$obj"
echo "other" > "$tmp/s/pack/objects/$obj"
chmod 0400 "$tmp/s/pack/objects/$obj"

rc=0
"$encore" replay -q "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" || rc=$?
if grep -q "need a mount namespace" "$tmp/rep.err"; then
    echo "SKIP: $(cat "$tmp/rep.err")"; exit 77
fi
if [ "$rc" = 0 ]; then
    echo "FAIL: a damaged packed object was replayed from; the program printed:"
    cat "$tmp/rep.out"; exit 1
fi
grep -q "$tmp/cfg" "$tmp/rep.err" && grep -q "encore pack" "$tmp/rep.err" ||
    { echo "FAIL: the refusal does not name the file and what to do:"; cat "$tmp/rep.err"; exit 1; }
# --no-isolate would mount the pack all the same: the way out named is --no-pack
grep -q -- "--no-pack" "$tmp/rep.err" && ! grep -q -- "--no-isolate" "$tmp/rep.err" ||
    { echo "FAIL: the refusal does not point at --no-pack:"; cat "$tmp/rep.err"; exit 1; }
[ ! -e "$tmp/s/.encore-replay" ] || { echo "FAIL: .encore-replay left behind"; exit 1; }
echo "ok: refused: $(cat "$tmp/rep.err")"

# packing again repairs the store
"$encore" pack -q "$tmp/s" > /dev/null
"$encore" replay -q "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
    { echo "FAIL: replay after packing again:"; cat "$tmp/rep.err"; exit 1; }
cmp -s "$tmp/rec.out" "$tmp/rep.out" ||
    { echo "FAIL: the replay read other bytes:"; cat "$tmp/rep.out"; exit 1; }
echo "ok: packed again, replayed the recorded bytes"
