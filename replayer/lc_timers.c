/*
 * lc_timers.c: timerfd, signalfd and POSIX timers in replay.  The recorder made a timerfd or
 * signalfd a channel with an outside end (recorder/timers.c): its reads are INPUT events,
 * given back from the trace by the generic read path without reading the descriptor, and its
 * readiness comes from the recorded poll/select/epoll results.  Here timerfd_create makes a
 * real timerfd, never armed (signalfd a real signalfd, never read), so that the program holds
 * the same descriptor number, and binds it to the recorded channel; timerfd_settime and
 * timerfd_gettime give back their recorded values, and so do the POSIX timer calls (below).
 * replayer/README.md, "Signals".  Traces without these events (older recorders): the real
 * calls, as before.
 */
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>

#include "lc.h"

/* The event of this call when the trace has it next (else NULL: the real call). */
static const struct lc_ev *next_of(uint32_t kind, uint32_t call, int fd, const char *what)
{
	const struct lc_ev *ev;

	if (!lc_on() || !(ev = lc_peek()) || ev->kind != kind || ev->call != call)
		return NULL;
	return lc_expect(kind, fd, what);
}

/* The descriptor r the real call made (errno: why not) for the recorded PIPE event ev: bound
 * to its recorded channel. */
static int declared(const struct lc_ev *ev, int r, const char *what)
{
	uint32_t chan = ev->channel;

	if (r < 0)
		lc_diverge("%s failed: %s (it succeeded when recorded)", what, strerror(errno));
	if (r != ev->result)
		lc_diverge("%s returned descriptor %d, the recorded one was %lld", what, r,
		           (long long)ev->result);
	lc_commit();
	/* (closes the recorder logged for a number it still knew, a close it missed) */
	while ((ev = lc_peek()) && ev->kind == TRACE_EV_CLOSE && ev->fd == r && lc.pos != lc.target)
		lc_commit();
	if (r < LC_FD_MAX)
		lc_fd[r] = chan ? (int32_t)chan : LC_FD_IGNORED;
	return r;
}

LC_EXPORT int timerfd_create(int clk, int flags)
{
	const struct lc_ev *ev = next_of(TRACE_EV_PIPE, TRACE_CALL_TIMERFD_CREATE, -1,
	                                 "timerfd_create");

	if (!ev)
		return IP_REAL(timerfd_create)(clk, flags);
	LC_RECORDED_FAILURE(ev);
	return declared(ev, IP_REAL(timerfd_create)(clk, flags), "timerfd_create");
}

/* A signalfd made here: its reads come from the trace, the real signals stay pending (the
 * program blocked them); signalfd(fd, ...) on one made already changes its mask, as recorded. */
LC_EXPORT int signalfd(int fd, const sigset_t *mask, int flags)
{
	const struct lc_ev *ev = fd == -1 ? next_of(TRACE_EV_PIPE, TRACE_CALL_SIGNALFD, -1,
	                                            "signalfd") : NULL;

	if (!ev)
		return IP_REAL(signalfd)(fd, mask, flags);
	LC_RECORDED_FAILURE(ev);
	return declared(ev, IP_REAL(signalfd)(fd, mask, flags), "signalfd");
}

/* The recorded result of a TIMER event: the value into v (if any), or -1 and errno. */
static int timer_value(const struct lc_ev *ev, struct itimerspec *v)
{
	int64_t d[4];

	if (ev->result < 0) {
		int e = ev->err;

		lc_commit();
		errno = e;
		return -1;
	}
	if (v && ev->data_len == sizeof(d)) {
		memcpy(d, lc.data + ev->data_off, sizeof(d));
		v->it_interval.tv_sec = d[0];
		v->it_interval.tv_nsec = d[1];
		v->it_value.tv_sec = d[2];
		v->it_value.tv_nsec = d[3];
	}
	lc_commit();
	return 0;
}

LC_EXPORT int timerfd_settime(int fd, int flags, const struct itimerspec *nv,
                              struct itimerspec *ov)
{
	const struct lc_ev *ev = next_of(TRACE_EV_TIMER, TRACE_CALL_TIMERFD_SETTIME, fd,
	                                 "timerfd_settime");

	if (!ev)
		return IP_REAL(timerfd_settime)(fd, flags, nv, ov);
	return timer_value(ev, ov);
}

LC_EXPORT int timerfd_gettime(int fd, struct itimerspec *cur)
{
	const struct lc_ev *ev = next_of(TRACE_EV_TIMER, TRACE_CALL_TIMERFD_GETTIME, fd,
	                                 "timerfd_gettime");

	if (!ev)
		return IP_REAL(timerfd_gettime)(fd, cur);
	return timer_value(ev, cur);
}

/* --- POSIX timers -----------------------------------------------------------------------------
 * Those notifying by a signal: no timer is made; each call gives back what it gave when
 * recorded (the timer id too), and the handler runs of the signals come from the trace
 * (lc_signals.c).  SIGEV_THREAD timers are real, as the recorder left them (their ids are
 * kept to tell them apart: interpose/timerids.c). */

LC_EXPORT int timer_create(clockid_t clk, struct sigevent *sev, timer_t *id)
{
	const struct lc_ev *ev;
	int r;

	if (sev && sev->sigev_notify == SIGEV_THREAD) {
		r = IP_REAL(timer_create)(clk, sev, id);
		if (r == 0)
			ip_thread_timer_add(*id);
		return r;
	}
	if (!(ev = next_of(TRACE_EV_TIMER, TRACE_CALL_TIMER_CREATE, -1, "timer_create")))
		return IP_REAL(timer_create)(clk, sev, id);
	LC_RECORDED_FAILURE(ev);
	if (id)
		*id = (timer_t)(intptr_t)(ev->naux > 0 ? ev->aux[0] : 0);
	lc_commit();
	return 0;
}

LC_EXPORT int timer_settime(timer_t id, int flags, const struct itimerspec *nv,
                            struct itimerspec *ov)
{
	const struct lc_ev *ev;

	if (ip_thread_timer(id) ||
	    !(ev = next_of(TRACE_EV_TIMER, TRACE_CALL_TIMER_SETTIME, -1, "timer_settime")))
		return IP_REAL(timer_settime)(id, flags, nv, ov);
	return timer_value(ev, ov);
}

LC_EXPORT int timer_gettime(timer_t id, struct itimerspec *cur)
{
	const struct lc_ev *ev;

	if (ip_thread_timer(id) ||
	    !(ev = next_of(TRACE_EV_TIMER, TRACE_CALL_TIMER_GETTIME, -1, "timer_gettime")))
		return IP_REAL(timer_gettime)(id, cur);
	return timer_value(ev, cur);
}

/* The recorded result of a call that gives back only that. */
static int timer_result(const struct lc_ev *ev)
{
	int r = (int)ev->result, e = ev->err;

	lc_commit();
	if (r < 0)
		errno = e;
	return r;
}

LC_EXPORT int timer_getoverrun(timer_t id)
{
	const struct lc_ev *ev;

	if (ip_thread_timer(id) ||
	    !(ev = next_of(TRACE_EV_TIMER, TRACE_CALL_TIMER_GETOVERRUN, -1, "timer_getoverrun")))
		return IP_REAL(timer_getoverrun)(id);
	return timer_result(ev);
}

LC_EXPORT int timer_delete(timer_t id)
{
	const struct lc_ev *ev;

	if (ip_thread_timer(id) ||
	    !(ev = next_of(TRACE_EV_TIMER, TRACE_CALL_TIMER_DELETE, -1, "timer_delete")))
		return IP_REAL(timer_delete)(id);
	return timer_result(ev);
}
