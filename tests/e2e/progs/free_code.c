/*
 * free_code.c: two threads that meet through C11 atomics in the code they run between
 * their events (their free code), as BIND's dig does over libuv (replayer/lc.c, "free code
 * in its recorded place").  Nothing recorded orders those loads and stores; what the
 * threads decide from them shows in their next events, so a replay that runs the free code
 * in another order than recorded diverges.
 *
 *   free_code late    a reference count both threads drop: the one that drops the last
 *                     closes a pipe, the other reads the clock.  The worker drops its own
 *                     after an unlock; with FREE_CODE_DELAY set (recording only) it is held
 *                     up 50 ms first, as the scheduler held up dig's worker: the main thread
 *                     drops its reference first, the worker closes.  Replay must run the
 *                     worker's free code when the trace says its close came, not at once.
 *   free_code early   a wakeup as libuv's uv_async_send makes it: the main thread sets a
 *                     pending flag and writes an eventfd, the worker, woken, clears the flag;
 *                     the main thread writes the eventfd again only if it finds the flag
 *                     cleared.  With FREE_CODE_DELAY set the worker clears it 50 ms late: the
 *                     main thread finds it set and does not write again.  Replay must let the
 *                     main thread run on to its next call before the woken worker goes on.
 *
 * Prints who closed the pipe (late) or how many wakeups were sent (early).  Used by
 * tests/e2e/replay_free_code.sh.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER, m2 = PTHREAD_MUTEX_INITIALIZER;
static atomic_int ref = 2, has_m, pending, reading;
static const char *closer = "nobody";
static int fds[2], efd;

/* The scheduler's delay of the recorded run, which the replay does not have. */
static void delay(void)
{
	struct timespec t = { 0, 50 * 1000 * 1000 };

	if (getenv("FREE_CODE_DELAY"))
		nanosleep(&t, NULL);
}

static void drop(const char *who)
{
	struct timespec t;

	if (atomic_fetch_sub(&ref, 1) == 1) {
		close(fds[0]);
		closer = who;
	} else {
		clock_gettime(CLOCK_MONOTONIC, &t);
	}
}

static void *late_worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	atomic_store(&has_m, 1);
	pthread_mutex_unlock(&m);
	delay();
	drop("worker");
	return NULL;
}

static int late(void)
{
	pthread_t t;

	if (pipe(fds) != 0)
		return 1;
	pthread_mutex_lock(&m);
	if (pthread_create(&t, NULL, late_worker, NULL) != 0)
		return 1;
	pthread_mutex_unlock(&m);
	while (!atomic_load(&has_m)) /* the worker takes the lock first */
		;
	pthread_mutex_lock(&m); /* (once the worker has released it) */
	pthread_mutex_unlock(&m);
	drop("main");
	pthread_join(t, NULL);
	printf("closed by %s\n", closer);
	return 0;
}

static void *early_worker(void *arg)
{
	uint64_t v;

	(void)arg;
	atomic_store(&reading, 1);
	if (read(efd, &v, sizeof(v)) != sizeof(v))
		return NULL;
	delay();
	atomic_store(&pending, 0);
	pthread_mutex_lock(&m2);
	pthread_mutex_unlock(&m2);
	return NULL;
}

static void wake(int *sent)
{
	uint64_t one = 1;

	if (write(efd, &one, sizeof(one)) == sizeof(one))
		(*sent)++;
}

static int early(void)
{
	volatile unsigned long spin = 0;
	pthread_t t;
	int sent = 0;

	if ((efd = eventfd(0, 0)) < 0)
		return 1;
	if (pthread_create(&t, NULL, early_worker, NULL) != 0)
		return 1;
	while (!atomic_load(&reading)) /* the worker is about to wait in its read */
		;
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	atomic_store(&pending, 1);
	wake(&sent);
	for (unsigned long i = 0; i < 400000; i++) /* a little work of its own first */
		spin += i;
	if (atomic_load(&pending) == 0)
		wake(&sent);
	pthread_join(t, NULL);
	printf("wakeups sent: %d\n", sent);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "late") == 0)
		return late();
	if (argc == 2 && strcmp(argv[1], "early") == 0)
		return early();
	fprintf(stderr, "usage: free_code late|early\n");
	return 2;
}
