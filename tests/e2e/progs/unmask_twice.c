/* unmask_twice.c: a signal raised while blocked, then two masks set in a row: the first
 * still blocks it, the second unblocks it and its handler runs as that call returns.  For
 * replay_unmask_twice.sh: replay ran the handler at the first (it took the recorded UNMASK
 * event at the first mask set after the raise). */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t got;

static void on_usr1(int sig)
{
	(void)sig;
	got++;
	if (write(1, "handler\n", 8) != 8)
		_exit(3);
}

int main(void)
{
	sigset_t usr1, both, old;

	signal(SIGUSR1, on_usr1);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &old);
	raise(SIGUSR1); /* pending */
	both = usr1;
	sigaddset(&both, SIGUSR2);
	sigprocmask(SIG_SETMASK, &both, NULL); /* still blocked */
	printf("between: %d\n", (int)got);
	fflush(stdout);
	sigprocmask(SIG_SETMASK, &old, NULL); /* unblocked: the handler runs */
	printf("after: %d\n", (int)got);
	return 0;
}
