/*
 * stop_cont.c: a parent sees its children stopped (waitpid with WUNTRACED), continues them
 * and reaps them: a child that stops itself (raise(SIGSTOP)), one the parent stops with
 * SIGSTOP and one with SIGTSTP (its default action, a stop), the last two then told to end
 * through a pipe.  Each child is the only process of its own group: a group whose members'
 * parents are all outside its session (the test's, under meson) is orphaned, and the kernel
 * discards a SIGTSTP sent there instead of stopping it.  In replay the waits that saw a stop come from the trace and make no real
 * wait for the child's exit (which blocked the parent before its SIGCONT and its write), no
 * stop signal is sent for real, and SIGCONT is (replayer/lc_pids.c).
 */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

/* sig 0: the child stops itself; else the parent stops it with sig */
static int one(int sig)
{
	int st, fds[2], ready[2];
	char c;
	pid_t p;

	if (pipe(fds) || pipe(ready))
		return 9;
	if ((p = fork()) < 0)
		return 8;
	if (p == 0) {
		close(fds[1]);
		close(ready[0]);
		if (setpgid(0, 0) || write(ready[1], "r", 1) != 1)
			_exit(4);
		if (sig == 0)
			raise(SIGSTOP);
		else if (read(fds[0], &c, 1) != 1)
			_exit(1);
		_exit(3);
	}
	close(fds[0]);
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		return 7;
	close(ready[0]);
	if (sig)
		kill(p, sig);
	if (waitpid(p, &st, WUNTRACED) != p || !WIFSTOPPED(st)) {
		printf("signal %d: no stop seen\n", sig);
		return 1;
	}
	printf("signal %d: stopped by %d\n", sig, WSTOPSIG(st));
	fflush(stdout);
	kill(p, SIGCONT);
	if (sig && write(fds[1], "x", 1) != 1)
		return 3;
	close(fds[1]);
	if (waitpid(p, &st, 0) != p || !WIFEXITED(st))
		return 2;
	printf("signal %d: exit %d\n", sig, WEXITSTATUS(st));
	fflush(stdout);
	return 0;
}

int main(void)
{
	int r;

	if ((r = one(0)) || (r = one(SIGSTOP)) || (r = one(SIGTSTP)))
		return r;
	return 0;
}
