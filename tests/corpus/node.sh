#!/bin/bash
# node.sh: node's http module (libuv's event loop, V8's threads, its thread pool) serving
# four curl clients, two of them at once, then closing by itself; recorded with
# --same-layout: V8 decides from where its memory landed whether to scan /proc/self/maps for
# room near its code (a scan that then replays over the recorded characters), so the
# recorded address layout is what makes its replay take the recorded path (3 of 4 recordings
# replayed without the option, 4 of 4 with it, 2026-11-24).
set -u
. "$(dirname "$0")/lib.sh"
corpus_need node curl
corpus_init node-http "$(node --version)"
port=$(corpus_port)
cat > "$C_RUN/srv.js" <<'EOF'
const http = require('http');
let left = 4;
const srv = http.createServer((q, r) => {
  r.end('hello ' + q.url + ' from node\n');
  if (--left === 0) srv.close(() => console.log('served 4, closed'));
});
srv.listen(Number(process.argv[2]), '127.0.0.1', () => console.log('listening'));
EOF
corpus_session <<EOF
$(command -v node) $C_RUN/srv.js $port &
srv=\$!
wait_listen $port
curl -s http://127.0.0.1:$port/a
curl -s http://127.0.0.1:$port/b
curl -s http://127.0.0.1:$port/c & c=\$!
curl -s http://127.0.0.1:$port/d
wait \$c
wait \$srv
EOF
C_EXPECT='served 4, closed'
C_SORTED=1
if "$ENCORE" record --help 2>/dev/null | grep -q -- --same-layout; then
    C_RECORD_OPTS=--same-layout
fi
C_HINT='addresses: V8 scans /proc/self/maps or not depending on where its memory landed (recorded without --same-layout)'
corpus_run
