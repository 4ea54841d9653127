/*
 * clockwait.c: threads that meet only through the clock variants of the pthread and
 * semaphore waits (pthread_mutex_clocklock, pthread_cond_clockwait, sem_clockwait,
 * pthread_rwlock_clockwrlock: glibc 2.34's, which CPython 3.11 and libstdc++ call), so that
 * the order they print in depends on scheduling.  (A process-shared semaphore used by the
 * threads of one process is left out: its replay can stall, replayer/README.md, "Process-shared
 * semaphores".)
 *
 *   clockwait ROUNDS    three workers, ROUNDS rounds each; prints who went when
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static sem_t priv;
static int rounds, turn, active = 3, order[4096], norder;

static struct timespec later(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += 30;
	return ts;
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;

	for (int i = 0; i < rounds; i++) {
		struct timespec ts = later();

		if (sem_clockwait(&priv, CLOCK_MONOTONIC, &ts) != 0)
			abort();
		if (pthread_mutex_clocklock(&mu, CLOCK_MONOTONIC, &ts) != 0)
			abort();
		while (turn == id && active > 1) /* not twice in a row while others go */
			if (pthread_cond_clockwait(&cv, &mu, CLOCK_MONOTONIC, &ts) != 0)
				abort();
		turn = id;
		if (pthread_rwlock_clockwrlock(&rw, CLOCK_MONOTONIC, &ts) != 0)
			abort();
		if (norder < 4096)
			order[norder++] = id;
		pthread_rwlock_unlock(&rw);
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&mu);
		sem_post(&priv);
	}
	pthread_mutex_lock(&mu);
	active--;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[3];

	rounds = argc > 1 ? atoi(argv[1]) : 50;
	if (sem_init(&priv, 0, 2) != 0) {
		perror("clockwait: setup");
		return 2;
	}
	for (long i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, worker, (void *)(i + 1));
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < norder; i++)
		printf("%d%s", order[i], (i + 1) % 30 == 0 ? "\n" : "");
	printf("\n%d turns\n", norder);
	return 0;
}
