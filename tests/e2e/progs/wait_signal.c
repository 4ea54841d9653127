/*
 * wait_signal.c: a child sends its parent SIGUSR1 and exits; the parent, busy in its own code
 * when the signal comes (the recorder defers the handler to the next event: recorder/README.md,
 * "Signals"), then reaps the child with waitpid while SIGCHLD is blocked under a SIGCHLD
 * handler (a wait the recorder does not log, as a shell's).  The kill comes before the exit,
 * so without a recorder the handler has always run by the time waitpid returns; the program
 * counts the rounds where it had not.  (Recorded, the deferred handler waited for an event
 * that never came, and bash's trap was lost when it exited within the 5 ms bound.)
 * Usage: wait_signal ROUNDS      prints "rounds N, handler late M"
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t got;

static void on_usr1(int sig)
{
	(void)sig;
	got = 1;
}

static void on_chld(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { 0 };
	sigset_t chld;
	int rounds = argc > 1 ? atoi(argv[1]) : 20, late = 0;

	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_chld;
	sigaction(SIGCHLD, &sa, NULL);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	for (int i = 0; i < rounds; i++) {
		pid_t c;

		got = 0;
		c = fork();
		if (c < 0)
			return 1;
		if (c == 0) {
			kill(getppid(), SIGUSR1);
			_exit(0);
		}
		/* busy, no system call, until the signal came (or long enough) */
		for (volatile long k = 0; !got && k < 20000000; k++)
			;
		if (waitpid(c, NULL, 0) != c)
			return 1;
		if (!got)
			late++;
	}
	printf("rounds %d, handler late %d\n", rounds, late);
	return 0;
}
