#!/bin/bash
# exim.sh: Exim's SMTP daemon (Debian's exim4-daemon-light, in the foreground on a private
# configuration) receiving three mails from swaks and refusing a relay: a child per
# connection that greets through stdio before it reads, and a delivery process that becomes
# `nobody` to append to a mailbox.  Before, the banner written while the accepted end was
# undecided was not logged (the analyzer found a cycle), and the delivery process, no longer
# root, could not open the replay's staging file of a pipe it shared (recorder/stdio.c,
# replayer/lc_chan.c).
set -u
. "$(dirname "$0")/lib.sh"
corpus_need swaks
ex=$(command -v exim4 || echo /usr/sbin/exim4)
[ -x "$ex" ] || corpus_skip "exim4 is not installed (Debian: exim4-daemon-light)"
[ "$(id -u)" = 0 ] || corpus_skip "exim delivers as nobody: it needs root"
corpus_init exim "$("$ex" -bV 2>/dev/null | sed -n 's/^Exim version \([^ ]*\).*/\1/p' | head -1)"
port=$(corpus_port)
mkdir -p "$C_RUN/w/spool"
chmod 777 "$C_RUN/w"
cat > "$C_RUN/exim.conf" <<CONF
exim_user = root
exim_group = root
never_users =
primary_hostname = test.local
domainlist local_domains = test.local
acl_smtp_rcpt = acl_check_rcpt
spool_directory = $C_RUN/w/spool
log_file_path = $C_RUN/w/%slog
pid_file_path = $C_RUN/w/exim.pid
daemon_smtp_ports = $port
local_interfaces = 127.0.0.1
host_lookup =
rfc1413_hosts =
queue_only = false
begin acl
acl_check_rcpt:
  accept domains = +local_domains
  deny message = relay not permitted
begin routers
localuser:
  driver = accept
  domains = +local_domains
  transport = local_file
begin transports
local_file:
  driver = appendfile
  file = $C_RUN/w/mbox
  user = nobody
  group = nogroup
  envelope_to_add
CONF
corpus_session <<EOF
$ex -C $C_RUN/exim.conf -bdf -odi -oP $C_RUN/w/exim.pid &
srv=\$!
wait_listen $port
sw=$(command -v swaks)
for i in 1 2 3; do
  \$sw --server 127.0.0.1:$port --to u\$i@test.local --from a@b.test --body "message \$i" --hide-all --silent 2 && echo "sent \$i"
done
\$sw --server 127.0.0.1:$port --to x@other.test --from a@b.test --quit-after RCPT 2>&1 | grep -o '550.*relay not permitted' | head -1
stop \$srv
grep -c '^Envelope-to' $C_RUN/w/mbox
EOF
C_EXPECT='^sent 3'
corpus_run
