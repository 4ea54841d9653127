#!/bin/sh
# gap_io.sh: calls that reach the kernel past the usual interposers (recorder/io_more.c).
# Usage: gap_io.sh ENCORE GAP_IO MODE
#   random  syscall(SYS_getrandom), getentropy: the trace holds RANDOM events from them, and
#           replay prints the recorded bytes (a fresh run prints other ones).  (OpenSSL 3
#           seeds itself with one of them; its output still differs in replay: it mixes in
#           rdtsc, which no interposer sees.)
#   move    sendfile, splice, vmsplice between recorded processes: every receive is matched
#           to its send (analyze: 0 unmatched), and replay prints the same thing
#   tcp     sendfile to a recorded TCP peer: the same
set -eu
encore=$1 prog=$2 mode=$3
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/gap_io.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/w"
arg=""
[ "$mode" != random ] && arg="$tmp/w"

# shellcheck disable=SC2086
timeout 60 "$encore" record -q -o "$tmp/s" --name gap -- "$prog" "$mode" $arg > "$tmp/rec.out"
"$encore" dump "$tmp/s" > "$tmp/dump.txt"
case $mode in
random)
    n=$(grep -cE 'random +syscall' "$tmp/dump.txt" || true)
    [ "$n" -ge 3 ] || { echo "FAIL: $n RANDOM events from syscall (want 3)"; cat "$tmp/dump.txt"; exit 1; }
    grep -qE 'random +getentropy' "$tmp/dump.txt" || { echo "FAIL: no getentropy event"; cat "$tmp/dump.txt"; exit 1; }
    grep -q '^getpid agrees: 1$' "$tmp/rec.out" || { echo "FAIL: pass-through"; cat "$tmp/rec.out"; exit 1; }
    grep -q 'close(-1): -1 EBADF' "$tmp/rec.out" || { echo "FAIL: errno"; cat "$tmp/rec.out"; exit 1; }
    grep -q 'getrandom(NULL): -1 EFAULT' "$tmp/rec.out" || { echo "FAIL: errno"; cat "$tmp/rec.out"; exit 1; }
    grep -q 'open(bad path, O_CREAT): -1 EFAULT' "$tmp/rec.out" || { echo "FAIL: open's EFAULT"; cat "$tmp/rec.out"; exit 1; }
    grep -q 'rename(to a bad path): -1 refused' "$tmp/rec.out" || { echo "FAIL: rename's error"; cat "$tmp/rec.out"; exit 1; }
    "$prog" random > "$tmp/fresh.out"
    if cmp -s "$tmp/fresh.out" "$tmp/rec.out"; then echo "FAIL: two runs drew the same bytes"; exit 1; fi
    ;;
move)
    for c in sendfile splice vmsplice; do
        grep -qE " $c( |$)" "$tmp/dump.txt" || { echo "FAIL: no $c event"; cat "$tmp/dump.txt"; exit 1; }
    done
    if grep -q 'copy_file_range' "$tmp/dump.txt"; then echo "FAIL: copy_file_range between files logged"; exit 1; fi
    "$encore" analyze "$tmp/s" > "$tmp/an.txt"
    grep -q ' 0 unmatched' "$tmp/an.txt" || { echo "FAIL: unmatched messages"; cat "$tmp/an.txt"; exit 1; }
    grep -q ' 0 external receives' "$tmp/an.txt" || { echo "FAIL: external receives"; cat "$tmp/an.txt"; exit 1; }
    ;;
tcp)
    grep -qE ' sendfile( |$)' "$tmp/dump.txt" || { echo "FAIL: no sendfile event"; cat "$tmp/dump.txt"; exit 1; }
    "$encore" analyze "$tmp/s" > "$tmp/an.txt"
    grep -q ' 0 unmatched' "$tmp/an.txt" || { echo "FAIL: unmatched messages"; cat "$tmp/an.txt"; exit 1; }
    grep -q ' 0 external receives' "$tmp/an.txt" || { echo "FAIL: external receives"; cat "$tmp/an.txt"; exit 1; }
    grep -q 'tcp child: 2000 bytes' "$tmp/rec.out" || { echo "FAIL: output"; cat "$tmp/rec.out"; exit 1; }
    ;;
esac
for run in 1 2; do
    if ! timeout 60 "$encore" replay "$tmp/s" > "$tmp/rep.out" 2> "$tmp/rep.err"; then
        echo "FAIL: replay $run did not run to the end:"; cat "$tmp/rep.err"; exit 1
    fi
    if ! cmp -s "$tmp/rec.out" "$tmp/rep.out"; then
        echo "FAIL: replay $run printed something else than the recorded run:"
        diff "$tmp/rec.out" "$tmp/rep.out" | head -20 || true
        exit 1
    fi
done
echo "ok: $mode, $(wc -l < "$tmp/rec.out") lines identical"
