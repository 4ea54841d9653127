/*
 * env_walk.c: a program whose events depend on the lengths of its environment's entries, as
 * Tcl's at its exit: it converts every entry with its allocator, whose locks are events, more
 * of them for a longer entry.  Here a second thread exists (so that locks are events), and
 * the main thread takes a mutex once per 16 bytes of each entry, then prints how many times.
 * Replayed, encore's own entries (ENCORE_REPLAY for ENCORE_RECORD, LD_PRELOAD naming the
 * replay's library) must be the lengths the recorded program saw (replayer/lc.c).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

extern char **environ;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *idle(void *arg)
{
	return arg;
}

int main(void)
{
	pthread_t t;
	long n = 0;

	if (pthread_create(&t, NULL, idle, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 1;
	for (char **e = environ; *e; e++)
		for (size_t k = 0; k < strlen(*e); k += 16) {
			pthread_mutex_lock(&lock);
			n++;
			pthread_mutex_unlock(&lock);
		}
	printf("walked the environment\n");
	return n > 0 ? 0 : 1;
}
