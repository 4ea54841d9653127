/*
 * lc_alloc.c: the local controller's allocator (lc_alloc.h says why): blocks of a power of
 * two from 32 bytes, carved from one region (lazily committed, far from where the kernel
 * puts the program's mappings), kept on one free list per size for reuse.  The region is
 * reserved 64 MiB at a time as blocks need it, not all at once: reserved address space
 * counts against the program's RLIMIT_AS, and a program that sets one (vsftpd's session
 * processes: 200 MiB) saw its own mmap fail in replay beside a 4 GiB reservation.
 * A spin lock guards it: the LC allocates while it loads trace chunks, from any thread.  When
 * the region cannot be had or is full, libc's malloc serves, as before.
 */
#include "lc_alloc.h" /* (included already: the build includes it first everywhere) */

/* here the names are libc's and zstd's own */
#undef malloc
#undef calloc
#undef realloc
#undef free
#undef strdup
#undef strndup
#undef ZSTD_createDCtx

#define ZSTD_STATIC_LINKING_ONLY
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <zstd.h>

#define REGION_SIZE (4ull << 30)          /* at most, reserved REGION_STEP at a time */
#define REGION_STEP (64ull << 20)         /* committed page by page as used */
#define REGION_HINT 0x100000000000ull     /* 16 TiB: far below the mmap base, above brk */
#define MIN_SHIFT 5
#define NCLASS 40

struct hdr {
	uint64_t cls;                     /* size class: the block holds 1 << cls bytes */
	uint64_t pad;                     /* keeps the payload 16-byte aligned */
};

static char *region, *region_top;
static char *region_end; /* grows (atomic: ours() reads it without the lock) */
static struct hdr *free_list[NCLASS];
static int lock, region_failed;

static void take(void)
{
	while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&lock, __ATOMIC_RELAXED))
			__builtin_ia32_pause();
}

static void give(void)
{
	__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
}

/* A fork while another thread held the lock leaves the child's locked for ever: the child's
 * one thread starts with it free (no prepare handler, which could run after another of the
 * LC's that allocates).  That thread may have been in the middle of a free list then: the
 * child drops the lists (their blocks stay the parent's, unused) and carves new blocks from
 * the top, which a half-done change cannot have left wrong.  (A forked child of a threaded
 * program crashed loading its trace, 1 replay in about 60 under the test suite.) */
static void child_unlock(void)
{
	if (__atomic_load_n(&lock, __ATOMIC_RELAXED))
		memset(free_list, 0, sizeof(free_list));
	__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
}

__attribute__((constructor)) static void lc_alloc_init(void)
{
	pthread_atfork(NULL, NULL, child_unlock);
}

static int ours(const void *p)
{
	return region && (const char *)p >= region &&
	       (const char *)p < __atomic_load_n(&region_end, __ATOMIC_ACQUIRE);
}

/* Under the lock: the region's first step, reserved on first use (raw mmap: the LC's own
 * wrapper of mmap is not for it). */
static int region_ready(void)
{
	long r;

	if (region)
		return 1;
	if (region_failed)
		return 0;
	r = syscall(SYS_mmap, (void *)REGION_HINT, (size_t)REGION_STEP, PROT_READ | PROT_WRITE,
	            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0L);
	if (r == -1 || r == 0) {
		region_failed = 1;
		return 0;
	}
	region = region_top = (char *)r;
	__atomic_store_n(&region_end, region + REGION_STEP, __ATOMIC_RELEASE);
	return 1;
}

/* Under the lock: n more bytes at the region's end, reserved right after it (whole steps),
 * up to REGION_SIZE in all.  0 when the addresses there are taken (by the program) or the
 * limit is reached: libc's malloc serves then. */
static int region_grow(size_t n)
{
	size_t step = (n + REGION_STEP - 1) / REGION_STEP * REGION_STEP;
	long r;

	if (step > REGION_SIZE - (size_t)(region_end - region))
		return 0;
	r = syscall(SYS_mmap, region_end, step, PROT_READ | PROT_WRITE,
	            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0L);
	if (r == -1)
		return 0;
	if ((char *)r != region_end) { /* a kernel before 4.17 took the address as a hint */
		syscall(SYS_munmap, r, step);
		return 0;
	}
	__atomic_store_n(&region_end, region_end + step, __ATOMIC_RELEASE);
	return 1;
}

static unsigned size_class(size_t n)
{
	unsigned c = MIN_SHIFT;

	while (c < NCLASS && ((size_t)1 << c) < n + sizeof(struct hdr))
		c++;
	return c;
}

void *lc_malloc(size_t n)
{
	unsigned c = size_class(n);
	struct hdr *h = NULL;

	if (c >= NCLASS)
		return NULL;
	take();
	if (region_ready()) {
		if ((h = free_list[c]) != NULL) {
			free_list[c] = *(struct hdr **)(h + 1);
		} else if ((size_t)(region_end - region_top) >= ((size_t)1 << c) ||
		           region_grow(((size_t)1 << c) - (size_t)(region_end - region_top))) {
			h = (struct hdr *)region_top;
			region_top += (size_t)1 << c;
		}
	}
	give();
	if (!h)
		return malloc(n); /* no region, or full: libc's */
	h->cls = c;
	return h + 1;
}

void lc_free(void *p)
{
	struct hdr *h;

	if (!p)
		return;
	if (!ours(p)) {
		free(p);
		return;
	}
	h = (struct hdr *)p - 1;
	take();
	*(struct hdr **)p = free_list[h->cls];
	free_list[h->cls] = h;
	give();
}

void *lc_calloc(size_t n, size_t size)
{
	void *p;

	if (size && n > SIZE_MAX / size)
		return NULL;
	p = lc_malloc(n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

void *lc_realloc(void *p, size_t n)
{
	size_t have;
	void *q;

	if (!p)
		return lc_malloc(n);
	if (!ours(p))
		return realloc(p, n);
	have = ((size_t)1 << ((struct hdr *)p - 1)->cls) - sizeof(struct hdr);
	if (n <= have)
		return p;
	if (!(q = lc_malloc(n)))
		return NULL;
	memcpy(q, p, have);
	lc_free(p);
	return q;
}

static char *copy(const char *s, size_t len)
{
	char *p = lc_malloc(len + 1);

	if (p) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
	return p;
}

char *lc_strndup(const char *s, size_t n)
{
	return copy(s, strnlen(s, n));
}

char *lc_strdup(const char *s)
{
	return copy(s, strlen(s));
}

static void *zstd_alloc(void *opaque, size_t n)
{
	(void)opaque;
	return lc_malloc(n);
}

static void zstd_free(void *opaque, void *p)
{
	(void)opaque;
	lc_free(p);
}

struct ZSTD_DCtx_s *lc_zstd_dctx(void)
{
	ZSTD_customMem mem = { zstd_alloc, zstd_free, NULL };

	return ZSTD_createDCtx_advanced(mem);
}
