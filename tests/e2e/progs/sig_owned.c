/*
 * sig_owned.c: signal handlers against owned mutexes (recorder/sync.c, "Owned mutexes").
 *
 *   sig_owned late   a worker takes its own mutex 2,000,000 times (no events) while main
 *                    sends it SIGUSR1 five times: the handler runs between two acquisitions
 *                    without events, and replay must run it there (replayer/lc_sync.c,
 *                    own_private) instead of stopping at a divergence
 *   sig_owned lock   two workers take their own mutexes while an interval timer's SIGALRM
 *                    runs a handler that takes a shared mutex: the recorder ran a second,
 *                    deferred handler from inside the first one's mutex event, which then
 *                    waited for the mutex the first held (recorder/signals.c, flush)
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t own[2] = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER };
static pthread_mutex_t h = PTHREAD_MUTEX_INITIALIZER;
static long loc, nsig;
static volatile sig_atomic_t got, stop;

static void on_usr1(int s)
{
	(void)s;
	got = 1;
}

static void *late_worker(void *a)
{
	for (long i = 0; i < 2000000; i++) {
		pthread_mutex_lock(&own[0]);
		loc++;
		pthread_mutex_unlock(&own[0]);
	}
	return a;
}

static void on_alrm(int s)
{
	(void)s;
	pthread_mutex_lock(&h);
	nsig++;
	pthread_mutex_unlock(&h);
}

static void *lock_worker(void *a)
{
	long me = (long)a, n = 0;

	while (!stop) {
		pthread_mutex_lock(&own[me]);
		for (volatile int k = 0; k < 500; k++)
			n++;
		pthread_mutex_unlock(&own[me]);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	if (argc == 2 && !strcmp(argv[1], "late")) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr1;
		sigaction(SIGUSR1, &sa, NULL);
		pthread_create(&t[0], NULL, late_worker, NULL);
		for (int i = 0; i < 5; i++) {
			struct timespec ts = { 0, 5000000 };

			nanosleep(&ts, NULL);
			pthread_kill(t[0], SIGUSR1);
		}
		pthread_join(t[0], NULL);
		printf("%ld\n", loc);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "lock")) {
		struct sigaction sa;
		struct itimerval it = { { 0, 500 }, { 0, 500 } }, z;
		sigset_t s;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_alrm;
		sigaction(SIGALRM, &sa, NULL);
		for (long i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, lock_worker, (void *)i);
		sigemptyset(&s);
		sigaddset(&s, SIGALRM);
		pthread_sigmask(SIG_BLOCK, &s, NULL); /* (the workers take them) */
		setitimer(ITIMER_REAL, &it, NULL);
		for (int i = 0; i < 100; i++)
			usleep(1000);
		memset(&z, 0, sizeof(z));
		setitimer(ITIMER_REAL, &z, NULL);
		stop = 1;
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		pthread_mutex_lock(&h);
		printf("signals handled: %s\n", nsig > 0 ? "some" : "none");
		pthread_mutex_unlock(&h);
		return 0;
	}
	fprintf(stderr, "usage: sig_owned late|lock\n");
	return 2;
}
