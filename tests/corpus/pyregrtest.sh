#!/bin/bash
# pyregrtest.sh: CPython's own test suite (regrtest, `python3 -m test`, Debian's
# libpython3.11-testsuite) running modules that fork, wait, poll, select and read clocks
# and randomness: test_epoll, test_select (a subprocess's pipe under select), test_fcntl
# (children locking a file), test_time and test_random; then test_socket's GeneralModuleTests
# (but test_sethostname, which renames the machine).  regrtest prints the load average on
# every line (getloadavg, read past the file interposers: recorder/values.c), the random
# seed it drew and durations, so a replay prints what the recording printed only when those
# are given back.  These modules take seconds and replay every recording; the modules tried
# and why the others are not here are in README.md, "Real programs".
set -u
. "$(dirname "$0")/lib.sh"
py=/usr/bin/python3
[ -x $py ] || { echo "pyregrtest: $py missing" >&2; exit 77; }
$py -c 'import test.libregrtest, test.test_epoll, test.test_socket' 2>/dev/null || {
    echo "pyregrtest: CPython's test suite is missing (Debian: libpython3.11-testsuite)" >&2; exit 77; }
corpus_init pyregrtest "$($py --version | sed 's/Python //')"
corpus_session <<EOF
cd $C_RUN
$py -m test -u all test_epoll test_select test_fcntl test_time test_random 2>&1 &&
  $py -m test -u all test_socket -m GeneralModuleTests -i test_sethostname 2>&1 &&
  echo regrtest-ok
EOF
C_EXPECT=regrtest-ok
corpus_run
