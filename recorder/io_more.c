/*
 * io_more.c: calls that reach the kernel without going through the interposers of chan.c
 * and nondet.c.
 *
 *   syscall(SYS_getrandom, ...)   (OpenSSL 3 seeds itself this way, or with getentropy where
 *   getentropy                    glibc has it): a RANDOM event with the bytes, as getrandom
 *                                 logs it; syscall(SYS_close, fd) (libuv's way) releases the
 *                                 descriptor as close does (a CLOSE event of call syscall),
 *                                 SYS_close_range its range as close_range does;
 *                                 every other system call number passes straight through,
 *                                 untouched.
 *   sendfile, splice, tee,        bytes the kernel moves between two descriptors, never seen
 *   copy_file_range, vmsplice     by the process: a receive event on the source when it is
 *                                 a channel (logged first: the bytes left it first), a send
 *                                 event on the destination when it is a channel.  Regular
 *                                 files stay unlogged.  The bytes are not in the running
 *                                 content hash of either direction (the recorder never sees
 *                                 them; the replayer skips them the same way), only in the
 *                                 byte counts, so offsets still add up.
 *
 *   randomness before the         a library's constructor that runs before the recorder's
 *   recorder started              (libisc seeding OpenSSL in dig) gets its random bytes from
 *                                 getrandom, getentropy or syscall(SYS_getrandom) unlogged:
 *                                 the first REC_EARLY_MAX bytes are kept in a static buffer,
 *                                 then logged as one RANDOM event (call early_random), the
 *                                 first event of the image's trace, once it is open.
 *
 * Bytes from a peer outside the session moved this way cannot be recorded (they never
 * cross user space): their receive is logged as INPUT without its bytes (data_len 0 while
 * result > 0); replay then runs the real call (recorder/README.md, Limits).
 */
/* sendfile must keep its own name (the build's _FILE_OFFSET_BITS=64 renames it). */
#undef _FILE_OFFSET_BITS
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "rec.h"

#define RA() __builtin_return_address(0)

/* --- randomness before the recorder started ------------------------------------------- */

#define REC_EARLY_MAX 4096 /* bytes kept; more are counted only (schemas/trace-format.md) */
static uint8_t early_buf[REC_EARLY_MAX];
static uint32_t early_len, early_calls;
static uint64_t early_lost;
static int early_closed;

/* The preload's own constructors start here (priority 101: before core.c's, which opens the
 * trace): a call that comes later is the recorder's own, or the program's while it is not
 * recorded, and is not kept. */
__attribute__((constructor(101))) static void early_close(void)
{
	early_closed = 1;
}

void rec_early_keep(const void *buf, long r)
{
	uint32_t n;

	if (__builtin_expect(early_closed, 1) || r <= 0 || !buf)
		return;
	n = (uint32_t)((unsigned long)r < REC_EARLY_MAX - early_len ? (unsigned long)r :
	                                                             REC_EARLY_MAX - early_len);
	memcpy(early_buf + early_len, buf, n);
	early_len += n;
	early_lost += (uint64_t)r - n;
	early_calls++;
}

void rec_early_flush(void)
{
	struct trace_event ev;

	early_closed = 1;
	if (!early_calls || !rec.w)
		return;
	/* in the constructor (the guard held, one thread): logged directly */
	rec_event_init(&ev, TRACE_EV_RANDOM, TRACE_CALL_EARLY_RANDOM, -1);
	ev.result = (int64_t)(early_len + early_lost);
	ev.naux = 2;
	ev.aux[0] = early_calls;
	ev.aux[1] = (int64_t)early_lost;
	ev.data = early_buf;
	ev.data_len = early_len;
	rec_log(&ev, NULL);
	early_calls = 0;
}

/* --- syscall(2) ------------------------------------------------------------------------ */

/* The system call takes at most six arguments, all passed as longs in registers on x86-64
 * (and aarch64): reading six with va_arg and forwarding them is what glibc's own syscall()
 * does with its registers, so pass-through is exact.  The recorder's own raw calls
 * (syscall(SYS_fcntl...)) come through here too and pass through. */
REC_EXPORT long syscall(long number, ...)
{
	va_list ap;
	long a[6], r;
	int e, i;
	struct trace_event ev;

	va_start(ap, number);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (__builtin_expect(number != SYS_getrandom, 1)) {
		if (__builtin_expect(rec_files_ndeferred != 0, 0) &&
		    (number == SYS_close || number == SYS_close_range || number == SYS_dup3
#ifdef SYS_dup2
		     || number == SYS_dup2
#endif
		     ) && !rec_busy())
			rec_files_closing(-1); /* open's notes waiting (files.c) */
		if (rec_syscall_guard(number, a, &r)) { /* the trace's descriptor, seccomp (guard.c) */
			/* close_range there closed the rest of the range: its channels go away */
			e = errno;
			if (number == SYS_close_range && r == 0 && !(a[2] & CLOSE_RANGE_CLOEXEC) &&
			    rec_enter()) {
				rec_fd_range_closed_raw((unsigned int)a[0], (unsigned int)a[1], RA());
				rec_leave();
				errno = e;
			}
			return r;
		}
		if (__builtin_expect(number == SYS_futex, 0) && rec_sync_futex(a, &r))
			return r; /* a futex wait or wake between threads (sync.c) */
		if (__builtin_expect(number == SYS_sendmmsg, 0)) /* libuv's UDP sends (below) */
			return sendmmsg((int)a[0], (struct mmsghdr *)a[1], (unsigned int)a[2], (int)a[3]);
		if (__builtin_expect(number == SYS_recvmmsg, 0)) /* and receives */
			return recvmmsg((int)a[0], (struct mmsghdr *)a[1], (unsigned int)a[2], (int)a[3],
			                (struct timespec *)a[4]);
		if (__builtin_expect(number == SYS_clone || number == SYS_clone3, 0) &&
		    ip_clone_is_fork(number, a))
			return rec_fork_raw(number, a, RA()); /* a fork by another name (proc.c) */
		if (__builtin_expect(ip_sig_send_nr(number), 0)) {
			/* a signal sent to ourselves came as the call returned: its handler runs
			 * before the call returns, after an UNMASK event (signals.c) */
			r = IP_REAL(syscall)(number, a[0], a[1], a[2], a[3], a[4], a[5]);
			e = errno;
			if (rec_sig_npend != 0)
				rec_sig_unmask_log(TRACE_CALL_SYSCALL, number, RA());
			errno = e;
			return r;
		}
		/* the recorder's own raw closes (guard held) are not the program's: not counted */
		if (__builtin_expect(number != SYS_close, 1) || rec_busy())
			return IP_REAL(syscall)(number, a[0], a[1], a[2], a[3], a[4], a[5]);
		/* a channel closed so (libuv does) goes away as with close(2) */
		r = IP_REAL(syscall)(number, a[0], a[1], a[2], a[3], a[4], a[5]);
		e = errno;
		if (!rec_enter())
			return r;
		if (r == 0 || e != EBADF)
			rec_fd_closed_raw((int)a[0], RA());
		rec_leave();
		errno = e;
		return r;
	}
	r = IP_REAL(syscall)(number, a[0], a[1], a[2], a[3], a[4], a[5]);
	e = errno;
	if (!rec_enter()) {
		if (!rec.w && !rec_busy())
			rec_early_keep((const void *)a[0], r);
		errno = e;
		return r;
	}
	rec_event_init(&ev, TRACE_EV_RANDOM, TRACE_CALL_SYSCALL, -1);
	ev.result = r;
	ev.err = r < 0 ? e : 0;
	ev.naux = 1;
	ev.aux[0] = SYS_getrandom;
	if (r > 0) {
		ev.data = (const uint8_t *)a[0];
		ev.data_len = (uint32_t)r;
	}
	rec_log(&ev, RA());
	rec_leave();
	errno = e;
	return r;
}

/* getentropy(3): glibc makes the getrandom system call itself, unseen by getrandom's
 * interposer.  A RANDOM event with the n bytes (result 0) or the error. */
REC_EXPORT int getentropy(void *buf, size_t n)
{
	int r = IP_REAL(getentropy)(buf, n), e = errno;
	struct trace_event ev;

	if (!rec_enter()) {
		if (!rec.w && !rec_busy() && r == 0)
			rec_early_keep(buf, (long)n);
		errno = e;
		return r;
	}
	rec_event_init(&ev, TRACE_EV_RANDOM, TRACE_CALL_GETENTROPY, -1);
	ev.result = r;
	ev.err = r < 0 ? e : 0;
	if (r == 0 && n) {
		ev.data = buf;
		ev.data_len = (uint32_t)n;
	}
	rec_log(&ev, RA());
	rec_leave();
	errno = e;
	return r;
}

/* arc4random and its forms (glibc 2.36, or libbsd's): glibc draws from the getrandom system
 * call inside, unseen.  A RANDOM event with the value's 4 bytes (aux[0]: arc4random_uniform's
 * bound) or the bytes arc4random_buf filled in. */
static void arc4_log(uint32_t call, const void *bytes, size_t n, int bounded, uint32_t bound,
                     void *ra)
{
	struct trace_event ev;

	rec_event_init(&ev, TRACE_EV_RANDOM, call, -1);
	ev.data = bytes;
	ev.data_len = (uint32_t)n;
	if (bounded) {
		ev.naux = 1;
		ev.aux[0] = bound;
	}
	rec_log(&ev, ra);
}

/* (declared by glibc 2.36's stdlib.h, not by older ones) */
uint32_t arc4random(void);
uint32_t arc4random_uniform(uint32_t bound);
void arc4random_buf(void *buf, size_t n);

/* A real arc4random that is missing (a libc without it and no libbsd: the program cannot
 * have linked it, but may have looked it up): the bytes from getrandom itself; where that
 * fails (no such system call, a seccomp filter) what is left stays as it was. */
static void arc4_fill(void *buf, size_t n)
{
	for (size_t k = 0; k < n;) {
		long r = syscall(SYS_getrandom, (char *)buf + k, n - k, 0);

		if (r > 0)
			k += (size_t)r;
		else if (r < 0 && errno != EINTR)
			break;
	}
}

REC_EXPORT uint32_t arc4random(void)
{
	int e = errno;
	uint32_t v = 0;

	if (IP_REAL(arc4random))
		v = IP_REAL(arc4random)();
	else
		arc4_fill(&v, sizeof(v));
	if (rec_enter()) {
		arc4_log(TRACE_CALL_ARC4RANDOM, &v, sizeof(v), 0, 0, RA());
		rec_leave();
	}
	errno = e;
	return v;
}

REC_EXPORT uint32_t arc4random_uniform(uint32_t bound)
{
	int e = errno;
	uint32_t v = 0;

	if (IP_REAL(arc4random_uniform)) {
		v = IP_REAL(arc4random_uniform)(bound);
	} else {
		arc4_fill(&v, sizeof(v));
		v = bound > 1 ? v % bound : 0;
	}
	if (rec_enter()) {
		arc4_log(TRACE_CALL_ARC4RANDOM, &v, sizeof(v), 1, bound, RA());
		rec_leave();
	}
	errno = e;
	return v;
}

REC_EXPORT void arc4random_buf(void *buf, size_t n)
{
	int e = errno;

	if (IP_REAL(arc4random_buf))
		IP_REAL(arc4random_buf)(buf, n);
	else
		arc4_fill(buf, n);
	if (n && rec_enter()) {
		arc4_log(TRACE_CALL_ARC4RANDOM_BUF, buf, n, 0, 0, RA());
		rec_leave();
	}
	errno = e;
}

/* --- bytes moved by the kernel --------------------------------------------------------- */

/* One side of a kernel transfer: kind SEND (dir REC_OUT) or RECV (REC_IN) on fd's channel,
 * if it is one.  Called with the guard held.  n bytes moved (r the result, e its errno). */
static void log_side(int fd, int dir, long r, int e, size_t asked, uint32_t call,
                     uint32_t flags, void *ra)
{
	struct trace_event ev;
	struct rec_chan *c;

	if (fd < 0 || fd >= REC_FD_MAX || rec.fd[fd] == REC_FD_IGNORED)
		return;
	c = rec_fd_chan(fd);
	if (!c)
		return; /* a regular file, /dev/urandom as a source (not seen either) */
	rec_event_init(&ev, dir == REC_OUT ? TRACE_EV_SEND : TRACE_EV_RECV, call, fd);
	ev.channel = c->id;
	ev.result = r;
	ev.err = r < 0 ? e : 0;
	ev.len = asked;
	ev.flags = flags | ((r < 0 && e == EAGAIN) ? TRACE_FL_NONBLOCK : 0);
	if (dir == REC_IN && rec_chan_in_external(c, r, e, asked))
		ev.kind = TRACE_EV_INPUT; /* the bytes never crossed user space: not recorded */
	if (r > 0 && !(flags & TRACE_FL_PEEK))
		c->bytes[dir] += (uint64_t)r;
	rec_log(&ev, ra);
}

/* in -> out: the receive first (the bytes left the source first), then the send. */
static void log_move(int in, int out, long r, int e, size_t asked, uint32_t call,
                     uint32_t in_flags, void *ra)
{
	if (!rec_enter())
		return;
	log_side(in, REC_IN, r, e, asked, call, in_flags, ra);
	log_side(out, REC_OUT, r, e, asked, call, 0, ra);
	rec_leave();
	errno = e;
}






/* vmsplice: user pages into a pipe (a send), or, on the read end of a pipe, out of it
 * into user memory (a receive).  Logged as the other kernel moves (no content hash). */
REC_EXPORT ssize_t vmsplice(int fd, const struct iovec *iov, size_t cnt, unsigned int flags)
{
	ssize_t r = IP_REAL(vmsplice)(fd, iov, cnt, flags);
	int e = errno, fl;
	size_t asked = 0, i;

	if (!rec_enter())
		return r;
	for (i = 0; r >= 0 && iov && i < cnt; i++)
		asked += iov[i].iov_len;
	fl = (int)IP_REAL(syscall)(SYS_fcntl, fd, F_GETFL);
	log_side(fd, fl >= 0 && (fl & O_ACCMODE) == O_RDONLY ? REC_IN : REC_OUT, r, e, asked,
	         TRACE_CALL_VMSPLICE, 0, RA());
	rec_leave();
	errno = e;
	return r;
}

/* The KMOVE shape's handler (interpose/calls.def): sendfile, sendfile64, splice, tee and
 * copy_file_range are generated (rec_wrappers.h, below).  tee leaves its source's bytes
 * there: a peek. */
#define REC_SHAPE_KMOVE(nm, wh, call, IN, OUT, OFF_IN, OFF_OUT, N, FL, realcall) \
	ssize_t r = realcall; \
	int e = errno; \
	log_move(IN, OUT, r, e, N, call, (call) == TRACE_CALL_TEE ? TRACE_FL_PEEK : 0, RA()); \
	return r


/* sendmmsg(2): each message through this library's sendmsg, so that each is the SEND event
 * the program's own sendmsg would be (libuv sends its UDP datagrams so: dig's queries, which
 * went unseen, their receiver's input taken for an outside peer's).  The result is
 * sendmmsg's: the messages sent, each msg_len set, or -1 when the first failed (a later
 * failure ends the count, as the kernel's does).  No message, or not recording: the real call. */
REC_EXPORT int sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags)
{
	if (!rec.w || rec_busy() || n == 0 || !v)
		return IP_REAL(sendmmsg)(fd, v, n, flags);
	return ip_sendmmsg_each(fd, v, n, flags, sendmsg);
}

/* recvmmsg(2): each message through this library's recvmsg (interpose/interpose.h). */
REC_EXPORT int recvmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags,
                        struct timespec *tmo)
{
	if (!rec.w || rec_busy() || n == 0 || !v)
		return IP_REAL(recvmmsg)(fd, v, n, flags, tmo);
	return ip_recvmmsg_each(fd, v, n, flags, recvmsg);
}

#include "rec_wrappers.h"
