/*
 * replay_signals.c: programs whose output depends on when asynchronous signals arrive
 * (recorder/README.md and replayer/README.md, "Signals"), for tests/e2e/replay_signals.sh.
 *
 *   timer R   an interval timer (setitimer, 1 ms) interrupts blocking reads of a pipe fed by
 *             a child and a computation that reads the clock now and then; R = 1: SA_RESTART,
 *             0: not (reads fail with EINTR).  Prints, after each read, the ticks seen so far,
 *             the EINTR count and the computation's progress at the last tick.
 *   kill      a parent signals its child (SIGUSR1, then sigqueue of SIGRTMIN with a value;
 *             SIGUSR2 raised inside their handler: nested handlers); the child's handlers send messages back
 *             on a socket; the child prints what its handlers saw.
 *   term F    a server polls a pipe nobody writes (100 ms timeouts) until SIGTERM (sent by the
 *             test, from outside) ends it; its pid goes to file F first.  Prints the polls.
 *   spin F    SIGTERM from outside while the program spins on a flag without calling anything:
 *             the deferral bound runs the handler (late); prints that it stopped.
 *   die F     as term without a handler: SIGTERM kills it; it prints each poll.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <poll.h>

static volatile sig_atomic_t ticks, stop;
static volatile long progress, at_tick[64];

static void on_alarm(int sig)
{
	(void)sig;
	if (ticks < 64)
		at_tick[ticks] = progress;
	ticks++;
}

static int timer_prog(int restart)
{
	struct sigaction sa;
	struct itimerval it;
	int p[2], i, eintr = 0;
	pid_t kid;

	if (pipe(p) != 0)
		return 1;
	if ((kid = fork()) == 0) {
		close(p[0]);
		for (i = 0; i < 20; i++) {
			volatile long x = 0;
			char c = (char)('a' + i);

			for (long k = 0; k < 300000L * (i % 5 + 1); k++)
				x += k;
			if (write(p[1], &c, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	close(p[1]);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	memset(&it, 0, sizeof(it));
	it.it_interval.tv_usec = 1000;
	it.it_value.tv_usec = 1000;
	setitimer(ITIMER_REAL, &it, NULL);
	for (i = 0;;) {
		char c;
		ssize_t n = read(p[0], &c, 1);
		struct timespec ts;

		if (n < 0 && errno == EINTR) {
			eintr++;
			continue;
		}
		if (n <= 0)
			break;
		/* computation, reading the clock now and then */
		for (long k = 0; k < 200000; k++) {
			progress++;
			if (k % 2000 == 0)
				clock_gettime(CLOCK_MONOTONIC, &ts);
		}
		printf("read %d '%c': ticks %d eintr %d last tick at %ld\n", i++, c, (int)ticks, eintr,
		       ticks ? at_tick[(ticks - 1) % 64] : -1L);
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	waitpid(kid, NULL, 0);
	printf("done: %d reads, eintr %d\n", i, eintr);
	return 0;
}

static int back = -1;

static void on_usr2(int sig, siginfo_t *si, void *uc)
{
	char m[64];
	int n = snprintf(m, sizeof(m), "usr2 code %d\n", si->si_code);

	(void)sig;
	(void)uc;
	send(back, m, (size_t)n, 0);
}

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	char m[96];
	int n = snprintf(m, sizeof(m), "usr1 from parent %d value %d\n",
	                 si->si_pid == getppid(), si->si_value.sival_int);

	(void)sig;
	(void)uc;
	send(back, m, (size_t)n, 0);
	kill(getpid(), SIGUSR2); /* nested: runs before kill returns */
	send(back, "usr1 end\n", 9, 0);
}

static int kill_prog(void)
{
	struct sigaction sa;
	int sv[2], go[2];
	pid_t kid;
	char buf[512];
	ssize_t n;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 || pipe(go) != 0)
		return 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_sigaction = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	sa.sa_sigaction = on_usr1;
	sigaction(SIGRTMIN, &sa, NULL); /* queued: not merged with a pending SIGUSR1 */
	back = sv[1]; /* (before the fork: the child may get a signal at once) */
	if ((kid = fork()) == 0) {
		char c;

		close(sv[0]);
		close(go[1]);
		/* blocked in read when the signals come (in a call) */
		while ((n = read(go[0], &c, 1)) > 0 || (n < 0 && errno == EINTR))
			if (n > 0 && write(sv[1], "tick\n", 5) != 5)
				_exit(1);
		send(sv[1], "child end\n", 10, 0);
		_exit(0);
	}
	close(sv[1]);
	close(go[0]);
	if (write(go[1], "x", 1) != 1)
		return 1;
	kill(kid, SIGUSR1);
	if (write(go[1], "y", 1) != 1)
		return 1;
	sigqueue(kid, SIGRTMIN, (union sigval){ .sival_int = 42 });
	close(go[1]);
	while ((n = read(sv[0], buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	waitpid(kid, NULL, 0);
	return 0;
}

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int write_pid(const char *file)
{
	FILE *f = fopen(file, "w");

	if (!f)
		return -1;
	fprintf(f, "%d\n", (int)getpid());
	return fclose(f);
}

static int term_prog(const char *file, int spin)
{
	struct sigaction sa;
	struct pollfd pf;
	int p[2], polls = 0;
	volatile long spins = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigemptyset(&sa.sa_mask);
	if (spin < 2)
		sigaction(SIGTERM, &sa, NULL);
	if (pipe(p) != 0)
		return 1;
	pf.fd = p[0];
	pf.events = POLLIN;
	if (write_pid(file) != 0)
		return 1;
	if (spin == 1) {
		while (!stop)
			spins++;
		printf("stopped spinning\n");
		return 0;
	}
	while (!stop) {
		int r = poll(&pf, 1, 100);

		if (r == 0 || (r < 0 && errno == EINTR))
			polls++;
		if (spin == 2) { /* no handler: SIGTERM ends it, after some of these lines */
			printf("poll %d\n", polls);
			fflush(stdout);
		}
	}
	printf("stopped after %d polls\n", polls);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "timer") == 0)
		return timer_prog(atoi(argv[2]));
	if (argc > 1 && strcmp(argv[1], "kill") == 0)
		return kill_prog();
	if (argc > 2 && strcmp(argv[1], "term") == 0)
		return term_prog(argv[2], 0);
	if (argc > 2 && strcmp(argv[1], "spin") == 0)
		return term_prog(argv[2], 1);
	if (argc > 2 && strcmp(argv[1], "die") == 0)
		return term_prog(argv[2], 2);
	fprintf(stderr, "usage: replay_signals timer 0|1 | kill | term FILE | spin FILE\n");
	return 2;
}
