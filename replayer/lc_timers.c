/*
 * lc_timers.c: timerfd in replay.  The recorder made a timerfd a channel with an outside end
 * (recorder/timers.c): its reads are INPUT events, given back from the trace by the generic
 * read path without reading the descriptor, and its readiness comes from the recorded
 * poll/select/epoll results.  Here timerfd_create makes a real timerfd, never armed, so that
 * the program holds the same descriptor number, and binds it to the recorded channel;
 * timerfd_settime and timerfd_gettime give back their recorded values.  replayer/README.md,
 * "Signals".  Traces without these events (older recorders): the real calls, as before.
 */
#include <string.h>
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

LC_EXPORT int timerfd_create(int clk, int flags)
{
	const struct lc_ev *ev = next_of(TRACE_EV_PIPE, TRACE_CALL_TIMERFD_CREATE, -1,
	                                 "timerfd_create");
	uint32_t chan;
	int r;

	if (!ev)
		return IP_REAL(timerfd_create)(clk, flags);
	LC_RECORDED_FAILURE(ev);
	chan = ev->channel;
	r = IP_REAL(timerfd_create)(clk, flags);
	if (r < 0)
		lc_diverge("timerfd_create failed: %s (it succeeded when recorded)", strerror(errno));
	if (r != ev->result)
		lc_diverge("timerfd_create returned descriptor %d, the recorded one was %lld", r,
		           (long long)ev->result);
	lc_commit();
	/* (closes the recorder logged for a number it still knew, a close it missed) */
	while ((ev = lc_peek()) && ev->kind == TRACE_EV_CLOSE && ev->fd == r && lc.pos != lc.target)
		lc_commit();
	if (r < LC_FD_MAX)
		lc_fd[r] = chan ? (int32_t)chan : LC_FD_IGNORED;
	return r;
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
