#!/bin/sh
# replay_procfiles.sh: files of the kernel's live state (/proc, /sys) are external input
# (recorder/README.md, "Kernel-state files"): their reads are logged with their bytes and a
# replay returns those bytes, so a program that prints /proc/loadavg, /proc/self/stat,
# /proc/uptime and /proc/meminfo, recorded several times, replays each time with the output
# it had (the files themselves differ between any two runs); and dash and bash reading
# /proc/net/tcp line by line with their `read` builtin through a redirection (as
# tests/corpus/lib.sh's wait_listen does) replay with the lines they saw.
# Usage: replay_procfiles.sh ENCORE PROG
set -eu
encore=$1 prog=$2
[ -r /proc/loadavg ] && [ -r /proc/net/tcp ] || { echo "skip: no /proc"; exit 77; }
tmp=$(mktemp -d "${ENCORE_TEST_TMPDIR:-/tmp}/replay_procfiles.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

for i in 1 2 3; do
	"$encore" record -q -o "$tmp/p$i" -- "$prog" > "$tmp/p$i.rec"
	grep -q '^uptime: ' "$tmp/p$i.rec" || { echo "FAIL: record $i printed:"; cat "$tmp/p$i.rec"; exit 1; }
	"$encore" replay "$tmp/p$i" > "$tmp/p$i.rep" 2> "$tmp/p$i.err" || { cat "$tmp/p$i.err"; exit 1; }
	cmp -s "$tmp/p$i.rec" "$tmp/p$i.rep" || { echo "FAIL: run $i:"; diff "$tmp/p$i.rec" "$tmp/p$i.rep"; exit 1; }
done
echo "ok: 3 recordings of $prog replayed with their /proc contents"

# A cgroup file system's file read just before /proc/meminfo (libuv's memory limit, node):
# kernel state too, its read recorded, and the meminfo read replayed as meminfo's.
cg=
for f in /sys/fs/cgroup/memory.max /sys/fs/cgroup/cgroup.controllers \
    /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/cpu/cpu.shares; do
	[ -f "$f" ] && [ -r "$f" ] && { cg=$f; break; }
done
if [ -n "$cg" ]; then
	"$encore" record -q -o "$tmp/cg" -- "$prog" "$cg" > "$tmp/cg.rec"
	grep -q '^cgroup: ' "$tmp/cg.rec" || { echo "FAIL: cgroup record printed:"; cat "$tmp/cg.rec"; exit 1; }
	"$encore" replay "$tmp/cg" > "$tmp/cg.rep" 2> "$tmp/cg.err" || { cat "$tmp/cg.err"; exit 1; }
	cmp -s "$tmp/cg.rec" "$tmp/cg.rep" || { echo "FAIL: cgroup run:"; diff "$tmp/cg.rec" "$tmp/cg.rep"; exit 1; }
	echo "ok: $cg read before /proc/meminfo replayed"
else
	echo "(no cgroup file system file to read: that part skipped)"
fi

# The shell: the uptime line changes between any two runs; the number of lines of
# /proc/net/tcp may.
script='n=0; while read -r a b; do n=$((n + 1)); done < /proc/net/tcp
read -r up rest < /proc/uptime; echo "tcp lines: $n, uptime: $up"'
# bash's read builtin reads ahead on a seekable file and seeks back: the replayed offset must
# follow the recorded reads.
shells=/bin/sh
[ -x /bin/bash ] && shells="$shells /bin/bash"
i=0
for sh in $shells $shells; do
	i=$((i + 1))
	"$encore" record -q -o "$tmp/s$i" -- "$sh" -c "$script" > "$tmp/s$i.rec"
	"$encore" replay "$tmp/s$i" > "$tmp/s$i.rep" 2> "$tmp/s$i.err" || { cat "$tmp/s$i.err"; exit 1; }
	cmp -s "$tmp/s$i.rec" "$tmp/s$i.rep" || { echo "FAIL: shell $i:"; diff "$tmp/s$i.rec" "$tmp/s$i.rep"; exit 1; }
done
echo "ok: $i shell runs ($shells) reading /proc/net/tcp and /proc/uptime replayed with what they read"
