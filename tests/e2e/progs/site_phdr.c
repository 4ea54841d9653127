/*
 * site_phdr.c: two threads whose every call is a new call site (each its own return
 * address: built without optimisation, so no two calls are merged), one calling from inside
 * a dl_iterate_phdr callback (libbacktrace's way: the loader's lock held), the other from
 * plain code.  Resolving a new site unwinds the stack, which asks the loader for its objects:
 * done under the recorder's writer lock, that is the loader's lock taken after the writer's,
 * against this program's order (recorder/site.c, recorder/README.md "Locks").
 * Usage: site_phdr ROUNDS
 */
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* 128 distinct call sites of getpid (an interposed call that logs an event). */
#define C1(n) case n: return (long)getpid();
#define C4(n) C1(n) C1(n + 1) C1(n + 2) C1(n + 3)
#define C16(n) C4(n) C4(n + 4) C4(n + 8) C4(n + 12)
#define C128(n) C16(n) C16(n + 16) C16(n + 32) C16(n + 48) C16(n + 64) C16(n + 80) \
	C16(n + 96) C16(n + 112)

static long site_in_callback(int i)
{
	switch (i & 127) {
		C128(0)
	}
	return -1;
}

static long site_plain(int i)
{
	switch (i & 127) {
		C128(0)
	}
	return -1;
}

static int go, inside, done, k;

static int cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info;
	(void)size;
	(void)arg;
	__atomic_store_n(&inside, 1, __ATOMIC_RELEASE);
	site_in_callback(k++);
	return 1; /* one object is enough */
}

static void *in_callback(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		sched_yield();
	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE))
		dl_iterate_phdr(cb, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	int rounds;

	if (argc != 2)
		return 2;
	rounds = atoi(argv[1]);
	if (pthread_create(&t, NULL, in_callback, NULL) != 0)
		return 1;
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&inside, __ATOMIC_ACQUIRE))
		sched_yield();
	/* the first round: every call a new site, resolved while the other thread is inside
	 * dl_iterate_phdr (it stays there, making calls, until this thread is done) */
	for (int i = 0; i < 128 * rounds; i++)
		site_plain(i);
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	printf("done\n");
	return 0;
}
