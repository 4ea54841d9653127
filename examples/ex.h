/*
 * ex.h: small helpers shared by the example programs (header-only, static functions).
 *
 * The examples are ordinary programs: they must run the same with and without encore, so
 * everything here is plain libc.  Lines a process prints go out in one write(2) each, so
 * that lines of several processes sharing stdout never mix inside a line.  Every wait is
 * bounded (poll with a timeout), so no example can hang a test.
 */
#ifndef ENCORE_EXAMPLES_EX_H
#define ENCORE_EXAMPLES_EX_H

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "encore.h"

/* The logical name of this process, as encore names it (root, root.1, root.2...). */
static char ex_name[64];

/* Print one line "NAME: TEXT" on stdout in a single write. */
__attribute__((format(printf, 1, 2)))
static inline void ex_say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n = snprintf(buf, sizeof(buf), "%s: ", ex_name);

	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(1, buf, (size_t)n) < 0) {
		/* nothing useful to do: stdout is gone */
	}
}

__attribute__((format(printf, 1, 2), noreturn))
static inline void ex_die(const char *fmt, ...)
{
	char buf[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\n", ex_name, buf);
	exit(2);
}

/* Send all of buf; 0, or -1 when the peer is gone (no SIGPIPE: MSG_NOSIGNAL). */
static inline int ex_send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t r = send(fd, p, len, MSG_NOSIGNAL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

/* Wait up to timeout_ms for fd to be readable: 1 readable (or EOF/error pending), 0 timed
 * out, -1 error. */
static inline int ex_wait(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int r;

	do
		r = poll(&pfd, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -1 : r;
}

/* Receive exactly len bytes: 1 done, 0 the peer closed (at any point), -1 error.  Fixed-size
 * messages keep the examples free of framing code; a stream may split them. */
static inline int ex_recv_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t r = recv(fd, p, len, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			return 0;
		p += r;
		len -= (size_t)r;
	}
	return 1;
}

/* Milliseconds on the monotonic clock (a CLOCK event when recorded: external input). */
static inline int64_t ex_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Simulated work.  nanosleep is not an event: it only moves time. */
static inline void ex_work_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* xorshift64*: a private generator, so that --seed makes each process's choices (which
 * vote, which hold is long) the same in every run, while the timing stays real. */
static uint64_t ex_rng_state = 88172645463325252ull;

static inline void ex_seed(uint64_t seed, unsigned who)
{
	ex_rng_state = (seed ^ (0x9e3779b97f4a7c15ull * (who + 1))) | 1;
}

static inline uint32_t ex_rand(void)
{
	ex_rng_state ^= ex_rng_state >> 12;
	ex_rng_state ^= ex_rng_state << 25;
	ex_rng_state ^= ex_rng_state >> 27;
	return (uint32_t)((ex_rng_state * 2685821657736338717ull) >> 32);
}

/* 1 with probability num/den. */
static inline int ex_chance(unsigned num, unsigned den)
{
	return den && ex_rand() % den < num;
}

/* Parse a non-negative integer option value or die naming the option. */
static inline long ex_num(const char *opt, const char *s, long lo, long hi)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < lo || v > hi)
		ex_die("%s wants a number from %ld to %ld, not '%s'", opt, lo, hi, s);
	return v;
}

/* Wait for every child; returns the number that did not exit with status 0.  Children are
 * bounded by their own timeouts, so this always returns. */
static inline int ex_wait_children(int n)
{
	int bad = 0, st;

	while (n-- > 0) {
		pid_t p;

		do
			p = wait(&st);
		while (p < 0 && errno == EINTR);
		if (p < 0)
			break;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bad++;
	}
	return bad;
}

/* The seed when none is given: differs per run (this is what makes the bugs intermittent
 * by default), from the clock so that it is recorded as external input. */
static inline uint64_t ex_default_seed(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid();
}

#endif
