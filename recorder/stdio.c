/*
 * stdio.c: glibc's stdio reads and writes through libc-internal calls (__read, __write) that
 * LD_PRELOAD cannot see.  So the common stdio entry points are interposed here, and where a
 * FILE's descriptor is a channel they log the bytes at the API level:
 *
 *   input (fread, fgets, getline, getdelim, fgetc, getc, getchar, their _unlocked and
 *   __*_chk forms)      a receive of the bytes the call returned to the program; from a
 *                       peer outside the session (stdin...) an INPUT event with the bytes,
 *                       which replay feeds back; from /dev/urandom a RANDOM event;
 *   output (fwrite, fputs, puts, fputc, putc, putchar, printf, fprintf, vprintf, vfprintf,
 *   dprintf, vdprintf, their _unlocked and __*_chk forms)
 *                       a send of the bytes the call accepted, on a channel between
 *                       recorded processes only (output to the terminal, to `encore record`
 *                       or to a peer outside the session needs nothing for replay);
 *   scanf, fscanf, vscanf, vfscanf (and __isoc99_*), ungetc, and __uflow/__overflow (the
 *   refills and flushes of getc_unlocked/putc_unlocked inlined in optimised programs)
 *                       the bytes consumed are not known: once per channel a MARK event
 *                       "encore.stdio" (aux[0] = the channel, aux[1] = the descriptor) that
 *                       `encore analyze` and `encore replay` report ("P used stdio on
 *                       channel C: its bytes there are not recorded; replay of it is not
 *                       guaranteed").
 *
 * Byte offsets then still add up per direction (the API-level send comes before the kernel
 * write that carries its bytes, the API-level receive after the kernel read), as long as a
 * process does not mix stdio and plain read/recv on one channel.  The bytes are not in the
 * running content hash (the replayer skips them the same way).  recorder/README.md, Limits.
 */
/* No extern inline definitions from <bits/stdio.h> (optimised builds define getline,
 * getchar, putc_unlocked... inline there): the functions are defined here.  Before any
 * header, so that <features.h> sees it. */
#define __NO_INLINE__ 1
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rec.h"
#include "stdio_glibc.h"

#define RA() __builtin_return_address(0)

/* Worth a look on input: a descriptor not known to be ignored (classified at first use). */
static inline int in_candidate(int fd)
{
	return __builtin_expect(rec.w != NULL, 1) && fd >= 0 && fd < REC_FD_MAX &&
	       rec.fd[fd] != REC_FD_IGNORED;
}

/* On output only channels already known can be between recorded processes (those are
 * classified when made, inherited or passed across exec): no classification.  An accepted
 * end still undecided (chan.c, decide_peer: its client's connect not registered yet when the
 * accept returned) may be a recorded peer's: its sends are logged (a server that greets
 * through stdio, exim's banner: without it the peer's receives matched the next send at the
 * wrong offset, and the analyzer found a cycle). */
static inline int out_candidate(int fd)
{
	const struct rec_chan *c;

	if (__builtin_expect(rec.w == NULL, 0) || fd < 0 || fd >= REC_FD_MAX || rec.fd[fd] <= 0)
		return 0;
	c = &rec.chan[rec.fd[fd] - 1];
	return !c->external || c->undecided; /* the terminal, outside peers: nothing */
}

/* An API-level receive: r bytes at p (r > 0), 0 at the end of the stream, -1 (errno e) on
 * an error.  Called with the guard held. */
static void log_in(FILE *f, int fd, long r, int e, size_t asked, const void *p, void *ra)
{
	struct trace_event ev;
	struct rec_chan *c = rec_fd_chan(fd);
	int state = f->_flags & (STDIO_IO_EOF_SEEN | STDIO_IO_ERR_SEEN);

	if (!c) {
		if (rec.fd[fd] != REC_FD_RANDOM)
			return;
		rec_event_init(&ev, TRACE_EV_RANDOM, TRACE_CALL_STDIO, fd);
		ev.result = r;
		ev.err = r < 0 ? e : 0;
		if (r > 0) {
			ev.data = p;
			ev.data_len = (uint32_t)r;
		}
		rec_log(&ev, ra);
		return;
	}
	rec_event_init(&ev, TRACE_EV_RECV, TRACE_CALL_STDIO, fd);
	ev.channel = c->id;
	ev.result = r;
	ev.err = r < 0 ? e : 0;
	ev.len = asked;
	/* the FILE's end-of-stream and error flags after the call (a short fread followed by
	 * feof()): replay sets them as they were */
	ev.naux = 1;
	ev.aux[0] = state;
	if (rec_chan_in_external(c, r, e, asked)) {
		ev.kind = TRACE_EV_INPUT;
		if (r > 0) {
			ev.data = p;
			ev.data_len = (uint32_t)r;
		}
	}
	if (r > 0)
		c->bytes[REC_IN] += (uint64_t)r;
	rec_log(&ev, ra);
}

/* An API-level send of r bytes (or -1, errno e) on a channel between recorded processes. */
static void log_out(int fd, long r, int e, size_t asked, void *ra)
{
	struct trace_event ev;
	struct rec_chan *c;

	if (rec.fd[fd] <= 0)
		return;
	c = &rec.chan[rec.fd[fd] - 1];
	if (c->external && !c->undecided) /* (undecided: out_candidate says why) */
		return;
	rec_event_init(&ev, TRACE_EV_SEND, TRACE_CALL_STDIO, fd);
	ev.channel = c->id;
	ev.result = r;
	ev.err = r < 0 ? e : 0;
	ev.len = asked;
	if (r > 0)
		c->bytes[REC_OUT] += (uint64_t)r;
	rec_log(&ev, ra);
}

/* scanf and ungetc on a channel: once per channel, say its bytes there are not recorded. */
static uint32_t warned[64];
static unsigned nwarned;

static void warn_unrecorded(int fd, void *ra)
{
	struct trace_event ev;
	struct rec_chan *c = rec_fd_chan(fd);
	unsigned i;
	static const char key[] = "encore.stdio";

	if (!c)
		return;
	for (i = 0; i < nwarned && i < 64; i++)
		if (warned[i] == c->id)
			return;
	if (nwarned < 64)
		warned[nwarned++] = c->id;
	rec_event_init(&ev, TRACE_EV_MARK, TRACE_CALL_STDIO, fd);
	ev.channel = 0;
	ev.data = (const uint8_t *)key;
	ev.data_len = sizeof(key) - 1;
	ev.naux = 2;
	ev.aux[0] = c->id;
	ev.aux[1] = fd;
	rec_log(&ev, ra);
}

/* After an input call that returned nothing: the end of the stream (0) or an error (-1). */
static inline long none_result(FILE *f)
{
	return (f->_flags & STDIO_IO_ERR_SEEN) ? -1 : 0;
}

/* FILEs whose buffer the recorder logged at a refill (__uflow): the end of that buffer.  An
 * API-level call that finds bytes of it still unread consumes bytes already counted: it
 * mixes the two ways of reading one FILE, which is reported (the mark), not counted. */
struct uflow_file {
	FILE *f;
	char *end;
};
static struct uflow_file uflow_slots[64];
static struct stdio_files uflows = STDIO_FILES_INIT(uflow_slots, end);

/* Before an API-level input call: 1 when f's buffer still holds bytes logged at a refill. */
static inline int uflow_mixed(FILE *f)
{
	struct uflow_file *u;

	if (__builtin_expect(uflows.n == 0, 1) || !f)
		return 0;
	u = stdio_files_find(&uflows, f, 0);
	return u && u->end && u->end == f->_IO_read_end && f->_IO_read_ptr < f->_IO_read_end;
}

static void uflow_forget(FILE *f)
{
	struct uflow_file *u = uflows.n ? stdio_files_find(&uflows, f, 0) : NULL;

	if (u)
		u->end = NULL;
}

#define IN_LOG(f, r, asked, p) \
	do { \
		int fd_ = file_fd(f); \
		if (in_candidate(fd_) && rec_enter()) { \
			if (mixed_) \
				warn_unrecorded(fd_, RA()); \
			uflow_forget(f); \
			log_in((f), fd_, (r), e, (asked), (p), RA()); \
			rec_leave(); \
			errno = e; \
		} \
	} while (0)

/* Inline putc_unlocked (echo's newline, uniq's lines) writes into the FILE's buffer with
 * no call: those bytes are logged as one send (aux[1] = 2) at the next output call on the
 * FILE, before it (fwrite..., __overflow, fflush), or at exit before the buffers are
 * flushed.  The accounting, shared with the replayer, is in interpose/stdio_glibc.h. */
static void stdio_exit(void);

/* Before an output call on f: log the bytes written inline since the last logged call. */
static void out_pre(FILE *f, void *ra)
{
	struct trace_event ev;
	struct rec_chan *c;
	int fd = file_fd(f);
	long n;

	if (!out_candidate(fd) || !rec_enter())
		return;
	n = stdio_inline_pending(f, stdio_exit);
	if (n > 0) {
		c = &rec.chan[rec.fd[fd] - 1];
		rec_event_init(&ev, TRACE_EV_SEND, TRACE_CALL_STDIO, fd);
		ev.channel = c->id;
		ev.result = n;
		ev.len = (uint64_t)n;
		ev.naux = 2;
		ev.aux[1] = 2;
		c->bytes[REC_OUT] += (uint64_t)n;
		rec_log(&ev, ra);
	}
	rec_leave();
}

/* After it: what it left in the buffer is accounted for. */
static void out_post(FILE *f)
{
	struct stdio_wacc *w;

	if (!out_candidate(file_fd(f)) || !rec_enter())
		return;
	if ((w = stdio_files_find(&stdio_waccs, f, 1)))
		w->wptr = f->_IO_write_ptr;
	rec_leave();
}

void rec_stdio_close(FILE *f, void *ra)
{
	struct stdio_wacc *w;
	struct uflow_file *u;

	out_pre(f, ra);
	if (rec_enter()) {
		if (stdio_waccs.n && (w = stdio_files_find(&stdio_waccs, f, 0)))
			stdio_files_drop(&stdio_waccs, w);
		if (uflows.n && (u = stdio_files_find(&uflows, f, 0)))
			stdio_files_drop(&uflows, u);
		rec_leave();
	}
}

/* glibc's list of open FILEs (exported, undeclared). */
extern void *_IO_list_all;

static void out_pre_all(void *ra)
{
	FILE *f;

	for (f = (FILE *)_IO_list_all; f; f = f->_chain)
		out_pre(f, ra);
}

/* At exit, before libc flushes the buffers (after the handlers, ours among them) and
 * before the recorder's EXIT (its handler was registered first, so it runs last). */
static void stdio_exit(void)
{
	int e = errno;

	out_pre_all(NULL);
	errno = e;
}

#define OUT_LOG(fd, r, asked) \
	do { \
		int fd_ = (fd); \
		if (out_candidate(fd_) && rec_enter()) { \
			log_out(fd_, (r), e, (asked), RA()); \
			rec_leave(); \
			errno = e; \
		} \
	} while (0)

#define WARN_LOG(f) \
	do { \
		int fd_ = file_fd(f); \
		if (in_candidate(fd_) && rec_enter()) { \
			warn_unrecorded(fd_, RA()); \
			rec_leave(); \
			errno = e; \
		} \
	} while (0)

/* --- input ----------------------------------------------------------------------------- */

/* The input shapes' handlers (interpose/calls.def): the wrappers generated from their rows
 * (rec_wrappers.h, included at the end of this file) expand them.  F is the FILE (stdin for
 * getchar); `nm`, `wh` and `call` are not needed here. */
#define REC_SHAPE_FREAD(nm, wh, call, P, SZ, N, F, realcall) \
	int mixed_ = uflow_mixed(F); \
	size_t r = realcall; \
	int e = errno; \
	IN_LOG(F, r ? (long)(r * (SZ)) : none_result(F), (SZ) * (N), P); \
	return r

#define REC_SHAPE_FGETS(nm, wh, call, S, N, F, realcall) \
	int mixed_ = uflow_mixed(F); \
	char *r = realcall; \
	int e = errno; \
	IN_LOG(F, r ? (long)strlen(S) : none_result(F), (N) > 1 ? (size_t)(N) - 1 : 0, S); \
	return r

/* getline's request is "a line": the asked size is the buffer it may grow (logged as 1
 * so that a 0 result reads as the end of the stream). */
#define REC_SHAPE_GETDELIM(nm, wh, call, LINE, CAP, F, realcall) \
	int mixed_ = uflow_mixed(F); \
	ssize_t r = realcall; \
	int e = errno; \
	IN_LOG(F, r > 0 ? (long)r : none_result(F), 1, r > 0 ? *(LINE) : NULL); \
	return r

#define REC_SHAPE_GETC(nm, wh, call, F, realcall) \
	FILE *file_ = (F); \
	int mixed_ = uflow_mixed(file_); \
	int c_ = realcall; \
	int e = errno; \
	unsigned char b = (unsigned char)c_; \
	IN_LOG(file_, c_ != EOF ? 1 : none_result(file_), 1, &b); \
	return c_

/* --- input whose bytes are not known: a warning --------------------------------------- */

/* The SCANF shape's handler: scanf, fscanf, vscanf, vfscanf and their __isoc99_ forms are
 * generated (interpose/gen_wrappers.py).  REALV, the real vfscanf or __isoc99_vfscanf, reads
 * F with AP; the handler is an expression, the call's result, errno as the call left it. */
/* scanf on a FILE whose descriptor is input from outside the session (a kernel-state file
 * such as /proc/meminfo, which the JVM scans with fscanf; a terminal; an unrecorded peer):
 * what the call consumed is recorded, so that a replay can run the same scanf over the same
 * characters (replayer/lc_stdio.c).  The FILE's unread bytes are copied before the call (its
 * refill overwrites them); after it, the consumed ones are those up to the read pointer, in
 * the old buffer and, when the call refilled it once, in the new one; plus the character
 * after them, which scanf looked at and pushed back (a literal that did not match, a number's
 * end).  An INPUT event of call stdio: result = the bytes consumed, aux[0] the FILE's end and
 * error flags, aux[1] = 2 (a scan), aux[2] = scanf's result, data = the bytes consumed and
 * the one looked at when there was one.  More than a buffer's worth before the call, or a
 * scan that consumed more than one refill can hold, is not captured: the mark instead. */
#define SCAN_CAP 4096
struct scan_pre {
	int fd;           /* -1: not captured */
	size_t n;         /* unread bytes before the call, copied in scan_unread */
	const char *end;  /* the FILE's read_end before the call */
	long off;         /* the descriptor's offset before the call (-1: not seekable) */
	long rchar;       /* not seekable: the thread's bytes read so far (-1: unknown) */
};

/* The calling thread's bytes read by read-like calls so far (rchar of /proc/thread-self/io),
 * with (after 1) or without (after 0) the bytes of this look itself, which the next look
 * counts; -1 when unknown.  A pipe or a terminal has no offset to tell how much a scan's
 * refills read: this tells it. */
static long thread_rchar(int after)
{
	char b[256], *p;
	long r, v;
	int fd;

	if (rec_sandbox & REC_SB_NOFILES)
		return -1; /* (a seccomp filter forbids the recorder's opens: recorder/guard.c) */
	fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/thread-self/io", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	r = (long)syscall(SYS_read, fd, b, sizeof(b) - 1);
	syscall(SYS_close, fd);
	if (r <= 0)
		return -1;
	b[r] = '\0';
	if (strncmp(b, "rchar: ", 7) != 0)
		return -1;
	v = strtol(b + 7, &p, 10);
	return p == b + 7 ? -1 : after ? v + r : v;
}
/* The copy of a FILE's unread bytes, taken before the call and held across it by one thread
 * at a time (scan_busy: another thread scanning meanwhile is not captured, it never waits),
 * and the event's data (under the stream lock): not on the program's stack, nor in
 * thread-local storage (a dlopen of the library could not place 4 KiB of it). */
static char scan_unread[SCAN_CAP];
static int scan_busy;
static uint8_t scan_data[2 * SCAN_CAP + 1];

static void scan_look(FILE *f, struct scan_pre *p, int fd);

static void scan_before(FILE *f, struct scan_pre *p)
{
	int fd = file_fd(f), e = errno; /* (lseek and /proc's io fail: not the program's errno) */

	scan_look(f, p, fd);
	errno = e;
}

static void scan_look(FILE *f, struct scan_pre *p, int fd)
{
	struct rec_chan *c;

	p->fd = -1;
	if (!in_candidate(fd) || !(c = rec_fd_chan(fd)) || !c->external || c->undecided ||
	    rec_busy())
		return;
	p->n = f->_IO_read_ptr && f->_IO_read_end > f->_IO_read_ptr ?
	       (size_t)(f->_IO_read_end - f->_IO_read_ptr) : 0;
	if (p->n > SCAN_CAP || __atomic_exchange_n(&scan_busy, 1, __ATOMIC_ACQUIRE))
		return;
	if (p->n)
		memcpy(scan_unread, f->_IO_read_ptr, p->n);
	p->end = f->_IO_read_end;
	p->off = (long)syscall(SYS_lseek, fd, 0L, SEEK_CUR);
	p->rchar = p->off < 0 ? thread_rchar(1) : -1;
	p->fd = fd;
}

static void scan_after(FILE *f, const struct scan_pre *p, int r, void *ra)
{
	uint8_t *data = scan_data;
	struct trace_event ev;
	struct rec_chan *c = rec_fd_chan(p->fd);
	size_t n = 0, tail;
	const char *base = f->_IO_read_base, *ptr = f->_IO_read_ptr, *end = f->_IO_read_end;

	if (!c)
		return;
	if (p->off >= 0) {
		/* what the call's refills read, where the descriptor says: more than the buffer
		 * holds now is more than one refill, whose first bytes are gone (a scan past a
		 * procfs file's 1 KiB buffer): not captured */
		long off = (long)syscall(SYS_lseek, p->fd, 0L, SEEK_CUR);

		if (off >= 0 && base && end >= base && off - p->off > (long)(end - base)) {
			warn_unrecorded(p->fd, ra);
			return;
		}
	} else {
		/* a pipe or a terminal: the same, from the bytes the thread read meanwhile (the
		 * refills' reads are libc's own, which no interposer sees); unknown: not captured
		 * either, as the bytes of one refill cannot be told from those of several */
		long now = thread_rchar(0);

		if (p->rchar < 0 || now < 0 || !base || end < base ||
		    now - p->rchar > (long)(end - base)) {
			warn_unrecorded(p->fd, ra);
			return;
		}
	}
	if (ptr && end == p->end && ptr >= end - p->n && ptr <= end &&
	    memcmp(end - p->n, scan_unread, (size_t)(ptr - (end - p->n))) == 0) {
		/* no refill (a refill of the same length brings other bytes): what it consumed
		 * is the start of what was unread */
		n = (size_t)(ptr - (end - p->n));
		memcpy(data, scan_unread, n);
	} else if (ptr && base && ptr >= base && ptr <= end && (size_t)(ptr - base) <= SCAN_CAP) {
		/* one refill (or the buffer's first fill): all that was unread, then the new */
		memcpy(data, scan_unread, p->n);
		memcpy(data + p->n, base, (size_t)(ptr - base));
		n = p->n + (size_t)(ptr - base);
	} else {
		warn_unrecorded(p->fd, ra);
		return;
	}
	tail = ptr && ptr < end ? 1 : 0;
	if (tail)
		data[n] = (uint8_t)*ptr;
	rec_event_init(&ev, TRACE_EV_INPUT, TRACE_CALL_STDIO, p->fd);
	ev.channel = c->id;
	ev.result = (int64_t)n;
	ev.len = n + tail;
	ev.naux = 3;
	ev.aux[0] = f->_flags & (STDIO_IO_EOF_SEEN | STDIO_IO_ERR_SEEN);
	ev.aux[1] = 2;
	ev.aux[2] = r;
	ev.data = data;
	ev.data_len = (uint32_t)(n + tail);
	c->bytes[REC_IN] += (uint64_t)n;
	rec_log(&ev, ra);
}

/* (the FILE's lock, recursive, held from the copy to the capture: another thread reading the
 * same FILE meanwhile would move its pointers) */
#define REC_SHAPE_SCANF(nm, wh, call, F, FMT, AP, REALV) \
	({ \
		FILE *file_ = (F); \
		struct scan_pre pre_; \
		flockfile(file_); \
		scan_before(file_, &pre_); \
		int r_ = (REALV)(file_, FMT, AP), e = errno; \
		if (pre_.fd >= 0) { \
			if (rec_enter()) { \
				scan_after(file_, &pre_, r_, RA()); \
				rec_leave(); \
			} \
			__atomic_store_n(&scan_busy, 0, __ATOMIC_RELEASE); \
		} \
		funlockfile(file_); \
		if (pre_.fd < 0) \
			WARN_LOG(file_); \
		errno = e; \
		r_; \
	})

void rec_stdio_fork_child(void)
{
	__atomic_store_n(&scan_busy, 0, __ATOMIC_RELEASE); /* another thread's scan, void here */
}

REC_EXPORT int ungetc(int c, FILE *f)
{
	int r = IP_REAL(ungetc)(c, f), e = errno;

	if (r != EOF)
		WARN_LOG(f);
	return r;
}

/* Inline getc_unlocked (uniq, nl...) reads the FILE's buffer directly and calls __uflow
 * only to refill it: the refill is logged as a receive of every byte it brought into the
 * buffer, [read_ptr - 1, read_end) after the call (aux[1] = 1), as a kernel read would be;
 * the bytes then consumed inline are not events.  Inline putc_unlocked flushes through
 * __overflow: its bytes are not seen (the mark). */
static void log_refill(FILE *f, int fd, int c, int e, void *ra)
{
	struct trace_event ev;
	struct rec_chan *ch = rec_fd_chan(fd);
	struct uflow_file *u;
	const char *from;
	long n;

	if (!ch) {
		if (rec.fd[fd] == REC_FD_RANDOM)
			warn_unrecorded(fd, ra);
		return;
	}
	from = c != EOF ? f->_IO_read_ptr - 1 : NULL;
	n = c != EOF ? (long)(f->_IO_read_end - from) : none_result(f);
	rec_event_init(&ev, rec_chan_in_external(ch, n, e, 1) ? TRACE_EV_INPUT : TRACE_EV_RECV,
	               TRACE_CALL_STDIO, fd);
	ev.channel = ch->id;
	ev.result = n;
	ev.err = n < 0 ? e : 0;
	ev.len = f->_IO_buf_base && f->_IO_buf_end > f->_IO_buf_base ?
	         (uint64_t)(f->_IO_buf_end - f->_IO_buf_base) : 1;
	ev.naux = 2;
	ev.aux[0] = f->_flags & (STDIO_IO_EOF_SEEN | STDIO_IO_ERR_SEEN);
	ev.aux[1] = 1;
	if (n > 0) {
		if (ch->external) {
			ev.data = (const uint8_t *)from;
			ev.data_len = (uint32_t)n;
		}
		ch->bytes[REC_IN] += (uint64_t)n;
		if ((u = stdio_files_find(&uflows, f, 1)))
			u->end = f->_IO_read_end;
	}
	rec_log(&ev, ra);
}

REC_EXPORT int __uflow(FILE *f)
{
	int c = IP_REAL(__uflow)(f), e = errno, fd = file_fd(f);

	if (in_candidate(fd) && rec_enter()) {
		log_refill(f, fd, c, e, RA());
		rec_leave();
		errno = e;
	}
	return c;
}

/* The flush of a full buffer behind inline putc_unlocked: the bytes written inline first,
 * then c (a one-byte send). */
REC_EXPORT int __overflow(FILE *f, int c)
{
	int r, e;

	out_pre(f, RA());
	r = IP_REAL(__overflow)(f, c);
	e = errno;
	OUT_LOG(file_fd(f), r != EOF ? 1 : -1, 1);
	out_post(f);
	errno = e;
	return r;
}

/* fflush: the bytes written inline go first (fflush(NULL): of every FILE). */
REC_EXPORT int fflush(FILE *f)
{
	int r, e;

	if (f)
		out_pre(f, RA());
	else if (rec.w)
		out_pre_all(RA());
	r = IP_REAL(fflush)(f);
	e = errno;
	if (f)
		out_post(f);
	errno = e;
	return r;
}

/* --- output ---------------------------------------------------------------------------- */

/* The output shapes' handlers, as the input ones above.  NL: puts adds a newline. */
#define REC_SHAPE_FWRITE(nm, wh, call, P, SZ, N, F, realcall) \
	size_t r; \
	int e; \
	out_pre(F, RA()); \
	r = realcall; \
	e = errno; \
	OUT_LOG(file_fd(F), (long)(r * (SZ)), (SZ) * (N)); \
	out_post(F); \
	errno = e; \
	return r

#define REC_SHAPE_FPUTS(nm, wh, call, S, F, NL, realcall) \
	FILE *file_ = (F); \
	int r, e; \
	out_pre(file_, RA()); \
	r = realcall; \
	e = errno; \
	OUT_LOG(file_fd(file_), r >= 0 ? (long)(strlen(S) + (NL)) : -1, strlen(S) + (NL)); \
	out_post(file_); \
	errno = e; \
	return r

#define REC_SHAPE_PUTC(nm, wh, call, C, F, realcall) \
	FILE *file_ = (F); \
	int r, e; \
	out_pre(file_, RA()); \
	r = realcall; \
	e = errno; \
	OUT_LOG(file_fd(file_), r != EOF ? 1 : -1, 1); \
	out_post(file_); \
	errno = e; \
	return r

/* The printf family: the result is the byte count. */
#define VPRINTF_BODY(file, fd, realcall) \
	int r, e; \
	out_pre(file, RA()); \
	r = realcall; \
	e = errno; \
	OUT_LOG(fd, r, r > 0 ? (size_t)r : 0); \
	out_post(file); \
	errno = e; \
	return r

/* The VPRINTF shape's handler: vfprintf, __vfprintf_chk, vdprintf and __vdprintf_chk are
 * generated (F NULL and FD the descriptor for the dprintf ones, NOFD for the others). */
#define REC_SHAPE_VPRINTF(nm, wh, call, F, FD, NOFD, realcall) \
	VPRINTF_BODY(F, (NOFD) ? file_fd(F) : (FD), realcall)


REC_EXPORT int vprintf(const char *fmt, va_list ap)
{
	VPRINTF_BODY(stdout, file_fd(stdout), IP_REAL(vfprintf)(stdout, fmt, ap));
}


REC_EXPORT int __vprintf_chk(int flag, const char *fmt, va_list ap)
{
	VPRINTF_BODY(stdout, file_fd(stdout), IP_REAL(__vfprintf_chk)(stdout, flag, fmt, ap));
}



#define PRINTF_BODY(file, fd, last, realcall) \
	va_list ap; \
	int r, e; \
	out_pre(file, RA()); \
	va_start(ap, last); \
	r = realcall; \
	e = errno; \
	va_end(ap); \
	OUT_LOG(fd, r, r > 0 ? (size_t)r : 0); \
	out_post(file); \
	errno = e; \
	return r

REC_EXPORT int printf(const char *fmt, ...)
{
	PRINTF_BODY(stdout, file_fd(stdout), fmt, IP_REAL(vfprintf)(stdout, fmt, ap));
}

REC_EXPORT int fprintf(FILE *f, const char *fmt, ...)
{
	PRINTF_BODY(f, file_fd(f), fmt, IP_REAL(vfprintf)(f, fmt, ap));
}

REC_EXPORT int __printf_chk(int flag, const char *fmt, ...)
{
	PRINTF_BODY(stdout, file_fd(stdout), fmt, IP_REAL(__vfprintf_chk)(stdout, flag, fmt, ap));
}

REC_EXPORT int __fprintf_chk(FILE *f, int flag, const char *fmt, ...)
{
	PRINTF_BODY(f, file_fd(f), fmt, IP_REAL(__vfprintf_chk)(f, flag, fmt, ap));
}

REC_EXPORT int dprintf(int fd, const char *fmt, ...)
{
	PRINTF_BODY((FILE *)NULL, fd, fmt, IP_REAL(vdprintf)(fd, fmt, ap));
}

REC_EXPORT int __dprintf_chk(int fd, int flag, const char *fmt, ...)
{
	PRINTF_BODY((FILE *)NULL, fd, fmt, IP_REAL(__vdprintf_chk)(fd, flag, fmt, ap));
}

#include "rec_wrappers.h"
