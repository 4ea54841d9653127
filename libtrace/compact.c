/*
 * compact.c: compresses a finished trace whose chunks were stored rather than compressed
 * (trace_writer_options.level TRACE_LEVEL_STORE), out of the recorded program: `encore
 * record` runs it on each trace of its session once the command it ran has ended, so that
 * zstd's cost is paid by encore and not in the program's own thread (bench/README.md,
 * "Third round").
 *
 * The file is rewritten whole under a temporary name (".NAME.compact", which no session
 * listing takes for a trace) and renamed over the original, so that a crash of either side
 * at any moment leaves the original or the compressed file, each complete: the layout, the
 * metadata and the tail region are copied byte for byte, each stored chunk is replaced by
 * the same chunk compressed (same raw bytes, sequence, event counts and first record), and a
 * chunk that was compressed already is copied as it is.  A file is left alone unless it
 * reads back whole: not ours to judge damage (`encore check` reports it), nor to touch while
 * a writer has it open: writers hold a shared flock on their file from open to close, and
 * this takes an exclusive one, without waiting.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "format.h"

#define MAX_RAW (64u * 1024 * 1024) /* as the reader's bound on a chunk */
#define MAX_META (1u << 20)
#define STORED_FHD 0xa0u /* the frame head a storing writer writes (writer.c) */

static int xpwrite(int fd, const void *buf, size_t n, uint64_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = pwrite(fd, (const char *)buf + done, n - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			errno = ENOSPC;
		if (r <= 0)
			return -1;
		done += (size_t)r;
	}
	return 0;
}

/* A stored chunk's payload: a zstd frame with the storing writer's head whose first block
 * is raw and full (the rest is checked by decompressing it). */
static int is_stored(const uint8_t *p, uint32_t n, uint32_t raw_len)
{
	uint32_t bh, want = raw_len < 128u * 1024 ? raw_len : 128u * 1024;

	if (n < 12 || get_u32(p) != 0xfd2fb528u || p[4] != STORED_FHD)
		return 0;
	bh = (uint32_t)p[9] | (uint32_t)p[10] << 8 | (uint32_t)p[11] << 16;
	return ((bh >> 1) & 3) == 0 && bh >> 3 == want;
}

struct job {
	int fd, out, dirfd;
	const char *name;
	uint64_t size, chunks_off;
	uint8_t *comp, *raw, *dst;
	size_t comp_cap, raw_cap, dst_cap;
	ZSTD_CCtx *cctx;
	ZSTD_DCtx *dctx;
};

static int grow(uint8_t **buf, size_t *cap, size_t n)
{
	uint8_t *p;

	if (n <= *cap)
		return 0;
	p = realloc(*buf, n);
	if (!p)
		return -1;
	*buf = p;
	*cap = n;
	return 0;
}

/* Checks the header and the tail: 1 when the file may be compacted (chunks_off set in j),
 * 0 when it is to be left alone. */
static int check_layout(struct job *j)
{
	uint8_t h[FMT_HEADER_SIZE], t[FMT_TAIL_HEADER];
	uint32_t meta_len, tail_size;
	uint64_t tail_off;
	uint8_t *meta;
	uint32_t crc;

	if (j->size < FMT_HEADER_SIZE || fmt_pread_all(j->fd, h, sizeof(h), 0) != 0 ||
	    memcmp(h + HDR_MAGIC, FMT_MAGIC, 8) != 0 || get_u16(h + HDR_MIN_VERSION) > FMT_VERSION)
		return 0;
	meta_len = get_u32(h + HDR_META_LEN);
	tail_size = get_u32(h + HDR_TAIL_SIZE);
	tail_off = get_u64(h + HDR_TAIL_OFF);
	j->chunks_off = get_u64(h + HDR_CHUNKS_OFF);
	if (meta_len > MAX_META || tail_size < FMT_TAIL_HEADER ||
	    tail_off < FMT_HEADER_SIZE + (uint64_t)meta_len ||
	    j->chunks_off != tail_off + tail_size * (get_u32(h + HDR_FLAGS) & FMT_FLAG_TWO_TAILS ?
	                                             2ull : 1ull) ||
	    j->size < j->chunks_off)
		return 0;
	meta = malloc(meta_len ? meta_len : 1);
	if (!meta || fmt_pread_all(j->fd, meta, meta_len, FMT_HEADER_SIZE) != 0) {
		free(meta);
		return 0;
	}
	put_u32(h + HDR_CRC, 0);
	crc = trace_crc32c(trace_crc32c(0, h, sizeof(h)), meta, meta_len);
	free(meta);
	if (fmt_pread_all(j->fd, h, sizeof(h), 0) != 0 || crc != get_u32(h + HDR_CRC))
		return 0;
	/* A budgeted trace (chunks dropped, or to be) is compressed by its writer already. */
	if (fmt_pread_all(j->fd, t, sizeof(t), tail_off) != 0 ||
	    memcmp(t + TAIL_MAGIC, FMT_TAIL_MAGIC, 8) != 0 || get_u64(t + TAIL_DROPPED) != 0 ||
	    (get_u64(t + TAIL_LIVE_OFF) != 0 && get_u64(t + TAIL_LIVE_OFF) != j->chunks_off))
		return 0;
	return 1;
}

/* One pass over the chunks: with j->out < 0 it only checks that every chunk is whole and
 * counts the stored ones; otherwise it writes the compacted chunks from j->chunks_off on in
 * j->out.  Returns the stored chunks (pass 1) or 0 (pass 2), -1 when the file is not whole
 * (pass 1) or on a failure (pass 2, errno set), *end the end of the chunks written. */
static long chunk_pass(struct job *j, int level, uint64_t *end)
{
	uint64_t off = j->chunks_off, at = j->chunks_off, seq = 0;
	long stored = 0;

	while (off < j->size) {
		uint8_t h[FMT_CHUNK_HEADER];
		uint32_t raw_len, comp_len;
		const uint8_t *payload;
		size_t plen;

		if (j->size - off < FMT_CHUNK_HEADER || fmt_pread_all(j->fd, h, sizeof(h), off) != 0 ||
		    get_u32(h + CHK_MAGIC) != FMT_CHUNK_MAGIC ||
		    get_u32(h + CHK_HEADER_CRC) != trace_crc32c(0, h, CHK_HEADER_CRC) ||
		    get_u64(h + CHK_SEQ) != seq)
			return -1;
		raw_len = get_u32(h + CHK_RAW_LEN);
		comp_len = get_u32(h + CHK_COMP_LEN);
		if (raw_len > MAX_RAW || comp_len > ZSTD_compressBound(raw_len) ||
		    comp_len > j->size - off - FMT_CHUNK_HEADER ||
		    grow(&j->comp, &j->comp_cap, comp_len ? comp_len : 1) != 0 ||
		    fmt_pread_all(j->fd, j->comp, comp_len, off + FMT_CHUNK_HEADER) != 0 ||
		    trace_crc32c(0, j->comp, comp_len) != get_u32(h + CHK_PAYLOAD_CRC))
			return -1;
		payload = j->comp;
		plen = comp_len;
		if (is_stored(j->comp, comp_len, raw_len)) {
			size_t got;

			if (grow(&j->raw, &j->raw_cap, raw_len ? raw_len : 1) != 0)
				return -1;
			got = ZSTD_decompressDCtx(j->dctx, j->raw, raw_len, j->comp, comp_len);
			if (ZSTD_isError(got) || got != raw_len)
				return -1;
			stored++;
			if (j->out >= 0) {
				size_t cap = ZSTD_compressBound(raw_len), n;

				if (grow(&j->dst, &j->dst_cap, cap) != 0)
					return -1;
				n = ZSTD_compressCCtx(j->cctx, j->dst, cap, j->raw, raw_len, level);
				if (ZSTD_isError(n)) {
					errno = EIO;
					return -1;
				}
				if (n < comp_len) {
					payload = j->dst;
					plen = n;
				}
			}
		}
		if (j->out >= 0) {
			put_u32(h + CHK_COMP_LEN, (uint32_t)plen);
			put_u32(h + CHK_PAYLOAD_CRC, trace_crc32c(0, payload, plen));
			put_u32(h + CHK_HEADER_CRC, trace_crc32c(0, h, CHK_HEADER_CRC));
			if (xpwrite(j->out, h, sizeof(h), at) != 0 ||
			    xpwrite(j->out, payload, plen, at + sizeof(h)) != 0)
				return -1;
			at += sizeof(h) + plen;
		}
		off += FMT_CHUNK_HEADER + comp_len;
		seq++;
	}
	*end = at;
	return j->out >= 0 ? 0 : stored;
}

/* [0, chunks_off) of the file, copied as it is into j->out. */
static int copy_head(struct job *j)
{
	uint64_t off = 0;

	if (grow(&j->raw, &j->raw_cap, 1 << 16) != 0)
		return -1;
	while (off < j->chunks_off) {
		size_t k = j->chunks_off - off < j->raw_cap ? (size_t)(j->chunks_off - off) :
		                                              j->raw_cap;

		if (fmt_pread_all(j->fd, j->raw, k, off) != 0 || xpwrite(j->out, j->raw, k, off) != 0)
			return -1;
		off += k;
	}
	return 0;
}

int trace_compact_file(int dirfd, const char *name, int level,
                       struct trace_compact_stats *stats, struct trace_diag *diag)
{
	struct job j;
	struct stat st;
	char tmp[TRACE_NAME_MAX + 64];
	uint64_t end = 0;
	long stored;
	int rc = 0, e;

	memset(&j, 0, sizeof(j));
	j.out = -1;
	j.dirfd = dirfd;
	j.name = name;
	if (stats)
		memset(stats, 0, sizeof(*stats));
	if (strchr(name, '/') ||
	    snprintf(tmp, sizeof(tmp), ".%s.compact", name) >= (int)sizeof(tmp)) {
		fmt_diag(diag, TRACE_EINVAL, name, 0, "not a trace file name");
		return TRACE_EINVAL;
	}
	j.fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (j.fd < 0)
		goto sys;
	if (fstat(j.fd, &st) != 0)
		goto sys;
	if (!S_ISREG(st.st_mode))
		goto out;
	/* Nobody writes it from now on: a writer holds LOCK_SH from open to close, and no new
	 * writer opens an existing trace (they create theirs, O_EXCL). */
	if (flock(j.fd, LOCK_EX | LOCK_NB) != 0) {
		if (stats)
			stats->busy = 1;
		goto out;
	}
	if (fstat(j.fd, &st) != 0)
		goto sys;
	j.size = (uint64_t)st.st_size;
	if (stats)
		stats->before = j.size;
	if (!check_layout(&j))
		goto out;
	j.dctx = ZSTD_createDCtx();
	j.cctx = ZSTD_createCCtx();
	if (!j.dctx || !j.cctx) {
		errno = ENOMEM;
		goto sys;
	}
	stored = chunk_pass(&j, level, &end);
	if (stored <= 0) /* nothing stored, or not whole: as it is */
		goto out;

	j.out = openat(dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (j.out < 0 && errno == EEXIST) {
		/* left by a compaction that did not finish (this file's lock is ours now) */
		if (unlinkat(dirfd, tmp, 0) == 0)
			j.out = openat(dirfd, tmp,
			               O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	if (j.out < 0)
		goto sys_tmp;
	if (copy_head(&j) != 0 || chunk_pass(&j, level, &end) != 0 || fdatasync(j.out) != 0)
		goto sys_tmp;
	if (renameat(dirfd, tmp, dirfd, name) != 0)
		goto sys_tmp;
	if (stats) {
		stats->after = end;
		stats->chunks = (uint64_t)stored;
	}
	rc = 1;
	goto out;

sys_tmp:
	e = errno;
	unlinkat(dirfd, tmp, 0);
	errno = e;
sys:
	e = errno;
	fmt_diag(diag, TRACE_EIO, name, 0, "cannot compress the trace: %s", strerror(e));
	if (diag)
		diag->sys_errno = e;
	rc = TRACE_EIO;
out:
	if (j.out >= 0)
		close(j.out);
	if (j.fd >= 0)
		close(j.fd);
	ZSTD_freeCCtx(j.cctx);
	ZSTD_freeDCtx(j.dctx);
	free(j.comp);
	free(j.raw);
	free(j.dst);
	return rc;
}
