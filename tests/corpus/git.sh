#!/bin/bash
# git.sh: git daemon serving a repository of a few commits and `git clone git://` cloning
# it.
#   git.sh threads   pack.threads=2 on both sides: pack-objects and the clone's index-pack
#                    resolve deltas in two threads (git's default on 2 CPUs)
#   git.sh single    pack.threads=1 on both sides: single-threaded
set -u
. "$(dirname "$0")/lib.sh"
mode=${1:-threads}
case $mode in threads) nt=2 ;; single) nt=1 ;; *) echo "usage: git.sh threads|single" >&2; exit 2 ;; esac
corpus_need git
name=git-daemon; [ "$mode" = threads ] || name=git-daemon-single
corpus_init $name "$(git --version | sed 's/git version //')"
port=$(corpus_port)
(
    set -e
    export GIT_AUTHOR_NAME=corpus GIT_AUTHOR_EMAIL=c@example.org GIT_COMMITTER_NAME=corpus \
           GIT_COMMITTER_EMAIL=c@example.org GIT_AUTHOR_DATE='2020-01-01 00:00:00 +0000' \
           GIT_COMMITTER_DATE='2020-01-01 00:00:00 +0000'
    git init -q "$C_TMP/work"
    # files that change a little from commit to commit: the pack holds deltas to resolve,
    # against several bases (one chain per file), so that both of the clone's index-pack
    # threads take some (each base is a work item, taken under a mutex)
    for i in $(seq 1 24); do
        seq 1 $((i * 500)) > "$C_TMP/work/f$((i % 8))"
        git -C "$C_TMP/work" add "f$((i % 8))"
        git -C "$C_TMP/work" commit -q -m "commit $i"
    done
    mkdir -p "$C_RUN/repos"
    git clone -q --bare "$C_TMP/work" "$C_RUN/repos/proj.git"
    git -C "$C_RUN/repos/proj.git" config pack.threads $nt
) || corpus_skip "cannot make the test repository"
corpus_session <<EOF
$(command -v git) daemon --reuseaddr --listen=127.0.0.1 --port=$port --base-path=$C_RUN/repos --export-all $C_RUN/repos &
srv=\$!
wait_listen $port
git -c pack.threads=$nt -c protocol.version=2 clone -q git://127.0.0.1:$port/proj.git $C_RUN/clone
git -C $C_RUN/clone log --format='%s %H'
cat $C_RUN/clone/f* | cksum
stop \$srv
EOF
C_EXPECT='commit 24'
corpus_run
