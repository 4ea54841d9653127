/*
 * killed_threads.c: a threaded process that is SIGKILLed while recorded (a server killed in
 * production): two threads take turns at a mutex and read the clock, the main thread writes
 * its pid to PIDFILE and then waits for a line on stdin that never comes.  Its trace ends
 * without an exit wherever the kill lands, each thread in the middle of its work; replayed,
 * the process runs to the end of its trace and on free until the replay kills it, whichever
 * of its threads reaches the end first (replayer/README.md, "How a replay ends").
 * Usage: killed_threads PIDFILE
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long turns;

static void *work(void *arg)
{
	struct timespec ts;

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&lock);
		turns++;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	char line[64];
	FILE *f;
	int i;

	if (argc != 2)
		return 2;
	for (i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, work, NULL) != 0)
			return 1;
	f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0)
		return 1;
	if (fgets(line, sizeof(line), stdin)) /* never: the test kills us first */
		printf("read %s", line);
	return 0;
}
