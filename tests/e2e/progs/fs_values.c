/* fs_values.c: what the file system under the working directory says of itself, printed:
 * its kind (f_type: overlayfs in an isolated replay, ext4 or tmpfs when recorded) and its
 * free inodes (the session's own files, made between the recording and its replay, take
 * some), through statfs, fstatfs, statvfs and fstatvfs, and a statfs that fails.  A replay
 * prints what the recording printed only when it gives the recorded values back
 * (recorder/fsvalues.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

int main(void)
{
	struct statfs a, b;
	struct statvfs c, d;
	int fd = open(".", O_RDONLY | O_DIRECTORY), r;

	if (fd < 0 || statfs(".", &a) != 0 || fstatfs(fd, &b) != 0 || statvfs(".", &c) != 0 ||
	    fstatvfs(fd, &d) != 0)
		return perror("statfs"), 1;
	printf("statfs type %lx free inodes %llu\n", (unsigned long)a.f_type,
	       (unsigned long long)a.f_ffree);
	printf("fstatfs type %lx free inodes %llu\n", (unsigned long)b.f_type,
	       (unsigned long long)b.f_ffree);
	printf("statvfs free inodes %llu, fstatvfs %llu\n", (unsigned long long)c.f_favail,
	       (unsigned long long)d.f_favail);
	r = statfs("/nonexistent/encore", &a);
	printf("missing: %d %s\n", r, strerror(errno));
	close(fd);
	return 0;
}
