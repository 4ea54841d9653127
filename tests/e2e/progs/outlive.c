/*
 * outlive.c: a parent that sends SIGTERM to a child which, when recorded, had exited
 * already, as Python's multiprocessing.Pool terminates its workers at the end (one of them
 * done already).  The child writes "done" into a pipe, reads the clock and exits 0; the
 * parent reads "done", sleeps 200 ms (the child exits meanwhile), sends SIGTERM (to a zombie:
 * no effect), reaps the child and prints its status.  With OUTLIVE_SLOW set (replay only) the
 * child computes 1 s before its last call, so the SIGTERM comes while it runs: replay must
 * not let it die of a signal the recorded child outlived (replayer/README.md, "Signals").
 * Used by tests/e2e/replay_outlive.sh.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	struct timespec t = { 0, 200 * 1000 * 1000 }, now, t0;
	int p[2], st = 0;
	char b[4];
	pid_t c;

	if (pipe(p) != 0)
		return 1;
	if ((c = fork()) == 0) {
		if (write(p[1], "done", 4) != 4)
			_exit(3);
		if (getenv("OUTLIVE_SLOW")) { /* computes (the raw clock: no event) */
			syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t0);
			do
				syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &now);
			while ((now.tv_sec - t0.tv_sec) * 1000000000L + (now.tv_nsec - t0.tv_nsec) <
			       1000000000L);
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		_exit(0);
	}
	if (c < 0 || read(p[0], b, 4) != 4)
		return 1;
	nanosleep(&t, NULL);
	kill(c, SIGTERM);
	if (waitpid(c, &st, 0) != c)
		return 1;
	if (WIFSIGNALED(st))
		printf("child died of signal %d\n", WTERMSIG(st));
	else
		printf("child exited %d\n", WEXITSTATUS(st));
	return 0;
}
