/* fdnum_mix.c: threads that take and free descriptor numbers in calls the recorder logs
 * (open, fopen, fclose, close) and in calls it does not (opendir/closedir, eventfd, a close
 * through syscall(2), an open that fails; a third thread only lists a directory: a number
 * the replay moved under its opendir closed its directory), and a thread that opens a file
 * from a dl_iterate_phdr callback (the loader's lock held) while another's file notes may
 * walk the loaded objects: for replay_fdnum_mix.sh.  Prints what it read, the same in every
 * run. */
#include <dirent.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *dir;
static long rounds;

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	char path[512];
	int fd;

	(void)info;
	(void)size;
	snprintf(path, sizeof(path), "%s/a", dir);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0)
		close(fd);
	++*(long *)arg;
	return 1;
}

static void *other_calls(void *arg)
{
	long seen = 0, walks = 0;
	char path[512];

	for (long i = 0; i < rounds; i++) {
		DIR *d = opendir(dir);
		struct dirent *e;
		int efd = eventfd(0, EFD_CLOEXEC), fd;

		if (!d || efd < 0)
			exit(3);
		while ((e = readdir(d)))
			seen++;
		closedir(d);
		snprintf(path, sizeof(path), "%s/missing%ld", dir, i % 3);
		if (open(path, O_RDONLY) >= 0) /* probing: fails */
			exit(4);
		snprintf(path, sizeof(path), "%s/b", dir);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			exit(5);
		syscall(SYS_close, fd); /* libuv's way: past close's interposer */
		close(efd);
		dl_iterate_phdr(phdr_cb, &walks);
	}
	*(long *)arg = seen > 0 && walks == rounds;
	return NULL;
}

/* only calls that log nothing: opendir and closedir (libc's own open and close) */
static void *lister(void *arg)
{
	long seen = 0;

	for (long i = 0; i < rounds * 2; i++) {
		DIR *d = opendir(dir);

		if (!d)
			exit(8);
		while (readdir(d))
			seen++;
		closedir(d);
	}
	*(long *)arg = seen > 0;
	return NULL;
}

static void *files(void *arg)
{
	char path[512], c[8];
	long sum = 0;

	for (long i = 0; i < rounds; i++) {
		FILE *f;
		int fd;

		snprintf(path, sizeof(path), "%s/%c", dir, "ab"[i % 2]);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || read(fd, c, 1) != 1)
			exit(6);
		sum += c[0];
		close(fd);
		if (!(f = fopen(path, "r")) || !fgets(c, sizeof(c), f))
			exit(7);
		sum += c[0];
		fclose(f);
	}
	*(long *)arg = sum;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t1, t2, t3;
	long ok = 0, sum = 0, listed = 0;

	if (argc != 3)
		return 2;
	dir = argv[1];
	rounds = atol(argv[2]);
	pthread_create(&t1, NULL, other_calls, &ok);
	pthread_create(&t2, NULL, files, &sum);
	pthread_create(&t3, NULL, lister, &listed);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	pthread_join(t3, NULL);
	printf("ok=%ld sum=%ld listed=%ld\n", ok, sum, listed);
	return ok && listed ? 0 : 1;
}
