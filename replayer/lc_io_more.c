/*
 * lc_io_more.c: the LC's side of recorder/io_more.c.
 *
 *   syscall(SYS_getrandom, ...),  the recorded bytes (a RANDOM event), the kernel untouched;
 *   getentropy
 *   syscall(SYS_close, fd)        the real call, then as close (its CLOSE event, if any);
 *   syscall(SYS_close_range, ...) as close_range (lc_chan.c);
 *                                 every other number passes straight through (the LC's own
 *                                 raw calls come through here too).
 *   sendfile, splice, tee,        the real call, run for real between recorded processes,
 *   copy_file_range, vmsplice     capped to the recorded size and repeated until that many
 *                                 bytes moved (as a receive is); the receive event on the
 *                                 source (when it is a channel) comes first, then the send
 *                                 on the destination.  Their bytes are in the byte counts,
 *                                 not in the content hash (the recorder never saw them).
 *
 *   randomness before the LC      getrandom, getentropy and syscall(SYS_getrandom) from a
 *   started                       library's constructor that runs before the LC's: the bytes
 *                                 of the image's early_random event (recorder/io_more.c),
 *                                 in order, read from its trace (ENCORE_REPLAY's name, seg
 *                                 and dir name it); past them, real bytes.  The LC takes
 *                                 the event at its start.
 *
 * A transfer whose destination is a peer outside the session that is not there in replay
 * moves nothing (its source offset is advanced as the recorded call did).  A transfer from
 * a peer outside the session was recorded without its bytes: the real call runs
 * (recorder/README.md, Limits).
 */
#undef _FILE_OFFSET_BITS
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lc.h"

/* --- randomness before the LC started ------------------------------------------------ */

#define LC_EARLY_MAX 4096 /* as the recorder's REC_EARLY_MAX */
static uint8_t early_buf[LC_EARLY_MAX];
static uint32_t early_len, early_pos;
static uint64_t early_real; /* bytes asked for past the recorded ones */
static int early_state;     /* 0 not looked for yet, 1 loaded (perhaps none) */

/* The image's early_random event, among the first of its trace: into early_buf. */
static void early_load(void)
{
	static char path[IP_DIR_MAX + TRACE_NAME_MAX + 64];
	char file[TRACE_NAME_MAX + 32];
	struct trace_reader *r = NULL;
	struct trace_diag d;
	struct trace_event ev;
	struct ip_rep_env e;
	const char *env = getenv(REP_ENV);
	int saved = errno; /* the program's call must not see the reader's errors */

	early_state = 1;
	if (!env || ip_rep_env_decode(env, &e) != 0 || trace_file_name(e.name, e.seg, file,
	                                                               sizeof(file)) != 0) {
		errno = saved;
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", e.dir, file);
	memset(&d, 0, sizeof(d));
	lc_enter(); /* the reader's own calls pass through */
	if (trace_reader_open(path, &r, &d) == 0) {
		for (int i = 0; i < 16 && trace_reader_next(r, &ev) == 1; i++)
			if (ev.kind == TRACE_EV_RANDOM && ev.call == TRACE_CALL_EARLY_RANDOM) {
				early_len = ev.data_len < LC_EARLY_MAX ? ev.data_len : LC_EARLY_MAX;
				memcpy(early_buf, ev.data, early_len);
				break;
			}
		trace_reader_close(r);
	}
	lc_leave();
	errno = saved;
}

long lc_early_random(void *buf, size_t n)
{
	int64_t rpid, t0;
	size_t k;

	/* rpid= given: a process the GD started or an image an LC exec'd, before its LC */
	if (!lc_before(&rpid, &t0))
		return -1;
	if (!early_state)
		early_load();
	k = early_len - early_pos < n ? early_len - early_pos : n;
	memcpy(buf, early_buf + early_pos, k);
	early_pos += (uint32_t)k;
	early_real += n - k;
	return (long)k;
}

void lc_early_done(void)
{
	const struct lc_ev *ev = lc.pos < lc.nev ? &lc.ev[lc.pos - lc.base] : NULL;
	uint32_t rec_len = 0;
	int asked = early_state; /* a call came before (and the process had rpid=) */
	char text[256];

	early_state = 1; /* from here the calls are events */
	if (ev && ev->kind == TRACE_EV_RANDOM && ev->call == TRACE_CALL_EARLY_RANDOM) {
		rec_len = ev->data_len;
		lc_expect(TRACE_EV_RANDOM, -1, "randomness before the LC started");
		lc_commit();
	}
	/* asked for more (given real bytes past the recorded ones) or fewer than recorded (a
	 * process that asked for none, or without rpid=, a spawned one, is not told apart) */
	if (early_real || (asked && early_pos != rec_len)) {
		snprintf(text, sizeof(text), "before its LC started it asked for %llu random bytes, "
		         "%u were recorded then: %s", (unsigned long long)(early_pos + early_real),
		         rec_len, early_real ? "real bytes were given past them" :
		                               "the rest went unused");
		rep_proto_send(lc.ctl, REP_MSG_WARN, 0, 0, 0, text);
	}
}

/* The bytes of a random call made before the LC started: the recorded ones first, then real
 * ones (fill: the real call for the rest).  Returns n, or the recorded bytes given when the
 * real call failed after some, -2 when it failed before any (errno its), -1: not such a
 * call. */
static long early_fill(void *buf, size_t n, long (*fill)(void *, size_t))
{
	long k = lc_early_random(buf, n);

	if (k < 0)
		return -1;
	if ((size_t)k < n && fill((uint8_t *)buf + k, n - (size_t)k) < 0)
		return k ? k : -2;
	return (long)n;
}

static long fill_syscall(void *p, size_t n)
{
	return IP_REAL(syscall)(SYS_getrandom, p, n, 0);
}

static long fill_entropy(void *p, size_t n)
{
	return IP_REAL(getentropy)(p, n);
}

/* --- syscall(2) ------------------------------------------------------------------------ */

LC_EXPORT long syscall(long number, ...)
{
	va_list ap;
	long a[6];
	int i;

	va_start(ap, number);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (__builtin_expect(number == SYS_seccomp || number == SYS_prctl, 0)) {
		int strict = ip_sandbox_install(number, a[0], a[1]);

		if (strict >= 0)
			return lc_sandbox_call(number, a, strict); /* the same rule as the recorder's */
	}
	if (__builtin_expect(number == SYS_close, 0) && lc_on()) /* the program's, not ours */
		return lc_close_raw((int)a[0]);
	if (__builtin_expect(number == SYS_futex, 0)) {
		long r;

		if (lc_sync_futex(a, &r))
			return r; /* a wait or wake between threads, at its turn (lc_sync.c) */
	}
	if (__builtin_expect(number == SYS_close_range, 0) && lc_on())
		return close_range((unsigned int)a[0], (unsigned int)a[1], (int)a[2]);
	if (__builtin_expect(number == SYS_sendmmsg, 0)) /* libuv's UDP sends (below) */
		return sendmmsg((int)a[0], (struct mmsghdr *)a[1], (unsigned int)a[2], (int)a[3]);
	if (__builtin_expect(number == SYS_recvmmsg, 0)) /* and receives */
		return recvmmsg((int)a[0], (struct mmsghdr *)a[1], (unsigned int)a[2], (int)a[3],
		                (struct timespec *)a[4]);
	if (__builtin_expect(number == SYS_clone || number == SYS_clone3, 0) &&
	    ip_clone_is_fork(number, a))
		return lc_fork_raw(number, a); /* a fork by another name (lc_proc.c) */
	if (__builtin_expect(ip_sig_send_nr(number), 0)) { /* (recorder/io_more.c) */
		long r = IP_REAL(syscall)(number, a[0], a[1], a[2], a[3], a[4], a[5]);
		int e = errno;

		lc_unmask_next("syscall");
		errno = e;
		return r;
	}
	if (__builtin_expect(number != SYS_getrandom, 1))
		return IP_REAL(syscall)(number, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (!lc_on()) {
		long r = early_fill((void *)a[0], (size_t)a[1], fill_syscall);

		return r == -1 ? IP_REAL(syscall)(number, a[0], a[1], a[2], a[3], a[4], a[5]) :
		       r == -2 ? -1 : r;
	}
	{
		const struct lc_ev *ev = lc_expect(TRACE_EV_RANDOM, -1, "syscall(SYS_getrandom)");
		long r = (long)ev->result;

		if (r > 0) {
			if ((size_t)r > (size_t)a[1] || (size_t)r > ev->data_len)
				lc_diverge("syscall(SYS_getrandom): %ld bytes recorded, the process asked "
				           "for %zu", r, (size_t)a[1]);
			memcpy((void *)a[0], lc.data + ev->data_off, (size_t)r);
		}
		lc_commit();
		if (r < 0) {
			errno = ev->err;
			return -1;
		}
		return r;
	}
}

LC_EXPORT int getentropy(void *buf, size_t n)
{
	const struct lc_ev *ev;
	int r;

	if (!lc_on()) {
		/* (more than 256 bytes: EIO, from the real call) */
		long k = n > 256 ? -1 : early_fill(buf, n, fill_entropy);

		return k == -1 ? IP_REAL(getentropy)(buf, n) : k == (long)n ? 0 : -1;
	}
	ev = lc_expect(TRACE_EV_RANDOM, -1, "getentropy");
	r = (int)ev->result;
	if (r == 0 && n) {
		if (n > ev->data_len)
			lc_diverge("getentropy: %u bytes recorded, the process asked for %zu",
			           ev->data_len, n);
		memcpy(buf, lc.data + ev->data_off, n);
	}
	lc_commit();
	if (r < 0)
		errno = ev->err;
	return r;
}

/* (declared by glibc 2.36's stdlib.h, not by older ones) */
uint32_t arc4random(void);
uint32_t arc4random_uniform(uint32_t bound);
void arc4random_buf(void *buf, size_t n);

/* arc4random and its forms (recorder/io_more.c): the recorded bytes, when the next event is
 * this call's; else (a trace of a recorder that did not log them, a call the recorder could
 * not log) a value made now, as before.  0 when the caller makes it. */
static int arc4_give(uint32_t call, const char *what, void *buf, size_t n)
{
	const struct lc_ev *ev;

	if (!lc_on() || !n || !(ev = lc_peek()) || ev->kind != TRACE_EV_RANDOM || ev->call != call)
		return 0;
	ev = lc_expect(TRACE_EV_RANDOM, -1, what);
	if (ev->data_len != n)
		lc_diverge("%s: %u bytes recorded, the process asked for %zu", what, ev->data_len, n);
	memcpy(buf, lc.data + ev->data_off, n);
	lc_commit();
	return 1;
}

/* No arc4random in this libc (the program looked encore's up): bytes from getrandom, as the
 * recorder's fallback (recorder/io_more.c). */
static void arc4_now(void *buf, size_t n)
{
	for (size_t k = 0; k < n;) {
		long r = syscall(SYS_getrandom, (char *)buf + k, n - k, 0);

		if (r > 0)
			k += (size_t)r;
		else if (r < 0 && errno != EINTR)
			break; /* (what is left stays as it was) */
	}
}

LC_EXPORT uint32_t arc4random(void)
{
	uint32_t v = 0;

	if (arc4_give(TRACE_CALL_ARC4RANDOM, "arc4random", &v, sizeof(v)))
		return v;
	if (IP_REAL(arc4random))
		return IP_REAL(arc4random)();
	arc4_now(&v, sizeof(v));
	return v;
}

LC_EXPORT uint32_t arc4random_uniform(uint32_t bound)
{
	uint32_t v = 0;

	if (arc4_give(TRACE_CALL_ARC4RANDOM, "arc4random_uniform", &v, sizeof(v)))
		return v;
	if (IP_REAL(arc4random_uniform))
		return IP_REAL(arc4random_uniform)(bound);
	arc4_now(&v, sizeof(v));
	return bound > 1 ? v % bound : 0;
}

LC_EXPORT void arc4random_buf(void *buf, size_t n)
{
	if (arc4_give(TRACE_CALL_ARC4RANDOM_BUF, "arc4random_buf", buf, n))
		return;
	if (IP_REAL(arc4random_buf))
		IP_REAL(arc4random_buf)(buf, n);
	else
		arc4_now(buf, n);
}

/* --- bytes moved by the kernel --------------------------------------------------------- */

/* One transfer of at most n bytes: the real call with the caller's arguments. */
/* Which call moves the bytes: named after the rows (KMOVE below pastes the row's name). */
enum move_kind { MOVE_sendfile, MOVE_sendfile64, MOVE_splice, MOVE_tee, MOVE_copy_file_range };

struct move {
	enum move_kind kind;
	int in, out;
	void *off_in, *off_out;
	unsigned int flags;
};

static long move_once(const struct move *m, size_t n)
{
	switch (m->kind) {
	case MOVE_sendfile: return IP_REAL(sendfile)(m->out, m->in, m->off_in, n);
	case MOVE_sendfile64: return IP_REAL(sendfile64)(m->out, m->in, m->off_in, n);
	case MOVE_splice: return IP_REAL(splice)(m->in, m->off_in, m->out, m->off_out, n, m->flags);
	case MOVE_tee: return IP_REAL(tee)(m->in, m->out, n, m->flags);
	default: return IP_REAL(copy_file_range)(m->in, m->off_in, m->out, m->off_out, n, m->flags);
	}
}

static void wait_both(int in, int out)
{
	struct pollfd p[2] = { { .fd = in, .events = POLLIN }, { .fd = out, .events = POLLOUT } };

	syscall(SYS_poll, p, 2, 20);
}

/* Move exactly want bytes, as the recorded call did. */
static void move_exact(const struct move *m, size_t want, const char *what, uint32_t chan)
{
	size_t got = 0;
	long r;

	while (got < want) {
		r = move_once(m, want - got);
		if (r > 0) {
			got += (size_t)r;
			lc.slot->progress++;
			continue;
		}
		if (r == 0)
			lc_diverge("%s: the source ended after %zu of the %zu recorded bytes", what, got,
			           want);
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			lc_wait_state(TRACE_EV_RECV, m->in, chan, want - got);
			wait_both(m->in, m->out);
			continue;
		}
		lc_diverge("%s failed: %s (the recorded call moved %zu bytes)", what, strerror(errno),
		           want);
	}
	lc_wait_state(0, -1, 0, 0);
}

/* Skip n bytes of the source, as a transfer to an absent outside peer would have. */
static void skip_source(const struct move *m, size_t n)
{
	if (m->kind == MOVE_tee)
		return; /* tee consumes nothing */
	if (m->off_in)
		*(int64_t *)m->off_in += (int64_t)n;
	else if (lc_fd_class(m->in) == LC_FD_IGNORED)
		lseek(m->in, (off_t)n, SEEK_CUR);
}

static void count(uint32_t chan, int dir, const struct lc_ev *ev)
{
	if (chan && chan < LC_CHAN_MAX && ev->result > 0 && !(ev->flags & TRACE_FL_PEEK))
		lc_chan[chan].bytes[dir] += (uint64_t)ev->result;
}

/* Returns 1 with the result in *out when the LC handled the call, 0: pass through. */
static int lc_move(const struct move *m, size_t asked, const char *what, ssize_t *res)
{
	const struct lc_ev *ein = NULL, *eout = NULL;
	int32_t cin, cout;
	int64_t result;
	int32_t err;
	int moved = 0;

	if (!lc_on())
		return 0;
	cin = lc_fd_class(m->in);
	if (cin > 0) {
		ein = lc_expect(TRACE_EV_RECV, m->in, what);
		if (ein->channel && cin != (int32_t)ein->channel)
			lc_diverge("%s: expected a receive on channel %u, but fd %d is channel %d here",
			           what, ein->channel, m->in, cin);
		result = ein->result;
		err = ein->err;
		if (result > 0 && (size_t)result > asked)
			lc_diverge("%s on channel %u (fd %d): %lld bytes recorded, the process asked "
			           "for %zu", what, ein->channel, m->in, (long long)result, asked);
		if (result > 0) {
			if (ein->kind == TRACE_EV_RECV && lc.online)
				lc_request(lc.pos + 1);
			move_exact(m, (size_t)result, what, ein->channel);
			moved = 1;
		}
		count(ein->channel, 1, ein);
		lc_commit();
	}
	cout = lc_fd_class(m->out);
	if (cout > 0) {
		eout = lc_expect(TRACE_EV_SEND, m->out, what);
		if (eout->channel && cout != (int32_t)eout->channel)
			lc_diverge("%s: expected a send on channel %u, but fd %d is channel %d here",
			           what, eout->channel, m->out, cout);
		if (ein && eout->result != ein->result)
			lc_diverge("%s: the recorded receive and send differ (%lld, %lld bytes)", what,
			           (long long)ein->result, (long long)eout->result);
		result = eout->result;
		err = eout->err;
		if (result > 0 && (size_t)result > asked)
			lc_diverge("%s on channel %u (fd %d): %lld bytes recorded, the process asked "
			           "for %zu", what, eout->channel, m->out, (long long)result, asked);
		if (result > 0 && !moved) {
			if (eout->channel < LC_CHAN_MAX && lc_chan[eout->channel].external == 2)
				skip_source(m, (size_t)result);
			else
				move_exact(m, (size_t)result, what, eout->channel);
		}
		count(eout->channel, 0, eout);
		lc_commit();
	}
	if (!ein && !eout)
		return 0; /* files only, as when recording */
	*res = (ssize_t)result;
	if (result < 0)
		errno = err;
	return 1;
}






/* vmsplice on a pipe: the real call, repeated over the rest of the iovec until the recorded
 * size moved. */
LC_EXPORT ssize_t vmsplice(int fd, const struct iovec *iov, size_t cnt, unsigned int flags)
{
	const struct lc_ev *ev;
	struct iovec win[IOV_MAX_LC];
	size_t want, got = 0, total;
	int32_t cls;
	int fl, in;
	long r;

	if (!lc_on())
		return IP_REAL(vmsplice)(fd, iov, cnt, flags);
	cls = lc_fd_class(fd);
	if (cls <= 0)
		return IP_REAL(vmsplice)(fd, iov, cnt, flags);
	fl = (int)syscall(SYS_fcntl, fd, F_GETFL);
	in = fl >= 0 && (fl & O_ACCMODE) == O_RDONLY;
	ev = lc_expect(in ? TRACE_EV_RECV : TRACE_EV_SEND, fd, "vmsplice");
	total = lc_iov_total(iov, (int)cnt);
	if (ev->result > 0 && (size_t)ev->result > total)
		lc_diverge("vmsplice on channel %u (fd %d): %lld bytes recorded, the process gave "
		           "%zu", ev->channel, fd, (long long)ev->result, total);
	want = ev->result > 0 ? (size_t)ev->result : 0;
	if (ev->kind == TRACE_EV_SEND && ev->channel < LC_CHAN_MAX &&
	    lc_chan[ev->channel].external == 2)
		want = 0;
	while (got < want) {
		int n = lc_iov_window(iov, (int)cnt, got, want - got, win);

		r = IP_REAL(vmsplice)(fd, win, n, flags);
		if (r > 0) {
			got += (size_t)r;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd p = { .fd = fd, .events = in ? POLLIN : POLLOUT };

			syscall(SYS_poll, &p, 1, 20);
			continue;
		}
		lc_diverge("vmsplice on channel %u (fd %d) failed: %s (the recorded call moved %zu "
		           "bytes)", ev->channel, fd, r < 0 ? strerror(errno) : "no progress", want);
	}
	count(ev->channel, in, ev);
	r = (long)ev->result;
	if (r < 0)
		errno = ev->err;
	lc_commit();
	return r;
}

/* The KMOVE shape's handler (interpose/calls.def): sendfile, sendfile64, splice, tee and
 * copy_file_range are generated (lc_wrappers.h, below). */
#define LC_SHAPE_KMOVE(nm, wh, call, IN, OUT, OFF_IN, OFF_OUT, N, FL, realcall) \
	struct move m_ = { MOVE_##nm, IN, OUT, OFF_IN, OFF_OUT, FL }; \
	ssize_t r_; \
	if (lc_move(&m_, N, wh, &r_)) \
		return r_; \
	return realcall


/* sendmmsg(2): each message through this library's sendmsg, so that each is the SEND event
 * the program's own sendmsg would be (libuv sends its UDP datagrams so: dig's queries, which
 * went unseen, their receiver's input taken for an outside peer's).  The result is
 * sendmmsg's: the messages sent, each msg_len set, or -1 when the first failed (a later
 * failure ends the count, as the kernel's does).  No message, or not replaying: the real call. */
LC_EXPORT int sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags)
{
	if (!lc_on() || n == 0 || !v)
		return IP_REAL(sendmmsg)(fd, v, n, flags);
	return ip_sendmmsg_each(fd, v, n, flags, sendmsg);
}

/* recvmmsg(2): each message through this library's recvmsg, as recorded (interpose.h). */
LC_EXPORT int recvmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags,
                       struct timespec *tmo)
{
	if (!lc_on() || n == 0 || !v)
		return IP_REAL(recvmmsg)(fd, v, n, flags, tmo);
	return ip_recvmmsg_each(fd, v, n, flags, recvmsg);
}

#include "lc_wrappers.h"
