/*
 * reader.c: streams the events of one trace file back (schemas/trace-format.md).
 *
 * The raw record stream is the concatenation of the chunks' decompressed payloads and then,
 * when the writer did not close the file, the committed bytes of the tail region.  Records
 * may span chunks, so decoding works on a buffer that keeps the unread end of one chunk when
 * the next is appended.  Any damage (torn or corrupt chunk, bad varint) ends the stream at
 * the last whole event before it and is reported with its file offset, never used.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "format.h"

#define MAX_META (1u << 20)
#define MAX_RAW (64u << 20)
#define MAX_CHANNELS (1u << 24)
#define MAX_SITES (1u << 24)
#define MAX_CHECKPOINT (1u << 16) /* channels a checkpoint may describe (writers: 4096) */

struct chan_off {
	uint64_t sent;
	uint64_t received;
};

struct stack_entry {
	struct trace_stack st;
	void *mem; /* frames and their strings, one block */
};

struct trace_reader {
	char path[256];
	int fd;
	uint64_t file_size;
	struct trace_process proc;
	uint64_t tail_off;
	uint32_t tail_size;
	int ntails;               /* 2: FMT_FLAG_TWO_TAILS */
	uint64_t chunks_off;
	uint64_t live_off;

	/* where the next chunk is, and what it must say */
	uint64_t next_off;
	uint64_t expect_seq;
	int seen_chunk;
	int chunks_done;
	int tail_done;
	int eof;
	uint64_t torn_off;    /* offset of a torn last chunk the tail may replace, or 0 */
	int skip_to_record;   /* after dropped chunks: resynchronise at first_record */

	/* the raw stream */
	uint8_t *buf;
	size_t cap, pos, len;
	uint64_t cur_chunk_off;   /* file offset of the chunk the bytes from chunk_start come from */
	size_t chunk_start;
	uint64_t prev_chunk_off;
	int in_tail;

	/* decoder state */
	uint64_t index;
	uint64_t last_time;
	uint32_t thread;          /* the last thread record's (0 before any, and at checkpoints) */
	uint32_t elided;          /* its count of acquisitions without events, for the next event */
	int64_t clock_prev[FMT_CLOCK_SLOTS]; /* the last value of each clock (format.h) */
	uint32_t clock_known;     /* bit k: clock_prev[k] was set by this file's records */
	uint8_t clock_buf[FMT_CLOCK_LEN]; /* a compact clock value, decoded */
	struct chan_off *chans;
	size_t nchans;
	struct stack_entry *stacks;
	size_t nstacks;
	struct fmt_syms *syms;    /* symbol tables of the objects frames name (offline names) */
	struct trace_inherit *inherits;
	size_t ninherits, cap_inherits;
	struct trace_chan_def *defs; /* the first checkpoint after dropped chunks */
	size_t ndefs;
	struct trace_file_input *files; /* file input records (trace_reader_files) */
	struct trace_layout layout;     /* the layout record (trace_reader_layout) */
	int has_layout;
	char **env;                     /* the environment record (trace_reader_env) */
	uint32_t envc;
	int has_env;
	size_t nfiles, cap_files;
	struct trace_path_change *paths; /* path records (trace_reader_paths) */
	size_t npaths, cap_paths;
	int started_late;         /* chunks were dropped: reading starts at live_off */
	int defs_taken;           /* that checkpoint was read */

	/* results */
	int damage;
	struct trace_diag damage_diag;
	uint64_t dropped;
	int closed;
	int stop_errno;           /* the writer stopped on this errno (full disk...), 0 if not */
	uint64_t stop_events;
	uint64_t tail_events;
	ZSTD_DCtx *dctx;
};

static long xpread(int fd, void *buf, size_t n, uint64_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = pread(fd, (char *)buf + done, n - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (long)done;
}

static void set_damage(struct trace_reader *r, int code, uint64_t off, const char *msg)
{
	if (r->damage)
		return;
	r->damage = code;
	fmt_diag(&r->damage_diag, code, r->path, off, "%s", msg);
}

static uint64_t record_offset(const struct trace_reader *r)
{
	if (r->in_tail && r->pos >= r->chunk_start)
		return r->tail_off;
	return r->pos >= r->chunk_start ? r->cur_chunk_off : r->prev_chunk_off;
}

int trace_reader_open(const char *path, struct trace_reader **out, struct trace_diag *diag)
{
	struct trace_reader *r;
	uint8_t h[FMT_HEADER_SIZE], *meta = NULL, t[FMT_TAIL_HEADER];
	struct stat st;
	uint32_t meta_len;
	int rc;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r) {
		fmt_diag(diag, TRACE_ENOMEM, path, 0, "out of memory");
		return TRACE_ENOMEM;
	}
	snprintf(r->path, sizeof(r->path), "%s", path);
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		int e = errno;

		rc = e == ENOENT ? TRACE_ENOENT : TRACE_EIO;
		fmt_diag(diag, rc, path, 0, "cannot open: %s", strerror(e));
		if (diag)
			diag->sys_errno = e;
		goto fail;
	}
	if (fstat(r->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = TRACE_EIO;
		fmt_diag(diag, rc, path, 0, "not a regular file");
		goto fail;
	}
	r->file_size = (uint64_t)st.st_size;
	if (xpread(r->fd, h, sizeof(h), 0) != (long)sizeof(h)) {
		rc = r->file_size >= 8 && memcmp(h, FMT_MAGIC, 8) == 0 ? TRACE_ETRUNCATED : TRACE_EMAGIC;
		fmt_diag(diag, rc, path, 0, rc == TRACE_EMAGIC ? "not an encore trace file (too short)"
		                                                : "file ends inside the header");
		goto fail;
	}
	if (memcmp(h + HDR_MAGIC, FMT_MAGIC, 8) != 0) {
		rc = TRACE_EMAGIC;
		fmt_diag(diag, rc, path, 0, "not an encore trace file (bad magic)");
		goto fail;
	}
	if (get_u16(h + HDR_MIN_VERSION) > FMT_VERSION) {
		rc = TRACE_EVERSION;
		fmt_diag(diag, rc, path, HDR_VERSION,
		         "trace format version %u needs a newer encore (this one reads up to %u)",
		         get_u16(h + HDR_VERSION), FMT_VERSION);
		goto fail;
	}
	meta_len = get_u32(h + HDR_META_LEN);
	if (meta_len > MAX_META) {
		rc = TRACE_ECORRUPT;
		fmt_diag(diag, rc, path, HDR_META_LEN, "corrupt header: metadata length %u", meta_len);
		goto fail;
	}
	meta = malloc(meta_len ? meta_len : 1);
	if (!meta) {
		rc = TRACE_ENOMEM;
		fmt_diag(diag, rc, path, 0, "out of memory");
		goto fail;
	}
	if (xpread(r->fd, meta, meta_len, FMT_HEADER_SIZE) != (long)meta_len) {
		rc = TRACE_ETRUNCATED;
		fmt_diag(diag, rc, path, FMT_HEADER_SIZE, "file ends inside the process metadata");
		goto fail;
	}
	{
		uint32_t want = get_u32(h + HDR_CRC), got;

		put_u32(h + HDR_CRC, 0);
		got = trace_crc32c(trace_crc32c(0, h, sizeof(h)), meta, meta_len);
		if (got != want) {
			rc = TRACE_ECORRUPT;
			fmt_diag(diag, rc, path, HDR_CRC, "header checksum mismatch (stored %08x, computed %08x)",
			         want, got);
			goto fail;
		}
	}
	rc = fmt_meta_decode(meta, meta_len, &r->proc);
	if (rc) {
		fmt_diag(diag, rc, path, FMT_HEADER_SIZE, "corrupt process metadata");
		goto fail;
	}
	r->tail_off = get_u64(h + HDR_TAIL_OFF);
	r->tail_size = get_u32(h + HDR_TAIL_SIZE);
	r->chunks_off = get_u64(h + HDR_CHUNKS_OFF);
	r->ntails = get_u32(h + HDR_FLAGS) & FMT_FLAG_TWO_TAILS ? 2 : 1;
	if (r->tail_off < FMT_HEADER_SIZE + meta_len || r->tail_size < FMT_TAIL_HEADER ||
	    r->tail_size > MAX_RAW ||
	    r->chunks_off != r->tail_off + (uint64_t)r->tail_size * (uint64_t)r->ntails) {
		rc = TRACE_ECORRUPT;
		fmt_diag(diag, rc, path, HDR_TAIL_SIZE, "corrupt header: impossible layout");
		goto fail;
	}
	if (r->file_size < r->chunks_off) {
		/* The writer sizes the file past its tail region before anything else. */
		rc = TRACE_ETRUNCATED;
		fmt_diag(diag, rc, path, r->file_size, "file ends before its first chunk (expected at least %llu bytes)",
		         (unsigned long long)r->chunks_off);
		goto fail;
	}
	r->live_off = r->chunks_off;
	if (xpread(r->fd, t, sizeof(t), r->tail_off) == (long)sizeof(t) &&
	    memcmp(t + TAIL_MAGIC, FMT_TAIL_MAGIC, 8) == 0) {
		uint64_t live = get_u64(t + TAIL_LIVE_OFF);

		if (live > r->chunks_off && live <= r->file_size)
			r->live_off = live;
		r->dropped = get_u64(t + TAIL_DROPPED);
		/* zero in files of writers that never stopped, older ones included */
		r->stop_errno = (int)get_u32(t + TAIL_STOP_ERRNO);
		r->stop_events = get_u64(t + TAIL_STOP_EVENTS);
	}
	r->next_off = r->live_off;
	r->index = r->proc.first_index;
	r->skip_to_record = r->live_off > r->chunks_off;
	r->started_late = r->skip_to_record;
	r->dctx = ZSTD_createDCtx();
	if (!r->dctx) {
		rc = TRACE_ENOMEM;
		fmt_diag(diag, rc, path, 0, "out of memory");
		goto fail;
	}
	free(meta);
	*out = r;
	return 0;
fail:
	free(meta);
	trace_reader_close(r);
	return rc;
}

const struct trace_process *trace_reader_process(const struct trace_reader *r)
{
	return &r->proc;
}

/* Make room for n more bytes at the end of the stream buffer, dropping what was read. */
static int reserve(struct trace_reader *r, size_t n)
{
	if (r->pos > 0) {
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->len -= r->pos;
		r->chunk_start = r->chunk_start > r->pos ? r->chunk_start - r->pos : 0;
		r->pos = 0;
	}
	if (r->len + n > r->cap) {
		size_t ncap = r->cap ? r->cap : 65536;
		uint8_t *nb;

		while (ncap < r->len + n)
			ncap *= 2;
		nb = realloc(r->buf, ncap);
		if (!nb)
			return TRACE_ENOMEM;
		r->buf = nb;
		r->cap = ncap;
	}
	return 0;
}

/* Read the next chunk into the stream.  Returns 1 if bytes were added, 0 if the chunks are
 * over (cleanly or at damage), negative on I/O error. */
static int load_chunk(struct trace_reader *r)
{
	uint8_t h[FMT_CHUNK_HEADER], *comp;
	uint64_t off = r->next_off, seq;
	uint32_t raw_len, comp_len, first_record;
	size_t got;
	int rc;

	if (off == r->file_size)
		return 0;
	if (r->file_size - off < FMT_CHUNK_HEADER) {
		r->torn_off = off;
		set_damage(r, TRACE_ETRUNCATED, off, "file ends inside a chunk header");
		return 0;
	}
	if (xpread(r->fd, h, sizeof(h), off) != (long)sizeof(h))
		return TRACE_EIO;
	if (get_u32(h + CHK_MAGIC) == FMT_RESERVE_MAGIC)
		return 0; /* the chunks end here: the rest is unused reserved space */
	if (get_u32(h + CHK_MAGIC) != FMT_CHUNK_MAGIC ||
	    get_u32(h + CHK_HEADER_CRC) != trace_crc32c(0, h, CHK_HEADER_CRC)) {
		/* zeros past the last chunk are a write the writer never finished */
		static const uint8_t zero[FMT_CHUNK_HEADER];

		if (memcmp(h, zero, sizeof(h)) == 0)
			r->torn_off = off;
		set_damage(r, TRACE_ECORRUPT, off, "chunk header checksum mismatch");
		return 0;
	}
	raw_len = get_u32(h + CHK_RAW_LEN);
	comp_len = get_u32(h + CHK_COMP_LEN);
	seq = get_u64(h + CHK_SEQ);
	first_record = get_u32(h + CHK_FIRST_RECORD);
	if (raw_len > MAX_RAW || comp_len > ZSTD_compressBound(raw_len) ||
	    (first_record != FMT_NO_RECORD && first_record >= raw_len)) {
		set_damage(r, TRACE_ECORRUPT, off, "chunk header holds impossible lengths");
		return 0;
	}
	if (r->seen_chunk ? seq != r->expect_seq : (!r->skip_to_record && seq != 0)) {
		set_damage(r, TRACE_ECORRUPT, off, "chunk out of sequence");
		return 0;
	}
	if (comp_len > r->file_size - off - FMT_CHUNK_HEADER) {
		r->torn_off = off;
		r->expect_seq = seq;
		set_damage(r, TRACE_ETRUNCATED, off, "file ends inside a chunk");
		return 0;
	}
	comp = malloc(comp_len ? comp_len : 1);
	if (!comp)
		return TRACE_ENOMEM;
	if (xpread(r->fd, comp, comp_len, off + FMT_CHUNK_HEADER) != (long)comp_len) {
		free(comp);
		return TRACE_EIO;
	}
	if (trace_crc32c(0, comp, comp_len) != get_u32(h + CHK_PAYLOAD_CRC)) {
		free(comp);
		set_damage(r, TRACE_ECORRUPT, off, "chunk payload checksum mismatch");
		return 0;
	}
	if ((rc = reserve(r, raw_len)) != 0) {
		free(comp);
		return rc;
	}
	got = ZSTD_decompressDCtx(r->dctx, r->buf + r->len, raw_len, comp, comp_len);
	free(comp);
	if (ZSTD_isError(got) || got != raw_len) {
		set_damage(r, TRACE_ECORRUPT, off, "chunk does not decompress to its stated length");
		return 0;
	}
	r->prev_chunk_off = r->cur_chunk_off;
	r->cur_chunk_off = off;
	r->chunk_start = r->len;
	r->len += raw_len;
	if (r->skip_to_record) {
		/* The chunks before this one were dropped by the disk budget: start at the first
		 * record that begins here, numbered from the chunk's event count. */
		if (first_record == FMT_NO_RECORD) {
			r->pos = r->len; /* nothing starts here: keep skipping */
		} else {
			r->pos = r->chunk_start + first_record;
			r->index = get_u64(h + CHK_FIRST_EVENT) + r->proc.first_index;
			r->skip_to_record = 0;
		}
	}
	r->seen_chunk = 1;
	r->expect_seq = seq + 1;
	r->next_off = off + FMT_CHUNK_HEADER + comp_len;
	return 1;
}

/* One tail's header fields (FMT_TAIL_UNUSED: a second tail no switch has used yet). */
struct tail_head {
	uint64_t seq;
	uint32_t committed;
	uint64_t off;
};

/* After the chunks: the unflushed tail of a writer that did not close, if it continues the
 * chunks we read; with two tails, the full one waiting for its drain first, then the one
 * being filled (schemas/trace-format.md, "Recovery rules").  Returns 1 if bytes were
 * added. */
static int load_tail(struct trace_reader *r)
{
	uint8_t t[FMT_TAIL_HEADER];
	struct tail_head th[2], *hi = NULL, *lo = NULL, *load[2];
	uint64_t expect, total = 0;
	size_t start;
	int nload = 0, rc;

	for (int i = 0; i < r->ntails; i++) {
		th[i].off = r->tail_off + (uint64_t)i * r->tail_size;
		if (xpread(r->fd, t, sizeof(t), th[i].off) != (long)sizeof(t) ||
		    memcmp(t + TAIL_MAGIC, FMT_TAIL_MAGIC, 8) != 0) {
			if (i == 0)
				return 0;
			continue;
		}
		if (i == 0)
			r->closed = get_u32(t + TAIL_CLOSED) == 1;
		th[i].committed = get_u32(t + TAIL_COMMITTED);
		th[i].seq = get_u64(t + TAIL_SEQ);
		if (th[i].seq == FMT_TAIL_UNUSED)
			continue;
		/* the one being filled has the highest seq; the other is the full one before it
		 * (waiting for its drain, or drained already: stale) */
		if (!hi || th[i].seq > hi->seq) {
			lo = hi;
			hi = &th[i];
		} else {
			lo = &th[i];
		}
	}
	if (!hi)
		return 0;
	expect = r->seen_chunk || r->torn_off ? r->expect_seq : 0;
	if (r->skip_to_record)
		return 0; /* dropped chunks and nothing readable after: no sync point */
	if (hi->seq == expect + 1 && lo && lo->seq == expect)
		load[nload++] = lo; /* a full tail waiting for its drain: the chunk before hi */
	/* The tail names the chunk it will become: chunks before it that we did not read were
	 * cut off the file (a cut exactly between two chunks leaves no other trace). */
	if (!r->damage && hi->seq > expect && !nload) {
		char msg[128];

		snprintf(msg, sizeof(msg), "file ends after chunk %llu but the writer wrote %llu chunks",
		         (unsigned long long)expect, (unsigned long long)hi->seq);
		set_damage(r, TRACE_ETRUNCATED, r->next_off, msg);
		return 0;
	}
	if (r->closed)
		return 0;
	/* The tails continue the stream only from the chunk after the last good one (a smaller
	 * seq is a tail the writer had not reset yet when it died, or one drained: read). */
	if ((r->damage && !r->torn_off) || (hi->seq != expect && !nload))
		return 0;
	load[nload++] = hi;
	for (int i = 0; i < nload; i++) {
		if (load[i]->committed > r->tail_size - FMT_TAIL_HEADER) {
			set_damage(r, TRACE_ECORRUPT, load[i]->off, "tail holds an impossible length");
			return 0;
		}
		total += load[i]->committed;
	}
	if (total == 0)
		return 0;
	if ((rc = reserve(r, (size_t)total)) != 0)
		return rc;
	start = r->len;
	for (int i = 0; i < nload; i++) {
		if (xpread(r->fd, r->buf + r->len, load[i]->committed,
		           load[i]->off + FMT_TAIL_HEADER) != (long)load[i]->committed) {
			r->len = start;
			return TRACE_EIO;
		}
		r->len += load[i]->committed;
	}
	if (r->torn_off) {
		/* The writer died writing that chunk; the tail holds the same bytes. */
		r->damage = 0;
		memset(&r->damage_diag, 0, sizeof(r->damage_diag));
	}
	r->prev_chunk_off = r->cur_chunk_off;
	r->chunk_start = start;
	r->in_tail = 1;
	return 1;
}

static int load_more(struct trace_reader *r)
{
	int rc;

	if (!r->chunks_done) {
		rc = load_chunk(r);
		if (rc != 0)
			return rc;
		r->chunks_done = 1;
	}
	if (!r->tail_done) {
		r->tail_done = 1;
		return load_tail(r);
	}
	return 0;
}

static struct chan_off *chan(struct trace_reader *r, uint64_t id)
{
	if (id >= MAX_CHANNELS)
		return NULL;
	if (id >= r->nchans) {
		size_t n = r->nchans ? r->nchans : 16;
		struct chan_off *nc;

		while (n <= id)
			n *= 2;
		nc = realloc(r->chans, n * sizeof(*nc));
		if (!nc)
			return NULL;
		memset(nc + r->nchans, 0, (n - r->nchans) * sizeof(*nc));
		r->chans = nc;
		r->nchans = n;
	}
	return &r->chans[id];
}

static int decode_stack(struct trace_reader *r, struct cursor *c)
{
	uint64_t site = cur_varint(c), n = cur_varint(c), i;
	struct cursor probe;
	size_t strings = 0;
	struct trace_frame *frames;
	char *sp;
	void *mem;

	if (c->short_read || c->bad || site >= MAX_SITES || n > 256)
		return TRACE_ECORRUPT;
	/* First pass: measure. */
	probe = *c;
	for (i = 0; i < n; i++) {
		uint64_t fl, ol;

		cur_varint(&probe);
		cur_varint(&probe);
		fl = cur_varint(&probe);
		cur_bytes(&probe, fl);
		ol = cur_varint(&probe);
		cur_bytes(&probe, ol);
		if (probe.short_read || probe.bad)
			return TRACE_ECORRUPT;
		strings += fl + ol + 2;
	}
	mem = malloc(n * sizeof(*frames) + strings + 1);
	if (!mem)
		return TRACE_ENOMEM;
	frames = mem;
	sp = (char *)mem + n * sizeof(*frames);
	for (i = 0; i < n; i++) {
		uint64_t fl, ol;
		const uint8_t *s;

		frames[i].pc = cur_varint(c);
		frames[i].offset = cur_varint(c);
		fl = cur_varint(c);
		s = cur_bytes(c, fl);
		memcpy(sp, s, fl);
		sp[fl] = '\0';
		frames[i].function = sp;
		sp += fl + 1;
		ol = cur_varint(c);
		s = cur_bytes(c, ol);
		memcpy(sp, s, ol);
		sp[ol] = '\0';
		frames[i].object = sp;
		sp += ol + 1;
		/* A frame without a name (the recorder stores the object's path and the address
		 * in it) is named from the object's symbol table. */
		if (!frames[i].function[0] && frames[i].object[0] == '/') {
			const char *fn;
			uint64_t off;

			if (fmt_sym_lookup(&r->syms, frames[i].object, frames[i].pc, &fn, &off) != 0) {
				free(mem);
				return TRACE_ENOMEM;
			}
			if (fn) {
				frames[i].function = fn;
				frames[i].offset = off;
			}
		}
	}
	if (site >= r->nstacks) {
		size_t ns = r->nstacks ? r->nstacks : 64;
		struct stack_entry *nst;

		while (ns <= site)
			ns *= 2;
		nst = realloc(r->stacks, ns * sizeof(*nst));
		if (!nst) {
			free(mem);
			return TRACE_ENOMEM;
		}
		memset(nst + r->nstacks, 0, (ns - r->nstacks) * sizeof(*nst));
		r->stacks = nst;
		r->nstacks = ns;
	}
	free(r->stacks[site].mem); /* a redefinition replaces (exec'd images reuse nothing) */
	r->stacks[site].mem = mem;
	r->stacks[site].st = (struct trace_stack){ (uint32_t)site, (uint32_t)n, frames };
	return 0;
}

static int add_inherit(struct trace_reader *r, const struct trace_inherit *in)
{
	if (r->ninherits == r->cap_inherits) {
		size_t n = r->cap_inherits ? r->cap_inherits * 2 : 16;
		struct trace_inherit *ni = realloc(r->inherits, n * sizeof(*ni));

		if (!ni)
			return TRACE_ENOMEM;
		r->inherits = ni;
		r->cap_inherits = n;
	}
	r->inherits[r->ninherits++] = *in;
	return 0;
}

static int decode_inherit(struct trace_reader *r, struct cursor *c)
{
	struct trace_inherit in;
	struct chan_off *co;

	in.channel = (uint32_t)cur_varint(c);
	in.sent = cur_varint(c);
	in.received = cur_varint(c);
	if (c->short_read || c->bad)
		return TRACE_ECORRUPT;
	co = chan(r, in.channel);
	if (!co)
		return TRACE_ECORRUPT;
	co->sent = in.sent;
	co->received = in.received;
	return add_inherit(r, &in);
}

/* A file input record (schemas/trace-format.md, "File inputs"); bytes after the known
 * fields are a later version's and skipped. */
static int decode_file(struct trace_reader *r, struct cursor *c)
{
	struct trace_file_input f;
	const uint8_t *bid, *path, *res = NULL;
	uint64_t bl, pl, rl = 0;
	char *ps, *rs;

	memset(&f, 0, sizeof(f));
	f.kind = (uint32_t)cur_varint(c);
	f.mode = (uint32_t)cur_varint(c);
	f.dev = cur_varint(c);
	f.ino = cur_varint(c);
	f.size = cur_varint(c);
	f.mtime_ns = unzigzag(cur_varint(c));
	f.hashed = cur_varint(c);
	f.crc = (uint32_t)cur_varint(c);
	bl = cur_varint(c);
	if (c->short_read || c->bad || bl > sizeof(f.build_id))
		return TRACE_ECORRUPT;
	bid = cur_bytes(c, bl);
	pl = cur_varint(c);
	if (c->short_read || c->bad || pl > TRACE_FILE_PATH_MAX)
		return TRACE_ECORRUPT;
	path = cur_bytes(c, pl);
	if (c->p < c->end) {
		rl = cur_varint(c);
		if (c->short_read || c->bad || rl > TRACE_FILE_PATH_MAX)
			return TRACE_ECORRUPT;
		res = cur_bytes(c, rl);
	}
	if (c->short_read || c->bad || (pl && memchr(path, 0, pl)) || (rl && memchr(res, 0, rl)))
		return TRACE_ECORRUPT;
	memcpy(f.build_id, bid, bl);
	f.build_id_len = (uint32_t)bl;
	if (r->nfiles == r->cap_files) {
		size_t n = r->cap_files ? r->cap_files * 2 : 16;
		struct trace_file_input *nf = realloc(r->files, n * sizeof(*nf));

		if (!nf)
			return TRACE_ENOMEM;
		r->files = nf;
		r->cap_files = n;
	}
	ps = strndup(pl ? (const char *)path : "", pl);
	rs = strndup(rl ? (const char *)res : "", rl);
	if (!ps || !rs) {
		free(ps);
		free(rs);
		return TRACE_ENOMEM;
	}
	f.path = ps;
	f.resolved = rs;
	r->files[r->nfiles++] = f;
	return 0;
}

/* A path record (schemas/trace-format.md, "Paths created"); fields a later version appends
 * are skipped. */
static int decode_path(struct trace_reader *r, struct cursor *c)
{
	struct trace_path_change pc;
	const uint8_t *path, *from = NULL;
	uint64_t op = cur_varint(c), pl, fl = 0;
	char *ps, *fs;

	pc.time_ns = unzigzag(cur_varint(c));
	pl = cur_varint(c);
	if (c->short_read || c->bad || op > UINT32_MAX || pl == 0 || pl > TRACE_FILE_PATH_MAX)
		return TRACE_ECORRUPT;
	path = cur_bytes(c, pl);
	if (c->p < c->end) {
		fl = cur_varint(c);
		if (c->short_read || c->bad || fl > TRACE_FILE_PATH_MAX)
			return TRACE_ECORRUPT;
		from = cur_bytes(c, fl);
	}
	if (c->short_read || c->bad || memchr(path, 0, pl) || (fl && memchr(from, 0, fl)))
		return TRACE_ECORRUPT;
	if (r->npaths == r->cap_paths) {
		size_t n = r->cap_paths ? r->cap_paths * 2 : 16;
		struct trace_path_change *np = realloc(r->paths, n * sizeof(*np));

		if (!np)
			return TRACE_ENOMEM;
		r->paths = np;
		r->cap_paths = n;
	}
	ps = strndup((const char *)path, pl);
	fs = strndup(fl ? (const char *)from : "", fl);
	if (!ps || !fs) {
		free(ps);
		free(fs);
		return TRACE_ENOMEM;
	}
	pc.op = (uint32_t)op;
	pc.path = ps;
	pc.from = fs;
	r->paths[r->npaths++] = pc;
	return 0;
}

size_t trace_reader_paths(const struct trace_reader *r, const struct trace_path_change **list)
{
	*list = r->paths;
	return r->npaths;
}

/* The address layout (schemas/trace-format.md, "Address layout"); fields a later version
 * appends are skipped. */
static int decode_layout(struct trace_reader *r, struct cursor *c)
{
	struct trace_layout l;
	uint64_t persona = cur_varint(c), argc = cur_varint(c), envc = cur_varint(c);

	l.strings = cur_varint(c);
	l.argv0 = cur_varint(c);
	l.stack = cur_varint(c);
	if (c->bad || c->short_read || persona > UINT32_MAX || argc > UINT32_MAX ||
	    envc > UINT32_MAX)
		return TRACE_ECORRUPT;
	l.persona = (uint32_t)persona;
	l.argc = (uint32_t)argc;
	l.envc = (uint32_t)envc;
	r->layout = l;
	r->has_layout = 1;
	return 0;
}

/* The environment record (schemas/trace-format.md, "Environment"); a second one replaces
 * the first. */
static int decode_env(struct trace_reader *r, struct cursor *c)
{
	uint64_t n = cur_varint(c);
	char **list;
	uint32_t i;

	if (c->bad || c->short_read || n > TRACE_ENV_MAX_STRINGS)
		return TRACE_ECORRUPT;
	if (!(list = calloc(n + 1, sizeof(*list))))
		return TRACE_ENOMEM;
	for (i = 0; i < n; i++) {
		uint64_t l = cur_varint(c);
		const uint8_t *b;

		if (c->bad || c->short_read || l > TRACE_ENV_MAX_BYTES)
			goto bad;
		b = cur_bytes(c, l);
		if (c->bad || c->short_read || memchr(b, 0, l))
			goto bad;
		if (!(list[i] = strndup((const char *)b, l))) {
			for (uint32_t j = 0; j < i; j++)
				free(list[j]);
			free(list);
			return TRACE_ENOMEM;
		}
	}
	for (i = 0; i < r->envc; i++)
		free(r->env[i]);
	free(r->env);
	r->env = list;
	r->envc = (uint32_t)n;
	r->has_env = 1;
	return 0;
bad:
	for (uint32_t j = 0; j < i; j++)
		free(list[j]);
	free(list);
	return TRACE_ECORRUPT;
}

int trace_reader_env(const struct trace_reader *r, uint32_t *envc, char *const **envp)
{
	if (!r->has_env)
		return 0;
	*envc = r->envc;
	*envp = r->env;
	return 1;
}

int trace_reader_layout(const struct trace_reader *r, struct trace_layout *l)
{
	if (!r->has_layout)
		return 0;
	*l = r->layout;
	return 1;
}

size_t trace_reader_files(const struct trace_reader *r, const struct trace_file_input **list)
{
	*list = r->files;
	return r->nfiles;
}

/* A checkpoint (schemas/trace-format.md, "Disk budget").  Only the first one read after
 * dropped chunks matters: it gives the byte counts the kept events continue from, and the
 * definitions and inheritances that were dropped.  Reading from the start, the events
 * themselves say all of it, and checkpoints are skipped. */
static int decode_checkpoint(struct trace_reader *r, struct cursor *c)
{
	uint64_t n = cur_varint(c);

	if (!r->started_late || r->defs_taken)
		return 0;
	/* an entry takes at least 4 bytes */
	if (c->short_read || c->bad || n > MAX_CHECKPOINT || n > (uint64_t)(c->end - c->p) / 4)
		return TRACE_ECORRUPT;
	free(r->defs);
	r->ndefs = 0;
	r->defs = calloc(n ? n : 1, sizeof(*r->defs));
	if (!r->defs)
		return TRACE_ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		struct trace_chan_def *d = &r->defs[r->ndefs];
		uint64_t id = cur_varint(c), flags = cur_varint(c);
		struct chan_off *co;

		d->sent = cur_varint(c);
		d->received = cur_varint(c);
		if (flags & CK_PAIR)
			d->pipe_other = (uint32_t)cur_varint(c);
		if (flags & CK_ENDPOINT) {
			uint64_t len = cur_varint(c);
			const uint8_t *ep = cur_bytes(c, len);

			d->has_ep = ep && trace_endpoint_decode(ep, (size_t)len, &d->ep) == 0;
		}
		if (c->short_read || c->bad || !id || id > UINT32_MAX || !(co = chan(r, id)))
			return TRACE_ECORRUPT;
		d->channel = (uint32_t)id;
		d->inherited = (flags & CK_INHERITED) != 0;
		co->sent = d->sent;
		co->received = d->received;
		if (d->inherited) {
			struct trace_inherit in = { d->channel, d->sent, d->received };
			int rc = add_inherit(r, &in);

			if (rc)
				return rc;
		}
		r->ndefs++;
	}
	r->defs_taken = 1;
	return 0;
}

/* Decode the event at c (tag already read).  Returns 0, or TRACE_ETRUNCATED when the record
 * continues past the buffer, or TRACE_ECORRUPT. */
static int decode_event(struct trace_reader *r, struct cursor *c, uint32_t kind,
                        struct trace_event *ev)
{
	uint64_t mask = cur_varint(c), i;
	uint64_t time = r->last_time;
	int64_t delta = 0;
	int slot;

	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	ev->fd = -1;
	if (mask & ~(uint64_t)F_KNOWN)
		return c->short_read ? TRACE_ETRUNCATED : TRACE_ECORRUPT;
	if (mask & F_CHANNEL) ev->channel = (uint32_t)cur_varint(c);
	if (mask & F_RESULT) ev->result = unzigzag(cur_varint(c));
	if (mask & F_SITE) ev->site = (uint32_t)cur_varint(c);
	if (mask & F_FD) ev->fd = (int32_t)unzigzag(cur_varint(c));
	if (mask & F_CALL) ev->call = (uint32_t)cur_varint(c);
	if (mask & F_TIME) {
		time += (uint64_t)unzigzag(cur_varint(c));
		ev->time_ns = time;
	}
	ev->len = ev->result > 0 ? (uint64_t)ev->result : 0;
	if (mask & F_LEN) ev->len = cur_varint(c);
	if (mask & F_ERR) ev->err = (int32_t)cur_varint(c);
	if (mask & F_FLAGS) ev->flags = (uint32_t)cur_varint(c);
	if (mask & F_HASH) {
		const uint8_t *h = cur_bytes(c, 4);

		ev->hash = h ? get_u32(h) : 0;
		ev->has_hash = 1;
	}
	if (mask & F_AUX) {
		uint64_t n = cur_varint(c);

		if (n > TRACE_AUX_MAX)
			return c->short_read ? TRACE_ETRUNCATED : TRACE_ECORRUPT;
		ev->naux = (uint32_t)n;
		for (i = 0; i < n; i++)
			ev->aux[i] = unzigzag(cur_varint(c));
	}
	if (mask & F_DATA) {
		uint64_t n = cur_varint(c);

		if (n > UINT32_MAX)
			return TRACE_ECORRUPT;
		ev->data = cur_bytes(c, n);
		ev->data_len = (uint32_t)n;
	}
	if (mask & F_EXT)
		cur_bytes(c, cur_varint(c));
	if (mask & F_CLOCK)
		delta = unzigzag(cur_varint(c));
	if (c->short_read)
		return TRACE_ETRUNCATED;
	if (c->bad)
		return TRACE_ECORRUPT;
	if ((mask & (F_CLOCK | F_DATA)) == (F_CLOCK | F_DATA))
		return TRACE_ECORRUPT;
	if ((slot = fmt_clock_slot(kind, ev->call, ev->naux, ev->aux[0])) >= 0) {
		/* The base of the deltas (schemas/trace-format.md, "Clock values"): every value of
		 * the clock, whole or compact, in record order. */
		if (mask & F_CLOCK) {
			uint64_t v = (uint64_t)r->clock_prev[slot] + (uint64_t)delta;

			if (!(r->clock_known & (1u << slot)) || v > (uint64_t)INT64_MAX)
				return TRACE_ECORRUPT;
			r->clock_prev[slot] = (int64_t)v;
			fmt_clock_bytes(slot, (int64_t)v, r->clock_buf);
			ev->data = r->clock_buf;
			ev->data_len = FMT_CLOCK_LEN;
		} else if (ev->data_len == FMT_CLOCK_LEN &&
		           fmt_clock_value(slot, ev->data, &r->clock_prev[slot]) == 0) {
			r->clock_known |= 1u << slot;
		}
	} else if (mask & F_CLOCK) {
		return TRACE_ECORRUPT; /* a delta of no clock */
	}
	r->last_time = time;
	return 0;
}

int trace_reader_next(struct trace_reader *r, struct trace_event *ev)
{
	for (;;) {
		struct cursor c;
		uint8_t tag;
		int rc;

		if (r->eof)
			return 0;
		c = (struct cursor){ r->buf + r->pos, r->buf + r->len, 0, 0 };
		if (c.p == c.end) {
			rc = load_more(r);
			if (rc < 0)
				return rc;
			if (rc == 0) {
				r->eof = 1;
				return 0;
			}
			continue;
		}
		tag = cur_u8(&c);
		if (tag < REC_STACK) {
			rc = decode_event(r, &c, tag, ev);
			if (rc == 0) {
				struct chan_off *co;

				if (r->in_tail && r->pos >= r->chunk_start)
					r->tail_events++;
				r->pos = (size_t)(c.p - r->buf);
				ev->index = ++r->index;
				ev->thread = r->thread;
				ev->elided = r->elided;
				r->elided = 0;
				if ((ev->kind == TRACE_EV_SEND || ev->kind == TRACE_EV_RECV) && ev->channel) {
					co = chan(r, ev->channel);
					if (!co) {
						set_damage(r, TRACE_ECORRUPT, record_offset(r),
						           "event names an impossible channel id");
						r->eof = 1;
						return 0;
					}
					uint64_t *ctr = ev->kind == TRACE_EV_SEND ? &co->sent : &co->received;

					/* an end several processes hold: the offset all of them share,
					 * which this process's count continues from */
					if ((ev->flags & TRACE_FL_SHARED) && ev->naux >= 3 && ev->aux[0] >= 0)
						*ctr = (uint64_t)ev->aux[0];
					ev->offset = *ctr;
					if (ev->result > 0 && !(ev->flags & TRACE_FL_PEEK))
						*ctr += (uint64_t)ev->result;
				}
				return 1;
			}
		} else {
			uint64_t n = cur_varint(&c);
			const uint8_t *payload = cur_bytes(&c, n);

			rc = c.bad ? TRACE_ECORRUPT : c.short_read ? TRACE_ETRUNCATED : 0;
			if (rc == 0) {
				struct cursor pc = { payload, payload + n, 0, 0 };

				if (tag == REC_STACK)
					rc = decode_stack(r, &pc);
				else if (tag == REC_INHERIT)
					rc = decode_inherit(r, &pc);
				else if (tag == REC_CHECKPOINT) {
					rc = decode_checkpoint(r, &pc);
					r->thread = 0;
				} else if (tag == REC_THREAD) {
					uint64_t t = cur_varint(&pc), k = 0;

					/* (an acquisition count follows when the thread made some
					 * without events: schemas/trace-format.md, "Threads") */
					if (pc.p < pc.end)
						k = cur_varint(&pc);
					rc = pc.bad || pc.short_read || t > UINT32_MAX ||
					     r->elided + k > UINT32_MAX ? TRACE_ECORRUPT : 0;
					if (rc == 0) {
						r->thread = (uint32_t)t;
						r->elided += (uint32_t)k;
					}
				} else if (tag == REC_FILE)
					rc = decode_file(r, &pc);
				else if (tag == REC_LAYOUT)
					rc = decode_layout(r, &pc);
				else if (tag == REC_PATH)
					rc = decode_path(r, &pc);
				else if (tag == REC_ENV)
					rc = decode_env(r, &pc);
				if (rc == TRACE_ENOMEM)
					return rc;
				if (rc == 0) {
					r->pos = (size_t)(c.p - r->buf);
					continue;
				}
			}
		}
		if (rc == TRACE_ETRUNCATED) {
			/* The record continues in the next chunk, or this is the end. */
			rc = load_more(r);
			if (rc < 0)
				return rc;
			if (rc > 0)
				continue;
			if (!r->damage && r->closed)
				set_damage(r, TRACE_ETRUNCATED, record_offset(r),
				           "the last record is incomplete");
			r->eof = 1;
			return 0;
		}
		set_damage(r, TRACE_ECORRUPT, record_offset(r),
		           "undecodable record (bad varint or impossible field)");
		r->eof = 1;
		return 0;
	}
}

const struct trace_stack *trace_reader_stack(const struct trace_reader *r, uint32_t site)
{
	if (site >= r->nstacks || !r->stacks[site].mem)
		return NULL;
	return &r->stacks[site].st;
}

size_t trace_reader_inherited(const struct trace_reader *r, const struct trace_inherit **list)
{
	*list = r->inherits;
	return r->ninherits;
}

size_t trace_reader_kept_channels(const struct trace_reader *r,
                                  const struct trace_chan_def **list)
{
	*list = r->defs;
	return r->ndefs;
}

int trace_reader_damage(const struct trace_reader *r, struct trace_diag *diag)
{
	if (diag) {
		if (r->damage)
			*diag = r->damage_diag;
		else
			memset(diag, 0, sizeof(*diag));
	}
	return r->damage;
}

uint64_t trace_reader_dropped(const struct trace_reader *r)
{
	return r->dropped;
}

int trace_reader_stopped(const struct trace_reader *r, uint64_t *last_index)
{
	if (last_index)
		*last_index = r->stop_errno ? r->proc.first_index + r->stop_events : 0;
	return r->stop_errno;
}

const char *trace_stop_reason(int code)
{
	switch (code) {
	case TRACE_STOP_SECCOMP:
		return "seccomp filter installed, which may forbid the recorder's own calls: "
		       "recording stopped";
	case TRACE_STOP_PRIVDROP:
		return "privileges dropped: the session directory is not the new user's to write";
	case TRACE_STOP_SETUID:
		return "exec of a set-user-ID, set-group-ID or file-capability program, whose "
		       "loader ignores LD_PRELOAD";
	case TRACE_STOP_FDTAKEN:
		return "the program took the trace's descriptor and no other was free";
	case TRACE_STOP_RESERVE:
		return "the trace space reserved before a seccomp filter that forbids the "
		       "recorder's writes was used up";
	}
	return strerror(code);
}

int trace_reader_closed(const struct trace_reader *r)
{
	return r->closed;
}

uint64_t trace_reader_tail_events(const struct trace_reader *r)
{
	return r->tail_events;
}

void trace_reader_close(struct trace_reader *r)
{
	size_t i;

	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	for (i = 0; i < r->nstacks; i++)
		free(r->stacks[i].mem);
	free(r->stacks);
	fmt_syms_free(r->syms);
	free(r->chans);
	free(r->inherits);
	free(r->defs);
	for (i = 0; i < r->nfiles; i++) {
		free((char *)r->files[i].path);
		free((char *)r->files[i].resolved);
	}
	free(r->files);
	for (i = 0; i < r->npaths; i++) {
		free((char *)r->paths[i].path);
		free((char *)r->paths[i].from);
	}
	free(r->paths);
	for (i = 0; i < r->envc; i++)
		free(r->env[i]);
	free(r->env);
	free(r->buf);
	fmt_meta_free(&r->proc);
	ZSTD_freeDCtx(r->dctx);
	free(r);
}
