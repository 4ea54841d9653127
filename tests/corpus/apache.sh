#!/bin/bash
# apache.sh: Apache httpd 2.4 (Debian's apache2) serving a static page to ab and curl,
# recorded with its clients in one session.  It runs in a session of its own (setsid): its
# parent, stopped with SIGTERM, kills its whole process group, the shell included.
#   apache.sh prefork   mpm_prefork, 3 processes that each accept on the one listening
#                       socket (unserialized: one Listen)
#   apache.sh event     mpm_event (Debian's default), 2 processes of 4 worker threads and a
#                       listener thread: the listener and the workers count idle workers
#                       with atomic operations (apr_atomic), which replay does not order
#                       (README.md, "Limits": threads)
set -u
. "$(dirname "$0")/lib.sh"
mpm=${1:-prefork}
case $mpm in prefork|event) ;; *) echo "usage: apache.sh prefork|event" >&2; exit 2 ;; esac
corpus_need apache2 ab curl setsid
mods=/usr/lib/apache2/modules
corpus_init "apache-$mpm" "$(apache2 -v 2>/dev/null | sed -n 's/^Server version: Apache\/\([^ ]*\).*/\1/p')"
[ -f $mods/mod_mpm_$mpm.so ] || corpus_skip "no $mods/mod_mpm_$mpm.so"
port=$(corpus_port)
mkdir -p "$C_RUN/www" "$C_RUN/logs"
seq 1 300 | sed 's/$/ lines of a static page/' > "$C_RUN/www/index.html"
echo small > "$C_RUN/www/small.txt"
if [ "$mpm" = prefork ]; then
    procs="StartServers 3
MinSpareServers 3
MaxSpareServers 3
MaxRequestWorkers 3"
else
    procs="StartServers 2
ServerLimit 2
ThreadsPerChild 4
MaxRequestWorkers 8"
fi
cat > "$C_RUN/httpd.conf" <<EOF
ServerRoot $C_RUN
Listen 127.0.0.1:$port
ServerName localhost
PidFile $C_RUN/httpd.pid
LoadModule mpm_${mpm}_module $mods/mod_mpm_$mpm.so
LoadModule authz_core_module $mods/mod_authz_core.so
LoadModule mime_module $mods/mod_mime.so
LoadModule dir_module $mods/mod_dir.so
TypesConfig /etc/mime.types
DocumentRoot $C_RUN/www
ErrorLog $C_RUN/logs/error.log
LogFormat "%h \"%r\" %>s %b" common
CustomLog $C_RUN/logs/access.log common
$procs
DirectoryIndex index.html
<Directory $C_RUN/www>
  Require all granted
</Directory>
EOF
# Under setsid httpd leaves the process group that c_bounded ends when time is up: its
# parent is ended by the pid it wrote, if that is still our httpd (its group with it).
apache_cleanup() {
    local p
    read -r p < "$C_RUN/httpd.pid" 2>/dev/null || return 0
    case $p in ''|*[!0-9]*) return 0 ;; esac
    grep -q "$C_RUN/httpd.conf" "/proc/$p/cmdline" 2>/dev/null && kill -KILL -- "-$p" 2>/dev/null
    return 0
}
C_CLEANUP_HOOK=apache_cleanup
corpus_session <<EOF
$(command -v setsid) $(command -v apache2) -f $C_RUN/httpd.conf -DFOREGROUND &
srv=\$!
wait_listen $port
$(command -v ab) -q -n 300 -c 4 http://127.0.0.1:$port/small.txt > $C_RUN/ab.out 2>&1; echo "ab exit \$?"
grep -E '^(Complete|Failed) requests' $C_RUN/ab.out
curl -sS http://127.0.0.1:$port/index.html | cksum
curl -sS -o /dev/null -w '%{http_code}\\n' http://127.0.0.1:$port/missing
stop \$srv
grep -c ' 200 ' $C_RUN/logs/access.log
EOF
C_EXPECT='Complete requests: *300'
[ "$mpm" = event ] && C_HINT="threads that count with atomic operations (apr_atomic: the listener's idle workers), which replay does not order"
corpus_run
