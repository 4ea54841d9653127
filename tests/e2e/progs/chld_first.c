/*
 * chld_first.c: a parent whose SIGCHLD handler runs for a child's exit before it reads what
 * the child wrote, as a shell's `$(printf ...)` often does: the child writes a line on a
 * pipe and exits; the parent, SIGCHLD blocked around the fork, waits in sigsuspend until its
 * handler has run, then reads the line and the end of file, reaps the child and prints the
 * line.  A halt at the parent's first receive must hold the child's exit (the handler run
 * follows it, analyzer/README.md): replay runs that handler only once the child has ended.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t got;

static void on_chld(int sig)
{
	(void)sig;
	got = 1;
}

int main(void)
{
	struct sigaction sa;
	sigset_t block, old;
	char buf[64];
	int fds[2], st;
	ssize_t n, len = 0;
	pid_t pid;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_chld;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &old);
	if (pipe(fds) != 0)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		static const char line[] = "from the child\n";

		close(fds[0]);
		if (write(fds[1], line, sizeof(line) - 1) != (ssize_t)sizeof(line) - 1)
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	while (!got)
		sigsuspend(&old);
	while ((n = read(fds[0], buf + len, sizeof(buf) - 1 - (size_t)len)) > 0)
		len += n;
	buf[len] = '\0';
	close(fds[0]);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return 1;
	printf("handler ran, then read: %s", buf);
	return 0;
}
