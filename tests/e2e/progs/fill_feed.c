/* fill_feed.c: copies stdin to stdout (every read an external input the recorder stores
 * verbatim, so the trace grows with the input), optionally through a forked child: the child
 * copies and the parent waits for it and exits with its status.  With a FIFO argument it
 * first blocks reading one byte from it (the test fills the disk meanwhile), then copies.
 * Usage: fill_feed [fork] [GATE_FIFO] */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int copy(void)
{
	char buf[4096];
	ssize_t n;

	while ((n = read(0, buf, sizeof(buf))) > 0)
		if (write(1, buf, (size_t)n) != n)
			return 1;
	return n < 0;
}

int main(int argc, char **argv)
{
	int forked = argc > 1 && strcmp(argv[1], "fork") == 0, i = forked ? 2 : 1, st;
	pid_t pid;

	if (argc > i) {
		char c;
		int gate = open(argv[i], O_RDONLY);

		if (gate < 0 || read(gate, &c, 1) != 1)
			return 3;
		close(gate);
	}
	if (!forked)
		return copy();
	pid = fork();
	if (pid < 0)
		return 4;
	if (pid == 0)
		_exit(copy());
	if (waitpid(pid, &st, 0) != pid)
		return 5;
	fprintf(stderr, "fill_feed: child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return WIFEXITED(st) ? WEXITSTATUS(st) : 6;
}
