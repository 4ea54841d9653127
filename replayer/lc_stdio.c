/*
 * lc_stdio.c: the LC's side of recorder/stdio.c (stdio entry points on channels, logged at
 * the API level).
 *
 *   input from a peer outside the session (INPUT), or /dev/urandom (RANDOM)
 *                the recorded bytes, the FILE and the world untouched (end of stream and
 *                errors set the FILE's flags as the real call did);
 *   input from a recorded peer
 *                the real call (its bytes come from the re-executed peer), checked against
 *                the recorded size;
 *   output on a channel between recorded processes
 *                the real call, its event consumed;
 *   scanf family, ungetc, __uflow, __overflow
 *                the real call; the recorder's "encore.stdio" mark is consumed and reported
 *                once on stderr (those bytes were not recorded).
 *
 * Anything else (files, the terminal, output to outside peers) passes straight through.
 */
/* No extern inline definitions from <bits/stdio.h> (optimised builds define getline,
 * getchar, putc_unlocked... inline there): the functions are defined here.  Before any
 * header, so that <features.h> sees it. */
#define __NO_INLINE__ 1
/* getline's buffer is the program's to free: libc's allocator, not the LC's arena
 * (lc_alloc.h; lc_free gives libc's blocks back to libc). */
#undef malloc
#undef calloc
#undef realloc
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lc.h"
#include "stdio_glibc.h"

/* FILEs whose buffer the LC filled at a refill (__uflow, below): the buffer (mmap'd, ours)
 * and the end of what it holds.  An API-level input call that finds bytes of it unread
 * mixes two ways of reading one FILE: the recorder reported it (a mark), and the call then
 * takes those bytes as consumed. */
struct lc_uflow {
	FILE *f;
	char *buf;
	size_t cap;
	char *end;
};
static struct lc_uflow lc_uflow_slots[64];
static struct stdio_files lc_uflows = STDIO_FILES_INIT(lc_uflow_slots, end);

/* Bytes of our refill still unread in f's buffer (0 when none, or not ours any more). */
static size_t uflow_rem(FILE *f)
{
	struct lc_uflow *u;

	if (__builtin_expect(lc_uflows.n == 0, 1) || !f)
		return 0;
	u = stdio_files_find(&lc_uflows, f, 0);
	if (!u || !u->end || u->end != f->_IO_read_end || f->_IO_read_ptr >= f->_IO_read_end)
		return 0;
	return (size_t)(f->_IO_read_end - f->_IO_read_ptr);
}

static void warn_consume(FILE *f);

enum { IN_PASS, IN_FEED, IN_REAL };

/* Before an input call on f: PASS (not ours), FEED (give ev's recorded bytes, or its end of
 * stream or error) or REAL (run the real call, then in_real_done). */
static int in_begin(FILE *f, const char *what, const struct lc_ev **out)
{
	const struct lc_ev *ev;
	int fd = file_fd(f);
	int32_t cls;

	if (fd < 0 || !lc_on())
		return IN_PASS;
	cls = lc_fd_class(fd);
	if (cls == LC_FD_IGNORED)
		return IN_PASS;
	if (cls == LC_FD_RANDOM) {
		*out = lc_expect(TRACE_EV_RANDOM, fd, what);
		return IN_FEED;
	}
	{
		size_t rem = uflow_rem(f);

		if (rem) {
			/* as recorded: the mark, and the unread refill counts as consumed */
			warn_consume(f);
			f->_IO_read_ptr = f->_IO_read_end;
		}
		if (lc_uflows.n) {
			struct lc_uflow *u = stdio_files_find(&lc_uflows, f, 0);

			if (u)
				u->end = NULL;
		}
	}
	ev = lc_expect(TRACE_EV_RECV, fd, what);
	if (ev->channel && cls != (int32_t)ev->channel)
		lc_diverge("%s: expected a receive on channel %u, but fd %d is channel %d here", what,
		           ev->channel, fd, cls);
	*out = ev;
	if (ev->kind != TRACE_EV_RECV || ev->result <= 0)
		return IN_FEED;
	if (lc.online)
		lc_request(lc.pos + 1);
	lc_wait_state(TRACE_EV_RECV, fd, ev->channel, (uint64_t)ev->result);
	return IN_REAL;
}

static void count_in(const struct lc_ev *ev, size_t n)
{
	if (ev->channel && ev->channel < LC_CHAN_MAX)
		lc_chan[ev->channel].bytes[1] += n;
}

/* At a recorded end of stream of bytes fed from the trace: let the real writer, when it is
 * there (a child started by popen, recorded in the session but not matched to this pipe,
 * which libc made), end as it did, by reading the real descriptor to its end too: otherwise
 * it would block on a full pipe, or die of SIGPIPE at our pclose.  Not for terminals. */
static void drain_to_end(int fd)
{
	char buf[4096];
	struct stat st;
	long r;

	if (fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		return;
	lc_wait_state(TRACE_EV_RECV, fd, 0, 0);
	for (;;) {
		r = syscall(SYS_read, fd, buf, sizeof(buf));
		if (r > 0)
			continue;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd p = { .fd = fd, .events = POLLIN };

			syscall(SYS_poll, &p, 1, -1);
			continue;
		}
		break;
	}
	lc_wait_state(0, -1, 0, 0);
}

/* FEED: the recorded bytes (n <= room checked), or the flags of an end or error.  Returns
 * the byte count given (0 at an end or error, errno set for an error) and commits. */
static size_t feed(FILE *f, const struct lc_ev *ev, void *dst, size_t room, const char *what)
{
	size_t n = ev->result > 0 ? (size_t)ev->result : 0;

	if (n > room || n > ev->data_len)
		lc_diverge("%s on fd %d: %zu bytes recorded, room for %zu (%u in the trace)", what,
		           ev->fd, n, room, ev->data_len);
	if (n)
		memcpy(dst, lc.data + ev->data_off, n);
	else if (ev->result < 0)
		f->_flags |= STDIO_IO_ERR_SEEN;
	else if (ev->len > 0) {
		f->_flags |= STDIO_IO_EOF_SEEN;
		if (ev->kind == TRACE_EV_INPUT)
			drain_to_end(ev->fd);
	}
	/* the flags the recorded call left (a short read that hit the end of the stream) */
	if (ev->naux)
		f->_flags |= (int)(ev->aux[0] & (STDIO_IO_EOF_SEEN | STDIO_IO_ERR_SEEN));
	count_in(ev, n);
	lc_commit();
	if (ev->result < 0)
		errno = ev->err;
	return n;
}

static void in_real_done(const struct lc_ev *ev, size_t got, const char *what)
{
	lc_wait_state(0, -1, 0, 0);
	if ((int64_t)got != ev->result)
		lc_diverge("%s on channel %u (fd %d): %zu bytes now, %lld recorded", what, ev->channel,
		           ev->fd, got, (long long)ev->result);
	count_in(ev, got);
	lc_commit();
}

/* --- input ----------------------------------------------------------------------------- */

/* The input shapes' handlers (interpose/calls.def): the wrappers generated from their rows
 * (lc_wrappers.h, included at the end of this file) expand them.  F is the FILE (stdin for
 * getchar), `what` names the call in a divergence report. */
#define LC_SHAPE_FREAD(nm, what, call, P, SZ, N, F, realcall) \
	const struct lc_ev *ev; \
	size_t r; \
	switch (in_begin(F, what, &ev)) { \
	case IN_FEED: \
		r = feed(F, ev, P, (SZ) * (N), what); \
		return (SZ) ? r / (SZ) : 0; \
	case IN_REAL: \
		r = realcall; \
		in_real_done(ev, r * (SZ), what); \
		return r; \
	default: \
		return realcall; \
	}

#define LC_SHAPE_FGETS(nm, what, call, S, N, F, realcall) \
	const struct lc_ev *ev; \
	char *r; \
	size_t k; \
	switch (in_begin(F, what, &ev)) { \
	case IN_FEED: \
		k = feed(F, ev, S, (N) > 1 ? (size_t)(N) - 1 : 0, what); \
		if (!k) \
			return NULL; \
		(S)[k] = '\0'; \
		return S; \
	case IN_REAL: \
		r = realcall; \
		in_real_done(ev, r ? strlen(S) : 0, what); \
		return r; \
	default: \
		return realcall; \
	}

/* getline's buffer grows as the real one would (malloc/realloc: the program frees it). */
static ssize_t feed_line(FILE *f, const struct lc_ev *ev, char **line, size_t *cap,
                         const char *what)
{
	size_t n = ev->result > 0 ? (size_t)ev->result : 0;

	if (!line || !cap)
		lc_diverge("%s with a NULL buffer pointer", what);
	if (n && (!*line || *cap < n + 1)) {
		size_t want = n + 1 < 120 ? 120 : n + 1;
		char *p = realloc(*line, want);

		if (!p)
			lc_diverge("%s: out of memory for a recorded line of %zu bytes", what, n);
		*line = p;
		*cap = want;
	}
	n = feed(f, ev, n ? *line : NULL, n, what);
	if (!n)
		return -1;
	(*line)[n] = '\0';
	return (ssize_t)n;
}

#define LC_SHAPE_GETDELIM(nm, what, call, LINE, CAP, F, realcall) \
	const struct lc_ev *ev; \
	ssize_t r; \
	switch (in_begin(F, what, &ev)) { \
	case IN_FEED: \
		return feed_line(F, ev, LINE, CAP, what); \
	case IN_REAL: \
		r = realcall; \
		in_real_done(ev, r > 0 ? (size_t)r : 0, what); \
		return r; \
	default: \
		return realcall; \
	}

#define LC_SHAPE_GETC(nm, what, call, F, realcall) \
	FILE *file_ = (F); \
	const struct lc_ev *ev; \
	unsigned char b; \
	int c_; \
	switch (in_begin(file_, what, &ev)) { \
	case IN_FEED: \
		return feed(file_, ev, &b, 1, what) ? (int)b : EOF; \
	case IN_REAL: \
		c_ = realcall; \
		in_real_done(ev, c_ != EOF ? 1 : 0, what); \
		return c_; \
	default: \
		return realcall; \
	}

/* --- scanf, ungetc: the recorder's warning --------------------------------------------- */

static void warn_consume(FILE *f)
{
	static const char key[] = "encore.stdio";
	const struct lc_ev *ev;
	int fd = file_fd(f), e = errno;
	char msg[256];
	int n;

	if (fd < 0 || !lc_on() || lc_fd_class(fd) <= 0)
		goto out;
	ev = lc_peek();
	if (!ev || ev->kind != TRACE_EV_MARK || ev->fd != fd || ev->data_len != sizeof(key) - 1 ||
	    memcmp(lc.data + ev->data_off, key, sizeof(key) - 1) != 0)
		goto out;
	ev = lc_expect(TRACE_EV_MARK, fd, "stdio");
	n = snprintf(msg, sizeof(msg),
	             "encore replay: %s used stdio on channel %lld: its bytes there are not "
	             "recorded; replay of it is not guaranteed\n",
	             lc.name, (long long)ev->aux[0]);
	if (n > 0)
		lc_sys_write(2, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
	lc_commit();
out:
	errno = e;
}

/* The SCANF shape's handler: scanf, fscanf, vscanf, vfscanf and their __isoc99_ forms are
 * generated (interpose/gen_wrappers.py).  REALV, the real vfscanf or __isoc99_vfscanf, reads
 * F with AP; the handler is an expression, the call's result (warn_consume keeps errno). */
/* A scan the recorder captured (recorder/stdio.c, scan_after: an INPUT event of call stdio
 * with aux[1] = 2): the same scanf runs over the recorded characters, in a memory stream of
 * ours, and writes the same conversions to the program's pointers; the FILE itself is left
 * alone (its descriptor is a stand-in, or outside input), its end and error flags set as
 * recorded.  1 when it did (*r: the result), 0 when the next event is not such a scan. */
static int scan_feed(FILE *f, const char *fmt, __gnuc_va_list ap,
                     int (*realv)(FILE *, const char *, __gnuc_va_list), int *r)
{
	const struct lc_ev *ev;
	int fd = file_fd(f), e = errno;

	if (fd < 0 || !lc_on() || lc_fd_class(fd) <= 0 || !(ev = lc_peek()) ||
	    ev->kind != TRACE_EV_INPUT || ev->call != TRACE_CALL_STDIO || ev->fd != fd ||
	    ev->naux < 3 || ev->aux[1] != 2) {
		errno = e;
		return 0;
	}
	ev = lc_expect(TRACE_EV_RECV, fd, "scanf");
	*r = (int)ev->aux[2];
	if (ev->data_len) {
		FILE *m = fmemopen((void *)(uintptr_t)(lc.data + ev->data_off), ev->data_len, "r");
		int got;

		if (!m)
			lc_diverge("scanf on fd %d: no memory stream for its %u recorded characters",
			           fd, ev->data_len);
		got = realv(m, fmt, ap);
		fclose(m);
		if (got != *r)
			lc_diverge("scanf on fd %d: %d conversions over the recorded characters, %d "
			           "recorded (another format?)", fd, got, *r);
	}
	f->_flags |= (int)(ev->aux[0] & (STDIO_IO_EOF_SEEN | STDIO_IO_ERR_SEEN));
	count_in(ev, ev->result > 0 ? (size_t)ev->result : 0);
	lc_commit();
	errno = e;
	return 1;
}

#define LC_SHAPE_SCANF(nm, wh, call, F, FMT, AP, REALV) \
	({ \
		FILE *file_ = (F); \
		int r_; \
		if (!scan_feed(file_, FMT, AP, (REALV), &r_)) { \
			r_ = (REALV)(file_, FMT, AP); \
			warn_consume(file_); \
		} \
		r_; \
	})

LC_EXPORT int ungetc(int c, FILE *f)
{
	int r = IP_REAL(ungetc)(c, f);

	if (r != EOF)
		warn_consume(f);
	return r;
}

/* A refill of a FILE read with inline getc_unlocked: the recorded bytes of the refill
 * (INPUT: from the trace; from a recorded peer: exactly that many bytes read from the
 * descriptor) become the FILE's buffer, in memory of ours; glibc's own buffer is left alone
 * (its next refill of its own, inside another call, resets the pointers to it). */
LC_EXPORT int __uflow(FILE *f)
{
	const struct lc_ev *ev;
	struct lc_uflow *u;
	int fd = file_fd(f);
	int32_t cls;
	size_t n, got = 0;

	if (fd < 0 || !lc_on())
		return IP_REAL(__uflow)(f);
	cls = lc_fd_class(fd);
	if (cls == LC_FD_IGNORED)
		return IP_REAL(__uflow)(f);
	if (cls == LC_FD_RANDOM) {
		int r = IP_REAL(__uflow)(f);

		warn_consume(f);
		return r;
	}
	ev = lc_expect(TRACE_EV_RECV, fd, "getc");
	if (ev->channel && cls != (int32_t)ev->channel)
		lc_diverge("getc: expected a receive on channel %u, but fd %d is channel %d here",
		           ev->channel, fd, cls);
	if (ev->result <= 0) {
		feed(f, ev, NULL, 0, "getc");
		return EOF;
	}
	n = (size_t)ev->result;
	u = stdio_files_find(&lc_uflows, f, 1);
	if (!u)
		lc_diverge("getc: no room to replay a refill");
	if (n > u->cap) {
		size_t cap = (n + 65535) & ~(size_t)65535;
		void *p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			lc_diverge("getc: no memory for a refill of %zu bytes", n);
		if (u->buf && !(f->_IO_read_base >= u->buf && f->_IO_read_base < u->buf + u->cap))
			munmap(u->buf, u->cap);
		u->buf = p;
		u->cap = cap;
	}
	if (ev->kind == TRACE_EV_INPUT) {
		if (n > ev->data_len)
			lc_diverge("getc: %zu bytes recorded, %u in the trace", n, ev->data_len);
		memcpy(u->buf, lc.data + ev->data_off, n);
	} else {
		if (lc.online)
			lc_request(lc.pos + 1);
		lc_wait_state(TRACE_EV_RECV, fd, ev->channel, n);
		while (got < n) {
			long r = syscall(SYS_read, fd, u->buf + got, n - got);

			if (r > 0) {
				got += (size_t)r;
				lc.slot->progress++;
				continue;
			}
			if (r == 0)
				lc_diverge("getc on channel %u (fd %d): the peer closed the stream after %zu "
				           "of the %zu recorded bytes", ev->channel, fd, got, n);
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				struct pollfd p = { .fd = fd, .events = POLLIN };

				syscall(SYS_poll, &p, 1, -1);
				continue;
			}
			lc_diverge("getc on channel %u (fd %d) failed: %s", ev->channel, fd,
			           strerror(errno));
		}
		lc_wait_state(0, -1, 0, 0);
	}
	f->_IO_read_base = u->buf;
	f->_IO_read_ptr = u->buf + 1;
	f->_IO_read_end = u->buf + n;
	u->end = f->_IO_read_end;
	if (ev->naux)
		f->_flags |= (int)(ev->aux[0] & (STDIO_IO_EOF_SEEN | STDIO_IO_ERR_SEEN));
	count_in(ev, n);
	lc_commit();
	return (unsigned char)u->buf[0];
}

/* --- output ---------------------------------------------------------------------------- */

/* Bytes written with inline putc_unlocked: the recorder logs them as one send (aux[1] = 2)
 * before the next output call on the FILE, or at exit; the same accounting here finds the
 * same count (the program writes the same bytes now) and consumes that send. */
static void stdio_exit(void);

static int known_chan(int fd)
{
	return fd >= 0 && fd < LC_FD_MAX && lc_fd[fd] > 0;
}

static void out_pre(FILE *f)
{
	const struct lc_ev *ev;
	int fd = file_fd(f), e = errno;
	long n;

	if (!known_chan(fd) || !lc_on())
		return;
	n = stdio_inline_pending(f, stdio_exit);
	ev = n > 0 ? lc_peek() : NULL;
	if (!ev || ev->kind != TRACE_EV_SEND || ev->call != TRACE_CALL_STDIO || ev->fd != fd ||
	    ev->naux < 2 || ev->aux[1] != 2)
		goto out;
	ev = lc_expect(TRACE_EV_SEND, fd, "putc_unlocked");
	if (ev->result != n)
		lc_diverge("putc_unlocked on channel %u (fd %d): %ld bytes written inline now, %lld "
		           "recorded", ev->channel, fd, n, (long long)ev->result);
	if (ev->channel && ev->channel < LC_CHAN_MAX)
		lc_chan[ev->channel].bytes[0] += (uint64_t)n;
	lc_commit();
out:
	errno = e;
}

static void out_post(FILE *f)
{
	struct stdio_wacc *w;

	if (known_chan(file_fd(f)) && lc_on() && (w = stdio_files_find(&stdio_waccs, f, 1)))
		w->wptr = f->_IO_write_ptr;
}

void lc_stdio_close(FILE *f)
{
	struct stdio_wacc *w;
	struct lc_uflow *u;

	out_pre(f);
	if (stdio_waccs.n && (w = stdio_files_find(&stdio_waccs, f, 0)))
		stdio_files_drop(&stdio_waccs, w);
	if (lc_uflows.n && (u = stdio_files_find(&lc_uflows, f, 0))) {
		if (f->_IO_read_base >= u->buf && f->_IO_read_base < u->buf + u->cap) {
			/* our memory: glibc must not look at it after the close */
			f->_IO_read_base = f->_IO_read_ptr = f->_IO_read_end = NULL;
		}
		stdio_files_drop(&lc_uflows, u);
	}
}

extern void *_IO_list_all;

static void out_pre_all(void)
{
	FILE *f;

	for (f = (FILE *)_IO_list_all; f; f = f->_chain)
		out_pre(f);
}

static void stdio_exit(void)
{
	out_pre_all();
}

/* The recorded send of this output call, or NULL when it logged none (not a channel
 * between recorded processes). */
static const struct lc_ev *out_begin(int fd, const char *what)
{
	const struct lc_ev *ev;

	/* (a handler run due of a signal blocked now is a later call's: peeking would run it
	 * here, early; make prints with SIGCHLD blocked while its job's is pending) */
	if (fd < 0 || !lc_on() || (!lc.threaded && lc_signal_due_blocked()))
		return NULL;
	ev = lc_peek();
	if (!ev || ev->kind != TRACE_EV_SEND || ev->call != TRACE_CALL_STDIO || ev->fd != fd)
		return NULL;
	return lc_expect(TRACE_EV_SEND, fd, what);
}

static void out_done(const struct lc_ev *ev, long r, const char *what)
{
	int e = errno;

	if (!ev)
		return;
	if (r >= 0 && ev->result >= 0 && r != ev->result)
		lc_diverge("%s on channel %u (fd %d): %ld bytes now, %lld recorded", what, ev->channel,
		           ev->fd, r, (long long)ev->result);
	if (r > 0 && ev->channel && ev->channel < LC_CHAN_MAX)
		lc_chan[ev->channel].bytes[0] += (uint64_t)r;
	lc_commit();
	errno = e;
}

/* The output shapes' handlers, as the input ones.  NL: puts adds a newline. */
#define LC_SHAPE_FWRITE(nm, what, call, P, SZ, N, F, realcall) \
	const struct lc_ev *ev; \
	size_t r; \
	out_pre(F); \
	ev = out_begin(file_fd(F), what); \
	r = realcall; \
	out_done(ev, (long)(r * (SZ)), what); \
	out_post(F); \
	return r

#define LC_SHAPE_FPUTS(nm, what, call, S, F, NL, realcall) \
	FILE *file_ = (F); \
	const struct lc_ev *ev; \
	int r; \
	out_pre(file_); \
	ev = out_begin(file_fd(file_), what); \
	r = realcall; \
	out_done(ev, r >= 0 ? (long)(strlen(S) + (NL)) : -1, what); \
	out_post(file_); \
	return r

#define LC_SHAPE_PUTC(nm, what, call, C, F, realcall) \
	FILE *file_ = (F); \
	const struct lc_ev *ev; \
	int r; \
	out_pre(file_); \
	ev = out_begin(file_fd(file_), what); \
	r = realcall; \
	out_done(ev, r != EOF ? 1 : -1, what); \
	out_post(file_); \
	return r

#define VPRINTF_BODY(file, fd, what, realcall) \
	const struct lc_ev *ev; \
	int r; \
	out_pre(file); \
	ev = out_begin(fd, what); \
	r = realcall; \
	out_done(ev, r, what); \
	out_post(file); \
	return r

/* The VPRINTF shape's handler: vfprintf, __vfprintf_chk, vdprintf and __vdprintf_chk are
 * generated (F NULL and FD the descriptor for the dprintf ones, NOFD for the others). */
#define LC_SHAPE_VPRINTF(nm, wh, call, F, FD, NOFD, realcall) \
	VPRINTF_BODY(F, (NOFD) ? file_fd(F) : (FD), wh, realcall)


LC_EXPORT int vprintf(const char *fmt, va_list ap)
{
	VPRINTF_BODY(stdout, file_fd(stdout), "vprintf", IP_REAL(vfprintf)(stdout, fmt, ap));
}


LC_EXPORT int __vprintf_chk(int flag, const char *fmt, va_list ap)
{
	VPRINTF_BODY(stdout, file_fd(stdout), "vprintf", IP_REAL(__vfprintf_chk)(stdout, flag, fmt, ap));
}



#define PRINTF_BODY(file, fd, what, last, realcall) \
	const struct lc_ev *ev; \
	va_list ap; \
	int r; \
	out_pre(file); \
	ev = out_begin(fd, what); \
	va_start(ap, last); \
	r = realcall; \
	va_end(ap); \
	out_done(ev, r, what); \
	out_post(file); \
	return r

LC_EXPORT int printf(const char *fmt, ...)
{
	PRINTF_BODY(stdout, file_fd(stdout), "printf", fmt, IP_REAL(vfprintf)(stdout, fmt, ap));
}

LC_EXPORT int fprintf(FILE *f, const char *fmt, ...)
{
	PRINTF_BODY(f, file_fd(f), "fprintf", fmt, IP_REAL(vfprintf)(f, fmt, ap));
}

LC_EXPORT int __printf_chk(int flag, const char *fmt, ...)
{
	PRINTF_BODY(stdout, file_fd(stdout), "printf", fmt, IP_REAL(__vfprintf_chk)(stdout, flag, fmt, ap));
}

LC_EXPORT int __fprintf_chk(FILE *f, int flag, const char *fmt, ...)
{
	PRINTF_BODY(f, file_fd(f), "fprintf", fmt, IP_REAL(__vfprintf_chk)(f, flag, fmt, ap));
}

LC_EXPORT int dprintf(int fd, const char *fmt, ...)
{
	PRINTF_BODY((FILE *)NULL, fd, "dprintf", fmt, IP_REAL(vdprintf)(fd, fmt, ap));
}

LC_EXPORT int __dprintf_chk(int fd, int flag, const char *fmt, ...)
{
	PRINTF_BODY((FILE *)NULL, fd, "dprintf", fmt, IP_REAL(__vdprintf_chk)(fd, flag, fmt, ap));
}

/* The flush of a full buffer behind inline putc_unlocked, and fflush: the bytes written
 * inline first (recorder/stdio.c). */
LC_EXPORT int __overflow(FILE *f, int c)
{
	const struct lc_ev *ev;
	int r;

	out_pre(f);
	ev = out_begin(file_fd(f), "putc_unlocked");
	r = IP_REAL(__overflow)(f, c);
	out_done(ev, r != EOF ? 1 : -1, "putc_unlocked");
	out_post(f);
	return r;
}

LC_EXPORT int fflush(FILE *f)
{
	int r;

	if (f)
		out_pre(f);
	else if (lc_on())
		out_pre_all();
	r = IP_REAL(fflush)(f);
	if (f)
		out_post(f);
	return r;
}

#include "lc_wrappers.h"
