/*
 * wnohang_early.c: make's way of waiting for its jobs.  SIGCHLD is blocked under a handler;
 * a child reads one byte of the program's input, then exits; the parent polls with
 * waitpid(WNOHANG) (it finds nothing: the byte comes only after the parent says "polled"),
 * then waits in pselect with SIGCHLD open until the handler runs, then reaps the child.
 * Such a poll, before the trace's first handler run, is no event (replayer/lc_pids.c,
 * chld_handled).  In replay the child's byte comes from the trace at once, so the child has
 * ended by the poll (the parent pauses 300 ms first, in both runs, to make that sure): the
 * poll must still find nothing, as when recorded (wnohang_reaped_later).
 * Usage: wnohang_early [stdio]
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t dead;

static void on_chld(int sig)
{
	(void)sig;
	dead = 1;
}

int main(int argc, char **argv)
{
	int use_stdio = argc > 1 && strcmp(argv[1], "stdio") == 0;
	struct sigaction sa;
	struct timespec pause = { 0, 300000000 };
	sigset_t blk, empty;
	int p[2], st;
	pid_t k, r;
	char c;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_chld;
	sigaction(SIGCHLD, &sa, NULL);
	sigemptyset(&blk);
	sigaddset(&blk, SIGCHLD);
	sigprocmask(SIG_BLOCK, &blk, NULL);
	sigemptyset(&empty);
	if (pipe(p) != 0)
		return 1;
	if ((k = fork()) == 0)
		_exit(read(0, &c, 1) == 1 ? 0 : 1);
	nanosleep(&pause, NULL);
	r = waitpid(-1, &st, WNOHANG);
	/* the script's byte: once the poll is done, said on stderr (a pipe to the script):
	 * with stdio ("stdio" argument) or write.  Its replay must not run the handler due
	 * next there (replayer/lc_stdio.c, stdio_out_next): it ran in the pselect. */
	if (use_stdio) {
		fprintf(stderr, "polled\n");
		fflush(stderr);
	} else if (write(2, "polled\n", 7) != 7) {
		return 1;
	}
	while (!dead) {
		fd_set rs;

		FD_ZERO(&rs);
		FD_SET(p[0], &rs); /* never readable: only the handler ends the wait */
		if (pselect(p[0] + 1, &rs, NULL, NULL, NULL, &empty) < 0 && errno != EINTR)
			return 1;
	}
	printf("polled: %s\n", r == 0 ? "nothing yet" : "a child");
	r = waitpid(-1, &st, 0);
	printf("reaped %s, exit %d\n", r == k ? "the child" : "something else",
	       WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}
