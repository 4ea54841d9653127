/*
 * atfork_pipe.c: fork handlers that make calls encore intercepts, as libuv's child handler
 * does (it makes the pipe of its signal machinery anew in every child: node's execSync).
 * The child handler makes a pipe and the prepare handler reads the clock; the child then
 * writes a line through its pipe and reads it back, and the parent reaps it.  Recorded,
 * these calls run inside the recorder's fork and pass unrecorded; replayed, they must pass
 * through the replayer's fork the same way (they diverged: "expected fork, but the process
 * called pipe2"), and keep the numbers they would have without the recorder (the recorder
 * took them for its own and moved them past 1000).
 *   atfork_pipe NFORKS     prints one line per child, then "NFORKS forks"
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int child_pipe[2] = { -1, -1 };

static void prepare(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
}

static void in_child(void)
{
	if (pipe(child_pipe) != 0)
		child_pipe[0] = child_pipe[1] = -1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3;

	setvbuf(stdout, NULL, _IONBF, 0);
	pthread_atfork(prepare, NULL, in_child);
	for (int i = 0; i < n; i++) {
		pid_t c = fork();

		if (c < 0)
			return 1;
		if (c == 0) {
			char line[64], back[64] = { 0 };
			int len = snprintf(line, sizeof(line), "child %d made its pipe on fds %d and %d\n",
			                   i, child_pipe[0], child_pipe[1]);

			if (child_pipe[0] < 0 || write(child_pipe[1], line, (size_t)len) != len ||
			    read(child_pipe[0], back, sizeof(back) - 1) != len)
				_exit(1);
			fputs(back, stdout);
			_exit(0);
		}
		if (waitpid(c, NULL, 0) != c)
			return 1;
	}
	printf("%d forks\n", n);
	return 0;
}
