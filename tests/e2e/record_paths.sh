#!/bin/sh
# record_paths.sh: the recorder's path records (recorder/README.md, "Paths created";
# schemas/trace-format.md): make_names makes and removes names in a directory by every call
# the recorder notes, and by the same calls where they make nothing (an open with O_CREAT of
# a file that is there, a rename onto a name that is there, an exchange, a mkdir that
# fails); its trace holds exactly one record per name made or removed, in order, with the
# absolute path whatever the call was given (a relative path, a directory descriptor, "./"),
# and a rename's new name with the old one.
# Usage: record_paths.sh ENCORE MAKE_NAMES PATH_RECORDS
set -eu
encore=$1 prog=$2 records=$3
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_paths.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/w"
w=$(cd "$tmp/w" && pwd -P)
"$encore" record -q -o "$tmp/s" -- "$prog" "$w" || { echo "FAIL: make_names failed"; exit 1; }
"$records" "$tmp/s/make_names.trace" | sed "s|$w|W|g" > "$tmp/got"
cat > "$tmp/want" <<'EOF2'
file W/a
file W/b
dir W/d
dir W/d/e
link W/c from W/a
removed W/a
removed W/b
link W/h
link W/s
removed W/h
removed W/d/e
removed W/s
file W/f
file W/g
link W/d/g from W/g
removed W/g
removed W/d/g
removed W/d
EOF2
cmp -s "$tmp/want" "$tmp/got" || { echo "FAIL: path records:"; diff "$tmp/want" "$tmp/got"; exit 1; }
echo "ok: $(wc -l < "$tmp/got") path records, one per name made or removed"
