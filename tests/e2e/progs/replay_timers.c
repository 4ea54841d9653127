/*
 * replay_timers.c: programs whose output depends on when a timer expires, read through a
 * descriptor (recorder/README.md and replayer/README.md, "Signals"), for
 * tests/e2e/replay_timers.sh.
 *
 *   timerfd   a timerfd (1 ms interval) polled (poll, zero timeout) during a computation:
 *             prints at which step it was readable and the expirations read, the time left
 *             (timerfd_gettime), then one blocking read.  Replay arms no timer: the reads,
 *             the readiness and the values come from the trace.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/timerfd.h>
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

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "timerfd") == 0)
		return timerfd_prog();
	fprintf(stderr, "usage: replay_timers timerfd\n");
	return 2;
}
