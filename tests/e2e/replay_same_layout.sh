#!/bin/sh
# replay_same_layout.sh: encore record --same-layout (address space randomisation off, the
# address layout record in each trace: schemas/trace-format.md "Address layout").  A program
# that prints the address of a stack variable, a heap block, its own function and argv[0]'s
# string, and sends them to its forked child, which prints them with its own heap block
# (progs/layout_addr.c):
#   - recorded with --same-layout, replayed (isolated where the machine allows it): the
#     replay prints the very bytes of the recording, the parent's and the child's;
#   - recorded without it, the replay prints other addresses (skipped where randomisation is
#     off for the whole machine: nothing could move);
#   - a replay whose environment is larger than the recording's (--setenv) warns that the
#     stack moved;
#   - where personality(2) is refused (progs/no_personality.c, as a container's seccomp
#     policy does), record fails with one message naming --same-layout, and replay of a
#     same-layout session warns and goes on.
# Usage: replay_same_layout.sh ENCORE LAYOUT_ADDR NO_PERSONALITY
set -eu
encore=$1 prog=$2 nopers=$3
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_layout.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# a variable the recording has, made larger for one replay below
LAYOUT_TEST_PAD=x; export LAYOUT_TEST_PAD
fail() {
    echo "FAIL: $*"
    for f in "$tmp"/*.err; do [ -s "$f" ] && { echo "$f:"; cat "$f"; }; done
    exit 1
}

# the same-layout recording; personality refused by the machine itself: skip
if ! "$encore" record -q --same-layout -o "$tmp/s" -- "$prog" > "$tmp/rec.out" \
        2> "$tmp/rec.err"; then
    grep -q -- '--same-layout' "$tmp/rec.err" ||
        fail "record --same-layout failed without naming the option"
    echo "SKIP: this machine refuses personality(ADDR_NO_RANDOMIZE): $(cat "$tmp/rec.err")"
    exit 77
fi
[ "$(grep -c . "$tmp/rec.out")" = 3 ] || fail "the recorded run printed $(cat "$tmp/rec.out")"
"$encore" replay -q "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err" ||
    fail "replay of the same-layout session"
cmp -s "$tmp/rec.out" "$tmp/rep.out" ||
    fail "the replay printed other addresses: $(diff "$tmp/rec.out" "$tmp/rep.out")"
! grep -q warning "$tmp/rep.err" || fail "the replay warned"
# once more: the same, not by chance
"$encore" replay -q "$tmp/s" > "$tmp/rep2.out" 2> "$tmp/rep2.err" || fail "second replay"
cmp -s "$tmp/rec.out" "$tmp/rep2.out" || fail "the second replay printed other addresses"

# a larger environment: the stack cannot be where it was, and replay says so
# (the environment is the recorded one, whoever replays: --setenv changes it on purpose)
"$encore" replay -q --setenv "LAYOUT_TEST_PAD=$(printf '%0600d' 0)" "$tmp/s" \
    > "$tmp/big.out" 2> "$tmp/big.err" || fail "replay with a larger environment"
grep -Eq "warning: .*environment (is [0-9]* bytes larger|has [0-9]* variables? more).*its stack is lower" "$tmp/big.err" ||
    fail "no warning that the larger environment moved the stack"

# without the option the addresses move (where the machine randomises at all)
if [ "$(cat /proc/sys/kernel/randomize_va_space 2>/dev/null || echo 2)" != 0 ] &&
   [ $(( $(setarch --show 2>/dev/null | grep -c ADDR_NO_RANDOMIZE || true) )) = 0 ]; then
    "$encore" record -q -o "$tmp/r" -- "$prog" > "$tmp/rrec.out" 2> "$tmp/rrec.err" ||
        fail "record without the option"
    "$encore" replay -q "$tmp/r" > "$tmp/rrep.out" 2> "$tmp/rrep.err" ||
        fail "replay without the option"
    ! cmp -s "$tmp/rrec.out" "$tmp/rrep.out" ||
        fail "without --same-layout the replay printed the recorded addresses: nothing proved"
else
    echo "note: randomisation is off for this whole machine; the run without the option is skipped"
fi

# personality refused: record fails naming the option, replay warns and goes on
rc=0
"$nopers" "$encore" record -q --same-layout -o "$tmp/n" -- "$prog" > /dev/null 2> "$tmp/n.err" ||
    rc=$?
[ "$rc" = 1 ] || fail "record --same-layout where personality is refused exited $rc, expected 1"
[ "$(grep -c . "$tmp/n.err")" = 1 ] && grep -q -- "--same-layout" "$tmp/n.err" ||
    fail "not one message naming --same-layout: $(cat "$tmp/n.err")"
[ ! -e "$tmp/n" ] || [ -z "$(ls "$tmp/n")" ] || fail "record left traces where it refused to run"
"$nopers" "$encore" replay -q "$tmp/s" > "$tmp/np.out" 2> "$tmp/np.err" ||
    fail "replay where personality is refused did not go on"
grep -q "warning: .*address space randomisation off.*refuses" "$tmp/np.err" ||
    fail "no warning that the replay runs at other addresses"
echo "ok"
