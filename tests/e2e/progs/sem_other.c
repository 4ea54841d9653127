/*
 * sem_other.c: a thread that waits on another semaphore in replay than when recorded, as
 * CPython's ThreadPoolExecutor joins its workers in the order of a set of threads, which
 * follows their addresses.  Two workers each post their own semaphore (the first, then,
 * once the main thread has taken the first, the second); the main thread takes them in an
 * order it decides from what differs between a recording and its replay (SEM_OTHER_SECOND,
 * which the test gives the replay with --setenv), standing for the addresses.  Recorded, it
 * takes the first then the second; replayed, the second first, which its turn finds taken:
 * the replay stalls and says so (replayer/lc_sync.c, sem_acquire).
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>

static sem_t done[2], go;

static void *worker(void *arg)
{
	int k = (int)(long)arg;

	if (k == 1)
		while (sem_wait(&go) != 0)
			;
	sem_post(&done[k]);
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	int first = getenv("SEM_OTHER_SECOND") ? 1 : 0;

	sem_init(&done[0], 0, 0);
	sem_init(&done[1], 0, 0);
	sem_init(&go, 0, 0);
	for (long k = 0; k < 2; k++)
		if (pthread_create(&t[k], NULL, worker, (void *)k) != 0)
			return 1;
	while (sem_wait(&done[first]) != 0)
		;
	sem_post(&go);
	while (sem_wait(&done[1 - first]) != 0)
		;
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	printf("took %d then %d\n", first, 1 - first);
	return 0;
}
