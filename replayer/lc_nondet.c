/*
 * lc_nondet.c: the local controller's interposers for the values a re-execution cannot
 * regenerate, the twins of recorder/nondet.c and recorder/epoll.c: readiness (poll, select,
 * epoll), clocks, randomness, pids, and encore_mark.  The recorded value is given back,
 * without touching the outside world (a readiness result only once the data behind it is
 * really there).
 */
#undef _FILE_OFFSET_BITS
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ENCORE_NO_MARK_MACRO
#include "encore.h"
#include "lc.h"

/* --- values: readiness, clocks, randomness, pids, marks --------------------------------------- */

#define VALUE_EVENT(kind, what) \
	const struct lc_ev *ev = lc_expect(kind, -1, what); \
	const uint8_t *val = lc.data + ev->data_off; \
	(void)val

/* Readiness results are given back as recorded, but only once the data behind them has
 * really arrived (issue #6): for every descriptor the recorded result says ready, on a
 * channel between recorded processes, the LC first waits until the kernel says so too
 * (readable: bytes there or the writer gone; a listening socket: a connection pending or one
 * kept aside for a later accept; writable: room in the buffer).  A program that trusts the
 * result (a non-blocking read, FIONREAD) then finds what it found when recorded.  Files,
 * peers outside the session and descriptors not classified yet are not waited for.  While
 * it waits the board says so (wait_kind READY); the GD releases the wait at a halt when no
 * running process is left to send the data (replayer/README.md), else reports a stall. */
#define LC_READY_MAX 256

struct ready_set {
	struct pollfd p[LC_READY_MAX + 1]; /* + the control connection */
	size_t n;
};

/* A listening socket said readable: is the connection behind it one no running process
 * makes?  The next accept through that listening channel (ACCEPT events name it in aux[0])
 * tells: a client outside the session (its bytes are INPUT: accept gives a stand-in) or a
 * failed accept (another process took the connection) is nothing to wait for, and neither is
 * a readiness no accept of ours follows (a pre-forked sibling accepts it). */
static int ready_accept_outside(int32_t lch)
{
	for (uint64_t i = lc.pos; i < lc.nev; i++) {
		const struct lc_ev *ev = &lc.ev[i - lc.base];

		if (ev->kind != TRACE_EV_ACCEPT || !ev->naux || ev->aux[0] != lch)
			continue;
		return ev->result < 0 || !ev->channel ||
		       (ev->channel < LC_CHAN_MAX && lc_chan[ev->channel].external);
	}
	return 1;
}

static void ready_add(struct ready_set *s, int fd, int in, int out)
{
	int32_t ch;
	short want = 0;
	int listening = 0;
	socklen_t sl = sizeof(listening);

	if (fd < 0 || fd >= LC_FD_MAX || s->n == LC_READY_MAX)
		return;
	ch = lc_fd[fd];
	if (ch <= 0 || ch >= LC_CHAN_MAX || lc_chan[ch].external)
		return;
	if (lc_chan_shared(ch))
		return; /* its receives wait for their own bytes (lc_chan.c, recv_shared) */
	if (in && lc_stash_has_listener(fd))
		in = 0; /* a connection came through it already, kept for its accept */
	if (in && IP_REAL(getsockopt)(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &sl) == 0 && listening &&
	    ready_accept_outside(ch))
		in = 0; /* the client is not replayed (curl hitting a recorded server) */
	if (in)
		want |= POLLIN;
	if (out)
		want |= POLLOUT;
	if (!want)
		return;
	for (size_t i = 0; i < s->n; i++)
		if (s->p[i].fd == fd) {
			s->p[i].events |= want;
			return;
		}
	s->p[s->n].fd = fd;
	s->p[s->n].events = want;
	s->n++;
}

static void ready_wait(struct ready_set *s)
{
	size_t n = s->n, left = n;
	int ctl = lc_ctl_fd(), waiting = 0;

	s->p[n].fd = ctl;
	s->p[n].events = POLLIN;
	while (left) {
		long r;

		for (size_t i = 0; i <= n; i++)
			s->p[i].revents = 0;
		r = syscall(SYS_poll, s->p, n + (ctl >= 0), waiting ? -1 : 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (size_t i = 0; i < n; i++)
			if (s->p[i].fd >= 0 && s->p[i].revents) {
				s->p[i].fd = -1; /* there: poll ignores it from now on */
				left--;
			}
		if (!left)
			break;
		if (ctl >= 0 && s->p[n].revents && lc_ctl_release())
			break;
		if (!waiting && lc.online) {
			/* online (Manabe & Imase 3.2): ask as for a receive.  The GD pulls the sender
			 * of the data behind the result where the analyzer orders the readiness event
			 * after a send (a halt marker stops us here); where it does not, pulling would
			 * put the halt past the analyzer's Inf(P): it only answers, and releases the
			 * wait at the halt if nobody sends. */
			lc_request(lc.pos + 1);
		}
		for (size_t i = 0; i < n; i++)
			if (s->p[i].fd >= 0) {
				lc_wait_state(TRACE_EV_READY, s->p[i].fd, (uint32_t)lc_fd[s->p[i].fd], left);
				break;
			}
		waiting = 1;
	}
	if (waiting)
		lc_wait_state(0, -1, 0, 0);
}

#define POLL_IN_BITS (POLLIN | POLLPRI | POLLRDNORM | POLLRDBAND | POLLHUP | POLLRDHUP)
#define POLL_OUT_BITS (POLLOUT | POLLWRNORM | POLLWRBAND)

static int ready_poll(struct pollfd *fds, nfds_t n)
{
	VALUE_EVENT(TRACE_EV_READY, "poll");
	int r = (int)ev->result;
	struct ready_set set;

	set.n = 0;
	for (nfds_t i = 0; r > 0 && i < n && (i + 1) * sizeof(int16_t) <= ev->data_len; i++) {
		int16_t re;

		memcpy(&re, val + i * sizeof(int16_t), sizeof(re));
		ready_add(&set, fds[i].fd, (re & POLL_IN_BITS) != 0, (re & POLL_OUT_BITS) != 0);
	}
	ready_wait(&set);
	if (r >= 0)
		for (nfds_t i = 0; i < n && (i + 1) * sizeof(int16_t) <= ev->data_len; i++) {
			int16_t re;

			memcpy(&re, val + i * sizeof(int16_t), sizeof(re));
			fds[i].revents = re;
		}
	if (r < 0)
		errno = ev->err;
	lc_commit();
	return r;
}





/* A select on no descriptor: the next event is its own (a recorded sleep, or a handler run
 * before the call's event), else the recorded run did not sleep here. */
static int sleep_next(void)
{
	const struct lc_ev *ev = lc_peek_now();

	return ev && (ev->kind == TRACE_EV_HANDLER || ev->kind == TRACE_EV_SIGNAL ||
	              (ev->kind == TRACE_EV_READY &&
	               (ev->call == TRACE_CALL_SELECT || ev->call == TRACE_CALL_PSELECT)));
}

/* select(n, ...): left, select's timeout, gets the time not slept that the recording's
 * kernel left in it, when the trace has it (after the sets: recorder/nondet.c). */
static int ready_select(int n, fd_set *rs, fd_set *ws, fd_set *es, struct timeval *left)
{
	VALUE_EVENT(TRACE_EV_READY, "select");
	size_t k = n > 0 ? ((size_t)(n > FD_SETSIZE ? FD_SETSIZE : n) + 7) / 8 : 0;
	int r = (int)ev->result;
	struct ready_set set;

	if (ev->data_len == 3 * k + sizeof(*left)) {
		if (left)
			memcpy(left, val + 3 * k, sizeof(*left));
	} else if (r >= 0 && ev->data_len != 3 * k) {
		/* a call whose n differs from the recorded one's: the recorded sets, and the
		 * timeval after them when the sizes say so */
		size_t sets = ev->data_len;

		if (left && sets > sizeof(*left) && (sets - sizeof(*left)) % 3 == 0) {
			sets -= sizeof(*left);
			memcpy(left, val + sets, sizeof(*left));
		}
		k = sets / 3;
	}
	if (ev->data_len < 3 * k)
		k = 0;

	set.n = 0;
	for (size_t fd = 0; r > 0 && fd < 8 * k; fd++) {
		int in = (val[fd / 8] >> (fd % 8)) & 1, out = (val[k + fd / 8] >> (fd % 8)) & 1;

		if (in || out)
			ready_add(&set, (int)fd, in, out);
	}
	ready_wait(&set);
	if (r >= 0 && k) {
		if (rs)
			memcpy(rs, val, k);
		if (ws)
			memcpy(ws, val + k, k);
		if (es)
			memcpy(es, val + 2 * k, k);
	}
	if (r < 0)
		errno = ev->err;
	lc_commit();
	return r;
}



/* The program's epoll registrations as its epoll_ctl calls made them: read where
 * /proc/self/fdinfo cannot be opened, a program that holds every descriptor its limit allows
 * (nginx under `ulimit -n 16`: given the recorded run's pointers back, it crashed).  /proc
 * stays the reference: it also knows what a close removed. */
#define LC_EPREG_MAX 1024
static struct lc_epreg {
	int epfd, fd;
	uint64_t data;
} epreg[LC_EPREG_MAX];
static size_t nepreg;
static int epreg_lock;

/* A fork's child has one thread: a lock another thread held at the fork is nobody's. */
static void epreg_child(void)
{
	__atomic_store_n(&epreg_lock, 0, __ATOMIC_RELAXED);
}

__attribute__((constructor)) static void epreg_init(void)
{
	pthread_atfork(NULL, NULL, epreg_child);
}

/* Bounded: an epoll_ctl from a signal handler that interrupted this thread's own use of the
 * table gives up (that registration is then not known here) rather than wait for ever. */
static int epreg_take(void)
{
	for (int n = 0; __atomic_exchange_n(&epreg_lock, 1, __ATOMIC_ACQUIRE); n++) {
		if (n == 1000)
			return 0;
		sched_yield();
	}
	return 1;
}

static void epreg_note(int epfd, int op, int fd, const struct epoll_event *ev)
{
	size_t i;

	if (!epreg_take())
		return;
	for (i = 0; i < nepreg; i++)
		if (epreg[i].epfd == epfd && epreg[i].fd == fd)
			break;
	if (op == EPOLL_CTL_DEL) {
		if (i < nepreg)
			epreg[i] = epreg[--nepreg];
	} else if (ev && (i < nepreg || nepreg < LC_EPREG_MAX)) {
		if (i == nepreg)
			nepreg++;
		epreg[i] = (struct lc_epreg){ epfd, fd, ev->data.u64 };
	}
	__atomic_store_n(&epreg_lock, 0, __ATOMIC_RELEASE);
}

/* One registration (tfd, data) against the recorded events (ready_epoll_fds). */
static void epoll_match(int tfd, uint64_t data, const struct epoll_event *rec,
                        const int32_t *recfd, size_t nrec, int *tfd_of, int *count, int *live,
                        uint64_t *live_data)
{
	for (size_t k = 0; k < nrec; k++) {
		if (recfd && recfd[k] >= 0) {
			if (recfd[k] == tfd) {
				live[k] = 1;
				live_data[k] = data;
			}
		} else if (rec[k].data.u64 == data) {
			tfd_of[k] = tfd;
			count[k]++;
		}
	}
}

/* The descriptors behind recorded epoll events, and the data the replayed program registered
 * for them.  The recorder logs each event's descriptor after the events (nondet.c, from the
 * registrations it keeps: -1 unknown); the replayed program's registrations are listed in
 * /proc/self/fdinfo/EPFD ("tfd: FD events: HEX data: HEX ...").  An event whose descriptor is
 * known gets that descriptor's live data (a program that registers pointers, nginx or
 * libevent, gets its own pointers back, not the recorded run's); one whose descriptor is not
 * is matched by its recorded data (none or several matches: not waited for, data kept). */
static void ready_epoll_fds(int epfd, struct epoll_event *rec, const int32_t *recfd, size_t nrec,
                            struct ready_set *set)
{
	char path[64], buf[4096];
	int tfd_of[LC_READY_MAX], count[LC_READY_MAX], live[LC_READY_MAX];
	uint64_t live_data[LC_READY_MAX];
	size_t have = 0;
	int fd;

	if (nrec > LC_READY_MAX)
		nrec = LC_READY_MAX;
	memset(count, 0, sizeof(count));
	memset(live, 0, sizeof(live));
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", epfd);
	fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		/* no descriptor left (or no /proc): the registrations as the program made them */
		if (epreg_take()) {
			for (size_t i = 0; i < nepreg; i++)
				if (epreg[i].epfd == epfd)
					epoll_match(epreg[i].fd, epreg[i].data, rec, recfd, nrec, tfd_of,
					            count, live, live_data);
			__atomic_store_n(&epreg_lock, 0, __ATOMIC_RELEASE);
		}
	}
	for (; fd >= 0;) {
		long r = syscall(SYS_read, fd, buf + have, sizeof(buf) - 1 - have);
		char *line = buf, *nl;

		if (r <= 0)
			break;
		have += (size_t)r;
		buf[have] = '\0';
		while ((nl = memchr(line, '\n', (size_t)(buf + have - line)))) {
			char *d;

			*nl = '\0';
			if (strncmp(line, "tfd:", 4) == 0 && (d = strstr(line, "data:")))
				epoll_match((int)strtol(line + 4, NULL, 10), strtoull(d + 5, NULL, 16),
				            rec, recfd, nrec, tfd_of, count, live, live_data);
			line = nl + 1;
		}
		have = (size_t)(buf + have - line);
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1)
			have = 0; /* a line longer than the buffer: not one of ours */
	}
	if (fd >= 0)
		syscall(SYS_close, fd);
	for (size_t k = 0; k < nrec; k++) {
		int t = -1;

		if (live[k]) {
			rec[k].data.u64 = live_data[k];
			t = recfd[k];
		} else if (!(recfd && recfd[k] >= 0) && count[k] == 1) {
			t = tfd_of[k];
		}
		if (t >= 0)
			ready_add(set, t,
			          (rec[k].events & (EPOLLIN | EPOLLPRI | EPOLLHUP | EPOLLRDHUP)) != 0,
			          (rec[k].events & EPOLLOUT) != 0);
	}
}

/* A wait that timed out when recorded (result 0) waited its whole timeout, while the other
 * processes went on: what they did meanwhile, in memory they share with it, is what it found
 * after (PostgreSQL's background writer sleeps 200 ms, then reads whether recovery is over,
 * a flag the startup process sets).  Replay waits that timeout too, up to LC_PACE_MS, before
 * giving the result back (no longer than the recorded run waited; the others are not
 * waited for: nothing says how far they went). */
#define LC_PACE_MS 1000

static void pace(int ms)
{
	struct timespec t;

	if (ms <= 0 || !lc_on() || lc.done || (lc.target != REP_NO_TARGET && lc.pos >= lc.target))
		return;
	if (ms > LC_PACE_MS)
		ms = LC_PACE_MS;
	t.tv_sec = ms / 1000;
	t.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (syscall(SYS_nanosleep, &t, &t) != 0 && errno == EINTR)
		;
}

static int ready_epoll(int epfd, struct epoll_event *out, int max, int timeout)
{
	VALUE_EVENT(TRACE_EV_READY, "epoll_wait");
	int r = (int)ev->result;
	struct ready_set set;
	struct epoll_event rec[LC_READY_MAX];
	int32_t recfd[LC_READY_MAX];
	size_t nrec = 0, sz = sizeof(*out);
	int withfd = 0;

	set.n = 0;
	if (r > 0) {
		/* the events, then (recorders since the descriptor list) one int32 each */
		nrec = ev->data_len / sz < (size_t)r ? ev->data_len / sz : (size_t)r;
		withfd = ev->data_len >= (size_t)r * (sz + sizeof(int32_t));
		if (withfd)
			nrec = (size_t)r;
		if (nrec > LC_READY_MAX)
			nrec = LC_READY_MAX;
		memcpy(rec, val, nrec * sz);
		if (withfd)
			memcpy(recfd, val + (size_t)r * sz, nrec * sizeof(int32_t));
		ready_epoll_fds(epfd, rec, withfd ? recfd : NULL, nrec, &set);
		ready_wait(&set);
	}
	if (r > 0) {
		size_t n = (size_t)r < (size_t)max ? (size_t)r : (size_t)max;

		if (n > nrec)
			n = nrec;
		memcpy(out, rec, n * sz);
	}
	if (r == 0) {
		int e = errno;

		pace(timeout);
		errno = e;
	}
	if (r < 0)
		errno = ev->err;
	lc_commit();
	return r;
}

/* epoll_ctl passes through: the registrations are read back from /proc (ready_epoll_fds),
 * and kept here for when /proc cannot be opened. */
/* epoll_create, epoll_create1: with threads, at the FDNUM event's turn, the number put where
 * it was recorded when free (recorder/epoll.c). */
LC_EXPORT int epoll_create(int size)
{
	int t = lc_fdnum_turn_call(1, TRACE_CALL_EPOLL_CREATE), r = IP_REAL(epoll_create)(size);

	return t ? lc_fdnum_taken(r, "epoll_create") : r;
}

LC_EXPORT int epoll_create1(int flags)
{
	int t = lc_fdnum_turn_call(1, TRACE_CALL_EPOLL_CREATE),
	    r = IP_REAL(epoll_create1)(flags);

	return t ? lc_fdnum_taken(r, "epoll_create1") : r;
}

LC_EXPORT int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	int r = IP_REAL(epoll_ctl)(epfd, op, fd, ev), e = errno;

	if (r == 0)
		epreg_note(epfd, op, fd, ev);
	errno = e;
	return r;
}





/* A wall clock read before the LC started (another library's constructor): the recorded
 * run's start (lc.c, lc_before), 1 when given so.  Less one tick of the coarse clock: time()
 * reads the kernel's tick-updated time, which may lag the precise start by up to a tick, and
 * the program's later time() must not see time go back (tests/e2e/replay_early.sh). */
static int clock_before(int realtime, struct timespec *ts)
{
	int64_t pid, t0;
	struct timespec res;

	if (!realtime || !lc_before(&pid, &t0) || t0 <= 0)
		return 0;
	if (syscall(SYS_clock_getres, CLOCK_REALTIME_COARSE, &res) == 0 &&
	    t0 > (int64_t)res.tv_sec * 1000000000 + res.tv_nsec)
		t0 -= (int64_t)res.tv_sec * 1000000000 + res.tv_nsec;
	ts->tv_sec = (time_t)(t0 / 1000000000);
	ts->tv_nsec = (long)(t0 % 1000000000);
	return 1;
}

static inline void clock_set_ts(struct timespec *out, const struct timespec *ts)
{
	*out = *ts;
}

static inline void clock_set_tv(struct timeval *out, const struct timespec *ts)
{
	out->tv_sec = ts->tv_sec;
	out->tv_usec = ts->tv_nsec / 1000;
}

/* gettimeofday's tv may be NULL, though glibc declares it nonnull. */
static inline const void *clock_out(const void *p)
{
	__asm__("" : "+r"(p));
	return p;
}

#define CLOCK_SET(out, ts) \
	_Generic((out), struct timespec *: clock_set_ts, struct timeval *: clock_set_tv)(out, ts)

LC_EXPORT time_t time(time_t *t)
{
	struct timespec b;

	if (!lc_on() && clock_before(1, &b)) {
		if (t)
			*t = b.tv_sec;
		return b.tv_sec;
	}
	if (!lc_on())
		return IP_REAL(time)(t);
	{
		VALUE_EVENT(TRACE_EV_CLOCK, "time");
		time_t r = (time_t)ev->result;

		if (t)
			*t = r;
		lc_commit();
		return r;
	}
}

LC_EXPORT ssize_t getrandom(void *buf, size_t n, unsigned int flags)
{
	if (!lc_on()) {
		long k = lc_early_random(buf, n); /* before the LC started (lc_io_more.c) */
		ssize_t r;

		if (k < 0 || (size_t)k == n)
			return k < 0 ? IP_REAL(getrandom)(buf, n, flags) : (ssize_t)k;
		r = IP_REAL(getrandom)((uint8_t *)buf + k, n - (size_t)k, flags);
		return r < 0 ? (k ? (ssize_t)k : -1) : (ssize_t)k + r;
	}
	{
		VALUE_EVENT(TRACE_EV_RANDOM, "getrandom");
		ssize_t r = (ssize_t)ev->result;

		if (r > 0) {
			if ((size_t)r > n || (size_t)r > ev->data_len)
				lc_diverge("getrandom: %zd bytes recorded, the process asked for %zu", r, n);
			memcpy(buf, val, (size_t)r);
		}
		if (r < 0)
			errno = ev->err;
		lc_commit();
		return r;
	}
}

static pid_t pid_event(const char *what)
{
	VALUE_EVENT(TRACE_EV_PID, what);
	pid_t r = (pid_t)ev->result;

	lc_commit();
	return r;
}



LC_EXPORT void encore_mark(const char *key, long value)
{
	int e = errno;

	if (lc_on()) {
		VALUE_EVENT(TRACE_EV_MARK, "encore_mark");
		size_t klen = key ? strnlen(key, 256) : 0;

		if (klen != ev->data_len || memcmp(key, val, klen) != 0 || value != ev->aux[0])
			lc_diverge("encore_mark(\"%.64s\", %ld), but the recorded mark was \"%.*s\" = %lld",
			           key ? key : "", value, (int)(ev->data_len > 64 ? 64 : ev->data_len),
			           (const char *)val, (long long)ev->aux[0]);
		lc_commit();
	}
	errno = e;
}

/* select's timeout, given back as the recording's kernel left it (pselect's is glibc's copy,
 * untouched).  timeout is either call's argument, pselect's a const timespec. */
static inline struct timeval *select_left(uint32_t call, const void *timeout)
{
	return call == TRACE_CALL_SELECT ? (struct timeval *)(uintptr_t)timeout : NULL;
}

/* The readiness shapes' handlers (interpose/calls.def): poll, __poll_chk, ppoll, __ppoll_chk,
 * select, pselect, epoll_wait and epoll_pwait are generated (lc_wrappers.h, below). */
#define LC_SHAPE_READY_POLL(nm, wh, call, FDS, N, realcall) \
	if (!lc_on()) \
		return realcall; \
	return ready_poll(FDS, N)
#define LC_SHAPE_READY_SELECT(nm, wh, call, N, RS, WS, ES, realcall) \
	if (!lc_on()) \
		return realcall; \
	if ((N) <= 0) { /* a sleep: soft (lc_sync.c, lc_sleep_ev) */ \
		int r_; \
		if (!sleep_next()) \
			return realcall; /* one the recorded run did not make */ \
		lc_trying = 1; \
		r_ = ready_select(N, RS, WS, ES, select_left(call, timeout)); \
		lc_trying = 0; \
		return r_; \
	} \
	return ready_select(N, RS, WS, ES, select_left(call, timeout))
#define LC_SHAPE_READY_EPOLL(nm, wh, call, EPFD, EV, MAX, realcall) \
	if (!lc_on()) \
		return realcall; \
	return ready_epoll(EPFD, EV, MAX, timeout) /* (epoll_wait's and epoll_pwait's argument) */

/* The VALUE_CLOCK shape's handler: clock_gettime and gettimeofday are generated too. */
#define LC_SHAPE_VALUE_CLOCK(nm, wh, call, OUT, CLK, NOCLK, realcall) \
	if (!lc_on() || lc_from_alloc(__builtin_return_address(0))) { /* the allocator's (lc.h) */ \
		struct timespec b_; \
		if (clock_out(OUT) && !lc_on() && \
		    clock_before((NOCLK) || (CLK) == CLOCK_REALTIME || (CLK) == CLOCK_REALTIME_COARSE, \
		                 &b_)) { \
			CLOCK_SET(OUT, &b_); \
			return 0; \
		} \
		return realcall; \
	} \
	if (__builtin_expect(lc_soft_clocks, 0)) { \
		/* a lock's slow path the recorded run did not take (lc_sync.c) */ \
		int s_ = lc_soft_clock(call, (NOCLK) ? -1 : (int64_t)(CLK), OUT, sizeof(*(OUT))); \
		if (s_ == 1) \
			return 0; \
		if (s_ == 2) \
			return realcall; /* no recorded read of that clock to give */ \
	} \
	{ \
		VALUE_EVENT(TRACE_EV_CLOCK, wh); \
		int r_ = (int)ev->result; \
		if (r_ == 0 && ev->data_len >= sizeof(*(OUT))) \
			memcpy(OUT, val, sizeof(*(OUT))); \
		if (r_ < 0) \
			errno = ev->err; \
		lc_commit(); \
		return r_; \
	}

/* The VALUE_PID shape's handler: getpid and getppid are generated too. */
#define LC_SHAPE_VALUE_PID(nm, wh, call, realcall) \
	if (!lc_on()) \
		return (call) == TRACE_CALL_GETPID ? lc_pid_before(realcall) : realcall; \
	return pid_event(wh)

#include "lc_wrappers.h"
