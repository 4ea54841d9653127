/*
 * note_reuse.c: the recorder's file note of an open waits for the program's fstat
 * (recorder/files.c); here the descriptor is closed where the recorder does not see it and
 * its number taken again before that fstat:
 *
 *   note_reuse DIR FILE dir      DIR opened and listed with fdopendir (closedir closes it
 *                                inside libc), FILE then fopen'ed on the same number, fstat'ed
 *   note_reuse DIR FILE raw      FILE opened, closed by a raw system call (no libc: static
 *                                code, Go), the number taken by an O_WRONLY open, an fopen
 *                                "r+" and a dup of DIR/other (older than the session, of
 *                                another size), each fstat'ed
 *   note_reuse DIR FILE two      two files opened, one byte read from each (the recorder's
 *                                own fstat at their first use is no call of the program's)
 *
 * A stale note made on the new file gave the old path the new file's size, and the replay
 * refused to start ("changed since the recording").  Prints what it saw; exits 77 where raw
 * has no raw system call to make.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int raw_close(int fd)
{
#if defined(__x86_64__)
	long r = SYS_close;

	__asm__ volatile("syscall" : "+a"(r) : "D"((long)fd) : "rcx", "r11", "memory");
	return (int)r;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = SYS_close;
	register long x0 __asm__("x0") = fd;

	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8) : "memory");
	return (int)x0;
#else
	(void)fd;
	return -38;
#endif
}

static int seen(const char *what, int fd)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return 1;
	printf("%s: fd %d, %lld bytes\n", what, fd, (long long)st.st_size);
	return 0;
}

int main(int argc, char **argv)
{
	char path[4096], c;
	int fd, n = 0;

	if (argc != 4)
		return 2;
	snprintf(path, sizeof(path), "%s/other", argv[1]);
	if (strcmp(argv[3], "dir") == 0) {
		DIR *d;
		FILE *f;

		fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || !(d = fdopendir(fd)))
			return 1;
		while (readdir(d))
			n++;
		closedir(d);
		if (!(f = fopen(argv[2], "r")))
			return 1;
		printf("%d entries\n", n);
		return seen("fopen", fileno(f));
	}
	if (strcmp(argv[3], "raw") == 0) {
		int w, k, x = -1;
		FILE *f;

		for (k = 0; k < 3; k++) {
			if (k == 2 && (x = open(path, O_RDONLY | O_CLOEXEC)) < 0)
				return 1;
			if ((fd = open(argv[2], O_RDONLY | O_CLOEXEC)) < 0)
				return 1;
			if (raw_close(fd) == -38)
				return 77;
			if (k == 0)
				w = open(path, O_WRONLY | O_CLOEXEC);
			else if (k == 1)
				w = (f = fopen(path, "r+e")) ? fileno(f) : -1;
			else
				w = dup(x);
			if (w != fd || seen(k == 0 ? "open" : k == 1 ? "fopen" : "dup", w))
				return 1;
			if (k == 1)
				fclose(f);
			else
				close(w);
		}
		return 0;
	}
	if (strcmp(argv[3], "two") == 0) {
		int a = open(argv[2], O_RDONLY | O_CLOEXEC), b = open(argv[2], O_RDONLY | O_CLOEXEC);

		if (a < 0 || b < 0 || read(b, &c, 1) != 1 || read(a, &c, 1) != 1)
			return 1;
		printf("read %c twice\n", c);
		return 0;
	}
	return 2;
}
