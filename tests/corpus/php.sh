#!/bin/bash
# php.sh: PHP's built-in web server (php -S) with a router script, curl clients (GET, POST,
# a static file, a 404), stopped by SIGTERM: PHP's handler sets SIG_DFL with SA_SIGINFO and
# sends itself the signal again (interpose/interpose.h, ip_sa_dfl).
set -u
. "$(dirname "$0")/lib.sh"
corpus_need php curl
corpus_init php-S "$(php -r 'echo PHP_VERSION;')"
port=$(corpus_port)
mkdir -p "$C_RUN/www"
cat > "$C_RUN/www/index.php" <<'P'
<?php
if ($_SERVER['REQUEST_METHOD'] === 'POST') { echo "posted ", strlen(file_get_contents('php://input')), " bytes: ", md5(file_get_contents('php://input')), "\n"; return; }
echo "hello php ", htmlspecialchars($_GET['n'] ?? 'x'), " ", array_sum(range(1, 100)), "\n";
P
echo static > "$C_RUN/www/s.txt"
corpus_session <<EOF2
$(command -v php) -S 127.0.0.1:$port -t $C_RUN/www 2>/dev/null &
srv=\$!
wait_listen $port
curl -s "http://127.0.0.1:$port/index.php?n=1"
curl -s "http://127.0.0.1:$port/index.php?n=2"
curl -s --data-binary @$C_RUN/www/index.php http://127.0.0.1:$port/index.php
curl -s http://127.0.0.1:$port/s.txt
curl -s -o /dev/null -w '%{http_code}\n' http://127.0.0.1:$port/missing.txt
stop \$srv
EOF2
C_EXPECT="hello php 2"
corpus_run
