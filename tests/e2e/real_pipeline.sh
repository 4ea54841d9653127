#!/bin/sh
# real_pipeline.sh: a shell pipeline of coreutils (programs nobody here wrote), recorded as
# one session: dash forks one child per stage, each execs its program, the stages talk over
# pipes.  Checks: every trace whole; analyze/dump/sql agree; the last stage (tail, which
# reads with read(2)) received exactly the bytes the pipeline produces; replay to the end
# prints the recorded output byte for byte; a halt at 'the first stage exited' is Inf(P).
# Usage: real_pipeline.sh ENCORE
set -eu
encore=$1
. "$(dirname "$0")/real_lib.sh"
real_need sh seq sort uniq tr tail wc
real_init pipeline

pipe='seq 2000 | sort -r | uniq | tr 0-9 a-j | tail -n 5'
timeout "$real_t" "$encore" record -q -o "$real_tmp/s" --name sh -- "$(real_path sh)" -c "$pipe" \
    > "$real_tmp/rec.out" < /dev/null || real_fail "encore record"
sh -c "$pipe" > "$real_tmp/plain.out"
cmp -s "$real_tmp/plain.out" "$real_tmp/rec.out" || real_fail "recorded output differs from a plain run"
real_check "$real_tmp/s"
real_counts "$real_tmp/s"

# 6 processes: sh and its 5 stages (each stage two images: dash, then its program)
n=$(real_sql "$real_tmp/s" 'SELECT count(*) FROM process')
[ "$n" = 6 ] || real_fail "expected 6 processes, the session has $n"
# tr (sh.4) and tail (sh.5) read with read(2): each received every byte its stage before
# wrote, then one end of stream
want=$(sh -c 'seq 2000 | sort -r | uniq | wc -c')
for p in sh.4 sh.5; do
    got=$(real_sql "$real_tmp/s" "SELECT sum(e.result) FROM event e JOIN process p ON p.id = e.proc
                                  WHERE p.name = '$p' AND e.kind = 'recv'")
    [ "$got" = "$want" ] || real_fail "$p received $got bytes, the stage before it wrote $want"
    eos=$(real_sql "$real_tmp/s" "SELECT count(*) FROM event e JOIN process p ON p.id = e.proc
                                  WHERE p.name = '$p' AND e.kind = 'recv' AND e.result = 0")
    [ "$eos" = 1 ] || real_fail "$p saw $eos ends of stream, not 1"
done
echo "ok: recorded, tr and tail received all $want bytes"

real_replay "$real_tmp/s" "$real_tmp/rec.out"
echo "ok: replayed to the end, output identical"
real_halt "$real_tmp/s" 'sh.1: exited'

# bash: loops of pipelines, command substitution (a pipe back to the shell), SIGCHLD handler
if command -v bash > /dev/null 2>&1; then
    script='for i in 1 2 3 4 5; do echo "line $i" | cat; done; n=$(seq 300 | wc -l); echo "n=$n"'
    timeout "$real_t" "$encore" record -q -o "$real_tmp/b" --name bash -- "$(real_path bash)" \
        -c "$script" > "$real_tmp/bash.out" < /dev/null || real_fail "encore record bash"
    bash -c "$script" > "$real_tmp/bash.plain"
    cmp -s "$real_tmp/bash.plain" "$real_tmp/bash.out" || real_fail "bash: recorded output differs"
    real_check "$real_tmp/b"
    real_counts "$real_tmp/b"
    # bash read the 4 bytes "300\n" wc wrote into the command substitution's pipe
    got=$(real_sql "$real_tmp/b" "SELECT coalesce(sum(e.result), 0) FROM event e
                                  JOIN process p ON p.id = e.proc
                                  WHERE p.name = 'bash' AND e.kind = 'recv' AND e.result > 0")
    [ "$got" = 4 ] || real_fail "bash received $got bytes from \$(...), not 4"
    real_replay "$real_tmp/b" "$real_tmp/bash.out"
    echo "ok: bash recorded and replayed ($real_events events)"
else
    echo "bash is not installed: its part is skipped"
fi

# make -j2: GNU make's jobserver is a pipe its children share
if command -v make > /dev/null 2>&1; then
    mkdir "$real_tmp/mk"
    cat > "$real_tmp/mk/Makefile" <<'EOF'
all: out.txt
a.txt: ; seq 1 500 > $@
b.txt: ; seq 500 1000 > $@
c.txt: a.txt b.txt ; cat a.txt b.txt | sort -n | uniq > $@
out.txt: c.txt ; wc -l < c.txt > $@; cat $@
EOF
    mk=$(real_path make)
    (cd "$real_tmp/mk" && timeout "$real_t" "$encore" record -q -o "$real_tmp/m" -- "$mk" -j2 -s \
        > "$real_tmp/make.out" < /dev/null) || real_fail "encore record make"
    [ "$(cat "$real_tmp/make.out")" = 1000 ] || real_fail "make printed $(cat "$real_tmp/make.out")"
    real_check "$real_tmp/m"
    real_counts "$real_tmp/m"
    [ "$real_unmatched" = 0 ] || real_fail "make: $real_unmatched unmatched receives"
    # the files are the filesystem's, not the trace's: replay starts from the same tree
    rm -f "$real_tmp/mk/a.txt" "$real_tmp/mk/b.txt" "$real_tmp/mk/c.txt" "$real_tmp/mk/out.txt"
    real_replay "$real_tmp/m" "$real_tmp/make.out"
    echo "ok: make -j2 recorded and replayed ($real_events events, $real_linked messages)"
else
    echo "make is not installed: its part is skipped"
fi

# A pipe holds 64 KiB: dd's 16 writes of 64 KiB each returned only once cat had made room, so
# the least cut where dd has exited holds cat past its 15th read of 64 KiB (the analyzer's
# bounded-buffer edges); without them the cut leaves cat at its start and replay stalls.
if command -v dd > /dev/null 2>&1 && command -v cat > /dev/null 2>&1; then
    timeout "$real_t" "$encore" record -q -o "$real_tmp/d" --name sh -- "$(real_path sh)" \
        -c 'dd if=/dev/zero bs=65536 count=16 status=none | cat > /dev/null' < /dev/null ||
        real_fail "encore record dd | cat"
    real_check "$real_tmp/d"
    real_halt "$real_tmp/d" 'sh.1: exited'
    got=$(grep -o '"sh.2":[0-9]*' "$real_tmp/inf.json" | head -1 | cut -d: -f2)
    need=$(real_sql "$real_tmp/d" "SELECT min(e.idx) FROM event e JOIN process p ON p.id = e.proc
                                   WHERE p.name = 'sh.2' AND e.kind = 'recv' AND e.result > 0
                                   AND e.offset + e.result >= 15 * 65536")
    [ -n "$need" ] && [ "$got" -ge "$need" ] ||
        real_fail "dd | cat: the cut holds cat at $got, before its read $need that made dd's room"
    echo "ok: dd | cat halts with cat past the reads that made room ($got >= $need)"
fi
