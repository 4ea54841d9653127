#!/bin/bash
# sshd.sh: OpenSSH's sshd (-D on a loopback port, a throwaway host key, key authentication
# for root through a throwaway key) and two ssh clients running a command each.
set -u
. "$(dirname "$0")/lib.sh"
corpus_need ssh ssh-keygen
[ -x /usr/sbin/sshd ] || { C_PROG=sshd; corpus_skip "sshd (openssh-server) is not installed"; }
corpus_init sshd "$(ssh -V 2>&1 | sed 's/,.*//')"
[ "$(id -u)" = 0 ] || corpus_skip "sshd needs root (its privilege separation)"
port=$(corpus_port)
mkdir -p /run/sshd
ssh-keygen -q -t ed25519 -N '' -f "$C_RUN/hostkey" || corpus_skip "ssh-keygen failed"
ssh-keygen -q -t ed25519 -N '' -f "$C_RUN/id" || corpus_skip "ssh-keygen failed"
cp "$C_RUN/id.pub" "$C_RUN/authorized_keys"
cat > "$C_RUN/sshd_config" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $C_RUN/hostkey
PidFile $C_RUN/sshd.pid
AuthorizedKeysFile $C_RUN/authorized_keys
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin prohibit-password
LogLevel ERROR
# bash started by sshd reads ~/.bashrc (its "run by sshd" rule, for a shell level below 2):
# root's startup files on this machine (pyenv init...) are not the scenario
SetEnv SHLVL=1
EOF
ssh="ssh -F /dev/null -i $C_RUN/id -p $port -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR root@127.0.0.1"
corpus_session <<EOF
/usr/sbin/sshd -D -f $C_RUN/sshd_config -E $C_RUN/sshd.log &
srv=\$!
wait_listen $port
$ssh 'echo hello from sshd' 2>> $C_RUN/ssh.err
$ssh 'seq 1 1000' 2>> $C_RUN/ssh.err | cksum
stop \$srv
EOF
# (the clients' stderr is a file of its own: a halted replay, --json, hands the session's
# stdout and stderr one file, and ssh then runs differently from its recording)
C_EXPECT='hello from sshd'
# seen in the kernel's audit log: the pre-auth child's seccomp sandbox kills it (SIGSYS) on
# the interposers' own calls: mincore (libunwind, call sites), pwrite64 (the trace), sendmsg
# (replay's controller)
C_HINT='seccomp sandbox: the pre-auth child is killed by SIGSYS on the interposers own system calls'
corpus_run
