#!/bin/bash
# socat.sh: socat TCP-LISTEN,fork EXEC:rev (a forking server, one child per connection,
# each running rev) and three socat clients.
set -u
. "$(dirname "$0")/lib.sh"
corpus_need socat rev
corpus_init socat-fork "$(socat -V | sed -n 's/^socat version \([^ ]*\).*/\1/p')"
port=$(corpus_port)
corpus_session <<EOF
$(command -v socat) TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr,fork EXEC:rev > /dev/null 2>&1 &
srv=\$!
wait_listen $port
for w in hello world 'the third line'; do echo "\$w" | socat - TCP:127.0.0.1:$port; done
stop \$srv
EOF
C_EXPECT=olleh
# seen in the traces: socat's SIGCHLD handler (rev ending, a child ending) writes to a
# socketpair of its own that socat reads between its other calls
C_HINT='asynchronous signals (SIGCHLD: the handler writes to a socketpair socat reads between its other calls)'

corpus_run
