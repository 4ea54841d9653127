/*
 * open_again.c: a program that opens one file many times, as a server opening its static
 * files or configuration per request does, and prints how many bytes it read itself and how
 * many the kernel counted for the process (rchar of /proc/self/io): under the recorder the
 * difference is the recorder's reads of the files' first bytes (recorder/files.c).
 * Usage: open_again FILE COUNT
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* rchar of /proc/self/io, or -1. */
static long long rchar(void)
{
	char buf[1024];
	ssize_t n;
	int fd = open("/proc/self/io", O_RDONLY);
	char *p;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "rchar:");
	return p ? atoll(p + 6) : -1;
}

int main(int argc, char **argv)
{
	long long before, after, own = 0;
	char c;
	int i, count;

	if (argc != 3)
		return 2;
	count = atoi(argv[2]);
	before = rchar();
	for (i = 0; i < count; i++) {
		int fd = open(argv[1], O_RDONLY);

		if (fd < 0) {
			perror(argv[1]);
			return 1;
		}
		if (read(fd, &c, 1) == 1) /* the program reads one byte of it */
			own++;
		close(fd);
	}
	after = rchar();
	if (before < 0 || after < 0) {
		printf("no /proc/self/io\n");
		return 0;
	}
	/* the second read of /proc/self/io counts what the first returned: small */
	printf("own %lld extra %lld\n", own, after - before - own);
	return 0;
}
