/* safe_alloc.c: a program with its own allocator, like one linked with jemalloc, that calls an
 * intercepted function (clock_gettime) from inside malloc, free, calloc and realloc, from a
 * new call site each time.  The recorder must never re-enter the allocator from there (it
 * resolves a new call site on its first use): a re-entry aborts the program.
 *
 * The allocator is a bump allocator over a static arena, exported from the executable so that
 * it replaces libc's for every library in the process (the recorder's included).  It prints a
 * checksum of what it did, the same with and without recording, and exits 0.  It also reads the
 * clock once from code without unwind information and with a wild frame pointer, and a second
 * thread allocates alongside the main one.
 * Usage: safe_alloc [ROUNDS] */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define ARENA (256u << 20)

static _Alignas(64) unsigned char arena[ARENA];
static size_t used; /* bump pointer, taken with a compare-and-swap: two threads allocate */
static __thread int inside;
static unsigned long ticks, sink;

/* Many distinct call instructions: each tick_N calls clock_gettime from its own address. */
#define TICK(n) \
	static __attribute__((noinline)) void tick_##n(void) \
	{ \
		struct timespec ts; \
		clock_gettime(CLOCK_MONOTONIC, &ts); \
		sink += (unsigned long)ts.tv_nsec * (n + 1) + n; \
	}
#define T4(n) TICK(n##0) TICK(n##1) TICK(n##2) TICK(n##3)
#define T16(n) T4(n##0) T4(n##1) T4(n##2) T4(n##3)
T16(1) T16(2) T16(3) T16(4) T16(5) T16(6) T16(7) T16(8)
#define P4(n) tick_##n##0, tick_##n##1, tick_##n##2, tick_##n##3
#define P16(n) P4(n##0), P4(n##1), P4(n##2), P4(n##3)
static void (*const ticks_tab[])(void) = {
	P16(1), P16(2), P16(3), P16(4), P16(5), P16(6), P16(7), P16(8),
};
#define NTICKS (sizeof(ticks_tab) / sizeof(ticks_tab[0]))

static void enter(void)
{
	int e = errno;

	if (inside) {
		static const char msg[] = "safe_alloc: allocator re-entered\n";

		(void)!write(2, msg, sizeof(msg) - 1);
		abort();
	}
	inside = 1;
	/* like jemalloc's clock reads in the middle of its thread-cache work */
	ticks_tab[__atomic_fetch_add(&ticks, 1, __ATOMIC_RELAXED) % NTICKS]();
	errno = e;
}

static void leave(void)
{
	inside = 0;
}

static void *bump(size_t n, size_t align)
{
	size_t at, old = __atomic_load_n(&used, __ATOMIC_RELAXED);

	if (align < 16)
		align = 16;
	do {
		at = (old + sizeof(size_t) + align - 1) & ~(align - 1);
		if (n > ARENA || at + n > ARENA) {
			errno = ENOMEM;
			return NULL;
		}
	} while (!__atomic_compare_exchange_n(&used, &old, at + n, 0, __ATOMIC_RELAXED,
	                                      __ATOMIC_RELAXED));
	((size_t *)(void *)(arena + at))[-1] = n;
	return arena + at;
}

static size_t size_of(void *p)
{
	return ((size_t *)p)[-1];
}

void *malloc(size_t n)
{
	void *p;

	enter();
	p = bump(n, 16);
	leave();
	return p;
}

void free(void *p)
{
	if (!p)
		return;
	enter();
	leave();
}

void *calloc(size_t a, size_t b)
{
	void *p;

	if (b && a > SIZE_MAX / b) {
		errno = ENOMEM;
		return NULL;
	}
	enter();
	p = bump(a * b, 16);
	if (p)
		memset(p, 0, a * b);
	leave();
	return p;
}

void *realloc(void *old, size_t n)
{
	void *p;

	enter();
	p = bump(n, 16);
	if (p && old)
		memcpy(p, old, size_of(old) < n ? size_of(old) : n);
	leave();
	return p;
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p;

	enter();
	p = bump(n, align);
	leave();
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
	void *p;

	enter();
	p = bump(n, align);
	leave();
	return p;
}

void *memalign(size_t align, size_t n)
{
	return aligned_alloc(align, n);
}

void *valloc(size_t n)
{
	return aligned_alloc(4096, n);
}

void *pvalloc(size_t n)
{
	return aligned_alloc(4096, (n + 4095) & ~(size_t)4095);
}

size_t malloc_usable_size(void *p)
{
	return p ? size_of(p) : 0;
}

#ifdef __x86_64__
/* A function without unwind information that calls clock_gettime with its frame pointer set
 * to fp (a mapped page that cannot be read): the recorder's walk past it must end, not fault
 * (a probe that only asks whether the page is mapped would let it fault). */
void nocfi_clock(void *fp);
__asm__(".text\n"
        ".globl nocfi_clock\n"
        ".type nocfi_clock, @function\n"
        "nocfi_clock:\n"
        "	push %rbp\n"
        "	push %rbx\n"
        "	mov %rsp, %rbx\n"
        "	mov %rdi, %rbp\n"
        "	and $-16, %rsp\n"
        "	sub $16, %rsp\n"
        "	mov $1, %edi\n"
        "	mov %rsp, %rsi\n"
        "	call clock_gettime@PLT\n"
        "	mov %rbx, %rsp\n"
        "	pop %rbx\n"
        "	pop %rbp\n"
        "	ret\n"
        ".size nocfi_clock, .-nocfi_clock\n");
#else
static void nocfi_clock(void *fp)
{
	(void)fp;
}
#endif

/* Like a worker next to jemalloc's background thread: both threads allocate, each reading the
 * clock from new call sites inside the allocator. */
static unsigned long work(unsigned long rounds, unsigned salt)
{
	unsigned long i, sum = 0;

	for (i = 0; i < rounds; i++) {
		char *a = malloc(16 + i % 200), *b = calloc(4, 8 + i % 50);

		memset(a, (int)((i + salt) & 0x7f), 16 + i % 200);
		a = realloc(a, 300 + i % 100);
		sum += (unsigned char)a[3] + (unsigned char)b[5];
		free(a);
		free(b);
	}
	return sum;
}

static unsigned long thread_rounds, thread_sum;

static void *worker(void *arg)
{
	(void)arg;
	thread_sum = work(thread_rounds, 7);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000, sum;
	pthread_t t;

	{
		char *guard = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (guard != MAP_FAILED)
			nocfi_clock(guard + 64);
	}
	thread_rounds = rounds / 2;
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 2;
	sum = work(rounds, 0);
	pthread_join(t, NULL);
	/* not the number of allocator calls: the recorder's own (at load) are counted too */
	printf("safe_alloc: %lu rounds, sum %lu, thread %lu\n", rounds, sum, thread_sum);
	return 0;
}
