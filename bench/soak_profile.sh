#!/usr/bin/env bash
# soak_profile.sh: where a recorded real server's cost goes (see bench/README.md).  Reads the
# sessions `soak.sh --check --keep DIR [--perf]` kept and prints, per server: events per
# request by kind and call, the logged payload per request by kind (clock values, readiness
# results, external input bytes), call sites, trace bytes per request and per event; with the
# perf profile, the share of the server's CPU samples per shared object and the recorder's
# (libencore-record.so) hottest functions.
#
#   soak_profile.sh [--encore PATH] DIR
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ENCORE=$here/../build/cli/encore
[ "${1:-}" = --encore ] && { ENCORE=$2; shift 2; }
dir=${1:?usage: soak_profile.sh [--encore PATH] DIR (a soak.sh --check --keep DIR)}
ls "$dir"/*.requests >/dev/null 2>&1 || { echo "soak_profile.sh: no kept session in $dir; run bench/soak.sh --check --keep $dir first" >&2; exit 2; }

for req in "$dir"/*.requests; do
	case $req in *.bare.requests) continue ;; esac
	srv=$(basename "$req" .requests)
	s=$dir/$srv
	n=$(cat "$req")
	[ "$n" -gt 0 ] 2>/dev/null || continue
	bytes=$(du -sb --exclude=.encore.db "$s" | awk '{ print $1 }')
	printf '\n== %s: %s requests, trace %s bytes (%s per request)\n' "$srv" "$n" "$bytes" \
		"$(awk -v b="$bytes" -v n="$n" 'BEGIN { printf "%.1f", b / n }')"
	"$ENCORE" sql -q "$s" "
		SELECT kind, call, count(*) AS events, round(count(*) * 1.0 / $n, 3) AS per_request
		FROM event GROUP BY kind, call HAVING count(*) * 100 >= $n ORDER BY events DESC;
		SELECT round(count(*) * 1.0 / $n, 2) AS events_per_request,
		       round($bytes * 1.0 / count(*), 2) AS trace_bytes_per_event,
		       (SELECT count(*) FROM stack) AS call_sites,
		       (SELECT count(*) FROM process) AS processes FROM event;
		SELECT kind AS logged, count(*) AS values_, round(sum(size) * 1.0 / $n, 1) AS bytes_per_request
		FROM input GROUP BY kind ORDER BY 3 DESC"
	if [ -f "$dir/$srv.perf" ] && [ -f "$dir/$srv.bare.perf" ] && command -v perf >/dev/null; then
		# cpu-clock samples at a fixed rate: CPU time, whatever else the machine runs
		rs=$(perf script -i "$dir/$srv.perf" -F pid 2>/dev/null | wc -l)
		bs=$(perf script -i "$dir/$srv.bare.perf" -F pid 2>/dev/null | wc -l)
		nb=$(cat "$dir/$srv.bare.requests")
		printf -- '-- CPU per request (perf samples): bare %s, recorded %s, recorded/bare %s\n' \
			"$(awk -v s="$bs" -v n="$nb" 'BEGIN { printf "%.4f", s / n }')" \
			"$(awk -v s="$rs" -v n="$n" 'BEGIN { printf "%.4f", s / n }')" \
			"$(awk -v r="$rs" -v n="$n" -v b="$bs" -v m="$nb" 'BEGIN { printf "%.2f", (r / n) / (b / m) }')"
	fi
	if [ -f "$dir/$srv.perf" ] && command -v perf >/dev/null; then
		echo "-- CPU samples of the recorded server (perf), by object"
		perf report -i "$dir/$srv.perf" --stdio --sort dso 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -8
		echo "-- the recorder's hottest functions (share of all samples)"
		perf report -i "$dir/$srv.perf" --stdio --dsos libencore-record.so --sort sym 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -10
	fi
done
