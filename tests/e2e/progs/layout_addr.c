/*
 * layout_addr.c: prints where things are: a stack variable, a heap block, a function of the
 * program, argv[0]'s string (the top of the stack), a function of libc (where the libraries
 * are, after the preload) and the main thread's id (its TCB, placed by the loader), one line, and sends the same line
 * to its forked child over a pipe, which prints it again with its own heap block: bytes
 * that depend on the address layout, as a DRBG nonce or uninitialised bytes that hold
 * pointers do.  Recorded with encore record --same-layout, the replay prints the same
 * (tests/e2e/replay_same_layout.sh); recorded without, the addresses move.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int where(char *out, size_t cap, const char *argv0)
{
	int local = 1;
	char *block = malloc(100);
	int n = snprintf(out, cap, "stack %p heap %p function %p argv0 %p libc %p thread %p\n",
	                 (void *)&local, (void *)block, (void *)where, (const void *)argv0,
	                 (void *)qsort, (void *)pthread_self());

	free(block);
	return n;
}

int main(int argc, char **argv)
{
	char line[256], got[256];
	int fd[2], n, st;
	pid_t pid;

	(void)argc;
	n = where(line, sizeof(line), argv[0]);
	fputs(line, stdout);
	fflush(stdout);
	if (pipe(fd) != 0 || (pid = fork()) < 0)
		return 1;
	if (pid == 0) {
		char *mine = malloc(64);
		ssize_t r;

		close(fd[1]);
		r = read(fd[0], got, sizeof(got) - 1);
		if (r <= 0)
			_exit(1);
		got[r] = '\0';
		printf("child got %s", got);
		printf("child heap %p\n", (void *)mine);
		fflush(stdout);
		_exit(0);
	}
	close(fd[0]);
	if (write(fd[1], line, (size_t)n) != n)
		return 1;
	close(fd[1]);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 1;
	return 0;
}
