#!/bin/bash
# tcl.sh: a Tcl event-loop server (socket -server, fileevent: one interpreter serving several
# connections at once, line by line) and its clients: a Tcl client and nc (netcat), then a
# QUIT line that ends the server.
# The server's last line and nc's reply share the shell's stdout, in either order: outputs
# are compared sorted.  It diverged at the interpreter's end before (0 of 3): Tcl converts
# every environment entry there, each conversion taking its allocator's locks by the entry's
# length, and the replay showed its own variables where the recording had ENCORE_RECORD and
# the recorder's LD_PRELOAD (each program now gets its recorded environment back:
# replayer/README.md, "Environment").
set -u
. "$(dirname "$0")/lib.sh"
corpus_need tclsh nc
corpus_init tcl-socket "tcl $(echo 'puts [info patchlevel]' | tclsh)"
port=$(corpus_port)
cat > "$C_RUN/srv.tcl" <<'EOF'
set port [lindex $argv 0]
set served 0
proc reply {chan} {
    global served forever
    if {[gets $chan line] < 0} {
        if {[eof $chan]} { close $chan; incr served }
        return
    }
    if {$line eq "QUIT"} { puts $chan "bye"; close $chan; set forever 1; return }
    puts $chan "[string toupper $line] ([string length $line])"
    flush $chan
}
proc accept {chan addr p} {
    fconfigure $chan -buffering line
    fileevent $chan readable [list reply $chan]
}
socket -server accept -myaddr 127.0.0.1 $port
vwait forever
puts "served $served"
EOF
cat > "$C_RUN/cli.tcl" <<'EOF'
set s [socket 127.0.0.1 [lindex $argv 0]]
fconfigure $s -buffering line
foreach w {alpha beta gamma} { puts $s "$w from [lindex $argv 1]"; puts [gets $s] }
close $s
EOF
corpus_session <<EOF
tcl=$(command -v tclsh)
\$tcl $C_RUN/srv.tcl $port &
srv=\$!
wait_listen $port
\$tcl $C_RUN/cli.tcl $port one
printf 'netcat line\nsecond line\n' | nc -q 1 127.0.0.1 $port
\$tcl $C_RUN/cli.tcl $port two
echo QUIT | nc -q 1 127.0.0.1 $port
wait \$srv
EOF
C_EXPECT='^served'
C_SORTED=1
corpus_run
