/*
 * shared_area.h: a file mapped shared by the test programs whose processes meet in memory
 * (sem_slots.c, spin_sleep.c): made and mapped by the parent, and mapped read-only by the
 * `--feed` side, which polls it from outside the recorded session, once it has its size.
 */
#ifndef ENCORE_TEST_SHARED_AREA_H
#define ENCORE_TEST_SHARED_AREA_H

#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* PATH made anew, SIZE bytes of zeros, mapped read-write; NULL (said on stderr) on failure. */
static inline void *shared_area_create(const char *path, size_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	void *p;

	if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
		perror(path);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		perror("mmap");
		return NULL;
	}
	return p;
}

/* PATH mapped read-only once it holds SIZE bytes; NULL while it does not (yet). */
static inline const void *shared_area_peek(const char *path, size_t size)
{
	const void *p = NULL;
	struct stat st;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && st.st_size >= (off_t)size) {
		p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			p = NULL;
	}
	close(fd);
	return p;
}

#endif
