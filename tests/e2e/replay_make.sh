#!/bin/sh
# replay_make.sh: `make -j2` over a small generated Makefile, recorded, then replayed with its
# outputs still there: the replay does not see them (replayer/README.md, "Isolation and packed
# files"), runs every job again and prints what the recording printed, and the real outputs
# are untouched.  Without the hiding, make finds its targets up to date and the replay
# diverges at its first job.
# Usage: replay_make.sh ENCORE
set -eu
unset ENCORE_NO_ISOLATE
encore=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
command -v make > /dev/null || { echo "SKIP: no make"; exit 77; }
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_make.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/w/src"
for i in 1 2; do echo "part $i of the program" > "$tmp/w/src/p$i.txt"; done
# two objects built at once in a directory the jobs make, then a link step and a stamp file.
# Never more jobs ready than slots: make waits for its children in a wait of its own, not in
# the jobserver's pselect, whose non-blocking reaps before the first SIGCHLD handler run are
# not replayed as recorded (a job ending before make's first reap in one run but not in the
# other diverges: README.md, "Limits of this version")
cat > "$tmp/w/Makefile" <<'MK'
all: stamp
obj/prog: obj/p1.o obj/p2.o
	cat obj/p1.o obj/p2.o > $@
	@echo linked 2 objects
obj/%.o: src/%.txt
	mkdir -p obj && tr a-z A-Z < $< > $@
stamp: obj/prog
	touch $@
MK
(cd "$tmp/w" && "$encore" record -q -o "$tmp/s" -- make -j2) > "$tmp/rec.out" 2>&1 ||
    { echo "FAIL: the recorded make failed:"; cat "$tmp/rec.out"; exit 1; }
grep -q "^linked 2 objects" "$tmp/rec.out" || { echo "FAIL: make did not link:"; cat "$tmp/rec.out"; exit 1; }
[ -f "$tmp/w/obj/prog" ] && [ -f "$tmp/w/stamp" ] || { echo "FAIL: no outputs"; exit 1; }
sums() { (cd "$tmp/w" && find . -printf '%p %y %s %T@\n' | sort); }
sums > "$tmp/before"
if ! (cd "$tmp/w" && "$encore" replay "$tmp/s") > "$tmp/rep.out" 2> "$tmp/rep.err"; then
    if grep -q "replay is not isolated" "$tmp/rep.err"; then
        echo "SKIP: $(cat "$tmp/rep.err")"; exit 77
    fi
    echo "FAIL: the replay:"; cat "$tmp/rep.err"; echo "-- its output:"; cat "$tmp/rep.out"; exit 1
fi
# make's stderr went to the recording's output too: compare stdout lines only
grep -v "^encore" "$tmp/rec.out" | sort > "$tmp/rec.sorted"
sort "$tmp/rep.out" > "$tmp/rep.sorted"
cmp -s "$tmp/rec.sorted" "$tmp/rep.sorted" ||
    { echo "FAIL: the replay printed something else:"; diff "$tmp/rec.sorted" "$tmp/rep.sorted"; exit 1; }
grep -q "files the recording created hidden from the replay" "$tmp/rep.err" ||
    { echo "FAIL: no word of the hidden files:"; cat "$tmp/rep.err"; exit 1; }
sums > "$tmp/after"
cmp -s "$tmp/before" "$tmp/after" ||
    { echo "FAIL: the replay changed the real outputs:"; diff "$tmp/before" "$tmp/after"; exit 1; }
echo "ok: make -j2 replayed every job ($(wc -l < "$tmp/rep.out") lines as recorded), outputs untouched"
