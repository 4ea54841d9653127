/*
 * pipe_workers.c: a parent and three forked workers sharing one task pipe, like Python's
 * multiprocessing.Pool: the parent writes twelve fixed-size tasks to a pipe the three
 * workers all read (the kernel decides which worker gets which task), each worker takes
 * four and answers each on a second pipe the parent reads, then the parent prints the
 * answers in the order it got them.  Used by tests/e2e/analyze_pipe_readers.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NWORK 3
#define PER 4
#define TASK 16
#define ANSWER 32

static int full_read(int fd, char *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);

		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

int main(void)
{
	int task[2], ans[2];
	char buf[ANSWER + 1];

	if (pipe(task) || pipe(ans))
		return 1;
	for (int w = 0; w < NWORK; w++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			close(task[1]);
			close(ans[0]);
			for (int i = 0; i < PER; i++) {
				char t[TASK + 1], a[ANSWER + 1];

				if (full_read(task[0], t, TASK))
					_exit(2);
				t[TASK] = 0;
				snprintf(a, sizeof(a), "worker %d did %-18.8s\n", w, t);
				if (write(ans[1], a, ANSWER) != ANSWER)
					_exit(3);
			}
			_exit(0);
		}
	}
	close(task[0]);
	close(ans[1]);
	for (int i = 0; i < NWORK * PER; i++) {
		char t[TASK + 1];

		snprintf(t, sizeof(t), "task %02d        ", i);
		if (write(task[1], t, TASK) != TASK)
			return 1;
	}
	close(task[1]);
	for (int i = 0; i < NWORK * PER; i++) {
		if (full_read(ans[0], buf, ANSWER))
			return 1;
		buf[ANSWER] = 0;
		fputs(buf, stdout);
	}
	for (int w = 0; w < NWORK; w++) {
		int st;

		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
	}
	return 0;
}
