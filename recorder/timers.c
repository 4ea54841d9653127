/*
 * timers.c: timerfd and signalfd while recording.  A timerfd's reads say how often the
 * timer expired, which depends on when the program read, and a signalfd's reads which signals
 * came (struct signalfd_siginfo): external input.  So the descriptor is made a channel whose
 * other end is outside the session (a PIPE event of call timerfd_create or signalfd with one
 * end, as a pipe met at first use), and the generic read and readiness paths log its reads
 * as INPUT events and its readiness in poll/select/epoll results, which replay gives back
 * from the trace.  timerfd_settime and timerfd_gettime are TIMER events with the value
 * the program gets back (the timer is not armed in replay).  recorder/README.md, "Signals".
 */
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>

#include "rec.h"

/* The new descriptor r (or the failure, errno e) of call: a channel with an outside end. */
static void declare(uint32_t call, int r, int e, void *ra)
{
	struct trace_endpoint ep;
	struct trace_event ev;
	struct rec_chan *c = NULL;
	uint8_t buf[TRACE_ENDPOINT_MAX];
	struct stat st;
	int n;

	if (!rec_enter())
		return;
	rec_event_init(&ev, TRACE_EV_PIPE, call, r);
	ev.result = r;
	ev.err = r < 0 ? e : 0;
	if (r >= 0 && r < REC_FD_MAX && (c = rec_chan_new(TRACE_CHAN_OTHER))) {
		c->external = 1;
		c->dir = 1;
		rec_fd_bind(r, c);
		ev.channel = c->id;
		ev.naux = 1;
		ev.aux[0] = c->id;
		memset(&ep, 0, sizeof(ep));
		ep.type = c->type;
		ep.dir = c->dir;
		if (fstat(r, &st) == 0)
			ep.inode = (uint64_t)st.st_ino;
		if ((n = trace_endpoint_encode(&ep, buf, sizeof(buf))) > 0) {
			ev.data = buf;
			ev.data_len = (uint32_t)n;
		}
	}
	rec_log(&ev, ra);
	rec_leave();
}

REC_EXPORT int timerfd_create(int clk, int flags)
{
	int r = IP_REAL(timerfd_create)(clk, flags), e = errno;

	declare(TRACE_CALL_TIMERFD_CREATE, r, e, __builtin_return_address(0));
	errno = e;
	return r;
}

/* signalfd(-1, ...) makes a descriptor: declared as timerfd_create's.  signalfd(fd, ...)
 * changes the mask of one: no event (replay makes the same call on its unread descriptor). */
REC_EXPORT int signalfd(int fd, const sigset_t *mask, int flags)
{
	int r = IP_REAL(signalfd)(fd, mask, flags), e = errno;

	if (fd == -1)
		declare(TRACE_CALL_SIGNALFD, r, e, __builtin_return_address(0));
	errno = e;
	return r;
}

/* Right after the real call: a TIMER event of call on fd (or -1: a POSIX timer, naux aux
 * values) with its result r, errno, and the value given back (v, if any: interval seconds and
 * nanoseconds, value seconds and nanoseconds, four int64).  Returns r, errno as the call left
 * it, for the wrapper to return. */
static int timer_done(uint32_t call, int fd, int r, const struct itimerspec *v, void *ra,
                      uint32_t naux, const int64_t *aux)
{
	struct trace_event ev;
	int64_t d[4];
	int e = errno;

	if (!rec_enter())
		goto out;
	rec_event_init(&ev, TRACE_EV_TIMER, call, fd);
	ev.result = r;
	ev.err = r < 0 ? e : 0;
	ev.naux = naux;
	for (uint32_t i = 0; i < naux; i++)
		ev.aux[i] = aux[i];
	if (r == 0 && v) {
		d[0] = v->it_interval.tv_sec;
		d[1] = v->it_interval.tv_nsec;
		d[2] = v->it_value.tv_sec;
		d[3] = v->it_value.tv_nsec;
		ev.data = (const uint8_t *)d;
		ev.data_len = sizeof(d);
	}
	rec_log(&ev, ra);
	rec_sig_logged();
	rec_leave();
out:
	errno = e;
	return r;
}

REC_EXPORT int timerfd_settime(int fd, int flags, const struct itimerspec *nv,
                               struct itimerspec *ov)
{
	struct itimerspec own;
	int r;

	memset(&own, 0, sizeof(own));
	r = IP_REAL(timerfd_settime)(fd, flags, nv, &own);
	if (r == 0 && ov)
		*ov = own; /* (errno untouched) */
	return timer_done(TRACE_CALL_TIMERFD_SETTIME, fd, r, &own, __builtin_return_address(0), 0,
	                  NULL);
}

REC_EXPORT int timerfd_gettime(int fd, struct itimerspec *cur)
{
	return timer_done(TRACE_CALL_TIMERFD_GETTIME, fd, IP_REAL(timerfd_gettime)(fd, cur), cur,
	                  __builtin_return_address(0), 0, NULL);
}

/* --- POSIX timers -----------------------------------------------------------------------------
 * Timers notifying by SIGEV_THREAD run a function on a thread of glibc's: no signal to pin
 * down, and replay must arm them for the function to run: left alone on both sides, told
 * apart by their ids (interpose/timerids.c). */

/* After the real call on POSIX timer id (not a SIGEV_THREAD one): its TIMER event, the id
 * in aux[0]; returns r, errno as the call left it. */
static int ptimer_done(uint32_t call, timer_t id, int r, const struct itimerspec *v, void *ra)
{
	int64_t aux[1] = { (int64_t)(intptr_t)id };

	return timer_done(call, -1, r, v, ra, 1, aux);
}

REC_EXPORT int timer_create(clockid_t clk, struct sigevent *sev, timer_t *id)
{
	int r = IP_REAL(timer_create)(clk, sev, id), e = errno;
	int64_t aux[4];

	if (sev && sev->sigev_notify == SIGEV_THREAD) {
		if (r == 0)
			ip_thread_timer_add(*id);
		errno = e;
		return r;
	}
	aux[0] = r == 0 ? (int64_t)(intptr_t)*id : 0;
	aux[1] = clk;
	aux[2] = sev ? sev->sigev_notify : SIGEV_SIGNAL;
	aux[3] = sev ? sev->sigev_signo : SIGALRM;
	errno = e;
	return timer_done(TRACE_CALL_TIMER_CREATE, -1, r, NULL, __builtin_return_address(0), 4, aux);
}

REC_EXPORT int timer_settime(timer_t id, int flags, const struct itimerspec *nv,
                             struct itimerspec *ov)
{
	struct itimerspec own;
	int r;

	if (ip_thread_timer(id))
		return IP_REAL(timer_settime)(id, flags, nv, ov);
	memset(&own, 0, sizeof(own));
	r = IP_REAL(timer_settime)(id, flags, nv, &own);
	if (r == 0 && ov)
		*ov = own; /* (errno untouched) */
	return ptimer_done(TRACE_CALL_TIMER_SETTIME, id, r, &own, __builtin_return_address(0));
}

REC_EXPORT int timer_gettime(timer_t id, struct itimerspec *cur)
{
	if (ip_thread_timer(id))
		return IP_REAL(timer_gettime)(id, cur);
	return ptimer_done(TRACE_CALL_TIMER_GETTIME, id, IP_REAL(timer_gettime)(id, cur), cur,
	                   __builtin_return_address(0));
}

REC_EXPORT int timer_getoverrun(timer_t id)
{
	if (ip_thread_timer(id))
		return IP_REAL(timer_getoverrun)(id);
	return ptimer_done(TRACE_CALL_TIMER_GETOVERRUN, id, IP_REAL(timer_getoverrun)(id), NULL,
	                   __builtin_return_address(0));
}

REC_EXPORT int timer_delete(timer_t id)
{
	if (ip_thread_timer(id))
		return IP_REAL(timer_delete)(id);
	return ptimer_done(TRACE_CALL_TIMER_DELETE, id, IP_REAL(timer_delete)(id), NULL,
	                   __builtin_return_address(0));
}
