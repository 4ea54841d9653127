/*
 * nondet.c: values a re-execution cannot regenerate, recorded so replay can feed them back:
 * readiness results (poll, ppoll, select, pselect, epoll_wait, epoll_pwait), clocks
 * (clock_gettime, gettimeofday, time), randomness (getrandom; /dev/urandom reads are in
 * chan.c), process ids (getpid, getppid), and the user's marks (encore_mark).
 *
 * Layout of the READY data (the "result set"), little-endian as the host writes it:
 *   poll, ppoll          n x int16 revents, one per pollfd, in the caller's order
 *   select, pselect      three fd_set prefixes of ceil(nfds / 8) bytes: read, write, except
 *                        (zeros for a set the caller passed as NULL); select with a timeout
 *                        then the struct timeval Linux left in it (the time not slept, which
 *                        programs test: iperf3 runs its timers when it is zero), also after
 *                        a failure (the sets zeros then)
 *   epoll_wait, _pwait   result x struct epoll_event (12 bytes on x86-64: events, data),
 *                        then result x int32 descriptor behind each event (-1 unknown),
 *                        from the registrations epoll.c keeps
 * READY aux (poll, select, epoll): the channels it found readable (POLLIN/POLLHUP, in the
 * read set, EPOLLIN/EPOLLHUP of an event whose descriptor is known), up to 8 ids packed two
 * per entry (low 32 bits, then high; 0 = none), so that the analyzer can order the result
 * after the send of the bytes it saw waiting.
 * CLOCK data: the struct timespec or struct timeval filled in; aux[0] = the clock id.
 */
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/time.h>

/* The definition below must not be rewritten by the header's convenience macro. */
#define ENCORE_NO_MARK_MACRO
#include "encore.h"
#include "rec.h"

#define RA() __builtin_return_address(0)

static uint8_t set_buf[3 * (FD_SETSIZE / 8) + sizeof(struct timeval)];
static int16_t revents_buf[4096];

/* The readable channels of a readiness result, packed into aux (see the layout above). */
struct ready_chans {
	int64_t aux[TRACE_AUX_MAX];
	uint32_t n;
};

static void ready_add(struct ready_chans *rc, int fd)
{
	uint32_t id;

	if (rc->n >= 2 * TRACE_AUX_MAX || !(id = rec_fd_channel_id(fd)))
		return;
	if (rc->n % 2 == 0)
		rc->aux[rc->n / 2] = id;
	else
		rc->aux[rc->n / 2] |= (int64_t)((uint64_t)id << 32);
	rc->n++;
}

static void log_ready(uint32_t call, long r, int e, const void *data, size_t len,
                      const struct ready_chans *rc, void *ra)
{
	struct trace_event ev;

	rec_event_init(&ev, TRACE_EV_READY, call, -1);
	ev.result = r;
	ev.err = r < 0 ? e : 0;
	if (data && len) {
		ev.data = data;
		ev.data_len = (uint32_t)len;
	}
	if (rc && rc->n) {
		ev.naux = (rc->n + 1) / 2;
		memcpy(ev.aux, rc->aux, ev.naux * sizeof(ev.aux[0]));
	}
	rec_log(&ev, ra);
}

static void log_value(uint32_t kind, uint32_t call, long r, int e, const void *data,
                      size_t len, void *ra)
{
	struct trace_event ev;

	rec_event_init(&ev, kind, call, -1);
	ev.result = r;
	ev.err = r < 0 ? e : 0;
	if (data && len) {
		ev.data = data;
		ev.data_len = (uint32_t)len;
	}
	rec_log(&ev, ra);
}

static void log_poll(struct pollfd *fds, nfds_t n, int r, int e, uint32_t call, void *ra)
{
	nfds_t i, m = n < 4096 ? n : 4096;
	struct ready_chans rc = { { 0 }, 0 };

	for (i = 0; r >= 0 && i < m; i++) {
		revents_buf[i] = (int16_t)fds[i].revents;
		if (fds[i].revents & (POLLIN | POLLHUP | POLLRDHUP))
			ready_add(&rc, fds[i].fd);
	}
	log_ready(call, r, e, revents_buf, r >= 0 ? m * sizeof(int16_t) : 0, &rc, ra);
}





static void log_select(int n, fd_set *rs, fd_set *ws, fd_set *es, const struct timeval *left,
                       int r, int e, uint32_t call, void *ra)
{
	size_t k = n > 0 ? ((size_t)(n > FD_SETSIZE ? FD_SETSIZE : n) + 7) / 8 : 0;
	struct ready_chans rc = { { 0 }, 0 };

	if (r > 0 && rs)
		for (int fd = 0; fd < n && fd < FD_SETSIZE; fd++)
			if (FD_ISSET(fd, rs))
				ready_add(&rc, fd);
	if (r >= 0 && k) {
		memset(set_buf, 0, 3 * k);
		if (rs)
			memcpy(set_buf, rs, k);
		if (ws)
			memcpy(set_buf + k, ws, k);
		if (es)
			memcpy(set_buf + 2 * k, es, k);
	}
	if (left) {
		if (r < 0)
			memset(set_buf, 0, 3 * k);
		memcpy(set_buf + 3 * k, left, sizeof(*left));
	}
	log_ready(call, r, e, set_buf, left ? 3 * k + sizeof(*left) : r >= 0 ? 3 * k : 0, &rc, ra);
}



#define REC_EPOLL_LOG 1024 /* events logged per result; more are cut (the result stays) */
static uint8_t epoll_buf[REC_EPOLL_LOG * (sizeof(struct epoll_event) + sizeof(int32_t))];

/* 1: epoll_buf's descriptors are those of the result log_epoll is about to log, looked up by
 * epoll_observes_sends under the same hold of the stream lock (only then: when it returns 1
 * the lock is let go before the event, and the table may change). */
static int epoll_fds_known;

/* Under the stream lock (the registration table's): whether one of the descriptors an
 * epoll_wait found ready could show the effect of a send of ours (rec_fd_observes_sends); a
 * descriptor not known counts as one that could.  Each descriptor is looked up once, into
 * epoll_buf where log_epoll logs them. */
static int epoll_observes_sends(int epfd, const struct epoll_event *ev, int r)
{
	size_t n = r > REC_EPOLL_LOG ? REC_EPOLL_LOG : (size_t)r, sz = sizeof(*ev);
	int obs = 0;

	for (size_t i = 0; i < n; i++) {
		int32_t fd = rec_epoll_fd(epfd, ev[i].data.u64);

		memcpy(epoll_buf + n * sz + i * sizeof(fd), &fd, sizeof(fd));
		obs |= rec_fd_observes_sends(fd);
	}
	for (size_t i = n; i < (size_t)r && !obs; i++) /* past what is logged */
		obs = rec_fd_observes_sends(rec_epoll_fd(epfd, ev[i].data.u64));
	epoll_fds_known = !obs;
	return obs;
}

static void log_epoll(int epfd, const struct epoll_event *ev, int r, int e, uint32_t call,
                      void *ra)
{
	size_t n = r > 0 ? (size_t)r : 0, sz = sizeof(*ev);
	struct ready_chans rc = { { 0 }, 0 };

	if (n > REC_EPOLL_LOG)
		n = REC_EPOLL_LOG;
	memcpy(epoll_buf, ev, n * sz);
	for (size_t i = 0; i < n; i++) {
		int32_t fd;

		if (epoll_fds_known) {
			memcpy(&fd, epoll_buf + n * sz + i * sizeof(fd), sizeof(fd));
		} else {
			fd = rec_epoll_fd(epfd, ev[i].data.u64);
			memcpy(epoll_buf + n * sz + i * sizeof(fd), &fd, sizeof(fd));
		}
		if (fd >= 0 && (ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLRDHUP)))
			ready_add(&rc, fd);
	}
	epoll_fds_known = 0;
	log_ready(call, r, e, epoll_buf, n * (sz + sizeof(int32_t)), &rc, ra);
}



/* --- clocks --------------------------------------------------------------------------------- */



/* A deferred signal handler due after a clock read (rec_sig_after_event reads only the
 * event's kind and call), out of the clock's path. */
__attribute__((noinline)) static void clock_after_signal(uint32_t call)
{
	struct trace_event ev;

	rec_event_fill(&ev, TRACE_EV_CLOCK, call, 0);
	rec_sig_after_event(&ev);
}

/* A clock read that succeeded and filled in its 16 bytes: what rec_log does for it, without
 * an event struct (trace_writer_clock encodes the same bytes from the fields).  errno is the
 * wrapper's to restore, as after rec_log. */
__attribute__((always_inline)) static inline void log_clock_value(uint32_t call, uint32_t naux,
                                                                   int64_t clk, const void *out,
                                                                   void *ra)
{
	uint32_t site = rec.depth && ra ? rec_site(ra) : 0;
	uint32_t thread = __builtin_expect(rec_thread != REC_NO_THREAD, 1) ? rec_thread :
	                                                                     rec_thread_foreign();

	if (__builtin_expect(!rec.w, 0)) /* (as rec_log: the site's record may have ended it) */
		return;
	rec_own_say(thread);
	/* a full disk or a broken file: unrecorded from here on, as in rec_log */
	if (trace_writer_clock(rec.w, thread, site, call, naux, clk, rec_clock_stamp(), out) ==
	    TRACE_EIO) {
		trace_writer_abandon(rec.w);
		rec.w = NULL;
	}
	if (__builtin_expect(rec_sig_npend != 0, 0))
		clock_after_signal(call);
}

/* One clock read, logged as an event (rec_event_fill, and one display stamp in 16): a failed
 * read, time(), a value not filled in. */
__attribute__((noinline)) static void log_clock_event(uint32_t call, long r, int e,
                                                      uint32_t naux, int64_t clk,
                                                      const void *out, uint32_t len, void *ra)
{
	struct trace_event ev;

	rec_event_fill(&ev, TRACE_EV_CLOCK, call, rec_clock_stamp());
	ev.result = r;
	ev.err = r < 0 ? e : 0;
	ev.naux = naux;
	ev.aux[0] = clk;
	if (out) {
		ev.data = out;
		ev.data_len = len;
	}
	rec_log(&ev, ra);
}

/* One clock read, logged: a value filled in through log_clock_value, in the wrapper itself;
 * anything else as an event.  `naux` 1 carries the clock id; `out`, `len`: the value filled
 * in, when the call succeeded. */
__attribute__((always_inline)) static inline void log_clock(uint32_t call, long r, int e,
                                                            uint32_t naux, int64_t clk,
                                                            const void *out, uint32_t len,
                                                            void *ra)
{
	if (__builtin_expect(r == 0 && out != NULL && len == 16, 1))
		log_clock_value(call, naux, clk, out, ra);
	else
		log_clock_event(call, r, e, naux, clk, out, len, ra);
}

REC_EXPORT time_t time(time_t *t)
{
	time_t r = IP_REAL(time)(t);
	int e = errno;

	if (!rec_enter())
		return r;
	log_clock(TRACE_CALL_TIME, (long)r, e, 0, 0, NULL, 0, RA());
	rec_leave();
	errno = e;
	return r;
}

/* --- randomness and ids --------------------------------------------------------------------- */

REC_EXPORT ssize_t getrandom(void *buf, size_t n, unsigned int flags)
{
	ssize_t r = IP_REAL(getrandom)(buf, n, flags);
	int e = errno;

	if (!rec_enter()) {
		if (!rec.w && !rec_busy())
			rec_early_keep(buf, r); /* before the recorder started (io_more.c) */
		errno = e;
		return r;
	}
	log_value(TRACE_EV_RANDOM, TRACE_CALL_GETRANDOM, r, e, buf, r > 0 ? (size_t)r : 0, RA());
	rec_leave();
	errno = e;
	return r;
}



/* --- marks ---------------------------------------------------------------------------------- */

/* The definition behind encore.h's weak reference: present only when preloaded. */
REC_EXPORT void encore_mark(const char *key, long value)
{
	struct trace_event ev;
	int e = errno;

	if (!rec_enter())
		return;
	rec_event_init(&ev, TRACE_EV_MARK, TRACE_CALL_MARK, -1);
	if (key) {
		ev.data = (const uint8_t *)key;
		ev.data_len = (uint32_t)strnlen(key, 256);
	}
	ev.naux = 1;
	ev.aux[0] = value;
	rec_log(&ev, RA());
	rec_leave();
	errno = e;
}

/* select's timeout, which Linux changes to the time not slept (pselect's is glibc's copy):
 * logged with the result.  timeout is either call's argument, pselect's a timespec. */
static inline const struct timeval *select_left(uint32_t call, const void *timeout)
{
	return call == TRACE_CALL_SELECT ? timeout : NULL;
}

/* The readiness shapes' handlers (interpose/calls.def): poll, __poll_chk, ppoll, __ppoll_chk,
 * select, pselect, epoll_wait and epoll_pwait are generated (rec_wrappers.h, below). */
#define READY_BODY(realcall, logcall, observes) \
	int r_ = realcall, e_ = errno; \
	if (!rec_enter()) \
		return r_; \
	if (__builtin_expect(rec.threads, 0) && r_ > 0 && (observes)) { \
		/* threads: logged after the sends it saw (rec.h), waited for outside the lock */ \
		rec_leave(); \
		rec_sends_settle(); \
		if (!rec_enter()) { \
			errno = e_; \
			return r_; \
		} \
	} \
	logcall; \
	rec_leave(); \
	errno = e_; \
	return r_
#define REC_SHAPE_READY_POLL(nm, wh, call, FDS, N, realcall) \
	READY_BODY(realcall, log_poll(FDS, N, r_, e_, call, RA()), 1)
#define REC_SHAPE_READY_SELECT(nm, wh, call, N, RS, WS, ES, realcall) \
	READY_BODY(realcall, log_select(N, RS, WS, ES, select_left(call, timeout), r_, e_, call, \
	                                RA()), 1)
#define REC_SHAPE_READY_EPOLL(nm, wh, call, EPFD, EV, MAX, realcall) \
	READY_BODY(realcall, log_epoll(EPFD, EV, r_, e_, call, RA()), \
	           epoll_observes_sends(EPFD, EV, r_))

/* glibc declares the clocks' result pointer nonnull, but gettimeofday(NULL, tz) succeeds: the
 * pointer is tested through this, which the nonnull attribute does not reach (the empty asm
 * keeps the compiler from assuming it, and from folding the test away). */
static inline const void *value_ptr(const void *p)
{
	__asm__("" : "+r"(p));
	return p;
}

/* The VALUE_CLOCK shape's handler: clock_gettime and gettimeofday are generated too; the
 * clock read is aux[0] (NOCLK: gettimeofday, none). */
#define REC_SHAPE_VALUE_CLOCK(nm, wh, call, OUT, CLK, NOCLK, realcall) \
	int r_ = realcall, e_ = errno; \
	if (rec_from_alloc(RA()) || !rec_enter()) /* the allocator's own (rec.h) */ \
		return r_; \
	log_clock(call, r_, e_, (NOCLK) ? 0 : 1, (NOCLK) ? 0 : (int64_t)(CLK), \
	          r_ == 0 ? value_ptr(OUT) : NULL, (uint32_t)sizeof(*(OUT)), RA()); \
	rec_leave(); \
	errno = e_; \
	return r_

/* The VALUE_PID shape's handler: getpid and getppid are generated too. */
#define REC_SHAPE_VALUE_PID(nm, wh, call, realcall) \
	pid_t r = realcall; \
	int e = errno; \
	if (!rec_enter()) \
		return r; \
	log_value(TRACE_EV_PID, call, r, 0, NULL, 0, RA()); \
	rec_leave(); \
	errno = e; \
	return r

#include "rec_wrappers.h"
