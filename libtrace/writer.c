/*
 * writer.c: appends events to one trace file (schemas/trace-format.md).
 *
 * The current chunk is encoded straight into the tail region, an mmap(MAP_SHARED) window on
 * the file itself: if the process dies at any instant the page cache still holds every
 * record whose bytes were committed, so the file reads back to the last whole event.  When
 * the tail is full it is compressed with zstd into a chunk appended after the previous ones,
 * and the tail starts again.  With two tails (options.drain_due, the recorder's) the writer
 * goes on into the second one at once and the full one is compressed later, by the caller
 * once out of its lock (trace_writer_drain), so that the process's other threads do not
 * wait for zstd.  Ordering of the tail-header stores is what makes a crash at
 * any point recoverable; see "Recovery" in the format document.
 *
 * A storing writer (level TRACE_LEVEL_STORE) does not compress: its chunks are zstd frames
 * of raw blocks, the tail's bytes written as they are, and `encore record` compresses the
 * finished file afterwards, outside the program (compact.c).  The writer holds a shared
 * flock on the file from open to close, which is how compact.c knows that nobody writes the
 * file any more.
 *
 * After trace_writer_open nothing here allocates (every buffer, the zstd context included,
 * is mapped at open), and system calls are made with syscall(2) directly: the writer lives
 * inside the recorder's preload library, whose interposers must never see its I/O.
 *
 * With a disk budget the oldest chunks may be dropped, and with them the events that defined
 * the channels and the byte counts later events continue from.  So the writer then keeps its
 * own table of the live channels (their endpoints, pipe pairs and byte counts, derived from
 * the events it writes exactly as the reader derives them) and starts every chunk with a
 * checkpoint record of it (schemas/trace-format.md, "Disk budget").
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h> /* struct iovec */
#include <unistd.h>

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "format.h"

#define DEFAULT_CHUNK (64u * 1024)
#define MIN_CHUNK 4096u
#define MAX_CHUNK (16u * 1024 * 1024)
#define MAX_FRAMES 64
#define FAST_LEVEL 1     /* zstd levels at or below it: literals stored, longer matches */
#define FAST_MIN_MATCH 7
#if ZSTD_VERSION_NUMBER >= 10501
#define FAST_LITERALS ZSTD_ps_disable
#else
#define FAST_LITERALS ZSTD_lcm_uncompressed /* its name before zstd 1.5.1 */
#endif
#define MAX_NAME 255
/* Live channels a budgeted writer's checkpoint can describe (more go undescribed). */
#define CK_SLOTS 4096u /* a power of two */
/* A checkpoint entry's longest encoding: five varints and an endpoint. */
#define CK_ENTRY_MAX (5 * 10 + TRACE_ENDPOINT_MAX)

/* A live channel of a budgeted writer (see the top of this file). */
struct ck_chan {
	uint32_t id;         /* 0: free slot */
	uint32_t pipe_other; /* the other end of its pipe or socketpair, 0 if none */
	uint8_t inherited;   /* came with trace_writer_inherit */
	uint8_t has_ep;
	uint64_t sent, received;
	struct trace_endpoint ep;
};

/* No thread's index: the next event writes a thread record whatever its thread. */
#define THREAD_AGAIN UINT32_MAX

/* The fields every event touches come first, in the first two cache lines (the struct is
 * mapped page-aligned): a server's own work between two events evicts them, so each line
 * more is a miss more per event. */
struct trace_writer {
	/* line 0: the append */
	uint8_t *data;
	uint8_t *tail;        /* the mapped tail region: header then data */
	uint32_t cap;
	uint32_t used;        /* bytes in data, including a record still being written */
	uint32_t first_record;/* offset of the first record starting in data, or FMT_NO_RECORD */
	uint32_t tail_nevents;/* events starting in data */
	uint64_t count;       /* events written */
	int broken;           /* sticky: a failed write leaves the file as it was, say so */
	int sealed;           /* TAIL_CLOSED is set while the writer is still open */
	int ck_due;           /* a chunk was just flushed: the next record is a checkpoint */
	uint32_t thread;      /* the thread of the last event, as a reader knows it (0 after a
	                         checkpoint): a thread record precedes an event of another;
	                         THREAD_AGAIN while `elided` waits to be written */
	struct ck_chan *ck;   /* budget only: live channels, open addressing by id */
	/* line 1: the encoding's state */
	uint64_t last_time;
	int compact_clock;    /* version 2: clock values as deltas (F_CLOCK) */
	uint32_t clock_seen;  /* bit k: clock slot k had a value in a record of this chunk */
	int64_t clock_prev[FMT_CLOCK_SLOTS]; /* the last value of each clock slot */
	/* the rest: at chunk flushes and opens */
	uint32_t elided;      /* trace_writer_elided: said in the next event's thread record */
	int fd;
	size_t tail_size;
	uint64_t seq;         /* sequence number the tail will get */
	uint64_t tail_first;  /* events started before data's first byte */
	uint64_t end;         /* file offset of the next chunk */
	int level;
	int store;            /* chunks stored, not compressed (see the top of this file) */
	uint64_t max_bytes;
	uint64_t live_off;
	uint64_t chunks_off;
	uint64_t page;
	uint64_t live_bytes;
	uint64_t dropped;
	int stop_errno;       /* why it broke (errno), also in the tail header */
	size_t ck_size;
	uint8_t *ck_buf;      /* budget only: a checkpoint record's payload is encoded here */
	size_t ck_buf_size;
	int ck_writing;       /* a checkpoint is being written (its flush asks for none) */
	ZSTD_CCtx *cctx;
	void *cctx_mem;
	size_t cctx_size;
	uint8_t *res;         /* trace_writer_reserve: file space mapped from res_off, res_len
	                         bytes; chunks are stored there, and no system call is made */
	uint64_t res_off, res_len;
	uint8_t *comp;        /* chunk header + compressed payload */
	size_t comp_cap;
	size_t self_size;
	/* Two tails (options.drain_due; schemas/trace-format.md, "Two tails"): the tail that
	 * filled up waits as `pend`, to be compressed by trace_writer_drain outside the caller's
	 * lock, while events go on into the other one. */
	uint8_t *head;        /* the first tail: its header holds the file-wide fields */
	uint8_t *tails[2];
	int ntails;           /* 1, or 2 when the full tail is drained later */
	int second;           /* the second tail is reserved on disk and its header written */
	int defer;            /* a full tail is left to a drain (2 tails, the second usable) */
	int *drain_due;       /* set to 1 when a full tail waits for trace_writer_drain */
	int drain_state;      /* DRAIN_*: the futex word of trace_writer_drain's waiters */
	int drain_err;        /* why the last drain failed (an errno), taken by drain_wait */
	uint32_t drain_wait_ms; /* drain_wait's bound */
	struct {
		const uint8_t *data;
		uint32_t used, nevents, first_record;
		uint64_t seq, first_event;
	} pend;
};

/* drain_state: no full tail waits; one waits, unclaimed; one is being compressed (by
 * trace_writer_drain, outside the caller's lock); the same with a thread waiting for it; the
 * same, the writer abandoned meanwhile (after a wait gave up on the drain): the drain frees
 * it when it ends. */
enum { DRAIN_NONE, DRAIN_PENDING, DRAIN_BUSY, DRAIN_BUSY_WAITED, DRAIN_DETACHED };
/* How long a wait for a drain in progress lasts, by default: a drain blocked in a slow
 * write is making progress, one whose thread a debugger stopped is not. */
#define DRAIN_WAIT_MS 60000u
static void free_writer(struct trace_writer *w);
_Static_assert(offsetof(struct trace_writer, last_time) == 64, "line 0 is one cache line");

/* --- system calls that bypass any interposer ------------------------------------------ */

static long sys_pwrite(int fd, const void *buf, size_t n, uint64_t off)
{
	size_t done = 0;

	while (done < n) {
		long r = syscall(SYS_pwrite64, fd, (const char *)buf + done, n - done,
		                 (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			errno = ENOSPC; /* a write that moves nothing: no room */
		if (r <= 0)
			return -1;
		done += (size_t)r;
	}
	return (long)done;
}

/* iov[0..n) one after the other from off: pwrite each (no pwritev: the recorder's own
 * system calls stay the few a sandboxed program may still allow, recorder/README.md).  The
 * file grows piece by piece, so a crash in between leaves a chunk cut short, never a hole. */
static long sys_pwrite_pieces(int fd, const struct iovec *iov, int n, uint64_t off)
{
	uint64_t done = 0;

	for (int i = 0; i < n; i++) {
		if (sys_pwrite(fd, iov[i].iov_base, iov[i].iov_len, off + done) < 0)
			return -1;
		done += iov[i].iov_len;
	}
	return (long)done;
}

/* A write past RLIMIT_FSIZE fails with EFBIG and sends SIGXFSZ, whose default action ends
 * the program: the recorder's own writes run with it blocked, and a SIGXFSZ they raised is
 * taken off the thread before it is unblocked. */
struct xfsz_guard {
	uint64_t old;
};

static void xfsz_block(struct xfsz_guard *g)
{
	uint64_t set = 1ull << (SIGXFSZ - 1);

	if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, &g->old, sizeof(set)) != 0)
		g->old = ~0ull; /* unknown: leave the mask alone */
}

static void xfsz_unblock(struct xfsz_guard *g, int raised)
{
	uint64_t set = 1ull << (SIGXFSZ - 1);
	struct timespec zero = { 0, 0 };
	int e = errno;

	if (g->old == ~0ull)
		return;
	if (raised && !(g->old & set))
		syscall(SYS_rt_sigtimedwait, &set, NULL, &zero, sizeof(set));
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &g->old, NULL, sizeof(set));
	errno = e;
}

/* Reserve [0, len) so that stores into the mapped tail never meet a full disk (SIGBUS).
 * Where fallocate is not supported, writing zeros allocates the blocks just as well. */
static int reserve(int fd, uint64_t from, uint64_t len)
{
	static const uint8_t zero[4096];
	uint64_t at;
	long r;

	do
		r = syscall(SYS_fallocate, fd, 0, (off_t)from, (off_t)len);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return 0;
	if (errno != EOPNOTSUPP && errno != ENOSYS)
		return -1;
	for (at = from; at < from + len; at += sizeof(zero)) {
		uint64_t k = from + len - at < sizeof(zero) ? from + len - at : sizeof(zero);

		if (sys_pwrite(fd, zero, (size_t)k, at) < 0)
			return -1;
	}
	return 0;
}

static long sys_pread(int fd, void *buf, size_t n, uint64_t off)
{
	long r;

	do
		r = syscall(SYS_pread64, fd, buf, n, (off_t)off);
	while (r < 0 && errno == EINTR);
	return r;
}

static void sys_close(int fd)
{
	syscall(SYS_close, fd);
}

static void *map_anon(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

/* --- tail header stores ----------------------------------------------------------------
 * The tail header is read by whoever opens the file after we die, so each field is stored
 * whole and in the order the recovery rules need (release stores: the data bytes a
 * `committed` value covers are visible before it). */

static void tail_store32(struct trace_writer *w, int field, uint32_t v)
{
	__atomic_store_n((uint32_t *)(void *)(w->tail + field), v, __ATOMIC_RELEASE);
}

static void tail_store64(struct trace_writer *w, int field, uint64_t v)
{
	__atomic_store_n((uint64_t *)(void *)(w->tail + field), v, __ATOMIC_RELEASE);
}

/* The file-wide fields (closed, the stop, the budget's) are in the first tail's header. */
static void head_store32(struct trace_writer *w, int field, uint32_t v)
{
	__atomic_store_n((uint32_t *)(void *)(w->head + field), v, __ATOMIC_RELEASE);
}

static void head_store64(struct trace_writer *w, int field, uint64_t v)
{
	__atomic_store_n((uint64_t *)(void *)(w->head + field), v, __ATOMIC_RELEASE);
}

static void tail_reset(struct trace_writer *w)
{
	/* committed first: a crash between these stores leaves a tail whose seq is the chunk
	 * just written, which readers ignore. */
	tail_store32(w, TAIL_COMMITTED, 0);
	tail_store64(w, TAIL_EVENTS, w->tail_first);
	tail_store64(w, TAIL_SEQ, w->seq);
	w->used = 0;
	w->first_record = FMT_NO_RECORD;
	w->tail_nevents = 0;
	/* Each chunk's first value of a clock is written whole, so that a reader starting at
	 * any chunk (after dropped ones) has the base of every delta that follows. */
	w->clock_seen = 0;
}

/* --- the budget's channel table -------------------------------------------------------- */

static uint32_t ck_home(uint32_t id)
{
	return (uint32_t)(((uint64_t)id * 0x9e3779b97f4a7c15ull) >> 52) & (CK_SLOTS - 1);
}

/* The slot of channel id, added when add is set and there is room; NULL otherwise. */
static struct ck_chan *ck_find(struct trace_writer *w, uint32_t id, int add)
{
	uint32_t i = ck_home(id);

	for (uint32_t n = 0; n < CK_SLOTS; n++, i = (i + 1) & (CK_SLOTS - 1)) {
		if (w->ck[i].id == id)
			return &w->ck[i];
		if (!w->ck[i].id) {
			if (!add)
				return NULL;
			memset(&w->ck[i], 0, sizeof(w->ck[i]));
			w->ck[i].id = id;
			return &w->ck[i];
		}
	}
	return NULL; /* full: this channel goes undescribed */
}

/* Remove id (linear probing without tombstones: later entries of the run move back). */
static void ck_remove(struct trace_writer *w, uint32_t id)
{
	struct ck_chan *c = ck_find(w, id, 0);
	uint32_t i, j;

	if (!c)
		return;
	i = (uint32_t)(c - w->ck);
	for (j = (i + 1) & (CK_SLOTS - 1); w->ck[j].id; j = (j + 1) & (CK_SLOTS - 1)) {
		uint32_t k = ck_home(w->ck[j].id);

		/* the entry at j may fill the hole at i if its home is not in (i, j] */
		if (i <= j ? (k <= i || k > j) : (k <= i && k > j)) {
			w->ck[i] = w->ck[j];
			i = j;
		}
	}
	w->ck[i].id = 0;
}

/* Later events know more (BIND: local; CONNECT, ACCEPT: both sides): keep every field some
 * event filled, as the analyzer merges them. */
static void ck_merge(struct ck_chan *c, const struct trace_endpoint *ep)
{
	if (ep->type)
		c->ep.type = ep->type;
	if (ep->dir)
		c->ep.dir = ep->dir;
	if (ep->inode)
		c->ep.inode = ep->inode;
	if (ep->peer_inode)
		c->ep.peer_inode = ep->peer_inode;
	if (ep->peer_pid)
		c->ep.peer_pid = ep->peer_pid;
	if (ep->local_len && ep->local_len <= sizeof(c->ep.local)) {
		memcpy(c->ep.local, ep->local, ep->local_len);
		c->ep.local_len = ep->local_len;
	}
	if (ep->peer_len && ep->peer_len <= sizeof(c->ep.peer)) {
		memcpy(c->ep.peer, ep->peer, ep->peer_len);
		c->ep.peer_len = ep->peer_len;
	}
	c->has_ep = 1;
}

/* What an event changes in the table: byte counts as the reader derives offsets ("Derived
 * fields"), endpoints from the defining events, pairs from PIPE, and CLOSE ends a channel. */
static void ck_event(struct trace_writer *w, const struct trace_event *ev)
{
	struct trace_endpoint ep;
	struct ck_chan *c;
	int have_ep = 0;

	if ((ev->kind == TRACE_EV_SEND || ev->kind == TRACE_EV_RECV) && ev->channel) {
		if ((c = ck_find(w, ev->channel, 1)) && ev->result > 0 && !(ev->flags & TRACE_FL_PEEK))
			*(ev->kind == TRACE_EV_SEND ? &c->sent : &c->received) += (uint64_t)ev->result;
		return;
	}
	if (ev->kind == TRACE_EV_CLOSE) {
		if (ev->channel)
			ck_remove(w, ev->channel);
		return;
	}
	if (ev->kind != TRACE_EV_SOCKET && ev->kind != TRACE_EV_BIND &&
	    ev->kind != TRACE_EV_CONNECT && ev->kind != TRACE_EV_ACCEPT && ev->kind != TRACE_EV_PIPE)
		return;
	if (ev->data && ev->data_len) {
		memset(&ep, 0, sizeof(ep));
		have_ep = trace_endpoint_decode(ev->data, ev->data_len, &ep) == 0;
	}
	if (ev->kind == TRACE_EV_PIPE) {
		/* two ends, aux[0] and aux[1]; the data describes aux[0]'s (a socketpair's other
		 * end sees the inodes mirrored, a pipe's ends are read then write) */
		struct ck_chan *a, *b;

		if (ev->naux < 2 || ev->aux[0] <= 0 || ev->aux[1] <= 0 || ev->aux[0] > UINT32_MAX ||
		    ev->aux[1] > UINT32_MAX)
			return;
		a = ck_find(w, (uint32_t)ev->aux[0], 1);
		b = ck_find(w, (uint32_t)ev->aux[1], 1);
		if (!a || !b)
			return;
		a->pipe_other = b->id;
		b->pipe_other = a->id;
		if (have_ep) {
			struct trace_endpoint ea = ep, eb = ep;

			if (ep.type == TRACE_CHAN_PIPE) {
				ea.dir = 1;
				eb.dir = 2;
			} else {
				eb.inode = ep.peer_inode;
				eb.peer_inode = ep.inode;
			}
			ck_merge(a, &ea);
			ck_merge(b, &eb);
		}
		return;
	}
	if (ev->channel && (c = ck_find(w, ev->channel, 1)) && have_ep)
		ck_merge(c, &ep);
}

/* --- disk budget ----------------------------------------------------------------------- */

static void drop_oldest(struct trace_writer *w, uint64_t keep_from)
{
	while (w->max_bytes && w->live_bytes > w->max_bytes && w->live_off < keep_from) {
		uint8_t h[FMT_CHUNK_HEADER];
		uint64_t size;

		if (sys_pread(w->fd, h, sizeof(h), w->live_off) != (long)sizeof(h))
			return;
		size = FMT_CHUNK_HEADER + (uint64_t)get_u32(h + CHK_COMP_LEN);
		/* Punching keeps offsets stable: readers start at TAIL_LIVE_OFF.  The hole starts at
		 * the page boundary below the chunk (everything there is dropped already) so that
		 * the blocks chunks share are freed too. */
		{
			uint64_t from = w->live_off & ~(uint64_t)(w->page - 1);

			if (from < w->chunks_off)
				from = w->chunks_off;
			syscall(SYS_fallocate, w->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			        (off_t)from, (off_t)(w->live_off + size - from));
		}
		w->dropped += get_u32(h + CHK_NEVENTS);
		w->live_off += size;
		w->live_bytes -= size;
		head_store64(w, TAIL_DROPPED, w->dropped);
		head_store64(w, TAIL_LIVE_OFF, w->live_off);
	}
}

/* --- stopping on an I/O error ------------------------------------------------------------
 * A full disk, a quota or an I/O error ends the trace, never the program: the file keeps every
 * committed record (the tail is reserved, so storing into it cannot fault) and the tail header
 * says why and after how many events it stopped (schemas/trace-format.md, "Truncation"). */

static int stop(struct trace_writer *w, int e)
{
	if (w->broken)
		return w->broken;
	w->stop_errno = e > 0 ? e : EIO;
	w->broken = TRACE_EIO;
	/* A chunk written in part is cut off (shrinking needs no space), so that readers find the
	 * previous chunks and then the tail.  (Reserved space holds no partial chunk.) */
	if (!w->res)
		syscall(SYS_ftruncate, w->fd, (off_t)w->end);
	head_store64(w, TAIL_STOP_EVENTS, w->count);
	head_store32(w, TAIL_STOP_ERRNO, (uint32_t)w->stop_errno);
	return w->broken;
}

/* --- chunks ---------------------------------------------------------------------------- */

/* The end marker at file offset `at` in the reserved space (a chunk header's place): readers
 * stop there cleanly.  Stored before the chunk that replaces the previous marker, so that a
 * reader finds either the marker or a whole chunk then a marker. */
static void reserve_mark(struct trace_writer *w, uint64_t at)
{
	uint8_t *m = w->res + (at - w->res_off);

	memset(m, 0, FMT_CHUNK_HEADER);
	put_u32(m + CHK_MAGIC, FMT_RESERVE_MAGIC);
}

/* zstd's frame format (RFC 8878, 3.1.1): a frame whose blocks are raw, which any zstd
 * decoder reads back; stored chunks are these, so that a stored file is an ordinary one. */
#define ZSTD_FRAME_MAGIC 0xfd2fb528u
#define ZSTD_RAW_FHD 0xa0u          /* Single_Segment, a 4-byte Frame_Content_Size, no checksum */
#define ZSTD_FRAME_HEAD 9u          /* magic, descriptor, content size */
#define ZSTD_BLOCK_HEAD 3u
#define ZSTD_BLOCK_MAX (128u * 1024) /* Block_Maximum_Size */
#define STORE_IOV (2 * (MAX_CHUNK / ZSTD_BLOCK_MAX) + 2)

/* The raw bytes of one chunk, and where they go in the stream: the active tail's (a flush) or
 * a full tail's that waits (a drain). */
struct chunk_src {
	const uint8_t *data;
	uint32_t used, nevents, first_record;
	uint64_t seq, first_event;
};

/* Store the raw bytes as a chunk: the header, the frame's head and each block's head are
 * built in w->comp and the data bytes are written from the mapped tail itself: one CRC pass
 * and two writes per 128 KiB, where compressing costs the program its caches
 * (bench/README.md, "Third round"). */
static int store_chunk(struct trace_writer *w, const struct chunk_src *c,
                       struct iovec iov[STORE_IOV], size_t *payload)
{
	uint8_t *h = w->comp, *b = w->comp + FMT_CHUNK_HEADER;
	uint32_t crc = 0, at = 0;
	int n = 0;

	put_u32(b, ZSTD_FRAME_MAGIC);
	b[4] = ZSTD_RAW_FHD;
	put_u32(b + 5, c->used);
	b += ZSTD_FRAME_HEAD;
	*payload = ZSTD_FRAME_HEAD;
	iov[n++] = (struct iovec){ h, 0 }; /* the headers up to the first block's data */
	while (at < c->used) {
		uint32_t k = c->used - at < ZSTD_BLOCK_MAX ? c->used - at : ZSTD_BLOCK_MAX;
		uint32_t bh = k << 3 | (at + k == c->used); /* Block_Type 0: raw */

		b[0] = (uint8_t)bh;
		b[1] = (uint8_t)(bh >> 8);
		b[2] = (uint8_t)(bh >> 16);
		if (n == 1) {
			iov[0].iov_len = (size_t)(b + ZSTD_BLOCK_HEAD - h);
			crc = trace_crc32c(crc, h + FMT_CHUNK_HEADER,
			                   iov[0].iov_len - FMT_CHUNK_HEADER);
		} else {
			iov[n++] = (struct iovec){ b, ZSTD_BLOCK_HEAD };
			crc = trace_crc32c(crc, b, ZSTD_BLOCK_HEAD);
		}
		iov[n++] = (struct iovec){ (void *)(uintptr_t)(c->data + at), k };
		crc = trace_crc32c(crc, c->data + at, k);
		*payload += ZSTD_BLOCK_HEAD + k;
		b += ZSTD_BLOCK_HEAD;
		at += k;
	}
	put_u32(h + CHK_PAYLOAD_CRC, crc);
	return n;
}

/* Compress (or store) c's bytes as a chunk at w->end.  0 and *len the chunk's bytes, or why
 * it could not be written (an errno, TRACE_STOP_RESERVE): the writer's state is not touched
 * but for its compression buffers, so that a drain may run it outside the caller's lock. */
static int put_chunk(struct trace_writer *w, const struct chunk_src *c, uint64_t *len)
{
	struct iovec iov[STORE_IOV];
	size_t clen;
	uint8_t *h = w->comp;
	uint64_t at = w->end;
	int niov = 0;

	if (w->store) {
		niov = store_chunk(w, c, iov, &clen);
	} else {
		clen = ZSTD_compress2(w->cctx, w->comp + FMT_CHUNK_HEADER,
		                      w->comp_cap - FMT_CHUNK_HEADER, c->data, c->used);
		if (ZSTD_isError(clen))
			return EIO;
	}
	put_u32(h + CHK_MAGIC, FMT_CHUNK_MAGIC);
	put_u32(h + CHK_RAW_LEN, c->used);
	put_u32(h + CHK_COMP_LEN, (uint32_t)clen);
	put_u32(h + CHK_NEVENTS, c->nevents);
	put_u64(h + CHK_SEQ, c->seq);
	put_u64(h + CHK_FIRST_EVENT, c->first_event);
	put_u32(h + CHK_FIRST_RECORD, c->first_record);
	if (!w->store)
		put_u32(h + CHK_PAYLOAD_CRC, trace_crc32c(0, h + FMT_CHUNK_HEADER, clen));
	put_u32(h + CHK_RESERVED, 0);
	put_u32(h + CHK_HEADER_CRC, trace_crc32c(0, h, CHK_HEADER_CRC));
	*len = FMT_CHUNK_HEADER + clen;
	if (w->res) {
		/* the chunk, then the end marker after it, stored into the reserved space */
		uint64_t n = FMT_CHUNK_HEADER + clen;

		if (at + n + FMT_CHUNK_HEADER > w->res_off + w->res_len)
			return TRACE_STOP_RESERVE; /* the tail still holds the data */
		uint8_t *to = w->res + (at - w->res_off);

		reserve_mark(w, at + n);
		if (w->store) {
			/* the pieces store_chunk described, the first one's magic left for last */
			for (int i = 0, skip = 4; i < niov; i++, skip = 0) {
				memcpy(to + skip, (const uint8_t *)iov[i].iov_base + skip,
				       iov[i].iov_len - (size_t)skip);
				to += iov[i].iov_len;
			}
		} else {
			memcpy(to + 4, h + 4, n - 4);
		}
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		memcpy(w->res + (at - w->res_off), h, 4); /* the magic last */
	} else {
		struct xfsz_guard g;
		long r;

		xfsz_block(&g);
		/* stored: the pieces store_chunk described, the chunk's header in the first */
		r = w->store ? sys_pwrite_pieces(w->fd, iov, niov, at) :
		               sys_pwrite(w->fd, h, FMT_CHUNK_HEADER + clen, at);
		xfsz_unblock(&g, r < 0 && errno == EFBIG);
		if (r < 0)
			return errno > 0 ? errno : EIO; /* the tail still holds the data */
	}
	return 0;
}

/* A full tail waiting for its drain (a switch left it): compress it, then free it.  The
 * caller claimed it (DRAIN_BUSY); the exchange that frees it is the last access to w (the
 * writer may be closed right after by the thread waiting for it), unless the writer was
 * abandoned meanwhile (DRAIN_DETACHED): then it is this drain's to free. */
static void drain_run(struct trace_writer *w)
{
	struct chunk_src c = { w->pend.data, w->pend.used, w->pend.nevents, w->pend.first_record,
	                       w->pend.seq, w->pend.first_event };
	uint64_t n;
	int rc = put_chunk(w, &c, &n), old;

	if (rc == 0) {
		w->end += n;
		w->live_bytes += n;
	} else {
		w->drain_err = rc;
	}
	old = __atomic_exchange_n(&w->drain_state, DRAIN_NONE, __ATOMIC_ACQ_REL);
	if (old == DRAIN_BUSY_WAITED)
		syscall(SYS_futex, &w->drain_state, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
	else if (old == DRAIN_DETACHED)
		free_writer(w);
}

/* Under the caller's lock, before anything that writes a chunk or changes where chunks go:
 * no full tail waits any more (one being drained by another thread is waited for, one not
 * claimed is drained here), and a drain that failed stops the writer.  A drain runs no code
 * that waits for the caller, so the wait ends; it is bounded all the same (drain_wait_ms,
 * 60 s by default: a drain's thread a debugger stopped), a stop (ETIMEDOUT). */
static int drain_wait(struct trace_writer *w)
{
	int s, e = errno;

	if (w->broken)
		return w->broken; /* (a wait that gave up before: no second one) */
	for (uint32_t i = 0;
	     (s = __atomic_load_n(&w->drain_state, __ATOMIC_ACQUIRE)) >= DRAIN_BUSY; i++) {
		struct timespec ts = { 0, 1000 * 1000 };

		if (i >= 64 + w->drain_wait_ms) {
			errno = e;
			return stop(w, ETIMEDOUT);
		}
		if (i < 64) {
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#endif
			continue;
		}
		if (s == DRAIN_BUSY &&
		    !__atomic_compare_exchange_n(&w->drain_state, &s, DRAIN_BUSY_WAITED, 0,
		                                 __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
			continue;
		syscall(SYS_futex, &w->drain_state, FUTEX_WAIT_PRIVATE, DRAIN_BUSY_WAITED, &ts,
		        NULL, 0);
	}
	if (s == DRAIN_PENDING) {
		__atomic_store_n(&w->drain_state, DRAIN_BUSY, __ATOMIC_RELAXED);
		drain_run(w);
	}
	errno = e;
	if (w->drain_err && !w->broken) {
		int err = w->drain_err;

		w->drain_err = 0;
		return stop(w, err);
	}
	return w->broken;
}

/* A drain that drain_wait gave up on (its thread stopped: a debugger holding it) still uses
 * the writer: trace_writer_abandon leaves the writer to it (DRAIN_DETACHED), and the
 * descriptor is not moved under it. */
static int drain_stuck(const struct trace_writer *w)
{
	return w->ntails > 1 && __atomic_load_n(&w->drain_state, __ATOMIC_ACQUIRE) >= DRAIN_BUSY;
}

/* The active tail as a chunk, now (in the caller's call). */
static int flush_chunk(struct trace_writer *w)
{
	uint64_t at, n;
	int rc;

	if (w->ntails > 1 && (rc = drain_wait(w)) != 0)
		return rc;
	if (w->broken)
		return w->broken;
	if (w->used == 0)
		return 0;
	{
		struct chunk_src c = { w->data, w->used, w->tail_nevents, w->first_record, w->seq,
		                       w->tail_first };

		at = w->end;
		if ((rc = put_chunk(w, &c, &n)) != 0)
			return stop(w, rc);
	}
	w->end += n;
	w->live_bytes += n;
	w->seq++;
	w->tail_first += w->tail_nevents;
	tail_reset(w);
	if (!w->res)
		drop_oldest(w, at);
	if (w->ck && !w->ck_writing)
		w->ck_due = 1;
	return 0;
}

/* The second tail, at its first use: reserved on disk (a store into a hole of a full disk
 * would fault), then its header, its seq unused until the switch resets it.  0 when it
 * cannot be: the writer then flushes in the caller's call, with one tail. */
static int prepare_second(struct trace_writer *w)
{
	uint64_t off = w->chunks_off - w->tail_size;
	struct xfsz_guard g;
	int r;

	if (w->res)
		return 0; /* under a seccomp filter: no system call (trace_writer_reserve) */
	xfsz_block(&g);
	r = reserve(w->fd, off, w->tail_size);
	xfsz_unblock(&g, r != 0 && errno == EFBIG);
	if (r != 0)
		return 0;
	/* seq first: a crash before the magic leaves no tail that says seq 0 */
	__atomic_store_n((uint64_t *)(void *)(w->tails[1] + TAIL_SEQ), FMT_TAIL_UNUSED,
	                 __ATOMIC_RELEASE);
	__atomic_store_n((uint32_t *)(void *)(w->tails[1] + TAIL_CAPACITY), w->cap,
	                 __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	memcpy(w->tails[1] + TAIL_MAGIC, FMT_TAIL_MAGIC, 8);
	w->second = 1;
	return 1;
}

/* Two tails: the active one is full.  It is left whole to a drain (its `committed` covers all
 * its bytes, a record running on into the next tail included, as a chunk's would) and events
 * go on into the other, which a previous drain freed; the caller drains it once out of its
 * lock (options.drain_due). */
static int switch_tail(struct trace_writer *w)
{
	uint8_t *full = w->tail;
	int rc;

	if ((rc = drain_wait(w)) != 0)
		return rc;
	if (!w->second && !prepare_second(w)) {
		int e = errno;

		w->defer = 0; /* one tail from now on */
		rc = flush_chunk(w);
		errno = e;
		return rc;
	}
	tail_store32(w, TAIL_COMMITTED, w->used);
	w->pend.data = w->data;
	w->pend.used = w->used;
	w->pend.nevents = w->tail_nevents;
	w->pend.first_record = w->first_record;
	w->pend.seq = w->seq;
	w->pend.first_event = w->tail_first;
	w->tail = full == w->tails[0] ? w->tails[1] : w->tails[0];
	w->data = w->tail + FMT_TAIL_HEADER;
	w->seq++;
	w->tail_first += w->tail_nevents;
	tail_reset(w);
	__atomic_store_n(&w->drain_state, DRAIN_PENDING, __ATOMIC_RELEASE);
	*w->drain_due = 1;
	return 0;
}

/* Copy bytes into the tail, flushing full chunks: a record may span chunks. */
static int append(struct trace_writer *w, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	while (n) {
		size_t room = w->cap - w->used, k = n < room ? n : room;
		int rc;

		memcpy(w->data + w->used, p, k);
		w->used += (uint32_t)k;
		p += k;
		n -= k;
		if (w->used == w->cap &&
		    (rc = w->defer ? switch_tail(w) : flush_chunk(w)) != 0)
			return rc;
	}
	return 0;
}

static void record_start(struct trace_writer *w, int is_event)
{
	if (w->sealed) {
		/* the exec failed: the image goes on, so the file is open again */
		head_store32(w, TAIL_CLOSED, 0);
		w->sealed = 0;
	}
	if (w->first_record == FMT_NO_RECORD)
		w->first_record = w->used;
	if (is_event)
		w->tail_nevents++;
}

static void record_commit(struct trace_writer *w)
{
	tail_store32(w, TAIL_COMMITTED, w->used);
}

static int write_checkpoint(struct trace_writer *w);
static int thread_record(struct trace_writer *w, uint32_t thread);

/* --- public API ------------------------------------------------------------------------ */

int trace_writer_open(int dirfd, const char *path, const struct trace_process *proc,
                      const struct trace_writer_options *opt, int min_fd,
                      struct trace_writer **out, struct trace_diag *diag)
{
	struct trace_writer *w = NULL;
	uint8_t *hdr = NULL;
	size_t meta_len, hdr_len = 0, page = (size_t)sysconf(_SC_PAGESIZE);
	uint32_t chunk = opt && opt->chunk_size ? opt->chunk_size : DEFAULT_CHUNK;
	uint64_t tail_off;
	ZSTD_compressionParameters cp;
	struct xfsz_guard xg;
	int fd = -1, rc = TRACE_EIO, bad;

	*out = NULL;
	if (!path || !proc || !proc->name[0] || chunk < MIN_CHUNK || chunk > MAX_CHUNK) {
		fmt_diag(diag, TRACE_EINVAL, path, 0, "invalid writer arguments");
		return TRACE_EINVAL;
	}
	fd = (int)syscall(SYS_openat, dirfd, path,
	                  O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		int e = errno;

		fmt_diag(diag, TRACE_EIO, path, 0, "cannot create trace file: %s", strerror(e));
		if (diag)
			diag->sys_errno = e;
		return TRACE_EIO;
	}
	if (min_fd > 0 && fd < min_fd) {
		int hi = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, min_fd);

		if (hi >= 0) {
			sys_close(fd);
			fd = hi;
		}
	}

	w = map_anon(round_up(sizeof(*w), page));
	if (!w)
		goto nomem;
	w->self_size = round_up(sizeof(*w), page);
	w->fd = fd;
	w->level = opt && opt->level && opt->level != TRACE_LEVEL_STORE ? opt->level : 3;
	w->compact_clock = !(opt && opt->plain_clocks);
	w->max_bytes = opt ? opt->max_bytes : 0;
	w->first_record = FMT_NO_RECORD;
	{
		/* A shared lock from open to close: it keeps compact.c off the file while it is
		 * written, and tells a replay that the process is still being recorded (trace.h).
		 * Chunks are stored only under it: a file system without flock gets compressed
		 * ones. */
		long r;

		do
			r = syscall(SYS_flock, fd, LOCK_SH | LOCK_NB);
		while (r < 0 && errno == EINTR);
		if (opt && opt->level == TRACE_LEVEL_STORE && !w->max_bytes)
			w->store = r == 0;
	}

	/* Header and metadata, then the tail region at a page boundary, then chunks. */
	meta_len = fmt_meta_encode(proc, NULL);
	hdr_len = round_up(FMT_HEADER_SIZE + meta_len, page);
	hdr = map_anon(hdr_len);
	if (!hdr)
		goto nomem;
	tail_off = hdr_len;
	w->tail_size = round_up(FMT_TAIL_HEADER + (size_t)chunk, page);
	w->cap = (uint32_t)(w->tail_size - FMT_TAIL_HEADER);
	/* Two tails when the caller drains full ones out of its lock; a budget's checkpoints
	 * and dropped chunks are made at each flush, in its call: one tail. */
	w->ntails = opt && opt->drain_due && !w->max_bytes ? 2 : 1;
	w->drain_due = w->ntails > 1 ? opt->drain_due : NULL;
	w->drain_wait_ms = opt && opt->drain_wait_ms ? opt->drain_wait_ms : DRAIN_WAIT_MS;
	w->end = w->live_off = w->chunks_off = tail_off + w->tail_size * (size_t)w->ntails;
	w->page = page;
	memcpy(hdr + HDR_MAGIC, FMT_MAGIC, 8);
	{
		/* the oldest version that reads it: version 3 for two tails, version 1 for
		 * plain clocks (older readers then read it) */
		uint16_t v = w->ntails > 1 ? FMT_VERSION : w->compact_clock ? FMT_V2 : FMT_V1;

		put_u16(hdr + HDR_VERSION, v);
		put_u16(hdr + HDR_MIN_VERSION, v);
	}
	put_u32(hdr + HDR_FLAGS, w->ntails > 1 ? FMT_FLAG_TWO_TAILS : 0);
	put_u32(hdr + HDR_META_LEN, (uint32_t)meta_len);
	put_u32(hdr + HDR_TAIL_SIZE, (uint32_t)w->tail_size);
	put_u64(hdr + HDR_TAIL_OFF, tail_off);
	put_u64(hdr + HDR_CHUNKS_OFF, w->end);
	fmt_meta_encode(proc, hdr + FMT_HEADER_SIZE);
	put_u32(hdr + HDR_CRC, trace_crc32c(0, hdr, FMT_HEADER_SIZE + meta_len));
	/* The header and the tail reserved on disk before the tail is mapped. */
	xfsz_block(&xg);
	/* The second tail stays a hole until the first switch needs it (prepare_second): most
	 * processes of a session never fill a tail. */
	bad = reserve(fd, 0, tail_off + w->tail_size) != 0 ||
	      (w->ntails > 1 && syscall(SYS_ftruncate, fd, (off_t)w->end) != 0) ||
	      sys_pwrite(fd, hdr, hdr_len, 0) < 0;
	xfsz_unblock(&xg, bad && errno == EFBIG);
	if (bad) {
		int e = errno;

		fmt_diag(diag, TRACE_EIO, path, 0, "cannot write trace header: %s", strerror(e));
		if (diag)
			diag->sys_errno = e;
		goto fail;
	}
	munmap(hdr, hdr_len);
	hdr = NULL;

	w->tail = mmap(NULL, w->tail_size * (size_t)w->ntails, PROT_READ | PROT_WRITE, MAP_SHARED,
	               fd, (off_t)tail_off);
	if (w->tail == MAP_FAILED) {
		int e = errno;

		w->tail = NULL;
		fmt_diag(diag, TRACE_EIO, path, tail_off, "cannot map trace tail: %s", strerror(e));
		if (diag)
			diag->sys_errno = e;
		goto fail;
	}
	w->head = w->tails[0] = w->tail;
	w->tails[1] = w->tail + (w->ntails > 1 ? w->tail_size : 0);
	w->data = w->tail + FMT_TAIL_HEADER;
	w->defer = w->ntails > 1;
	memcpy(w->tail + TAIL_MAGIC, FMT_TAIL_MAGIC, 8);
	tail_store32(w, TAIL_CAPACITY, w->cap);
	head_store64(w, TAIL_LIVE_OFF, w->live_off);
	tail_reset(w);

	/* zstd with a fixed workspace: compression never allocates. */
	cp = ZSTD_getCParams(w->level, w->cap, 0);
	w->cctx_size = round_up(ZSTD_estimateCCtxSize_usingCParams(cp), page);
	w->cctx_mem = map_anon(w->cctx_size);
	w->comp_cap = round_up(FMT_CHUNK_HEADER + ZSTD_compressBound(w->cap), page);
	w->comp = map_anon(w->comp_cap);
	if (!w->cctx_mem || !w->comp)
		goto nomem;
	w->cctx = ZSTD_initStaticCCtx(w->cctx_mem, w->cctx_size);
	if (!w->cctx)
		goto nomem;
	/* The level is sticky, for ZSTD_compress2.  At the fast levels (the recorder's inline
	 * compression) literals are stored, not Huffman-coded, and matches are 7 bytes or more:
	 * on the chunks of recorded servers, 14% (redis) to 26% (nginx) fewer instructions in
	 * zstd for chunks 3-4% larger (bench/README.md, "Sixth round"); the frames are
	 * standard, any zstd decoder reads them. */
	if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, w->level)) ||
	    (w->level <= FAST_LEVEL &&
	     (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_literalCompressionMode,
	                                           FAST_LITERALS)) ||
	      ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_minMatch, FAST_MIN_MATCH)))))
		goto nomem;
	if (w->max_bytes) {
		/* mapped, not touched: only the slots in use cost memory */
		w->ck_size = round_up(CK_SLOTS * sizeof(*w->ck), page);
		w->ck = map_anon(w->ck_size);
		w->ck_buf_size = round_up(CK_SLOTS * CK_ENTRY_MAX, page);
		w->ck_buf = map_anon(w->ck_buf_size);
		if (!w->ck || !w->ck_buf)
			goto nomem;
	}
	*out = w;
	return 0;

nomem:
	rc = TRACE_ENOMEM;
	fmt_diag(diag, rc, path, 0, "out of memory opening the trace writer");
fail:
	/* No half-made trace is left behind: the file is ours (O_EXCL) and goes. */
	syscall(SYS_unlinkat, dirfd, path, 0);
	if (hdr)
		munmap(hdr, hdr_len);
	if (w)
		trace_writer_abandon(w);
	else
		sys_close(fd);
	return rc;
}

/* The longest event head encode_event writes: kind, mask and every field at its widest. */
#define EVENT_HEAD_MAX (1 + 2 + 5 + 10 + 5 + 5 + 5 + 10 + 10 + 5 + 5 + 4 + 1 + \
                        TRACE_AUX_MAX * 10 + 5 + 10)

/* The clock value of ev as a delta from the previous value of its clock (F_CLOCK), or 0 when
 * its value goes as data: not a clock with a compact form, or its chunk's first of that clock
 * (which sets the base, as it does for the reader).  *delta is the zigzag. */
__attribute__((always_inline)) static inline int clock_delta(struct trace_writer *w,
                                                              const struct trace_event *ev,
                                                              uint64_t *delta)
{
	int slot = fmt_clock_slot(ev->kind, ev->call, ev->naux, ev->naux ? ev->aux[0] : 0);
	int64_t v;

	if (slot < 0 || ev->data_len != FMT_CLOCK_LEN || fmt_clock_value(slot, ev->data, &v))
		return 0;
	*delta = zigzag(v - w->clock_prev[slot]);
	w->clock_prev[slot] = v;
	if (!(w->clock_seen & (1u << slot))) {
		w->clock_seen |= 1u << slot;
		return 0;
	}
	return 1;
}

/* A varint, up to four bytes (most fields of most events, clock and stamp deltas) inline, the
 * rest out of line. */
__attribute__((noinline)) static uint8_t *put_varint_long(uint8_t *p, uint64_t v)
{
	return p + put_varint(p, v);
}

static inline uint8_t *put_vu(uint8_t *p, uint64_t v)
{
	if (__builtin_expect(v < 0x80, 1)) {
		*p = (uint8_t)v;
		return p + 1;
	}
	if (v < 0x4000) { /* call sites past the 127th, results and lengths below 16 KiB */
		p[0] = (uint8_t)(v | 0x80);
		p[1] = (uint8_t)(v >> 7);
		return p + 2;
	}
	if (v < 0x200000) { /* clock deltas of a few microseconds in nanoseconds */
		p[0] = (uint8_t)(v | 0x80);
		p[1] = (uint8_t)((v >> 7) | 0x80);
		p[2] = (uint8_t)(v >> 14);
		return p + 3;
	}
	if (v < 0x10000000) { /* display stamps' deltas, up to 134 ms */
		p[0] = (uint8_t)(v | 0x80);
		p[1] = (uint8_t)((v >> 7) | 0x80);
		p[2] = (uint8_t)((v >> 14) | 0x80);
		p[3] = (uint8_t)(v >> 21);
		return p + 4;
	}
	return put_varint_long(p, v);
}

/* An event's head (everything but its data bytes) into dst; returns its length.  *with_data:
 * whether the data bytes follow (a compact clock value has none).
 *
 * One pass over the fields, each tested once: the mask's length is known before its bits
 * (two bytes exactly when a field from F_ERR up is present, and data or a clock value is
 * there exactly when data_len is not 0), so the fields are written in place after it while
 * the mask is gathered, and the mask is filled in last.  The bytes are those of the field
 * by field encoding in schemas/trace-format.md, "Events". */
__attribute__((always_inline)) static inline size_t encode_event(struct trace_writer *w,
                                                                 uint8_t *dst,
                                                                 const struct trace_event *ev,
                                                                 int *with_data)
{
	uint64_t deflen = ev->result > 0 ? (uint64_t)ev->result : 0;
	int big = (ev->data_len | (uint32_t)ev->err | ev->flags | ev->naux |
	           (uint32_t)(ev->has_hash != 0)) != 0;
	uint8_t *p = dst + 2 + big;
	uint32_t mask = 0, i;

	*with_data = 0;
	if (ev->channel) {
		mask |= F_CHANNEL;
		p = put_vu(p, ev->channel);
	}
	if (ev->result) {
		mask |= F_RESULT;
		p = put_vu(p, zigzag(ev->result));
	}
	if (ev->site) {
		mask |= F_SITE;
		p = put_vu(p, ev->site);
	}
	if (ev->fd != -1) {
		mask |= F_FD;
		p = put_vu(p, zigzag(ev->fd));
	}
	if (ev->call) {
		mask |= F_CALL;
		p = put_vu(p, ev->call);
	}
	if (ev->time_ns) {
		mask |= F_TIME;
		p = put_vu(p, zigzag((int64_t)(ev->time_ns - w->last_time)));
		w->last_time = ev->time_ns;
	}
	if (ev->len != deflen) {
		mask |= F_LEN;
		p = put_vu(p, ev->len);
	}
	if (big) {
		uint64_t delta;

		if (ev->err) {
			mask |= F_ERR;
			p = put_vu(p, (uint32_t)ev->err);
		}
		if (ev->flags) {
			mask |= F_FLAGS;
			p = put_vu(p, ev->flags);
		}
		if (ev->has_hash) {
			mask |= F_HASH;
			put_u32(p, ev->hash);
			p += 4;
		}
		if (ev->naux) {
			mask |= F_AUX;
			p = put_vu(p, ev->naux);
			for (i = 0; i < ev->naux; i++)
				p = put_vu(p, zigzag(ev->aux[i]));
		}
		if (ev->data_len) {
			if (ev->kind == TRACE_EV_CLOCK && w->compact_clock &&
			    clock_delta(w, ev, &delta)) {
				mask |= F_CLOCK;
				p = put_vu(p, delta);
			} else {
				mask |= F_DATA;
				p = put_vu(p, ev->data_len);
				*with_data = 1;
			}
		}
		dst[1] = (uint8_t)(mask | 0x80);
		dst[2] = (uint8_t)(mask >> 7); /* F_KNOWN: below 1 << 14 */
	} else {
		dst[1] = (uint8_t)mask;
	}
	dst[0] = (uint8_t)ev->kind;
	return (size_t)(p - dst);
}

/* A thread record (thread_record's bytes) written in place by a fast path whose event is of
 * another thread than the last: only when nothing is due and it and the longest event head
 * both fit before the chunk's end (no flush between them, so the bytes are the general path's).
 * One commit then covers both.  0: the caller takes the general path.  With threads, an event
 * of another thread than the last is common (each of memcached's workers in turn), and the
 * general path cost about 250 instructions more for it. */
static inline int thread_inline(struct trace_writer *w, uint32_t thread)
{
	uint8_t *d;
	size_t k;

	if (w->cap - w->used <= EVENT_HEAD_MAX + 12)
		return 0;
	if (w->first_record == FMT_NO_RECORD)
		w->first_record = w->used;
	d = w->data + w->used;
	k = put_varint(d + 2, thread);
	if (w->elided) {
		k += put_varint(d + 2 + k, w->elided);
		w->elided = 0;
	}
	d[0] = REC_THREAD;
	d[1] = (uint8_t)k; /* the payload's length: one or two varints */
	w->used += (uint32_t)(2 + k);
	w->thread = thread;
	return 1;
}

/* trace_writer_event's general path: a checkpoint or thread record due, the head near the
 * chunk's end, a budget's table to keep, an invalid event. */
__attribute__((noinline)) static int event_slow(struct trace_writer *w,
                                                const struct trace_event *ev)
{
	uint8_t buf[EVENT_HEAD_MAX];
	size_t n;
	int rc, with_data;

	if (w->broken)
		return w->broken;
	if (ev->kind == TRACE_EV_NONE || ev->kind >= REC_STACK || ev->naux > TRACE_AUX_MAX)
		return TRACE_EINVAL;
	if (w->ck_due && (rc = write_checkpoint(w)) != 0)
		return rc;
	/* A thread record when the thread changes (schemas/trace-format.md, "Threads"); if it
	 * filled a chunk, the checkpoint due now resets the reader's thread: say it again. */
	for (int tries = 0; ev->thread != w->thread && tries < 2; tries++) {
		if ((rc = thread_record(w, ev->thread)) != 0)
			return rc;
		if (w->ck_due && (rc = write_checkpoint(w)) != 0)
			return rc;
	}
	record_start(w, 1);
	if (w->cap - w->used > EVENT_HEAD_MAX) {
		/* the head fits before the chunk's end, so it is encoded in place (the commit below
		 * is what makes it count, as for a copied one) */
		w->used += (uint32_t)encode_event(w, w->data + w->used, ev, &with_data);
	} else {
		n = encode_event(w, buf, ev, &with_data);
		if ((rc = append(w, buf, n)) != 0)
			return rc;
	}
	if (with_data && (rc = append(w, ev->data, ev->data_len)) != 0)
		return rc;
	w->count++;
	record_commit(w);
	if (w->ck)
		ck_event(w, ev);
	return 0;
}

int trace_writer_event(struct trace_writer *w, const struct trace_event *ev)
{
	int with_data;

	/* The common case, tested at once: nothing due, the same thread as the last event, no
	 * budget, a valid event whose head fits before the chunk's end. */
	if (__builtin_expect((w->broken | w->ck_due | w->sealed) != 0 || w->ck != NULL ||
	                     ev->kind - 1u >= REC_STACK - 1u || ev->naux > TRACE_AUX_MAX ||
	                     w->cap - w->used <= EVENT_HEAD_MAX ||
	                     (ev->thread != w->thread && !thread_inline(w, ev->thread)), 0))
		return event_slow(w, ev);
	if (w->first_record == FMT_NO_RECORD)
		w->first_record = w->used;
	w->tail_nevents++;
	w->used += (uint32_t)encode_event(w, w->data + w->used, ev, &with_data);
	if (with_data) {
		if (ev->data_len < w->cap - w->used) {
			/* fits before the chunk's end (which would flush): no call */
			memcpy(w->data + w->used, ev->data, ev->data_len);
			w->used += ev->data_len;
		} else {
			int rc = append(w, ev->data, ev->data_len);

			if (rc != 0)
				return rc;
		}
	}
	w->count++;
	record_commit(w);
	return 0;
}

/* A send or receive (trace_writer_data): encode_event's bytes for an event with a channel and
 * a descriptor, no flags, aux values or clock value, so that only the fields such an event
 * may or may not have are tested (a read or write of a server: about 40 instructions less
 * than trace_writer_event, bench/README.md "Session 9").  The rest goes the general way. */
int trace_writer_data(struct trace_writer *w, const struct trace_event *ev)
{
	uint64_t deflen = ev->result > 0 ? (uint64_t)ev->result : 0;
	uint32_t mask = F_CHANNEL | F_FD, dl = ev->data_len;
	int big = (dl | (uint32_t)ev->err | (uint32_t)(ev->has_hash != 0)) != 0;
	uint8_t *d, *p;

	if (__builtin_expect((w->broken | w->ck_due | w->sealed) != 0 || w->ck != NULL ||
	                     (ev->naux | ev->flags) != 0 || ev->channel == 0 || ev->fd == -1 ||
	                     ev->kind - 1u >= REC_STACK - 1u || ev->kind == TRACE_EV_CLOCK ||
	                     w->cap - w->used <= EVENT_HEAD_MAX ||
	                     (ev->thread != w->thread && !thread_inline(w, ev->thread)), 0))
		return trace_writer_event(w, ev);
	if (w->first_record == FMT_NO_RECORD)
		w->first_record = w->used;
	w->tail_nevents++;
	/* the fields in mask order (encode_event), the mask filled in last */
	d = w->data + w->used;
	p = put_vu(d + 2 + big, ev->channel);
	if (ev->result) {
		mask |= F_RESULT;
		p = put_vu(p, zigzag(ev->result));
	}
	if (ev->site) {
		mask |= F_SITE;
		p = put_vu(p, ev->site);
	}
	p = put_vu(p, zigzag(ev->fd));
	if (ev->call) {
		mask |= F_CALL;
		p = put_vu(p, ev->call);
	}
	if (ev->time_ns) {
		mask |= F_TIME;
		p = put_vu(p, zigzag((int64_t)(ev->time_ns - w->last_time)));
		w->last_time = ev->time_ns;
	}
	if (ev->len != deflen) {
		mask |= F_LEN;
		p = put_vu(p, ev->len);
	}
	if (big) {
		if (ev->err) {
			mask |= F_ERR;
			p = put_vu(p, (uint32_t)ev->err);
		}
		if (ev->has_hash) {
			mask |= F_HASH;
			put_u32(p, ev->hash);
			p += 4;
		}
		if (dl) {
			mask |= F_DATA;
			p = put_vu(p, dl);
		}
		d[1] = (uint8_t)(mask | 0x80);
		d[2] = (uint8_t)(mask >> 7);
	} else {
		d[1] = (uint8_t)mask;
	}
	d[0] = (uint8_t)ev->kind;
	w->used += (uint32_t)(p - d);
	if (dl) {
		if (dl < w->cap - w->used) {
			/* fits before the chunk's end (which would flush): no call */
			memcpy(w->data + w->used, ev->data, dl);
			w->used += dl;
		} else {
			int rc = append(w, ev->data, dl);

			if (rc != 0)
				return rc;
		}
	}
	w->count++;
	record_commit(w);
	return 0;
}

/* A successful clock read, the most frequent event of servers that time each command (redis:
 * two gettimeofday per command): the bytes encode_event writes for it, a compact clock value
 * (schemas/trace-format.md, "Clock values"), written without going through every field.
 * Anything else (a first value of its clock in this chunk, a value with no compact form, a
 * thread record or checkpoint due, the chunk's end near, a budget) takes trace_writer_event's
 * path, out of line. */
__attribute__((noinline)) static int clock_slow(struct trace_writer *w, uint32_t thread,
                                                 uint32_t site, uint32_t call, uint32_t naux,
                                                 int64_t aux0, uint64_t time_ns,
                                                 const void *value)
{
	struct trace_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = TRACE_EV_CLOCK;
	ev.call = call;
	ev.fd = -1;
	ev.site = site;
	ev.time_ns = time_ns;
	ev.naux = naux;
	ev.aux[0] = aux0;
	ev.data = value;
	ev.data_len = FMT_CLOCK_LEN;
	ev.thread = thread;
	return trace_writer_event(w, &ev);
}

int trace_writer_clock(struct trace_writer *w, uint32_t thread, uint32_t site, uint32_t call,
                       uint32_t naux, int64_t aux0, uint64_t time_ns, const void *value)
{
	int slot = fmt_clock_slot(TRACE_EV_CLOCK, call, naux, aux0);
	uint32_t mask = F_CALL | F_CLOCK;
	uint8_t *d, *p;
	int64_t v;

	if (__builtin_expect((w->broken | w->ck_due | w->sealed) != 0 || w->ck != NULL ||
	                     slot < 0 || !w->compact_clock || !(w->clock_seen & (1u << slot)) ||
	                     w->cap - w->used <= EVENT_HEAD_MAX || fmt_clock_value(slot, value, &v) ||
	                     (thread != w->thread && !thread_inline(w, thread)), 0))
		return clock_slow(w, thread, site, call, naux, aux0, time_ns, value);
	if (w->first_record == FMT_NO_RECORD)
		w->first_record = w->used;
	w->tail_nevents++;
	/* kind, a two-byte mask (a clock field is there), then the fields in mask order */
	d = w->data + w->used;
	p = d + 3;
	if (site) {
		mask |= F_SITE;
		p = put_vu(p, site);
	}
	p = put_vu(p, call);
	if (time_ns) {
		mask |= F_TIME;
		p = put_vu(p, zigzag((int64_t)(time_ns - w->last_time)));
		w->last_time = time_ns;
	}
	if (naux) {
		mask |= F_AUX;
		*p++ = 1;
		p = put_vu(p, zigzag(aux0));
	}
	p = put_vu(p, zigzag(v - w->clock_prev[slot]));
	w->clock_prev[slot] = v;
	d[0] = TRACE_EV_CLOCK;
	d[1] = (uint8_t)(mask | 0x80);
	d[2] = (uint8_t)(mask >> 7);
	w->used += (uint32_t)(p - d);
	w->count++;
	record_commit(w);
	return 0;
}

/* The recorder's synchronisation events, its most frequent in a program with threads: the
 * bytes encode_event would write for an event with only kind, call, result, err and aux set,
 * written without going through every field.  Anything else (a thread record due, a
 * checkpoint, the chunk's end near, a budget) takes trace_writer_event's path. */
/* trace_writer_sync's general path, out of line: the fast path keeps a small frame */
__attribute__((noinline)) static int sync_slow(struct trace_writer *w, uint32_t thread,
                                                uint32_t kind, uint32_t call, int64_t result,
                                                int32_t err, uint32_t naux, int64_t aux0,
                                                int64_t aux1)
{
	struct trace_event ev;
	int e = errno, rc;

	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.call = call;
	ev.fd = -1;
	ev.result = result;
	ev.err = err;
	ev.naux = naux;
	ev.aux[0] = aux0;
	ev.aux[1] = aux1;
	ev.thread = thread;
	rc = trace_writer_event(w, &ev);
	errno = e;
	return rc;
}

int trace_writer_sync(struct trace_writer *w, uint32_t thread, uint32_t kind, uint32_t call,
                      int64_t result, int32_t err, uint32_t naux, int64_t aux0, int64_t aux1)
{
	int big = ((uint32_t)err | naux) != 0;
	uint32_t mask = 0;
	uint8_t *d, *p;

	/* Tested at once, as trace_writer_event's common case (a thread record where the thread
	 * changes in place, thread_inline, or by the general path) */
	if (__builtin_expect((w->broken | w->ck_due | w->sealed) != 0 || w->ck != NULL ||
	                     naux > 2 || kind - 1u >= REC_STACK - 1u ||
	                     w->cap - w->used <= EVENT_HEAD_MAX ||
	                     (thread != w->thread && !thread_inline(w, thread)), 0))
		return sync_slow(w, thread, kind, call, result, err, naux, aux0, aux1);
	if (w->first_record == FMT_NO_RECORD)
		w->first_record = w->used;
	w->tail_nevents++;
	/* As encode_event: the fields in mask order after a mask of one byte, or of two when a
	 * field from F_ERR up is there, the mask filled in last. */
	d = w->data + w->used;
	p = d + 2 + big;
	if (result) {
		mask |= F_RESULT;
		p = put_vu(p, zigzag(result));
	}
	if (call) {
		mask |= F_CALL;
		p = put_vu(p, call);
	}
	if (result > 0) {
		mask |= F_LEN; /* (len 0, not the result's default) */
		*p++ = 0;
	}
	if (big) {
		if (err) {
			mask |= F_ERR;
			p = put_vu(p, (uint32_t)err);
		}
		if (naux) {
			mask |= F_AUX;
			*p++ = (uint8_t)naux;
			p = put_vu(p, zigzag(aux0));
			if (naux > 1)
				p = put_vu(p, zigzag(aux1));
		}
		d[1] = (uint8_t)(mask | 0x80);
		d[2] = (uint8_t)(mask >> 7);
	} else {
		d[1] = (uint8_t)mask;
	}
	d[0] = (uint8_t)kind;
	w->used += (uint32_t)(p - d);
	w->count++;
	record_commit(w);
	return 0;
}

/* trace_writer_sync with result 0, err 0 and naux 1: kind, a two-byte mask (F_AUX is past
 * the first byte), call, then one aux value; a leaf with its arguments in registers. */
int trace_writer_sync1(struct trace_writer *w, uint32_t thread, uint32_t kind, uint32_t call,
                       int64_t aux0)
{
	uint32_t mask = F_AUX;
	uint8_t *d, *p;

	if (__builtin_expect((w->broken | w->ck_due | w->sealed) != 0 || w->ck != NULL ||
	                     kind - 1u >= REC_STACK - 1u || w->cap - w->used <= EVENT_HEAD_MAX ||
	                     (thread != w->thread && !thread_inline(w, thread)), 0))
		return sync_slow(w, thread, kind, call, 0, 0, 1, aux0, 0);
	if (w->first_record == FMT_NO_RECORD)
		w->first_record = w->used;
	w->tail_nevents++;
	d = w->data + w->used;
	p = d + 3;
	if (call) {
		mask |= F_CALL;
		p = put_vu(p, call);
	}
	*p++ = 1;
	p = put_vu(p, zigzag(aux0));
	d[0] = (uint8_t)kind;
	d[1] = (uint8_t)(mask | 0x80);
	d[2] = (uint8_t)(mask >> 7);
	w->used += (uint32_t)(p - d);
	w->count++;
	record_commit(w);
	return 0;
}

/* A meta record: tag, varint length, payload given as pieces. */
struct piece {
	const void *p;
	size_t n;
};

static int meta_record(struct trace_writer *w, uint8_t tag, const struct piece *pieces,
                       size_t npieces)
{
	uint8_t head[11];
	size_t total = 0, i, hn;
	int rc;

	if (w->broken)
		return w->broken;
	if (w->ck_due && (rc = write_checkpoint(w)) != 0)
		return rc;
	for (i = 0; i < npieces; i++)
		total += pieces[i].n;
	head[0] = tag;
	hn = 1 + put_varint(head + 1, total);
	record_start(w, 0);
	if ((rc = append(w, head, hn)) != 0)
		return rc;
	for (i = 0; i < npieces; i++)
		if ((rc = append(w, pieces[i].p, pieces[i].n)) != 0)
			return rc;
	record_commit(w);
	return 0;
}

static int thread_record(struct trace_writer *w, uint32_t thread)
{
	uint8_t buf[20];
	struct piece p = { buf, put_varint(buf, thread) };
	int rc;

	if (w->elided)
		p.n += put_varint(buf + p.n, w->elided);
	rc = meta_record(w, REC_THREAD, &p, 1);
	if (rc == 0) {
		w->thread = thread;
		w->elided = 0;
	}
	return rc;
}

int trace_writer_elided(struct trace_writer *w, uint32_t n)
{
	if (w->broken)
		return w->broken;
	if (n) {
		w->elided += n;
		w->thread = THREAD_AGAIN; /* every path then writes a thread record first */
	}
	return 0;
}

int trace_writer_stack(struct trace_writer *w, uint32_t site, const struct trace_frame *frames,
                       uint32_t nframes)
{
	/* Numbers are encoded into nums[], strings referenced in place: no allocation.  Each
	 * frame is four pieces: (pc, offset, name length), name, (object length), object. */
	uint8_t nums[20 + MAX_FRAMES * 32];
	struct piece pieces[1 + MAX_FRAMES * 4];
	size_t nn = 0, np = 0, mark = 0;
	uint32_t i;

	if (nframes > MAX_FRAMES)
		nframes = MAX_FRAMES;
	nn += put_varint(nums + nn, site);
	nn += put_varint(nums + nn, nframes);
	for (i = 0; i < nframes; i++) {
		const char *fn = frames[i].function ? frames[i].function : "";
		const char *obj = frames[i].object ? frames[i].object : "";
		size_t fl = strnlen(fn, MAX_NAME), ol = strnlen(obj, MAX_NAME);

		nn += put_varint(nums + nn, frames[i].pc);
		nn += put_varint(nums + nn, frames[i].offset);
		nn += put_varint(nums + nn, fl);
		pieces[np++] = (struct piece){ nums + mark, nn - mark };
		pieces[np++] = (struct piece){ fn, fl };
		mark = nn;
		nn += put_varint(nums + nn, ol);
		pieces[np++] = (struct piece){ nums + mark, nn - mark };
		pieces[np++] = (struct piece){ obj, ol };
		mark = nn;
	}
	if (mark < nn)
		pieces[np++] = (struct piece){ nums + mark, nn - mark };
	return meta_record(w, REC_STACK, pieces, np);
}

int trace_writer_inherit(struct trace_writer *w, uint32_t channel, uint64_t sent,
                         uint64_t received)
{
	uint8_t buf[32];
	size_t n = 0;
	struct piece p;

	n += put_varint(buf + n, channel);
	n += put_varint(buf + n, sent);
	n += put_varint(buf + n, received);
	p = (struct piece){ buf, n };
	if (w->ck && channel) {
		struct ck_chan *c = ck_find(w, channel, 1);

		if (c) {
			c->inherited = 1;
			c->sent = sent;
			c->received = received;
		}
	}
	return meta_record(w, REC_INHERIT, &p, 1);
}

/* A file input (schemas/trace-format.md, "File inputs"): the numbers, then the build-id,
 * the path and the resolved path, each length-prefixed.  No allocation. */
int trace_writer_file(struct trace_writer *w, const struct trace_file_input *f)
{
	uint8_t nums[128], l1[10], l2[10];
	const char *path = f->path ? f->path : "", *res = f->resolved ? f->resolved : "";
	size_t nn = 0, pl = strnlen(path, TRACE_FILE_PATH_MAX), rl = strnlen(res, TRACE_FILE_PATH_MAX);
	uint32_t bl = f->build_id_len <= sizeof(f->build_id) ? f->build_id_len : 0;
	struct piece pieces[5];

	nn += put_varint(nums + nn, f->kind);
	nn += put_varint(nums + nn, f->mode);
	nn += put_varint(nums + nn, f->dev);
	nn += put_varint(nums + nn, f->ino);
	nn += put_varint(nums + nn, f->size);
	nn += put_varint(nums + nn, zigzag(f->mtime_ns));
	nn += put_varint(nums + nn, f->hashed);
	nn += put_varint(nums + nn, f->crc);
	nn += put_varint(nums + nn, bl);
	pieces[0] = (struct piece){ nums, nn };
	pieces[1] = (struct piece){ f->build_id, bl };
	pieces[2] = (struct piece){ l1, put_varint(l1, pl) };
	pieces[3] = (struct piece){ path, pl };
	pieces[4] = (struct piece){ l2, put_varint(l2, rl) };
	if (rl == 0)
		return meta_record(w, REC_FILE, pieces, 5);
	{
		struct piece all[6] = { pieces[0], pieces[1], pieces[2], pieces[3], pieces[4],
		                        { res, rl } };

		return meta_record(w, REC_FILE, all, 6);
	}
}

/* A path record (schemas/trace-format.md, "Paths created"): op, time, the path
 * length-prefixed, and a rename's old name likewise when there is one.  No allocation. */
int trace_writer_path(struct trace_writer *w, uint32_t op, int64_t time_ns, const char *path,
                      const char *from)
{
	uint8_t nums[40], fl[10];
	size_t nn = 0, pl = path ? strnlen(path, TRACE_FILE_PATH_MAX + 1) : 0;
	size_t l2 = from ? strnlen(from, TRACE_FILE_PATH_MAX + 1) : 0;
	struct piece pieces[4];

	if (pl == 0 || pl > TRACE_FILE_PATH_MAX || l2 > TRACE_FILE_PATH_MAX)
		return TRACE_EINVAL;
	nn += put_varint(nums + nn, op);
	nn += put_varint(nums + nn, zigzag(time_ns));
	nn += put_varint(nums + nn, pl);
	pieces[0] = (struct piece){ nums, nn };
	pieces[1] = (struct piece){ path, pl };
	pieces[2] = (struct piece){ fl, put_varint(fl, l2) };
	pieces[3] = (struct piece){ from, l2 };
	return meta_record(w, REC_PATH, pieces, l2 ? 4 : 2);
}

/* The address layout record (schemas/trace-format.md, "Address layout"): six varints. */
int trace_writer_layout(struct trace_writer *w, const struct trace_layout *l)
{
	uint8_t nums[64];
	size_t nn = 0;
	struct piece p;

	nn += put_varint(nums + nn, l->persona);
	nn += put_varint(nums + nn, l->argc);
	nn += put_varint(nums + nn, l->envc);
	nn += put_varint(nums + nn, l->strings);
	nn += put_varint(nums + nn, l->argv0);
	nn += put_varint(nums + nn, l->stack);
	p = (struct piece){ nums, nn };
	return meta_record(w, REC_LAYOUT, &p, 1);
}

/* The environment record: a varint count, then per string a varint length and its bytes.
 * At most TRACE_ENV_MAX_STRINGS strings and TRACE_ENV_MAX_BYTES in all (the pieces live on
 * the stack: the recorder's constructor calls this, with nothing allocated). */
int trace_writer_env(struct trace_writer *w, char *const *envp, uint32_t envc)
{
	struct piece p[1 + 2 * TRACE_ENV_MAX_STRINGS];
	uint8_t head[10], lens[TRACE_ENV_MAX_STRINGS][10];
	size_t total = 0, np = 0;
	uint32_t k;

	if (envc > TRACE_ENV_MAX_STRINGS)
		return TRACE_EINVAL;
	for (k = 0; k < envc; k++)
		if ((total += strlen(envp[k]) + 1) > TRACE_ENV_MAX_BYTES)
			return TRACE_EINVAL;
	p[np++] = (struct piece){ head, put_varint(head, envc) };
	for (k = 0; k < envc; k++) {
		size_t l = strlen(envp[k]);

		p[np++] = (struct piece){ lens[k], put_varint(lens[k], l) };
		p[np++] = (struct piece){ envp[k], l };
	}
	return meta_record(w, REC_ENV, p, np);
}

/* The checkpoint record (schemas/trace-format.md, "Disk budget"): every live channel with
 * its byte counts, pair and endpoint, so that a reader starting at this chunk after the
 * chunks before it were dropped can still place and match the events that follow. */
static int write_checkpoint(struct trace_writer *w)
{
	uint8_t *b = w->ck_buf, head[10], ep[TRACE_ENDPOINT_MAX];
	size_t n = 0, cnt = 0;
	struct piece p[2];
	int rc;

	w->ck_due = 0;
	for (uint32_t i = 0; i < CK_SLOTS; i++) {
		const struct ck_chan *c = &w->ck[i];
		int k = -1;

		if (!c->id)
			continue;
		if (c->has_ep)
			k = trace_endpoint_encode(&c->ep, ep, sizeof(ep));
		n += put_varint(b + n, c->id);
		n += put_varint(b + n, (c->inherited ? CK_INHERITED : 0u) |
		                       (c->pipe_other ? CK_PAIR : 0u) | (k > 0 ? CK_ENDPOINT : 0u));
		n += put_varint(b + n, c->sent);
		n += put_varint(b + n, c->received);
		if (c->pipe_other)
			n += put_varint(b + n, c->pipe_other);
		if (k > 0) {
			n += put_varint(b + n, (uint64_t)k);
			memcpy(b + n, ep, (size_t)k);
			n += (size_t)k;
		}
		cnt++;
	}
	p[0] = (struct piece){ head, put_varint(head, cnt) };
	p[1] = (struct piece){ b, n };
	w->ck_writing = 1;
	rc = meta_record(w, REC_CHECKPOINT, p, 2);
	w->ck_writing = 0;
	/* a reader starting at this checkpoint knows no thread before it */
	w->thread = w->elided ? THREAD_AGAIN : 0;
	return rc;
}

uint64_t trace_writer_count(const struct trace_writer *w)
{
	return w->count;
}

int trace_writer_fd(const struct trace_writer *w)
{
	return w->fd;
}

int trace_writer_flush(struct trace_writer *w)
{
	return flush_chunk(w);
}

int trace_writer_claim(struct trace_writer *w)
{
	if (__atomic_load_n(&w->drain_state, __ATOMIC_ACQUIRE) != DRAIN_PENDING)
		return 0;
	__atomic_store_n(&w->drain_state, DRAIN_BUSY, __ATOMIC_RELAXED);
	return 1;
}

void trace_writer_drain(struct trace_writer *w)
{
	int e = errno;

	drain_run(w);
	errno = e;
}

int trace_writer_seal(struct trace_writer *w)
{
	int rc = flush_chunk(w);

	if (rc == 0) {
		head_store32(w, TAIL_CLOSED, 1);
		w->sealed = 1;
	}
	return rc;
}

int trace_writer_close(struct trace_writer *w)
{
	int rc;

	if (!w)
		return 0;
	rc = flush_chunk(w);
	if (rc == 0)
		head_store32(w, TAIL_CLOSED, 1);
	trace_writer_abandon(w);
	return rc;
}

int trace_writer_stop(struct trace_writer *w, int reason)
{
	int rc;

	if (!w)
		return 0;
	if (w->broken) { /* stopped before: that reason stands */
		rc = w->broken;
		trace_writer_abandon(w);
		return rc;
	}
	/* The events of a chunk that cannot be written stay in the tail, and the caller's
	 * reason is the one to tell (the program's own limits, RLIMIT_FSIZE 0 in a sandbox,
	 * may be what failed the write). */
	rc = flush_chunk(w); /* (a full tail waiting for its drain first) */
	w->broken = 0;
	stop(w, reason);
	trace_writer_abandon(w);
	return rc;
}

int trace_writer_move_fd(struct trace_writer *w, int fd)
{
	int old;

	if (w->ntails > 1) {
		drain_wait(w); /* a drain writes through the descriptor */
		if (drain_stuck(w))
			return -1; /* still: it keeps the number it writes through */
	}
	old = w->fd;

	w->fd = fd;
	return old;
}

int trace_writer_reserve(struct trace_writer *w, uint64_t bytes)
{
	uint64_t from, len;
	void *p;

	if (w->ntails > 1)
		drain_wait(w); /* chunks are to go into the reserved space from the end */
	if (w->broken)
		return w->broken;
	if (w->res)
		return 0;
	if (w->defer && !w->second && !prepare_second(w))
		w->defer = 0; /* no system call may be made past this point */
	/* the mapping starts on the page holding the end of the last chunk */
	from = w->end & ~(w->page - 1);
	len = round_up((size_t)(w->end - from + bytes), (size_t)w->page);
	{
		/* RLIMIT_FSIZE (sshd's sandbox sets it to 0 first) fails it with SIGXFSZ */
		struct xfsz_guard g;
		int r;

		xfsz_block(&g);
		r = reserve(w->fd, w->end, from + len - w->end);
		xfsz_unblock(&g, r != 0 && errno == EFBIG);
		if (r != 0)
			return TRACE_EIO;
	}
	p = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED, w->fd, (off_t)from);
	if (p == MAP_FAILED)
		return TRACE_EIO;
	w->res = p;
	w->res_off = from;
	w->res_len = len;
	reserve_mark(w, w->end);
	w->max_bytes = 0; /* dropping chunks would need system calls */
	return 0;
}

void trace_writer_forked(struct trace_writer *w)
{
	if (w)
		w->drain_state = DRAIN_NONE; /* the drain ran in the parent's thread, not here */
}

void trace_writer_abandon(struct trace_writer *w)
{
	if (!w)
		return;
	if (w->ntails > 1) {
		/* a drain still running (a wait gave up on it) frees the writer when it ends */
		int s = __atomic_load_n(&w->drain_state, __ATOMIC_ACQUIRE);

		while ((s == DRAIN_BUSY || s == DRAIN_BUSY_WAITED) &&
		       !__atomic_compare_exchange_n(&w->drain_state, &s, DRAIN_DETACHED, 0,
		                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			;
		if (s == DRAIN_BUSY || s == DRAIN_BUSY_WAITED)
			return;
	}
	free_writer(w);
}

static void free_writer(struct trace_writer *w)
{
	if (w->res)
		return; /* no system call: the mappings and the descriptor stay (see above) */
	if (w->head)
		munmap(w->head, w->tail_size * (size_t)w->ntails);
	if (w->cctx_mem)
		munmap(w->cctx_mem, w->cctx_size);
	if (w->comp)
		munmap(w->comp, w->comp_cap);
	if (w->ck)
		munmap(w->ck, w->ck_size);
	if (w->ck_buf)
		munmap(w->ck_buf, w->ck_buf_size);
	if (w->fd >= 0)
		sys_close(w->fd);
	munmap(w, w->self_size);
}
