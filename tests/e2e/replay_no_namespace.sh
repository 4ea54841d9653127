#!/bin/sh
# replay_no_namespace.sh: where no namespace can be made (tests/e2e/progs/nons.c: unshare,
# setns and mount fail with EPERM, as in a CI container without CAP_SYS_ADMIN), a recorded
# shell that writes a file replays (encore-replay(1), ENVIRONMENT):
#   - without ENCORE_NO_ISOLATE: refused, saying why and naming --no-isolate, nothing written;
#   - ENCORE_NO_ISOLATE=auto: replayed to the end with the recorded output, a warning that it
#     was not isolated, and the file written for real (as --no-isolate); with --keep-scratch
#     the kept directory holds no file;
#   - ENCORE_NO_ISOLATE=1: as --no-isolate, without the warning; a bad value is a usage error.
# Outside the wrapper, auto still isolates: the same replay leaves the file untouched.
# Usage: replay_no_namespace.sh ENCORE NONS
set -eu
encore=$1 nons=$2
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_nons.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
unset ENCORE_NO_ISOLATE
fail() { echo "FAIL: $*"; [ -f "$tmp/err" ] && cat "$tmp/err"; exit 1; }

"$nons" unshare --help > /dev/null 2>&1 ||
    { echo "SKIP: the seccomp wrapper cannot run here"; exit 77; }
if "$nons" sh -c 'command -v unshare > /dev/null && unshare -m true' 2> /dev/null; then
    fail "nons did not take namespaces away"
fi
mkdir "$tmp/w"
"$encore" record -q -o "$tmp/s" -- sh -c 'echo written > "$1/f"; echo done' sh "$tmp/w" \
    > "$tmp/rec.out"
rm "$tmp/w/f"

rc=0; "$nons" "$encore" replay -q "$tmp/s" > "$tmp/out" 2> "$tmp/err" || rc=$?
[ "$rc" -eq 1 ] || fail "replay without namespaces exited $rc, expected a refusal (1)"
grep -q "replay is not isolated: .*pass --no-isolate to accept that" "$tmp/err" ||
    fail "the refusal does not say why"
[ ! -e "$tmp/w/f" ] || fail "the refused replay wrote"
echo "ok: refused without ENCORE_NO_ISOLATE"

ENCORE_NO_ISOLATE=auto "$nons" "$encore" replay "$tmp/s" > "$tmp/out" 2> "$tmp/err" ||
    fail "ENCORE_NO_ISOLATE=auto did not replay"
cmp -s "$tmp/rec.out" "$tmp/out" || fail "the replay printed something else: $(cat "$tmp/out")"
grep -q "replayed to the end" "$tmp/err" || fail "no summary"
warning="warning: not isolated, the replayed programs write to this machine's files"
grep -q "$warning (.*; ENCORE_NO_ISOLATE=auto)" "$tmp/err" ||
    fail "no warning that the replay was not isolated"
[ "$(cat "$tmp/w/f")" = written ] || fail "the unisolated replay did not write for real"
rm "$tmp/w/f"
echo "ok: ENCORE_NO_ISOLATE=auto replayed unisolated, saying so"

ENCORE_NO_ISOLATE=auto "$nons" "$encore" replay -q --keep-scratch "$tmp/k" "$tmp/s" \
    > /dev/null 2> "$tmp/err" || fail "ENCORE_NO_ISOLATE=auto --keep-scratch did not replay"
[ -d "$tmp/k" ] && [ -z "$(find "$tmp/k" ! -type d)" ] ||
    fail "the kept scratch area holds files: $(find "$tmp/k" ! -type d)"
[ "$(cat "$tmp/w/f")" = written ] || fail "the unisolated replay did not write for real"
rm "$tmp/w/f"
echo "ok: --keep-scratch keeps nothing"

ENCORE_NO_ISOLATE=1 "$nons" "$encore" replay -q "$tmp/s" > /dev/null 2> "$tmp/err" ||
    fail "ENCORE_NO_ISOLATE=1 did not replay"
! grep -q "warning: not isolated" "$tmp/err" || fail "ENCORE_NO_ISOLATE=1 warned"
[ -e "$tmp/w/f" ] || fail "ENCORE_NO_ISOLATE=1 did not write for real"
rm "$tmp/w/f"
rc=0; ENCORE_NO_ISOLATE=yes "$encore" replay -q "$tmp/s" > /dev/null 2> "$tmp/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "ENCORE_NO_ISOLATE=yes: expected" "$tmp/err" ||
    fail "a bad value: exit $rc"
echo "ok: ENCORE_NO_ISOLATE=1 as --no-isolate, a bad value refused"

# where a namespace can be made, auto isolates
if "$encore" replay -q "$tmp/s" > /dev/null 2> "$tmp/err"; then
    ENCORE_NO_ISOLATE=auto "$encore" replay -q "$tmp/s" > /dev/null 2> "$tmp/err" ||
        fail "ENCORE_NO_ISOLATE=auto did not replay where namespaces work"
    [ ! -e "$tmp/w/f" ] || fail "ENCORE_NO_ISOLATE=auto wrote for real where it could isolate"
    ! grep -q "warning: not isolated" "$tmp/err" ||
        fail "ENCORE_NO_ISOLATE=auto warned where it could isolate"
    echo "ok: ENCORE_NO_ISOLATE=auto isolates where it can"
else
    echo "(this machine cannot isolate a replay: auto's isolated case not checked)"
fi
