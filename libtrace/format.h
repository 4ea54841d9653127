/*
 * format.h: libtrace's private view of the byte layout in schemas/trace-format.md: constants,
 * little-endian helpers and varints.  Never included outside libtrace/.
 */
#ifndef ENCORE_TRACE_FORMAT_H
#define ENCORE_TRACE_FORMAT_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "trace.h"

#define FMT_MAGIC "ENCTRACE"
#define FMT_TAIL_MAGIC "ENCTAIL1"
#define FMT_CHUNK_MAGIC 0x4b484345u /* "ECHK" little-endian */
/* In place of a chunk header: the chunks end here, the rest of the file is space reserved
 * for them and unused (trace_writer_reserve; schemas/trace-format.md, "Reserved space"). */
#define FMT_RESERVE_MAGIC 0x52534345u /* "ECSR" little-endian */
#define FMT_VERSION 3     /* what this library reads, and writes for a file with two tails */
#define FMT_V2 2          /* version and min_version of a file with one tail (compact clocks) */
#define FMT_V1 1          /* version and min_version of files written with plain clocks */
/* HDR_FLAGS: the tail region holds two tails of tail_size bytes each, the writer filling one
 * while the other, full, is compressed (schemas/trace-format.md, "Two tails"); version 3. */
#define FMT_FLAG_TWO_TAILS 1u
/* TAIL_SEQ of a second tail that no switch has used yet: readers ignore it. */
#define FMT_TAIL_UNUSED UINT64_MAX

#define FMT_HEADER_SIZE 64
#define FMT_TAIL_HEADER 64
#define FMT_CHUNK_HEADER 48
#define FMT_NO_RECORD 0xffffffffu

/* Fixed file header fields (byte offsets). */
enum {
	HDR_MAGIC = 0,
	HDR_VERSION = 8,      /* u16 */
	HDR_MIN_VERSION = 10, /* u16 */
	HDR_FLAGS = 12,       /* u32 */
	HDR_META_LEN = 16,    /* u32 */
	HDR_TAIL_SIZE = 20,   /* u32 */
	HDR_TAIL_OFF = 24,    /* u64 */
	HDR_CHUNKS_OFF = 32,  /* u64 */
	HDR_CRC = 60,         /* u32: CRC-32C of the header (this field as 0) and metadata */
};

/* Tail region header fields. */
enum {
	TAIL_MAGIC = 0,
	TAIL_SEQ = 8,         /* u64: sequence number the tail's bytes will have as a chunk */
	TAIL_EVENTS = 16,     /* u64: events written before the tail's first byte */
	TAIL_COMMITTED = 24,  /* u32: bytes of data[] ending on a record boundary */
	TAIL_CAPACITY = 28,   /* u32 */
	TAIL_LIVE_OFF = 32,   /* u64: offset of the first chunk not dropped by the budget */
	TAIL_DROPPED = 40,    /* u64: events dropped by the disk budget */
	TAIL_CLOSED = 48,     /* u32: 1 once trace_writer_close finished */
	TAIL_STOP_ERRNO = 52, /* u32: errno that stopped the writer, 0 while it runs */
	TAIL_STOP_EVENTS = 56,/* u64: events written before it stopped */
};

/* Chunk header fields. */
enum {
	CHK_MAGIC = 0,        /* u32 */
	CHK_RAW_LEN = 4,      /* u32 */
	CHK_COMP_LEN = 8,     /* u32 */
	CHK_NEVENTS = 12,     /* u32: events that start in this chunk */
	CHK_SEQ = 16,         /* u64 */
	CHK_FIRST_EVENT = 24, /* u64: events written before this chunk's first byte */
	CHK_FIRST_RECORD = 32,/* u32: offset in raw of the first record starting here */
	CHK_PAYLOAD_CRC = 36, /* u32: CRC-32C of the compressed payload */
	CHK_RESERVED = 40,    /* u32 */
	CHK_HEADER_CRC = 44,  /* u32: CRC-32C of bytes [0, 44) */
};

/* Metadata tags (TLV: varint tag, varint length, bytes). */
enum {
	META_NAME = 1, META_PARENT = 2, META_HOST = 3, META_HOST_ID = 4, META_SESSION = 5,
	META_PID = 6, META_PPID = 7, META_FORK_INDEX = 8, META_SEGMENT = 9,
	META_FIRST_INDEX = 10, META_START_REALTIME = 11, META_EXE = 12, META_CWD = 13,
	META_BUILD_ID = 14, META_ARG = 15, META_FLAGS = 16,
};

/* Record tags in the raw stream: below 0x80 an event of that kind; from 0x80 a
 * length-prefixed meta record (readers skip unknown ones). */
enum {
	REC_STACK = 0x80,
	REC_INHERIT = 0x81,
	REC_CHECKPOINT = 0x82,
	REC_THREAD = 0x83,   /* varint: the thread of the events that follow */
	/* 0x84-0x85: signals (kept) */
	REC_FILE = 0x86,     /* a file input (trace.h, struct trace_file_input) */
	REC_LAYOUT = 0x87,   /* the image's address layout (trace.h, struct trace_layout) */
	REC_PATH = 0x88,     /* a path the process created or removed (trace.h, trace_path_change) */
	/* 0x89-0x8a: reserved */
	REC_ENV = 0x8b,      /* the environment the image started with (trace.h, trace_writer_env) */
};

/* Flags of a checkpoint entry (schemas/trace-format.md, "Disk budget"). */
enum {
	CK_INHERITED = 1u, /* the channel came with an inherit record */
	CK_PAIR = 2u,      /* varint: the other end of its pipe or socketpair follows */
	CK_ENDPOINT = 4u,  /* varint length and an endpoint follow */
};

/* Event field presence bits, in encoding order. */
enum {
	F_CHANNEL = 1u << 0,
	F_RESULT = 1u << 1,
	F_SITE = 1u << 2,
	F_FD = 1u << 3,
	F_CALL = 1u << 4,
	F_TIME = 1u << 5,
	F_LEN = 1u << 6,
	F_ERR = 1u << 7,
	F_FLAGS = 1u << 8,
	F_HASH = 1u << 9,
	F_AUX = 1u << 10,
	F_DATA = 1u << 11,
	F_EXT = 1u << 12, /* varint length + bytes: fields of later versions, skipped */
	F_CLOCK = 1u << 13, /* version 2: zigzag delta of a clock value, instead of data */
	F_KNOWN = (1u << 14) - 1,
};

/* Compact clock values (schemas/trace-format.md, "Clock values"): a clock read's value is
 * coded as the difference from the previous value of the same clock in the file, in the
 * value's unit.  The clocks that have one: gettimeofday (a struct timeval, microseconds) and
 * clock_gettime of clock ids 0-15 (a struct timespec, nanoseconds). */
#define FMT_CLOCK_SLOTS 17
#define FMT_CLOCK_LEN 16 /* bytes of the struct timeval or timespec: two 64-bit words */

/* The slot of a clock event by its call and aux (known before its value), or -1. */
static inline int fmt_clock_slot(uint32_t kind, uint32_t call, uint32_t naux, int64_t aux0)
{
	if (kind != TRACE_EV_CLOCK)
		return -1;
	if (call == TRACE_CALL_GETTIMEOFDAY && naux == 0)
		return 0;
	if (call == TRACE_CALL_CLOCK_GETTIME && naux == 1 && aux0 >= 0 && aux0 < 16)
		return 1 + (int)aux0;
	return -1;
}

static inline int64_t fmt_clock_unit(int slot)
{
	return slot == 0 ? 1000000 : 1000000000;
}

/* Endpoint TLV tags. */
enum {
	EP_TYPE = 1, EP_DIR = 2, EP_INODE = 3, EP_PEER_INODE = 4, EP_PEER_PID = 5,
	EP_LOCAL = 6, EP_PEER = 7,
};

/* n bytes at off, past short reads and EINTR: 0, or -1 at an error or the file's end
 * (compact.c, elfsym.c). */
static inline int fmt_pread_all(int fd, void *buf, size_t n, uint64_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = pread(fd, (char *)buf + done, n - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		done += (size_t)r;
	}
	return 0;
}

static inline void put_u16(uint8_t *p, uint16_t v) { p[0] = v; p[1] = v >> 8; }
static inline void put_u32(uint8_t *p, uint32_t v)
{
	p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24;
}
static inline void put_u64(uint8_t *p, uint64_t v)
{
	put_u32(p, (uint32_t)v);
	put_u32(p + 4, (uint32_t)(v >> 32));
}
static inline uint16_t get_u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t get_u64(const uint8_t *p)
{
	return get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

static inline uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* LEB128.  Writes at most 10 bytes; returns the bytes written. */
static inline size_t put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* A bounded cursor for decoding: reads past `end` set `short_read`, a malformed varint
 * sets `bad`; both are sticky, so a decoder checks once at the end. */
struct cursor {
	const uint8_t *p;
	const uint8_t *end;
	int short_read;
	int bad;
};

static inline uint64_t cur_varint(struct cursor *c)
{
	uint64_t v = 0;
	unsigned shift = 0;

	for (;;) {
		uint8_t b;

		if (c->p >= c->end) {
			c->short_read = 1;
			return 0;
		}
		b = *c->p++;
		if (shift == 63 && b > 1) {
			c->bad = 1;
			return 0;
		}
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
		shift += 7;
		if (shift > 63) {
			c->bad = 1;
			return 0;
		}
	}
}

static inline const uint8_t *cur_bytes(struct cursor *c, uint64_t n)
{
	const uint8_t *p = c->p;

	if (n > (uint64_t)(c->end - c->p)) {
		c->short_read = 1;
		c->p = c->end;
		return NULL;
	}
	c->p += n;
	return p;
}

static inline uint8_t cur_u8(struct cursor *c)
{
	const uint8_t *p = cur_bytes(c, 1);

	return p ? *p : 0;
}

/* A clock value's 16 bytes (seconds, then microseconds or nanoseconds, little-endian) as one
 * count of the slot's unit.  -1 when it has no such form (a negative or huge second count, a
 * fraction out of range): such values stay plain data. */
static inline int fmt_clock_value(int slot, const uint8_t *d, int64_t *v)
{
	uint64_t sec = get_u64(d), frac = get_u64(d + 8), unit = (uint64_t)fmt_clock_unit(slot);
	/* the bound as constants: a 64-bit division costs tens of cycles per clock read */
	uint64_t max_sec = slot == 0 ? ((uint64_t)INT64_MAX - 1000000) / 1000000
	                             : ((uint64_t)INT64_MAX - 1000000000) / 1000000000;

	if (frac >= unit || sec > max_sec)
		return -1;
	*v = (int64_t)(sec * unit + frac);
	return 0;
}

static inline void fmt_clock_bytes(int slot, int64_t v, uint8_t *d)
{
	int64_t unit = fmt_clock_unit(slot);

	put_u64(d, (uint64_t)(v / unit));
	put_u64(d + 8, (uint64_t)(v % unit));
}

/* Fill a diag; file may be NULL. */
void fmt_diag(struct trace_diag *d, int code, const char *file, uint64_t offset,
              const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Encode the metadata of p into buf (NULL to measure); returns the length. */
size_t fmt_meta_encode(const struct trace_process *p, uint8_t *buf);
/* Decode metadata into p (argv allocated; free with fmt_meta_free).  0 or TRACE_ECORRUPT. */
int fmt_meta_decode(const uint8_t *buf, size_t len, struct trace_process *p);
void fmt_meta_free(struct trace_process *p);

/* Offline names for call-site frames (elfsym.c): the function of the object at path (an
 * absolute path) holding address pc, as its symbol tables count addresses.  *name is NULL when
 * unknown, else points into *cache, which fmt_syms_free releases.  0 or TRACE_ENOMEM. */
struct fmt_syms;
int fmt_sym_lookup(struct fmt_syms **cache, const char *path, uint64_t pc, const char **name,
                   uint64_t *offset);
void fmt_syms_free(struct fmt_syms *cache);

#endif
