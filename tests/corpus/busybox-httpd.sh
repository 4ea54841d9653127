#!/bin/bash
# busybox-httpd.sh: BusyBox httpd (a process forked per connection; a CGI script run by
# /bin/sh through a pipe pair) serving a file to busybox wget and curl, the CGI to GET with
# a query string and to POST, and a 404, then SIGTERM.  Seen in the halt (replays to the end
# pass; halted at sh.1.4 about half the time): the file's server process halts right after
# its sendfile of the body (the last event of its cut), and wget (reading the socket made
# non-blocking through stdio) waits at its poll for the body, or its fread finds "0 bytes
# now, 25 recorded"; the socket holds nothing by then (ss: all 234 bytes received and read),
# so the body seems to have gone into wget's stdio buffer with the headers' refill.
set -u
. "$(dirname "$0")/lib.sh"
corpus_need busybox curl
corpus_init busybox-httpd "$(busybox | sed -n '1s/^BusyBox v\([^ ]*\).*/\1/p')"
port=$(corpus_port)
mkdir -p "$C_RUN/www/cgi-bin"
echo "hello from busybox httpd" > "$C_RUN/www/index.html"
seq 1 5000 | sed 's/$/ lines of big/' > "$C_RUN/www/big.txt"
cat > "$C_RUN/www/cgi-bin/q" <<'EOF'
#!/bin/sh
echo "Content-Type: text/plain"
echo
echo "method $REQUEST_METHOD query $QUERY_STRING"
[ "$REQUEST_METHOD" = POST ] && echo "body $(head -c "$CONTENT_LENGTH")"
exit 0
EOF
chmod 755 "$C_RUN/www/cgi-bin/q"
corpus_session <<EOF
$(command -v busybox) httpd -f -p 127.0.0.1:$port -h $C_RUN/www &
srv=\$!
wait_listen $port
busybox wget -q -O - http://127.0.0.1:$port/index.html
curl -sS http://127.0.0.1:$port/big.txt | cksum
curl -sS 'http://127.0.0.1:$port/cgi-bin/q?a=1&b=two'
curl -sS -d 'x=42' http://127.0.0.1:$port/cgi-bin/q
curl -sS -o /dev/null -w '%{http_code}\n' http://127.0.0.1:$port/missing
stop \$srv
EOF
C_EXPECT='body x=42'
corpus_run
