/*
 * sig_dfl_siginfo.c: PHP's way of dying of a signal after its own handler ran: the handler
 * sets the action back to the default with SA_SIGINFO still set and a null sa_sigaction (the
 * kernel takes that as SIG_DFL: the handler is one field for both), unblocks the signal and
 * sends it to the process again.  Bare, the process dies of SIGTERM; recorded or replayed, the
 * preloads must see SIG_DFL there too (tests/e2e/record_sig_dfl_siginfo.sh).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void on_term(int sig, siginfo_t *si, void *uc)
{
	struct sigaction sa;
	sigset_t set;

	(void)si;
	(void)uc;
	memset(&sa, 0, sizeof(sa));
	sa.sa_flags = SA_SIGINFO; /* sa_sigaction NULL: SIG_DFL */
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	kill(getpid(), sig);
}

int main(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_term;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	printf("armed\n");
	fflush(stdout);
	kill(getpid(), SIGTERM);
	for (int i = 0; i < 3; i++)
		pause(); /* (the second SIGTERM ends the process; swallowed, this waits for ever) */
	printf("still alive\n");
	return 0;
}
