#!/bin/bash
# ruby.sh: Ruby's WEBrick HTTP server (ruby-webrick; a thread per connection) serving static
# files and a servlet to curl, then shut down by SIGTERM (its trap calls server.shutdown).
# Not in run_all.sh: 0 of 3 recordings replay.  Recorded without --same-layout, the main
# thread makes another number of CPU-time reads (clock_gettime(CLOCK_PROCESS_CPUTIME_ID),
# the GC's timing: Ruby's conservative GC scans addresses); with it, the main thread gets past
# its start and thread 1 (the GVL's timer thread) takes another path: its clock reads and
# condition signals depend on when the main thread wants the GVL, as CPython's forced GIL
# switch does (README.md, Limits).
set -u
. "$(dirname "$0")/lib.sh"
corpus_need ruby curl
ruby -rwebrick -e1 2>/dev/null || corpus_skip "ruby's webrick is not installed (ruby-webrick)"
corpus_init ruby-webrick "ruby $(ruby -e 'print RUBY_VERSION'), webrick $(ruby -rwebrick -e 'print WEBrick::VERSION')"
port=$(corpus_port)
mkdir -p "$C_RUN/www"
seq 1 3000 | sed 's/$/ lines of a static page/' > "$C_RUN/www/index.html"
cat > "$C_RUN/srv.rb" <<'EOF'
require "webrick"
require "digest"
$stdout.sync = true
s = WEBrick::HTTPServer.new(BindAddress: "127.0.0.1", Port: ARGV[0].to_i,
                            DocumentRoot: ARGV[1], AccessLog: [],
                            Logger: WEBrick::Log.new("/dev/null"))
s.mount_proc("/sum") { |req, res| res.body = "sha1 #{Digest::SHA1.hexdigest(req.body || "")}\n" }
trap("TERM") { s.shutdown }
s.start
puts "stopped"
EOF
seq 1 4000 > "$C_RUN/body"
corpus_session <<EOF
$(command -v ruby) $C_RUN/srv.rb $port $C_RUN/www &
srv=\$!
wait_listen $port
curl -sS http://127.0.0.1:$port/index.html | cksum
curl -sS --data-binary @$C_RUN/body http://127.0.0.1:$port/sum
curl -sS -o /dev/null -w '%{http_code}\n' http://127.0.0.1:$port/missing
stop \$srv
EOF
C_EXPECT='^sha1 '
C_RECORD_OPTS=--same-layout
C_HINT="threads (Ruby's GVL timer thread: its clock reads and signals follow the main thread's timing)"
corpus_run
