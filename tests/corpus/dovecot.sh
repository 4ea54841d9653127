#!/bin/bash
# dovecot.sh: the Dovecot IMAP server (a master forking its services: imap-login, auth,
# anvil, log, config, imap, talking over Unix sockets and passing descriptors), run as the
# unprivileged user nobody with a static password and Maildirs under $C_RUN, and two Python
# imaplib clients (LOGIN, CREATE, LIST, APPEND, SELECT, FETCH, LOGOUT), then SIGTERM.
set -u
. "$(dirname "$0")/lib.sh"
corpus_need dovecot python3 runuser
corpus_init dovecot "$(dovecot --version | sed 's/ .*//')"
C_AS=nobody
port=$(corpus_port)
py=/usr/bin/python3; [ -x $py ] || py=$(command -v python3)
runuser -u nobody -- test -x "$ENCORE" || corpus_skip "the user nobody cannot run $ENCORE (its directories are closed to others)"
mkdir -p "$C_RUN/base" "$C_RUN/state" "$C_RUN/home"
cat > "$C_RUN/dovecot.conf" <<EOF
base_dir = $C_RUN/base
state_dir = $C_RUN/state
log_path = $C_RUN/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain
passdb {
  driver = static
  args = password=pass
}
userdb {
  driver = static
  args = uid=nobody gid=nogroup home=$C_RUN/home/%u
}
mail_location = maildir:~/Maildir
first_valid_uid = 0
default_internal_user = nobody
default_login_user = nobody
default_internal_group = nogroup
service anvil {
  chroot =
}
service imap-login {
  chroot =
  inet_listener imap {
    port = $port
  }
}
EOF
cat > "$C_RUN/imap.py" <<'EOF'
import imaplib, sys
user, port = sys.argv[1], int(sys.argv[2])
m = imaplib.IMAP4("127.0.0.1", port)
print(user, m.login(user, "pass")[0])
print(user, "create", m.create("Work")[0])
print(user, "list", sorted(l.decode().split()[-1] for l in m.list()[1]))
msg = "From: %s@test\r\nSubject: note for %s\r\n\r\nbody\r\n" % (user, user)
print(user, "append", m.append("Work", None, None, msg.encode())[0])
print(user, "select", m.select("Work")[1])
print(user, m.fetch("1", "(BODY[HEADER.FIELDS (SUBJECT)])")[1][0][1].decode().strip())
print(user, m.logout()[0])
EOF
chown -R nobody "$C_TMP"
corpus_session <<EOF
$(command -v dovecot) -F -c $C_RUN/dovecot.conf &
srv=\$!
wait_listen $port
$py $C_RUN/imap.py alice $port
$py $C_RUN/imap.py bob $port
stop \$srv
EOF
C_EXPECT='Subject: note for bob'
# replayed without isolation: isolated as nobody (a user namespace, replayer/gd_isolate.c),
# dovecot's log file in $C_RUN cannot be created ("Can't open log file ...: Value too large
# for defined data type": overlayfs cannot copy up /tmp, root's, unmapped there) and the
# master exits; $C_RUN is put back before every replay anyway (lib.sh), as in postgres.sh
if "$ENCORE" replay --help 2>&1 | grep -q -- --no-isolate; then C_REPLAY_OPTS=--no-isolate; fi
corpus_run
