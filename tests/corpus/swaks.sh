#!/bin/bash
# swaks.sh: an SMTP exchange: swaks (Perl, Net::SMTP-like dialogue) sending two mails to
# Python's smtpd DebuggingServer (asyncore; it prints each message it gets), which ends on
# SIGTERM.
set -u
. "$(dirname "$0")/lib.sh"
corpus_need swaks
py=/usr/bin/python3; [ -x $py ] || py=$(command -v python3)
$py -c 'import warnings; warnings.simplefilter("ignore"); import smtpd' 2>/dev/null ||
    corpus_skip "python's smtpd module is not there (removed in Python 3.12)"
corpus_init swaks-smtpd "swaks $(swaks --version 2>&1 | sed -n 's/.*version \([^ ]*\).*/\1/p' | head -1), python $($py --version | sed 's/Python //')"
port=$(corpus_port)
corpus_session <<EOF
$py -W ignore -u -m smtpd -n -c DebuggingServer 127.0.0.1:$port > $C_RUN/mails.txt 2>&1 &
srv=\$!
wait_listen $port
sw=$(command -v swaks)
\$sw --server 127.0.0.1:$port --from alice@example.test --to bob@example.test --header 'Subject: first' --body 'hello bob' --silent 2 && echo sent 1
\$sw --server 127.0.0.1:$port --from carol@example.test --to dave@example.test,erin@example.test --header 'Subject: second' --body 'two recipients' --silent 2 && echo sent 2
stop \$srv
grep -E '^(Subject|X-Peer|From|To):|^hello bob|^two recipients' $C_RUN/mails.txt | sed 's/X-Peer: .*/X-Peer: (address)/'
EOF
C_EXPECT='^sent 2'
corpus_run
