/*
 * pause_bound.c: a signal the process sends itself (its handler run at once, after the
 * kill's event), then pause() until a timer's SIGALRM 100 ms later: pause returns once the
 * SIGALRM handler ran, recorded and replayed.  The recorder's bound timer, armed when the
 * first signal came, fired 5 ms later into the pause before, which the kernel never
 * restarts: pause returned with no handler run (recorder/signals.c, disarm_bound; CPython's
 * test_itimer_real).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t usr1, alrm;

static void on_usr1(int sig)
{
	(void)sig;
	usr1++;
}

static void on_alrm(int sig)
{
	(void)sig;
	alrm++;
}

int main(void)
{
	struct itimerval it;

	signal(SIGUSR1, on_usr1);
	signal(SIGALRM, on_alrm);
	kill(getpid(), SIGUSR1);
	memset(&it, 0, sizeof(it));
	it.it_value.tv_usec = 100000;
	setitimer(ITIMER_REAL, &it, NULL);
	pause();
	printf("usr1 %d, pause returned with alarm handled %d\n", (int)usr1, (int)alrm);
	return 0;
}
