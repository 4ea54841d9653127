/*
 * spin_lock.c: threads taking one mutex the way jemalloc's malloc_mutex_lock does (a
 * trylock; on failure, spin on a plain atomic flag, trying again whenever it looks clear,
 * up to 600 times; read the clock; one last trylock; then lock and read the clock again), so
 * that how many trylocks fail depends on scheduling outside any interposed call.  Each pass
 * through the critical section appends the thread's letter to a log, printed at the end: the
 * output is the lock order.  One of the threads is made through dlsym(RTLD_NEXT,
 * "pthread_create") from a library loaded after the preload (spin_dl.c).  The program first
 * checks that RTLD_NEXT keeps its meaning (exit 3 if not): looked up from the executable it
 * finds what RTLD_DEFAULT finds (the first object after the executable), from the library
 * what libc has.
 * With ALLOC, each pass also allocates and frees blocks of several sizes outside the lock
 * (built linked with jemalloc, whose own locks, clock reads and background thread are then
 * the allocator's: recorder/README.md, "Threads").
 * With SEM, the lock is a semaphore taken the same way (sem_trywait, spin, sem_wait).
 * With FEWER, one pass each and no races: the first thread takes the lock and holds it until
 * the last one, spinning (trying whatever the flag says), has read the clock; the environment
 * variable SPIN_TRIES (600 when unset) sets how many times the spin tries, so that a replay
 * given fewer tries than its recording reads the clock before the recorded run did.
 * With GAVEUP, the same, but the holder lets go once 300 of the spin's tries have failed (or
 * the clock was read), the 300th waiting until it has: when recorded the spinner gets the
 * lock by its 301st try, a replay given fewer tries gives up, reads the clock and locks.
 * Usage: spin_lock THREADS PASSES [alloc|sem|fewer|gaveup]   (THREADS - 1 made by
 * pthread_create, one through dlsym)
 */
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "spin_dl.h"

#define MAX_THREADS 16
#define MAX_PASSES 1000

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static sem_t sem;
static int use_sem;
static atomic_bool locked;
static char order[MAX_THREADS * MAX_PASSES + 2];
static size_t norder;
static long waited_ns; /* (not printed: the clock reads are the slow path's statistics) */
static int passes, alloc;
static int fewer, gaveup, tries = 600;
static atomic_int holding, clock_read, spun, released; /* (FEWER, GAVEUP) */

/* 0 when taken */
static int try_take(void)
{
	return use_sem ? sem_trywait(&sem) : pthread_mutex_trylock(&m);
}

static void take(void)
{
	if (use_sem) {
		while (sem_wait(&sem) != 0)
			;
	} else {
		pthread_mutex_lock(&m);
	}
}
static volatile unsigned sink;

static void lock_slow(void)
{
	struct timespec before, after;

	for (int cnt = 0; cnt < tries; cnt++) {
		for (int i = 0; i < 16; i++)
			__asm__ volatile("" ::: "memory");
		if ((fewer || !atomic_load_explicit(&locked, memory_order_relaxed)) &&
		    try_take() == 0)
			return;
		/* (GAVEUP: the 300th failure waits until the holder has let go: the next try
		 * gets the lock) */
		if (fewer && atomic_fetch_add(&spun, 1) + 1 == 300 && gaveup)
			while (!atomic_load(&released))
				__asm__ volatile("" ::: "memory");
	}
	clock_gettime(CLOCK_MONOTONIC, &before);
	if (fewer)
		atomic_store(&clock_read, 1); /* the holder may let go now */
	if (try_take() == 0)
		return;
	take();
	clock_gettime(CLOCK_MONOTONIC, &after);
	waited_ns += (after.tv_sec - before.tv_sec) * 1000000000L + after.tv_nsec - before.tv_nsec;
}

static void lock(void)
{
	if (try_take() != 0)
		lock_slow();
	atomic_store_explicit(&locked, 1, memory_order_relaxed);
}

static void unlock(void)
{
	atomic_store_explicit(&locked, 0, memory_order_relaxed);
	if (use_sem)
		sem_post(&sem);
	else
		pthread_mutex_unlock(&m);
}

static void *worker(void *arg)
{
	char letter = (char)(intptr_t)arg;

	for (int p = 0; p < passes; p++) {
		while (fewer && letter != 'A' && !atomic_load(&holding))
			__asm__ volatile("" ::: "memory");
		lock();
		if (fewer && letter == 'A') {
			atomic_store(&holding, 1);
			while (!atomic_load(&clock_read) && !(gaveup && atomic_load(&spun) >= 300))
				__asm__ volatile("" ::: "memory");
		}
		order[norder++] = letter;
		for (unsigned i = 0; !fewer && i < 20000; i++) /* hold it a while: the others spin */
			sink += i;
		unlock();
		if (fewer && letter == 'A')
			atomic_store(&released, 1);
		if (alloc) {
			static const size_t sizes[] = { 24, 4096, 70000, 1 << 20, 200 };
			char *b = malloc(sizes[p % 5]);

			if (!b)
				abort();
			memset(b, letter, 64);
			sink += (unsigned)b[63];
			free(b);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t t[MAX_THREADS];
	void *libc;

	passes = argc > 2 ? atoi(argv[2]) : 100;
	alloc = argc > 3 && strcmp(argv[3], "alloc") == 0;
	use_sem = argc > 3 && strcmp(argv[3], "sem") == 0;
	gaveup = argc > 3 && strcmp(argv[3], "gaveup") == 0;
	fewer = gaveup || (argc > 3 && strcmp(argv[3], "fewer") == 0);
	if (getenv("SPIN_TRIES"))
		tries = atoi(getenv("SPIN_TRIES"));
	if (sem_init(&sem, 0, 1) != 0)
		return 1;
	if (n < 2 || n > MAX_THREADS || passes < 1 || passes > MAX_PASSES) {
		fprintf(stderr, "usage: spin_lock THREADS(2-16) PASSES(1-1000)\n");
		return 2;
	}
	libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	if (!libc || dlsym(RTLD_NEXT, "getpid") != dlsym(RTLD_DEFAULT, "getpid") ||
	    spin_dl_next("getpid") != dlsym(libc, "getpid")) {
		fprintf(stderr, "spin_lock: dlsym(RTLD_NEXT) did not find what it should\n");
		return 3;
	}
	for (int i = 0; i < n - 1; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(intptr_t)('A' + i)) != 0)
			return 1;
	if (spin_dl_create(&t[n - 1], worker, (void *)(intptr_t)('A' + n - 1)) != 0)
		return 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	order[norder++] = '\n';
	fwrite(order, 1, norder, stdout);
	return 0;
}
