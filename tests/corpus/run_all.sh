#!/bin/bash
# run_all.sh: runs every corpus scenario (see lib.sh), prints the table of results and
# writes it as markdown to RESULTS.md beside this file (the README's "Real programs"
# section shows it).  `./run.sh corpus` installs the programs and calls this.
# Usage: run_all.sh [--list] [SCENARIO...]
#   a SCENARIO is a script and its argument, joined by '-' or as two words ("nginx-on",
#   "nginx on"), or a script alone ("nginx": each of its scenarios); --list prints them.
# Environment:
#   CORPUS_ONLY   SCENARIO,SCENARIO...: run only these (as the arguments do; `./run.sh
#                 corpus` passes the environment on)
#   CORPUS_TRIES  recordings per scenario, each replayed once (default 2: the whole
#                 corpus took 84 s on 2 CPUs where most replays diverge at once; a stalled
#                 replay or halt adds 15 s, a command that hangs at most 60 s)
#   CORPUS_OUT    the markdown file (default tests/corpus/RESULTS.md for the whole corpus;
#                 a subset writes $TMPDIR/encore-corpus-RESULTS.md unless CORPUS_OUT is set,
#                 so that it never replaces the whole table with a part of it)
#   ENCORE, CORPUS_KEEP, CORPUS_NO_HALT, CORPUS_DEBUG: see lib.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
export CORPUS_TRIES=${CORPUS_TRIES:-2}
# script and argument; the first words of the issues' lists first (threads, then signals)
all=("nginx off" "nginx on" "lighttpd" "haproxy 1" "haproxy 2" "redis term" "redis shutdown"
     "redis bench" "memcached 4" "mosquitto" "beanstalkd" "dnsmasq dig" "dnsmasq python"
     "postgres" "rsync" "git threads" "socat" "supervisor" "sshd" "python asyncio"
     "python pool" "python threading" "node" "perl" "tinyproxy" "unbound" "vsftpd"
     "pyhttp 1" "pyhttp 4" "redispipe" "openssl" "swaks" "make" "pyregrtest"
     "faults nginx-kill" "faults redis-kill9" "faults nginx-stop" "faults nginx-emfile"
     "faults postgres-kill9" "tcl" "python futures" "apache prefork" "apache event" "php"
     "exim" "iperf3" "gunicorn" "nghttpd" "h2o" "busybox-httpd" "dovecot" "ncat" "netcat"
     "squid")
if [ "${1:-}" = --list ]; then
    for s in "${all[@]}"; do echo "${s// /-}"; done
    exit 0
fi

# the scenarios asked for: arguments, else CORPUS_ONLY, else all
want=("$@")
[ ${#want[@]} -gt 0 ] || [ -z "${CORPUS_ONLY:-}" ] || IFS=', ' read -r -a want <<< "$CORPUS_ONLY"
scenarios=()
if [ ${#want[@]} -eq 0 ]; then
    scenarios=("${all[@]}")
    out=${CORPUS_OUT:-$here/RESULTS.md}
else
    for w in "${want[@]}"; do
        found=""
        for s in "${all[@]}"; do
            case "$w" in "$s"|"${s// /-}"|"${s%% *}") scenarios+=("$s"); found=1 ;; esac
        done
        [ -n "$found" ] || { echo "run_all.sh: no scenario '$w' (run_all.sh --list names them)" >&2; exit 2; }
    done
    out=${CORPUS_OUT:-${TMPDIR:-/tmp}/encore-corpus-RESULTS.md}
fi
lines=$(mktemp /tmp/encore-corpus-results.XXXXXX)
trap 'rm -f "$lines" "$lines.1"' EXIT
t0=$(date +%s)
for s in "${scenarios[@]}"; do
    set -- $s
    echo "==> corpus: $s" >&2
    t=$(date +%s)
    # each scenario bounds its own commands; this bounds the scenario as a whole
    timeout 900 "$here/$1.sh" "${@:2}" 2> >(sed 's/^/    /' >&2) | grep '^RESULT' > "$lines.1"
    st=${PIPESTATUS[0]}
    t=$(( $(date +%s) - t ))
    if [ -s "$lines.1" ]; then
        sed "s/^/${t}\t/" "$lines.1" >> "$lines"
    else
        # the scenario ended without its result line (killed at 900 s, a bug of its own)
        printf '%s\tRESULT\t%s\t-\tno result (the scenario exited with status %s)\t-\t-\t0\t-\n' \
            "$t" "${s// /-}" "$st" >> "$lines"
    fi
done
total=$(( $(date +%s) - t0 ))
rev=$(git -C "$here" describe --always --dirty 2>/dev/null || echo '?')   # before $out changes
{
    echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -srm), $(nproc) CPUs," \
         "encore $rev;" \
         "recordings per scenario: $CORPUS_TRIES, each replayed once" \
         "(\`./run.sh corpus\`); ${#scenarios[@]} scenarios in $((total / 60)) min $((total % 60)) s."
    echo
    echo "| program | version | recorded | replayed to the end, outputs identical | halted at Inf(P) | recordings | cause | time (s) |"
    echo "|---|---|---|---|---|---|---|---|"
    # time first in $lines: a row's last field, the cause, may be empty
    awk -F'\t' '{ r = "|"; for (i = 3; i <= 9; i++) { gsub(/\|/, "\\|", $i); r = r " " $i " |" }
                  print r " " $1 " |" }' "$lines"
} > "$out"
awk -F'\t' -v OFS='\t' '{ print $3, $4, $5, $6, $7, $8, $1 "s", $9 }' "$lines" |
    cut -c1-400 | column -t -s $'\t' || cat "$lines"
echo "corpus: ${#scenarios[@]} scenarios in ${total} s; the table is in $out" >&2
