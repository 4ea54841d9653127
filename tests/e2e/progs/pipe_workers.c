/*
 * pipe_workers.c: a parent and three forked workers sharing one task pipe, like Python's
 * multiprocessing.Pool: the parent writes twelve fixed-size tasks to a pipe the three
 * workers all read (the kernel decides which worker gets which task), each worker takes
 * four and answers each on a second pipe the parent reads, then the parent prints the
 * answers in the order it got them.  With "sem", each worker takes a process-shared
 * semaphore around each read of a task and another around each answer, as Python's
 * multiprocessing queues do, and the parent takes the first one at the end and keeps it.
 * Used by tests/e2e/analyze_pipe_readers.sh and replay_pipe_workers.sh.
 */
#include <semaphore.h>
#include <sys/mman.h>
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

int main(int argc, char **argv)
{
	int task[2], ans[2];
	char buf[ANSWER + 1];
	sem_t *lock = NULL; /* [0] around reads of tasks, [1] around answers */

	if (argc > 1 && strcmp(argv[1], "sem") == 0) {
		lock = mmap(NULL, 2 * sizeof(sem_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		            -1, 0);
		if (lock == MAP_FAILED || sem_init(&lock[0], 1, 1) || sem_init(&lock[1], 1, 1))
			return 1;
	}
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

				if (lock && sem_trywait(&lock[0]) != 0 && sem_wait(&lock[0]) != 0)
					_exit(4);
				if (full_read(task[0], t, TASK))
					_exit(2);
				if (lock)
					sem_post(&lock[0]);
				t[TASK] = 0;
				snprintf(a, sizeof(a), "worker %d did %-18.8s\n", w, t);
				if (lock && sem_wait(&lock[1]) != 0)
					_exit(4);
				if (write(ans[1], a, ANSWER) != ANSWER)
					_exit(3);
				if (lock)
					sem_post(&lock[1]);
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
	if (lock && sem_wait(&lock[0]) != 0) /* kept: the workers are done with it */
		return 1;
	for (int w = 0; w < NWORK; w++) {
		int st;

		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
	}
	return 0;
}
