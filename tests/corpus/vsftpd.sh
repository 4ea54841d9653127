#!/bin/bash
# vsftpd.sh: vsftpd (standalone, anonymous read-only, passive mode on loopback) serving a
# listing and two files to curl ftp://: the control connection, a data connection per
# transfer, vsftpd's per-session child processes.
set -u
. "$(dirname "$0")/lib.sh"
vs=$(command -v vsftpd || echo /usr/sbin/vsftpd)
[ -x "$vs" ] || corpus_skip "vsftpd is not installed"
corpus_need curl
[ "$(id -u)" = 0 ] || corpus_skip "vsftpd needs root (it drops to its ftp user itself)"
corpus_init vsftpd "$(dpkg-query -W -f '${Version}' vsftpd 2>/dev/null || echo '?')"
port=$(corpus_port)
mkdir -p "$C_RUN/ftp/pub" "$C_RUN/empty"
chmod 555 "$C_RUN/ftp"
seq 1 3000 | sed 's/$/ lines of a file on FTP/' > "$C_RUN/ftp/pub/big.txt"
echo small > "$C_RUN/ftp/pub/small.txt"
cat > "$C_RUN/vsftpd.conf" <<EOF
listen=YES
listen_address=127.0.0.1
listen_port=$port
anonymous_enable=YES
anon_root=$C_RUN/ftp
no_anon_password=YES
local_enable=NO
write_enable=NO
pasv_enable=YES
pasv_address=127.0.0.1
seccomp_sandbox=NO
secure_chroot_dir=$C_RUN/empty
xferlog_enable=NO
vsftpd_log_file=$C_RUN/vsftpd.log
background=NO
run_as_launching_user=NO
EOF
corpus_session <<EOF
$vs $C_RUN/vsftpd.conf &
srv=\$!
wait_listen $port
curl -sS ftp://127.0.0.1:$port/pub/ -l
curl -sS ftp://127.0.0.1:$port/pub/big.txt | cksum
curl -sS ftp://127.0.0.1:$port/pub/small.txt
stop \$srv
EOF
C_EXPECT=small
# vsftpd's session processes read the control connection in turn: the connection is shared
# from its accept (recorder/share.c), so the analyzer links every reply and the halt comes
# (before, each process counted its offsets from 0, the messages were left unlinked and the
# halt waited for a reply from a process Inf(P) left unstarted).
corpus_run
