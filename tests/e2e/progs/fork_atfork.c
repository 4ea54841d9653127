/*
 * fork_atfork.c: a threaded program that forks while another thread holds a lock the fork
 * needs, for tests/e2e/record_fork_threads.sh.  Allocators do this (jemalloc's atfork
 * handlers lock its mutexes; its threads read the clock while holding them): here an atfork
 * prepare handler locks a mutex that a busy thread holds around clock_gettime.  Bare, each
 * fork waits for the busy thread to let go; recorded, the recorder must not make the busy
 * thread wait for the forking one, or both hang.
 *
 *   fork_atfork NFORKS     prints "NFORKS forks" and exits 0
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int stop;

static void prepare(void)
{
	pthread_mutex_lock(&m);
}

static void release(void)
{
	pthread_mutex_unlock(&m);
}

static void *busy(void *arg)
{
	struct timespec ts;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		pthread_mutex_lock(&m);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		pthread_mutex_unlock(&m);
	}
	return arg;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100, st;
	pthread_t t;

	if (pthread_atfork(prepare, release, release) != 0 ||
	    pthread_create(&t, NULL, busy, NULL) != 0)
		return 2;
	for (int i = 0; i < n; i++) {
		pid_t p = fork();

		if (p < 0)
			return 2;
		if (p == 0)
			_exit(0);
		if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return 1;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	printf("%d forks\n", n);
	return 0;
}
