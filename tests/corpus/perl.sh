#!/bin/bash
# perl.sh: a Perl HTTP server (HTTP::Daemon from libhttp-daemon-perl, one connection at a
# time) serving a page and an echo of the request's body to curl, then ending by itself
# once it has served them (it prints its count as it ends, unordered with the last client's
# output: the last page is printed after the server has ended, as processes sharing one
# stdout interleave freely in replay, README.md "Limits").
set -u
. "$(dirname "$0")/lib.sh"
corpus_need perl curl
perl -MHTTP::Daemon -e1 2>/dev/null || corpus_skip "perl's HTTP::Daemon is not installed (libhttp-daemon-perl)"
corpus_init perl-http-daemon "perl $(perl -e 'printf "%vd", $^V'), HTTP::Daemon $(perl -MHTTP::Daemon -e 'print $HTTP::Daemon::VERSION')"
port=$(corpus_port)
cat > "$C_RUN/srv.pl" <<'EOF'
use strict; use warnings;
use HTTP::Daemon; use HTTP::Response; use Digest::MD5 qw(md5_hex);
$| = 1;
my ($port, $n) = @ARGV;
my $d = HTTP::Daemon->new(LocalAddr => "127.0.0.1", LocalPort => $port, ReuseAddr => 1)
    or die "listen: $!";
my $served = 0;
while ($served < $n and my $c = $d->accept) {
    while (my $r = $c->get_request) {
        my $res = HTTP::Response->new(200);
        if ($r->method eq "POST") {
            $res->content("md5 " . md5_hex($r->content) . " of " . length($r->content) . " bytes\n");
        } else {
            $res->content(join("", map { "line $_ of " . $r->uri->path . "\n" } 1 .. 500));
        }
        $c->send_response($res);
        $served++;
    }
    $c->close;
}
print "served $served\n";
EOF
seq 1 5000 > "$C_RUN/body"
corpus_session <<EOF
$(command -v perl) $C_RUN/srv.pl $port 4 &
srv=\$!
wait_listen $port
curl -sS http://127.0.0.1:$port/a | cksum
curl -sS http://127.0.0.1:$port/b | tail -1
curl -sS --data-binary @$C_RUN/body http://127.0.0.1:$port/post
curl -sS -o $C_RUN/c http://127.0.0.1:$port/c
wait \$srv
head -1 $C_RUN/c
EOF
C_EXPECT='^served 4'
corpus_run
