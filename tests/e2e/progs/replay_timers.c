/*
 * replay_timers.c: programs whose output depends on when a timer expires, read through a
 * descriptor (recorder/README.md and replayer/README.md, "Signals"), for
 * tests/e2e/replay_timers.sh.
 *
 *   timerfd   a timerfd (1 ms interval) polled (poll, zero timeout) during a computation:
 *             prints at which step it was readable and the expirations read, the time left
 *             (timerfd_gettime), then one blocking read.  Replay arms no timer: the reads,
 *             the readiness and the values come from the trace.
 *   signalfd  SIGALRM from an interval timer (setitimer, 1 ms) and SIGUSR1 from a child
 *             (sigqueue, value 7), blocked and read from a signalfd polled during a
 *             computation: prints at which step each came, and from whom.
 *   posix     a POSIX timer (timer_create, SIGEV_SIGNAL: SIGUSR2 with a value; 1 ms) whose
 *             handler counts ticks during a computation that reads the timer (timer_gettime)
 *             now and then: prints at which step each tick was seen, the value and the
 *             overrun count, then deletes the timer.  Replay makes no timer.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int timerfd_prog(void)
{
	struct itimerspec it = { { 0, 1000000 }, { 0, 1000000 } }, cur;
	volatile unsigned long acc = 0;
	struct pollfd p;
	uint64_t n;
	int fd, taken = 0;
	long step;

	if ((fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC)) < 0)
		return 1;
	if (timerfd_settime(fd, 0, &it, NULL) != 0)
		return 1;
	p.fd = fd;
	p.events = POLLIN;
	for (step = 0; step < 2000000 && taken < 5; step++) {
		for (int k = 0; k < 200; k++)
			acc = acc * 31 + (unsigned long)k;
		if (step % 100 == 0 && poll(&p, 1, 0) == 1 && (p.revents & POLLIN)) {
			if (read(fd, &n, sizeof(n)) != (ssize_t)sizeof(n))
				return 1;
			if (timerfd_gettime(fd, &cur) != 0)
				return 1;
			printf("tick %d at step %ld: %llu expirations, %ld us left\n", ++taken, step,
			       (unsigned long long)n, cur.it_value.tv_nsec / 1000);
			fflush(stdout);
		}
	}
	if (read(fd, &n, sizeof(n)) != (ssize_t)sizeof(n))
		return 1;
	printf("last read: %llu expirations after %d ticks\n", (unsigned long long)n, taken);
	close(fd);
	return 0;
}

static int signalfd_prog(void)
{
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } }, off = { { 0, 0 }, { 0, 0 } };
	volatile unsigned long acc = 0;
	struct signalfd_siginfo si;
	struct pollfd p;
	sigset_t set;
	int fd, ticks = 0, usr1 = 0, st;
	pid_t kid;
	long step;

	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if ((fd = signalfd(-1, &set, SFD_CLOEXEC)) < 0)
		return 1;
	if ((kid = fork()) < 0)
		return 1;
	if (kid == 0) {
		union sigval v = { .sival_int = 7 };

		sigqueue(getppid(), SIGUSR1, v);
		_exit(0);
	}
	if (setitimer(ITIMER_REAL, &it, NULL) != 0)
		return 1;
	p.fd = fd;
	p.events = POLLIN;
	for (step = 0; step < 2000000 && (ticks < 4 || !usr1); step++) {
		for (int k = 0; k < 200; k++)
			acc = acc * 31 + (unsigned long)k;
		if (step % 100 == 0 && poll(&p, 1, 0) == 1 && (p.revents & POLLIN)) {
			if (read(fd, &si, sizeof(si)) != (ssize_t)sizeof(si))
				return 1;
			if (si.ssi_signo == SIGALRM)
				ticks++;
			else
				usr1++;
			printf("%s at step %ld%s%s\n", si.ssi_signo == SIGALRM ? "alarm" : "usr1", step,
			       si.ssi_signo == SIGUSR1 && si.ssi_int == 7 ? " value 7" : "",
			       si.ssi_signo == SIGUSR1 && si.ssi_pid == (uint32_t)kid ? " from child" : "");
			fflush(stdout);
		}
	}
	setitimer(ITIMER_REAL, &off, NULL);
	if (waitpid(kid, &st, 0) != kid)
		return 1;
	printf("done: %d alarms, %d usr1\n", ticks, usr1);
	close(fd);
	return 0;
}

static volatile sig_atomic_t pticks, pvalue;

static void on_usr2(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	pticks++;
	pvalue = si->si_value.sival_int;
}

static int posix_prog(void)
{
	struct itimerspec it = { { 0, 1000000 }, { 0, 1000000 } }, cur;
	struct sigevent sev;
	struct sigaction sa;
	volatile unsigned long acc = 0;
	timer_t id;
	int seen = 0, ov = 0;
	long step;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_usr2;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR2, &sa, NULL) != 0)
		return 1;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGUSR2;
	sev.sigev_value.sival_int = 9;
	if (timer_create(CLOCK_MONOTONIC, &sev, &id) != 0)
		return 1;
	if (timer_settime(id, 0, &it, NULL) != 0)
		return 1;
	for (step = 0; step < 2000000 && seen < 5; step++) {
		for (int k = 0; k < 200; k++)
			acc = acc * 31 + (unsigned long)k;
		if (step % 100 == 0) {
			if (timer_gettime(id, &cur) != 0)
				return 1;
			if (pticks != seen) {
				seen = pticks;
				ov = timer_getoverrun(id);
				printf("tick %d at step %ld value %d overrun %d, %ld us left\n", seen, step,
				       (int)pvalue, ov, cur.it_value.tv_nsec / 1000);
				fflush(stdout);
			}
		}
	}
	if (timer_delete(id) != 0)
		return 1;
	printf("deleted after %d ticks\n", seen);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "posix") == 0)
		return posix_prog();
	if (argc > 1 && strcmp(argv[1], "signalfd") == 0)
		return signalfd_prog();
	if (argc > 1 && strcmp(argv[1], "timerfd") == 0)
		return timerfd_prog();
	fprintf(stderr, "usage: replay_timers timerfd|signalfd|posix\n");
	return 2;
}
