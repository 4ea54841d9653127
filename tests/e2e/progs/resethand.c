/*
 * resethand.c: a one-shot handler (SA_RESETHAND) of SIGUSR1 that runs while the process is
 * blocked in a read: a forked child sends the signal, then closes the pipe's write end; the
 * process prints what the read returned and whether the handler ran.  The kernel resets the
 * action as it delivers the signal: the recorder must still run the handler it deferred
 * (recorder/signals.c, same_action), not deliver the signal again under the default action,
 * which would end the process.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t ran;

static void on_usr1(int sig)
{
	(void)sig;
	ran = 1;
}

int main(void)
{
	struct sigaction sa;
	int p[2], st;
	char c;
	ssize_t r;
	pid_t k;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESETHAND;
	if (sigaction(SIGUSR1, &sa, NULL) != 0 || pipe(p) != 0)
		return 2;
	k = fork();
	if (k == 0) {
		close(p[0]);
		kill(getppid(), SIGUSR1);
		_exit(0);
	}
	close(p[1]);
	do
		r = read(p[0], &c, 1);
	while (r < 0 && errno == EINTR && !ran);
	waitpid(k, &st, 0);
	printf("handler ran: %s\n", ran ? "yes" : "no");
	return 0;
}
