/*
 * open_phdr.c: two threads, each opening a file: one from inside a dl_iterate_phdr callback
 * (as libbacktrace does when it symbolizes a backtrace: it opens each object from the
 * callback, with the loader's lock held), the other from plain code.  The recorder must not
 * take the loader's lock while it holds its own (recorder/files.c): that order against this
 * program's would deadlock.  (The loops start once the thread's creation is logged, and log
 * no event themselves: new call sites resolved meanwhile are site_phdr.c's test.)
 * Usage: open_phdr FILE COUNT
 */
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *path;
static int count;
static int go; /* the thread starts its loop once pthread_create's event is logged */

static int cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	int fd = open(path, O_RDONLY);

	(void)info;
	(void)size;
	(void)arg;
	if (fd >= 0)
		close(fd);
	return 1; /* one object is enough */
}

static void *in_callback(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		sched_yield();
	for (int i = 0; i < count; i++)
		dl_iterate_phdr(cb, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (argc != 3)
		return 2;
	path = argv[1];
	count = atoi(argv[2]);
	if (pthread_create(&t, NULL, in_callback, NULL) != 0)
		return 1;
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < count; i++) {
		int fd = open(path, O_RDONLY);

		if (fd < 0) {
			perror(path);
			return 1;
		}
		close(fd);
	}
	pthread_join(t, NULL);
	printf("done\n");
	return 0;
}
