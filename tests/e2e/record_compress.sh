#!/bin/sh
# record_compress.sh: with --compress after, the recorded processes store their chunks and `encore record`
# compresses each finished trace after the run (libtrace/compact.c): the input bytes of a
# recorded `cat` end compressed, as small as when compressed inline (--compress inline), and
# read back whole (the events themselves are compared in tests/unit/test_compact.c); with
# the default (inline) the same input takes about as much disk; a process that outlives the recorded command keeps writing its trace
# while encore record compresses the others, and every trace reads back whole.
# Usage: record_compress.sh ENCORE
set -eu
encore=$1
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/record_compress.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 1. external input (a pipe from an unrecorded writer: every byte is logged)
seq 1 200000 | "$encore" record --compress after -o "$tmp/after" --name cat -- cat >/dev/null 2>"$tmp/after.err" ||
	fail "record: $(cat "$tmp/after.err")"
seq 1 200000 | "$encore" record -q -o "$tmp/inline" --name cat -- cat \
	>/dev/null 2>"$tmp/inline.err" || fail "record --compress inline: $(cat "$tmp/inline.err")"
# "compressed after the run from X KiB to Y"
sizes=$(sed -n 's/.*compressed after the run from \([0-9]*\) KiB to \([0-9]*\)).*/\1 \2/p' \
	"$tmp/after.err")
[ -n "$sizes" ] || fail "no compression in the summary: $(cat "$tmp/after.err")"
set -- $sizes
[ "$1" -ge 1000 ] || fail "stored traces of $1 KiB for 1.3 MB of input"
[ $(($2 * 4)) -lt "$1" ] || fail "compressed from $1 KiB to only $2 KiB"
a=$(stat -c %s "$tmp/after/cat.trace") i=$(stat -c %s "$tmp/inline/cat.trace")
[ $((a * 10)) -le $((i * 12)) ] || fail "compressed after: $a bytes, inline: $i bytes"
"$encore" check "$tmp/after" >"$tmp/after.check" 2>&1 || fail "check: $(cat "$tmp/after.check")"
"$encore" check "$tmp/inline" >"$tmp/inline.check" 2>&1 ||
	fail "check inline: $(cat "$tmp/inline.check")"
grep -q "cat.trace: process cat image 0: .* events, closed, ok" "$tmp/after.check" ||
	fail "check: $(cat "$tmp/after.check")"
"$encore" dump "$tmp/after" | grep -q "seq\|RECV\|recv\|read" || fail "dump shows no input"
[ -z "$(find "$tmp/after" -name '.*.compact')" ] || fail "a temporary file was left"

# 2. a child that outlives the command: it opens f2 (waits for the reader started below),
# then reads f1, whose writer comes after encore record has returned and compressed
mkfifo "$tmp/f1" "$tmp/f2"
"$encore" record -q --compress after -o "$tmp/late" --name root -- \
	sh -c '( read x < "$1"; echo "got $x" ) > "$2" &' sh "$tmp/f1" "$tmp/f2" ||
	fail "record of the late child"
cat "$tmp/f2" >"$tmp/late.out" &
reader=$!
echo go >"$tmp/f1"
wait "$reader" # EOF on f2: the child has exited (its trace closed before its descriptors)
[ "$(cat "$tmp/late.out")" = "got go" ] || fail "the late child said '$(cat "$tmp/late.out")'"
"$encore" check "$tmp/late" >"$tmp/late.check" 2>&1 || fail "check: $(cat "$tmp/late.check")"
grep -q "not closed" "$tmp/late.check" && fail "a trace not closed: $(cat "$tmp/late.check")"
[ "$(grep -c 'closed, ok' "$tmp/late.check")" -ge 2 ] || fail "$(cat "$tmp/late.check")"
echo "ok: compressed from $1 KiB to $2 KiB after the run; inline $i bytes, after $a bytes"
