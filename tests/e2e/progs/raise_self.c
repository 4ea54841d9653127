/*
 * raise_self.c: a handler of a signal the process sends itself runs before the sending call
 * returns (raise, pthread_kill on its own thread, kill to its own pid), as POSIX says and
 * programs count on (CPython's signal.raise_signal in its test suite): the counts printed
 * right after each call are 1, 2, 3, recorded and replayed (recorder/signals.c; the
 * handler ran only after the process's next event before).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t got;

static void on_usr1(int sig)
{
	(void)sig;
	got++;
}

int main(void)
{
	int a, b, c;

	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);
	a = got;
	pthread_kill(pthread_self(), SIGUSR1);
	b = got;
	kill(getpid(), SIGUSR1);
	c = got;
	printf("handled after raise %d, pthread_kill %d, kill %d\n", a, b, c);
	return 0;
}
