/*
 * pack.c: the manifest of a packed session (schemas/pack.md) and the SHA-256 that names its
 * objects.  `encore pack` builds the manifest and writes it here (atomically: temporary file
 * and rename), the replayer reads it to find the file a process used at a path.  The format
 * is text, one tab-separated line per file, paths escaped so that any byte string survives.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"

struct trace_pack {
	struct trace_pack_entry *e;
	size_t n, cap;
};

/* --- SHA-256 (FIPS 180-4, section 6.2) ------------------------------------------------- */

static const uint32_t sha_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
	0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
	0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
	0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
	0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
	0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha_block(uint32_t h[8], const uint8_t *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, hh;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (i = 16; i < 64; i++) {
		uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);

		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = h[0]; b = h[1]; c = h[2]; d = h[3]; e = h[4]; f = h[5]; g = h[6]; hh = h[7];
	for (i = 0; i < 64; i++) {
		uint32_t t1 = hh + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) +
		              sha_k[i] + w[i];
		uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));

		hh = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
	}
	h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
}

void trace_sha256_init(struct trace_sha256 *c)
{
	static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	                                0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };

	memcpy(c->h, iv, sizeof(iv));
	c->bytes = 0;
	c->fill = 0;
}

void trace_sha256_update(struct trace_sha256 *c, const void *data, size_t len)
{
	const uint8_t *p = data;

	c->bytes += len;
	if (c->fill) {
		size_t take = 64 - c->fill < len ? 64 - c->fill : len;

		memcpy(c->buf + c->fill, p, take);
		c->fill += (uint32_t)take;
		p += take;
		len -= take;
		if (c->fill < 64)
			return;
		sha_block(c->h, c->buf);
		c->fill = 0;
	}
	for (; len >= 64; p += 64, len -= 64)
		sha_block(c->h, p);
	memcpy(c->buf, p, len);
	c->fill = (uint32_t)len;
}

void trace_sha256_hex(struct trace_sha256 *c, char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	uint64_t bits = c->bytes * 8;
	uint8_t pad[72] = { 0x80 };
	size_t npad = (c->fill < 56 ? 56 : 120) - c->fill;
	int i;

	for (i = 0; i < 8; i++)
		pad[npad + i] = (uint8_t)(bits >> (56 - 8 * i));
	trace_sha256_update(c, pad, npad + 8);
	for (i = 0; i < 32; i++) {
		uint8_t b = (uint8_t)(c->h[i / 4] >> (24 - 8 * (i % 4)));

		hex[2 * i] = digits[b >> 4];
		hex[2 * i + 1] = digits[b & 15];
	}
	hex[64] = '\0';
}

/* --- names and escapes ------------------------------------------------------------------ */

static const char *const pack_kinds[] = { NULL, "exe", "lib", "file", "dir" };

const char *trace_pack_kind_name(uint32_t kind)
{
	return kind >= 1 && kind <= TRACE_PACK_DIR ? pack_kinds[kind] : "unknown";
}

uint32_t trace_pack_kind_from_name(const char *name)
{
	uint32_t k;

	for (k = 1; k <= TRACE_PACK_DIR; k++)
		if (strcmp(pack_kinds[k], name) == 0)
			return k;
	return 0;
}

static int is_sha_hex(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[64] == '\0';
}

int trace_pack_object_path(const char *dir, const char *sha256, char *out, size_t cap)
{
	int n;

	if (!is_sha_hex(sha256))
		return TRACE_EINVAL;
	n = snprintf(out, cap, "%s/" TRACE_PACK_DIRNAME "/" TRACE_PACK_OBJECTS "/%s", dir, sha256);
	return n < 0 || (size_t)n >= cap ? TRACE_EINVAL : 0;
}

static int needs_escape(unsigned char c)
{
	return c < 0x20 || c == 0x7f || c == '%';
}

int trace_pack_escape(const char *path, char *out, size_t cap)
{
	static const char digits[] = "0123456789ABCDEF";
	size_t o = 0;
	const unsigned char *p;

	for (p = (const unsigned char *)path; *p; p++) {
		if (needs_escape(*p)) {
			if (o + 3 >= cap)
				return TRACE_EINVAL;
			out[o++] = '%';
			out[o++] = digits[*p >> 4];
			out[o++] = digits[*p & 15];
		} else {
			if (o + 1 >= cap)
				return TRACE_EINVAL;
			out[o++] = (char)*p;
		}
	}
	if (o >= cap)
		return TRACE_EINVAL;
	out[o] = '\0';
	return (int)o;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int trace_pack_unescape(const char *in, size_t len, char *out, size_t cap)
{
	size_t i, o = 0;

	for (i = 0; i < len; i++) {
		int c = (unsigned char)in[i];

		if (c == '%') {
			int hi, lo;

			if (i + 2 >= len)
				return TRACE_ECORRUPT;
			hi = hexval(in[i + 1]);
			lo = hexval(in[i + 2]);
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
				return TRACE_ECORRUPT;
			c = hi << 4 | lo;
			i += 2;
		} else if (needs_escape((unsigned char)c)) {
			return TRACE_ECORRUPT; /* a raw control byte: not written by us */
		}
		if (o + 1 >= cap)
			return TRACE_EINVAL;
		out[o++] = (char)c;
	}
	if (o >= cap)
		return TRACE_EINVAL;
	out[o] = '\0';
	return (int)o;
}

/* --- the entry list ---------------------------------------------------------------------- */

struct trace_pack *trace_pack_new(void)
{
	return calloc(1, sizeof(struct trace_pack));
}

size_t trace_pack_count(const struct trace_pack *p)
{
	return p ? p->n : 0;
}

const struct trace_pack_entry *trace_pack_entry(const struct trace_pack *p, size_t i)
{
	return p && i < p->n ? &p->e[i] : NULL;
}

const struct trace_pack_entry *trace_pack_find(const struct trace_pack *p, const char *host_id,
                                               const char *path)
{
	size_t i;

	for (i = 0; p && i < p->n; i++)
		if (strcmp(p->e[i].path, path) == 0 &&
		    (!host_id || strcmp(p->e[i].host_id, host_id) == 0))
			return &p->e[i];
	return NULL;
}

static int entry_valid(const struct trace_pack_entry *e)
{
	if (e->kind < 1 || e->kind > TRACE_PACK_DIR || !is_sha_hex(e->sha256))
		return 0;
	if (e->mode > 07777 || !e->path || e->path[0] != '/')
		return 0;
	if (memchr(e->host_id, '\0', sizeof(e->host_id)) == NULL)
		return 0;
	for (const char *h = e->host_id; *h; h++)
		if ((unsigned char)*h <= 0x20 || *h == '%' || *h == 0x7f)
			return 0; /* host ids are tokens (machine-id): never escaped */
	return 1;
}

static int same_entry(const struct trace_pack_entry *a, const struct trace_pack_entry *b)
{
	return a->kind == b->kind && a->mode == b->mode && a->size == b->size &&
	       strcmp(a->host_id, b->host_id) == 0 && strcmp(a->sha256, b->sha256) == 0 &&
	       strcmp(a->path, b->path) == 0;
}

int trace_pack_add(struct trace_pack *p, const struct trace_pack_entry *e)
{
	struct trace_pack_entry *ne;
	size_t i;

	if (!p || !entry_valid(e))
		return TRACE_EINVAL;
	for (i = 0; i < p->n; i++)
		if (same_entry(&p->e[i], e))
			return 0;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 32;

		ne = realloc(p->e, cap * sizeof(*ne));
		if (!ne)
			return TRACE_ENOMEM;
		p->e = ne;
		p->cap = cap;
	}
	ne = &p->e[p->n];
	*ne = *e;
	ne->path = strdup(e->path);
	if (!ne->path)
		return TRACE_ENOMEM;
	p->n++;
	return 1;
}

void trace_pack_free(struct trace_pack *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n; i++)
		free(p->e[i].path);
	free(p->e);
	free(p);
}

/* --- text ---------------------------------------------------------------------------------- */

/* Split a line into its six tab-separated fields; 0 or -1. */
static int split_fields(const char *line, size_t len, const char *f[6], size_t flen[6])
{
	size_t i, start = 0;
	int k = 0;

	for (i = 0; i <= len; i++) {
		if (i == len || line[i] == '\t') {
			if (k == 6)
				return -1;
			f[k] = line + start;
			flen[k] = i - start;
			k++;
			start = i + 1;
		}
	}
	return k == 6 ? 0 : -1;
}

static int parse_u64(const char *s, size_t len, int base, uint64_t max, uint64_t *out)
{
	char tmp[32], *end;
	unsigned long long v;

	if (len == 0 || len >= sizeof(tmp) || s[0] == '-' || s[0] == '+' || s[0] == ' ')
		return -1;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	errno = 0;
	v = strtoull(tmp, &end, base);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_line(struct trace_pack *p, const char *line, size_t len)
{
	const char *f[6];
	size_t fl[6];
	struct trace_pack_entry e;
	char kind[8], *path;
	uint64_t v;
	int rc;

	memset(&e, 0, sizeof(e));
	if (split_fields(line, len, f, fl) < 0)
		return TRACE_ECORRUPT;
	if (fl[0] >= sizeof(e.host_id) || fl[1] >= sizeof(kind) || fl[2] != 64)
		return TRACE_ECORRUPT;
	memcpy(e.host_id, f[0], fl[0]);
	memcpy(kind, f[1], fl[1]);
	kind[fl[1]] = '\0';
	e.kind = trace_pack_kind_from_name(kind);
	memcpy(e.sha256, f[2], 64);
	if (parse_u64(f[3], fl[3], 8, 07777, &v) < 0)
		return TRACE_ECORRUPT;
	e.mode = (uint32_t)v;
	if (parse_u64(f[4], fl[4], 10, UINT64_MAX, &e.size) < 0)
		return TRACE_ECORRUPT;
	path = malloc(fl[5] + 1);
	if (!path)
		return TRACE_ENOMEM;
	rc = trace_pack_unescape(f[5], fl[5], path, fl[5] + 1);
	if (rc < 0) {
		free(path);
		return TRACE_ECORRUPT;
	}
	e.path = path;
	rc = trace_pack_add(p, &e);
	free(path);
	return rc == TRACE_EINVAL ? TRACE_ECORRUPT : rc < 0 ? rc : 0;
}

int trace_pack_parse(const char *text, size_t len, struct trace_pack **out, struct trace_diag *d)
{
	struct trace_pack *p;
	size_t pos = 0, hlen = strlen(TRACE_PACK_HEADER);
	uint64_t lineno = 1;

	*out = NULL;
	if (len < hlen + 1 || memcmp(text, TRACE_PACK_HEADER "\n", hlen + 1) != 0) {
		fmt_diag(d, TRACE_EMAGIC, NULL, 0, "not an encore pack manifest (first line is not \"%s\")",
		         TRACE_PACK_HEADER);
		return TRACE_EMAGIC;
	}
	p = trace_pack_new();
	if (!p) {
		fmt_diag(d, TRACE_ENOMEM, NULL, 0, "out of memory");
		return TRACE_ENOMEM;
	}
	pos = hlen + 1;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		int rc;

		lineno++;
		if (!nl) {
			fmt_diag(d, TRACE_ETRUNCATED, NULL, pos,
			         "the pack's manifest ends inside line %llu (cut short?)",
			         (unsigned long long)lineno);
			trace_pack_free(p);
			return TRACE_ETRUNCATED;
		}
		rc = parse_line(p, text + pos, (size_t)(nl - (text + pos)));
		if (rc < 0) {
			fmt_diag(d, rc, NULL, pos, rc == TRACE_ENOMEM ? "out of memory" :
			         "line %llu of the pack's manifest is damaged (not HOST_ID TAB KIND TAB "
			         "SHA256 TAB MODE TAB SIZE TAB PATH)",
			         (unsigned long long)lineno);
			trace_pack_free(p);
			return rc;
		}
		pos = (size_t)(nl - text) + 1;
	}
	*out = p;
	return 0;
}

int trace_pack_open(const char *dir, struct trace_pack **out, struct trace_diag *d)
{
	char path[4096];
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	int fd, rc, n;

	*out = NULL;
	n = snprintf(path, sizeof(path), "%s/" TRACE_PACK_DIRNAME "/" TRACE_PACK_MANIFEST, dir);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		fmt_diag(d, TRACE_EINVAL, dir, 0, "path too long");
		return TRACE_EINVAL;
	}
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		rc = e == ENOENT ? TRACE_ENOENT : TRACE_EIO;
		fmt_diag(d, rc, path, 0, "cannot open: %s", strerror(e));
		if (d)
			d->sys_errno = e;
		return rc;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (1 << 30)) {
		close(fd);
		fmt_diag(d, TRACE_EIO, path, 0, "not a regular file of reasonable size");
		return TRACE_EIO;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		fmt_diag(d, TRACE_ENOMEM, path, 0, "out of memory");
		return TRACE_ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	rc = trace_pack_parse(buf, got, out, d);
	free(buf);
	if (rc < 0 && d) {
		size_t pl = strlen(path);

		/* the end of the path names the file when it does not fit */
		memcpy(d->file, pl < sizeof(d->file) ? path : path + pl - (sizeof(d->file) - 1),
		       pl < sizeof(d->file) ? pl + 1 : sizeof(d->file));
	}
	return rc;
}

int trace_pack_format(const struct trace_pack *p, char **text, size_t *len)
{
	char *buf = NULL, *esc = NULL;
	size_t size = 0;
	FILE *f;
	size_t i;
	int rc = 0;

	*text = NULL;
	*len = 0;
	f = open_memstream(&buf, &size);
	if (!f)
		return TRACE_ENOMEM;
	fputs(TRACE_PACK_HEADER "\n", f);
	for (i = 0; p && i < p->n && rc == 0; i++) {
		const struct trace_pack_entry *e = &p->e[i];
		size_t cap = strlen(e->path) * 3 + 1;

		esc = malloc(cap);
		if (!esc) {
			rc = TRACE_ENOMEM;
			break;
		}
		if (trace_pack_escape(e->path, esc, cap) < 0)
			rc = TRACE_EINVAL;
		else
			fprintf(f, "%s\t%s\t%s\t%o\t%llu\t%s\n", e->host_id,
			        trace_pack_kind_name(e->kind), e->sha256, e->mode,
			        (unsigned long long)e->size, esc);
		free(esc);
	}
	if (fclose(f) != 0 && rc == 0)
		rc = TRACE_ENOMEM;
	if (rc) {
		free(buf);
		return rc;
	}
	*text = buf;
	*len = size;
	return 0;
}

int trace_pack_write(int pack_dirfd, const struct trace_pack *p, struct trace_diag *d)
{
	char tmp[64], *text;
	size_t len, off = 0;
	int fd, rc;

	rc = trace_pack_format(p, &text, &len);
	if (rc) {
		fmt_diag(d, rc, TRACE_PACK_MANIFEST, 0, "cannot format the manifest");
		return rc;
	}
	snprintf(tmp, sizeof(tmp), ".manifest.tmp.%ld", (long)getpid());
	unlinkat(pack_dirfd, tmp, 0); /* a stale one (or a link planted there), not its target */
	fd = openat(pack_dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = TRACE_EIO;
		goto fail;
	}
	while (off < len) {
		ssize_t w = write(fd, text + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = errno;

			close(fd);
			unlinkat(pack_dirfd, tmp, 0);
			errno = w < 0 ? e : ENOSPC;
			rc = TRACE_EIO;
			goto fail;
		}
		off += (size_t)w;
	}
	if (fsync(fd) < 0 || close(fd) < 0) {
		int e = errno;

		unlinkat(pack_dirfd, tmp, 0);
		errno = e;
		rc = TRACE_EIO;
		goto fail;
	}
	if (renameat(pack_dirfd, tmp, pack_dirfd, TRACE_PACK_MANIFEST) < 0) {
		int e = errno;

		unlinkat(pack_dirfd, tmp, 0);
		errno = e;
		rc = TRACE_EIO;
		goto fail;
	}
	free(text);
	return 0;
fail:
	if (d) {
		int e = errno;

		fmt_diag(d, rc, TRACE_PACK_MANIFEST, 0, "cannot write the manifest: %s", strerror(e));
		d->sys_errno = e;
	}
	free(text);
	return rc;
}

/* --- file inputs against the file system ------------------------------------------------ */

int trace_file_check(const struct trace_file_input *f, const char *path, char *what, size_t cap)
{
	static uint8_t buf[64 * 1024];
	struct stat st;
	uint64_t off = 0;
	uint32_t crc = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR) {
			snprintf(what, cap, "missing");
			return 1;
		}
		return TRACE_EIO;
	}
	if (fstat(fd, &st) != 0) {
		close(fd);
		return TRACE_EIO;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size != f->size) {
		close(fd);
		snprintf(what, cap, "size");
		return 1;
	}
	if ((int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec == f->mtime_ns) {
		close(fd);
		return 0;
	}
	if (f->kind != TRACE_FILE_READ) {
		close(fd);
		snprintf(what, cap, "mtime");
		return 1;
	}
	while (off < f->hashed) {
		size_t k = f->hashed - off < sizeof(buf) ? (size_t)(f->hashed - off) : sizeof(buf);
		ssize_t n = pread(fd, buf, k, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		crc = trace_crc32c(crc, buf, (size_t)n);
		off += (uint64_t)n;
	}
	close(fd);
	if (off != f->hashed || crc != f->crc) {
		snprintf(what, cap, "content");
		return 1;
	}
	return 0;
}
