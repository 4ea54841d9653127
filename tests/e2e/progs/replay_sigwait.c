/*
 * replay_sigwait.c: programs that take signals by waiting for them (sigwait, sigwaitinfo,
 * sigtimedwait), whose output depends on which signal arrives and when (recorder/README.md
 * and replayer/README.md, "Signals"), for tests/e2e/replay_sigwait.sh.
 *
 *   timer     an interval timer (setitimer, 1 ms) with SIGALRM blocked; a computation polls
 *             for it with sigtimedwait (zero timeout) and prints at which step each tick
 *             was taken, then waits for one more with sigwait.  Replay arms no timer: the
 *             ticks come from the trace.
 *   peer      a child sends its parent SIGRTMIN three times with sigqueue (values 1..3:
 *             real-time signals queue) and SIGUSR2 once with kill; the parent takes them with sigwaitinfo and prints the
 *             signal, the value and whether the sender is its child.
 *   outside F waits for SIGUSR2 (sent by the test, from outside) with sigtimedwait and 10 ms
 *             timeouts, its pid in file F first; prints how many timeouts it saw.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int timer_prog(void)
{
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } }, off = { { 0, 0 }, { 0, 0 } };
	struct timespec zero = { 0, 0 };
	volatile unsigned long acc = 0;
	sigset_t set;
	siginfo_t si;
	int taken = 0, sig;
	long step;

	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (setitimer(ITIMER_REAL, &it, NULL) != 0)
		return 1;
	for (step = 0; step < 200000 && taken < 5; step++) {
		for (int k = 0; k < 200; k++)
			acc = acc * 31 + (unsigned long)k;
		if (step % 100 == 0 && sigtimedwait(&set, &si, &zero) == SIGALRM) {
			printf("tick %d at step %ld code %d\n", ++taken, step, si.si_code);
			fflush(stdout);
		}
	}
	if (sigwait(&set, &sig) != 0)
		return 1;
	printf("last %d after %d ticks\n", sig, taken);
	setitimer(ITIMER_REAL, &off, NULL);
	return 0;
}

static int peer_prog(void)
{
	sigset_t set;
	siginfo_t si;
	pid_t kid;
	int st;

	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if ((kid = fork()) < 0)
		return 1;
	if (kid == 0) {
		for (int i = 1; i <= 3; i++) {
			union sigval v = { .sival_int = i };

			sigqueue(getppid(), SIGRTMIN, v);
		}
		kill(getppid(), SIGUSR2);
		_exit(0);
	}
	for (int i = 0; i < 4; i++) {
		int sig = sigwaitinfo(&set, &si);

		printf("%s value %d from %s\n", sig == SIGRTMIN ? "rtmin" : sig == SIGUSR2 ? "usr2" : "?",
		       sig == SIGRTMIN ? si.si_value.sival_int : 0,
		       si.si_pid == kid ? "child" : "someone else");
	}
	if (waitpid(kid, &st, 0) != kid)
		return 1;
	printf("child exit %d\n", WEXITSTATUS(st));
	return 0;
}

static int outside_prog(const char *pidfile)
{
	struct timespec t = { 0, 10000000 };
	sigset_t set;
	siginfo_t si;
	FILE *f;
	int n = 0, sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (!(f = fopen(pidfile, "w")))
		return 1;
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	while ((sig = sigtimedwait(&set, &si, &t)) < 0 && errno == EAGAIN)
		n++;
	printf("signal %d after %s%d timeouts, from %s\n", sig, n > 0 ? "" : "no ", n,
	       si.si_pid > 0 ? "a process" : "the kernel");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "timer") == 0)
		return timer_prog();
	if (argc > 1 && strcmp(argv[1], "peer") == 0)
		return peer_prog();
	if (argc > 2 && strcmp(argv[1], "outside") == 0)
		return outside_prog(argv[2]);
	fprintf(stderr, "usage: replay_sigwait timer|peer|outside PIDFILE\n");
	return 2;
}
