#!/bin/sh
# real_perl.sh: perl (a runtime nobody here wrote) as a forking TCP server: the parent
# listens on a port the kernel chooses, forks N clients that connect, send a line and print
# the answer; the parent accepts N connections and answers each in upper case.  Checks:
# traces whole; analyze/dump/sql agree; every connection matched (no external channel, no
# unmatched receive); each client's bytes reached the server and back; replay to the end
# prints the same lines (the children share stdout: compared sorted); a halt at Inf(P).
# Usage: real_perl.sh ENCORE
set -eu
encore=$1
. "$(dirname "$0")/real_lib.sh"
real_need perl
perl -MSocket -e 1 2> /dev/null || { echo "SKIP: perl's Socket module is missing"; exit 77; }
real_init perl

cat > "$real_tmp/srv.pl" <<'EOF'
use strict; use Socket;
$| = 1;
my $n = $ARGV[0];
socket(my $l, PF_INET, SOCK_STREAM, 0) or die "socket: $!";
# as most servers do: without it, the recorded run's connections (closed by the server
# first, so in TIME_WAIT on its port) keep replay from binding that port for a minute
setsockopt($l, SOL_SOCKET, SO_REUSEADDR, 1) or die "setsockopt: $!";
bind($l, sockaddr_in(0, inet_aton("127.0.0.1"))) or die "bind: $!";
listen($l, 16) or die "listen: $!";
my ($port) = sockaddr_in(getsockname($l));
for my $k (1 .. $n) {
    my $pid = fork(); die "fork: $!" unless defined $pid;
    next if $pid;
    close $l;
    socket(my $c, PF_INET, SOCK_STREAM, 0) or die "socket: $!";
    connect($c, sockaddr_in($port, inet_aton("127.0.0.1"))) or die "connect: $!";
    my $msg = "client $k says " . ("hi " x $k) . "\n";
    syswrite($c, $msg) == length($msg) or die "write: $!";
    my ($r, $buf) = ('', '');
    while (sysread($c, $buf, 4096)) { $r .= $buf; }
    print "child $k got: $r";
    exit 0;
}
for my $k (1 .. $n) {
    accept(my $c, $l) or die "accept: $!";
    my ($line, $buf) = ('', '');
    while ($line !~ /\n/ && sysread($c, $buf, 4096)) { $line .= $buf; }
    syswrite($c, uc $line);
    close $c;
}
my $ok = 0;
while ((my $p = wait()) > 0) { $ok++ if $? == 0; }
print "server done, $ok children ok\n";
EOF

timeout "$real_t" "$encore" record -q -o "$real_tmp/s" --name perl -- \
    "$(real_path perl)" "$real_tmp/srv.pl" 4 > "$real_tmp/rec.out" < /dev/null || real_fail "encore record"
grep -q '^server done, 4 children ok$' "$real_tmp/rec.out" ||
    { cat "$real_tmp/rec.out"; real_fail "the recorded run failed"; }
real_check "$real_tmp/s"
real_counts "$real_tmp/s"
[ "$real_unmatched" = 0 ] && [ "$real_external" = 0 ] ||
    real_fail "$real_unmatched unmatched receives, $real_external external channels"
[ "$real_matched" = 4 ] || real_fail "expected 4 matched connections, analyze says $real_matched"
for k in 1 2 3 4; do
    len=$(printf "client $k says %s\n" "$(printf 'hi %.0s' $(seq "$k"))" | wc -c)
    got=$(real_sql "$real_tmp/s" "SELECT coalesce(sum(e.result), 0) FROM event e
                                  JOIN process p ON p.id = e.proc
                                  WHERE p.name = 'perl.$k' AND e.kind = 'recv' AND e.result > 0")
    [ "$got" = "$len" ] || real_fail "perl.$k received $got bytes, its answer has $len"
done
echo "ok: 4 connections matched, every answer received whole"

real_replay "$real_tmp/s" "$real_tmp/rec.out" sorted
echo "ok: replayed to the end, output identical"
real_halt "$real_tmp/s" 'perl.3: exited'
real_halt "$real_tmp/s" 'perl: received >= 2 && perl.4: sent >= 1'
