#!/bin/sh
# record_libuv.sh: threaded event loops keep working recorded (recorder/README.md, "Limits":
# threads are reported, never hung).  libuv wakes its loop from the worker threads of its pool
# through an eventfd watched by epoll; recorded, such a server must answer exactly as it does
# bare, neither hanging nor spinning, and leave a whole trace.
#   uv    tests/e2e/progs/uv_echo.c: every request answered by a uv_queue_work job; N requests
#         on K connections at once, the answers compared with the bare run's
#   node  Node.js (its own libuv): an http server answering from crypto.pbkdf2 (the pool),
#         driven by curl, recorded answers compared with the bare ones (skipped without node
#         or curl)
# Every command is bounded by `timeout`: a hang fails the test instead of stalling it.
# Usage: record_libuv.sh ENCORE UV_ECHO uv|node
set -eu
encore=$1 uv_echo=$2 mode=$3
. "$(dirname "$0")/real_lib.sh"
real_t=60

case $mode in
uv)
    real_init libuv
    # run_uv OUT [record]: the server (recorded with `record`), the client's answers in OUT
    run_uv() {
        rm -f "$real_tmp/port"
        if [ "${2:-}" = record ]; then
            real_bg timeout "$real_t" "$encore" record -q -o "$real_tmp/s" --name srv -- \
                "$uv_echo" server "$real_tmp/port" > "$real_tmp/srv.out" 2>&1 < /dev/null
        else
            real_bg timeout "$real_t" "$uv_echo" server "$real_tmp/port" \
                > "$real_tmp/srv.out" 2>&1 < /dev/null
        fi
        srv=$real_last
        real_poll 600 test -s "$real_tmp/port" || real_fail "the server never listened ($2)"
        timeout 30 "$uv_echo" client "$(cat "$real_tmp/port")" 200 8 > "$1" ||
            real_fail "the client did not get every answer (${2:-bare})"
        real_wait_pid "$srv"
        [ "$real_status" = 0 ] ||
            { cat "$real_tmp/srv.out"; real_fail "the ${2:-bare} server ended with $real_status"; }
    }
    run_uv "$real_tmp/bare.out"
    run_uv "$real_tmp/rec.out" record
    [ "$(wc -l < "$real_tmp/rec.out")" = 1600 ] || real_fail "not 1600 answers recorded"
    cmp -s "$real_tmp/bare.out" "$real_tmp/rec.out" || real_fail "recorded answers differ"
    real_check "$real_tmp/s"
    echo "ok: 1600 requests answered by libuv's pool, recorded as bare; trace whole"
    ;;
node)
    real_need node curl
    real_init node
    cat > "$real_tmp/srv.js" <<'JS'
const http = require('http');
const crypto = require('crypto');
const fs = require('fs');
const srv = http.createServer((req, res) => {
  crypto.pbkdf2(req.url, 'salt', 2000, 32, 'sha256', (err, key) => {
    if (req.url === '/quit') { res.end('bye\n'); srv.close(); return; }
    res.end(req.url + ' ' + key.toString('hex') + '\n');
  });
});
srv.listen(0, '127.0.0.1', () => {
  fs.writeFileSync(process.argv[2] + '.tmp', String(srv.address().port));
  fs.renameSync(process.argv[2] + '.tmp', process.argv[2]);
});
JS
    # run_node OUT [record]: 20 requests, 10 of them at once, and /quit
    run_node() {
        rm -f "$real_tmp/port"
        if [ "${2:-}" = record ]; then
            real_bg timeout "$real_t" "$encore" record -q -o "$real_tmp/s" --name node -- \
                "$(real_path node)" "$real_tmp/srv.js" "$real_tmp/port" \
                > "$real_tmp/srv.out" 2>&1 < /dev/null
        else
            real_bg timeout "$real_t" node "$real_tmp/srv.js" "$real_tmp/port" \
                > "$real_tmp/srv.out" 2>&1 < /dev/null
        fi
        srv=$real_last
        real_poll 1200 test -s "$real_tmp/port" || real_fail "node never listened (${2:-bare})"
        url=http://127.0.0.1:$(cat "$real_tmp/port")
        for i in 1 2 3 4 5 6 7 8 9 10; do
            timeout 30 curl -sS "$url/seq$i" >> "$1" || real_fail "curl /seq$i (${2:-bare})"
        done
        pids=""
        for i in 1 2 3 4 5 6 7 8 9 10; do
            timeout 30 curl -sS -o "$real_tmp/par$i" "$url/par$i" & pids="$pids $!"
        done
        for p in $pids; do wait "$p" || real_fail "curl in parallel (${2:-bare})"; done
        for i in 1 2 3 4 5 6 7 8 9 10; do cat "$real_tmp/par$i" >> "$1"; done
        timeout 30 curl -sS "$url/quit" > /dev/null || real_fail "curl /quit (${2:-bare})"
        real_wait_pid "$srv"
        [ "$real_status" = 0 ] ||
            { cat "$real_tmp/srv.out"; real_fail "the ${2:-bare} node ended with $real_status"; }
    }
    run_node "$real_tmp/bare.out"
    run_node "$real_tmp/rec.out" record
    [ "$(wc -l < "$real_tmp/rec.out")" = 20 ] || real_fail "not 20 answers recorded"
    cmp -s "$real_tmp/bare.out" "$real_tmp/rec.out" || real_fail "recorded answers differ"
    real_check "$real_tmp/s"
    echo "ok: node answered 20 requests from its pool recorded as bare; trace whole"
    ;;
*)
    echo "usage: record_libuv.sh ENCORE UV_ECHO uv|node"; exit 2 ;;
esac
