#!/usr/bin/env bash
# callgrind_split.sh: where a recorded server's instructions per request go, from the dumps
# `callgrind_req.sh --keep DIR` leaves (DIR/SERVER.MODE/cg.out.1; see bench/README.md,
# "Sixth round").  One dump: the total, the recorder's own share (libencore-record.so and
# the recorder's and libtrace's inline code), zstd's, per request, then the functions that
# take most.  Two dumps (bare and recorded, or two recorders): each function's count in
# both and the difference, largest first; the recorder's library is named REC, wherever it
# was loaded from, so that two builds compare function by function.
#
#   callgrind_split.sh [-n N] [--top K] DUMP [DUMP2]
#
# N: the requests the dump counted (callgrind_req.sh's -n; default 20000).  Needs
# callgrind_annotate (Debian: valgrind).
set -uo pipefail

N=20000 TOP=30 DUMPS=()
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; }
while [ $# -gt 0 ]; do
	case $1 in
	-n) N=$2; shift ;;
	--top) TOP=$2; shift ;;
	-h|--help) usage; exit 0 ;;
	-*) echo "callgrind_split.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	*) DUMPS+=("$1") ;;
	esac
	shift
done
if [ ${#DUMPS[@]} -lt 1 ] || [ ${#DUMPS[@]} -gt 2 ]; then
	echo "callgrind_split.sh: one or two dumps (see --help)" >&2
	exit 2
fi
command -v callgrind_annotate >/dev/null ||
	{ echo "callgrind_split.sh: needs callgrind_annotate (Debian: valgrind)" >&2; exit 2; }
for d in "${DUMPS[@]}"; do
	[ -r "$d" ] || { echo "callgrind_split.sh: cannot read the dump '$d'" >&2; exit 2; }
done

# functions DUMP: "instructions<TAB>file:function [object]", self cost, the library as REC;
# the first line is the program's total.  The frames that were on the stack when the
# counters were zeroed (main and below) show the whole total: left out.
functions() {
	callgrind_annotate --threshold=100 --auto=no --inclusive=no "$1" 2>/dev/null | awk '
		/^ *[0-9,]+ +\( *[0-9.]+%\)/ {
			v = $1; gsub(",", "", v); s = $0
			sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +/, "", s)
			gsub(/\[[^]]*libencore-record\.so\]/, "[REC]", s)
			if (s ~ /PROGRAM TOTALS/) { total = v; print v "\tPROGRAM TOTALS"; next }
			if (v != total)
				print v "\t" s
		}'
}

if [ ${#DUMPS[@]} -eq 1 ]; then
	functions "${DUMPS[0]}" | awk -F'\t' -v n="$N" -v top="$TOP" '
		NR == 1 { t = $1; next }
		$2 ~ /\[REC\]/ || $2 ~ /\/recorder\/|\/libtrace\// { rec += $1 }
		$2 ~ /libzstd/ { z += $1 }
		{ if (NR <= top + 1) line[NR] = sprintf("%9.1f  %s", $1 / n, $2) }
		END {
			printf "per request: total %.0f, recorder %.0f, zstd %.0f\n", t / n, rec / n, z / n
			for (i = 2; i in line; i++) print line[i]
		}'
	exit 0
fi
join -t $'\t' -1 2 -2 2 -a1 -a2 -e 0 -o 0,1.1,2.1 \
	<(functions "${DUMPS[0]}" | sort -t $'\t' -k2) <(functions "${DUMPS[1]}" | sort -t $'\t' -k2) |
	awk -F'\t' -v n="$N" '{ d = ($3 - $2) / n; a = d < 0 ? -d : d
		printf "%.3f\t%9.1f %9.1f %+9.1f  %s\n", a, $2 / n, $3 / n, d, $1 }' |
	sort -t $'\t' -k1 -nr | head -n "$TOP" | cut -f2-
