#!/bin/bash
# run_all.sh: runs every corpus scenario (see lib.sh), prints the table of results and
# writes it as markdown to RESULTS.md beside this file (the README's "Real programs"
# section shows it).  `./run.sh corpus` installs the programs and calls this.
# Usage: run_all.sh [SCENARIO...]   (default: all; a scenario is "nginx off", "redis"...)
# Environment: ENCORE, CORPUS_TRIES (recordings per scenario, default 3), CORPUS_KEEP (see
# lib.sh), CORPUS_OUT (the markdown file, default tests/corpus/RESULTS.md).
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${CORPUS_OUT:-$here/RESULTS.md}
export CORPUS_TRIES=${CORPUS_TRIES:-3}
scenarios=("nginx off" "nginx on" "lighttpd" "haproxy" "redis term" "memcached" "mosquitto"
           "beanstalkd" "redis shutdown" "dnsmasq dig" "dnsmasq python" "postgres" "rsync" "git" "socat"
           "sshd" "python asyncio" "python pool")
[ $# -eq 0 ] || scenarios=("$@")
lines=$(mktemp /tmp/encore-corpus-results.XXXXXX)
trap 'rm -f "$lines"' EXIT
for s in "${scenarios[@]}"; do
    set -- $s
    echo "==> corpus: $s" >&2
    # each scenario bounds its own commands; this bounds the scenario as a whole
    timeout 900 "$here/$1.sh" "${@:2}" 2> >(sed 's/^/    /' >&2) | grep '^RESULT' >> "$lines"
done
rev=$(git -C "$here" describe --always --dirty 2>/dev/null || echo '?')   # before $out changes
{
    echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -srm), $(nproc) CPUs," \
         "encore $rev;" \
         "each scenario recorded $CORPUS_TRIES times, each recording replayed once" \
         "(\`./run.sh corpus\`)."
    echo
    echo "| program | version | recorded | replayed to the end, outputs identical | halted at Inf(P) | recordings | cause |"
    echo "|---|---|---|---|---|---|---|"
    while IFS=$'\t' read -r _ prog ver rec rep halt tries note; do
        printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$prog" "$ver" "$rec" \
            "${rep//|/\\|}" "${halt//|/\\|}" "$tries" "${note//|/\\|}"
    done < "$lines"
} > "$out"
column -t -s $'\t' < <(cut -f2- "$lines" | cut -c1-400) || cat "$lines"
echo "corpus: the table is in $out" >&2
