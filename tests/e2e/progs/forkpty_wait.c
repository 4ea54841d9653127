/*
 * forkpty_wait.c: a child made by forkpty (a fork inside libc, past the fork interposer)
 * writes to its terminal and exits 7; the parent reads the terminal's master to its end,
 * reaps the child and closes the master at once.  In replay the parent's reads and wait
 * come from the trace: the wait must still reap the live child, not return before it even
 * started, or the parent closes the master first and the child's login_tty fails
 * (replayer/lc_pids.c; CPython's test_pty).
 */
#include <pty.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	char buf[256];
	size_t got = 0;
	ssize_t n;
	int fd, st = 0;
	pid_t pid = forkpty(&fd, NULL, NULL, NULL);

	if (pid < 0) {
		perror("forkpty");
		return 2;
	}
	if (pid == 0) {
		static const char hello[] = "hello from the terminal\n";

		if (write(1, hello, sizeof(hello) - 1) < 0)
			_exit(3);
		_exit(7);
	}
	while (got < sizeof(buf) - 1 && (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	waitpid(pid, &st, 0);
	close(fd);
	printf("child said %zu bytes, exited %d\n", got, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}
