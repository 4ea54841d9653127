/*
 * create_once.c: a program whose path depends on what the file system held when it started,
 * as a server's pid file, a lock or a first-run setup does.  In DIR it creates `once` with
 * O_CREAT|O_EXCL (writing its pid into it) unless it is there, makes the directory `cache`
 * unless it is there, creates `out` with fopen("w") and opens `log` with O_CREAT|O_APPEND;
 * with --recreate it first unlinks `once` (a file it may not find).  It prints which branch
 * each call took, so that a replay that sees another file system prints something else.
 * Usage: create_once DIR [--recreate]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[4096];
	FILE *f;
	int fd;

	if (argc < 2 || chdir(argv[1]) != 0) {
		fprintf(stderr, "usage: create_once DIR [--recreate]\n");
		return 2;
	}
	if (argc > 2 && strcmp(argv[2], "--recreate") == 0)
		printf("unlink once: %s\n", unlink("once") == 0 ? "removed" : strerror(errno));
	/* an absolute path for one, relative paths for the others */
	snprintf(path, sizeof(path), "%s/once", argv[1]);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd >= 0) {
		dprintf(fd, "%ld\n", (long)getpid());
		close(fd);
		printf("once: created\n");
	} else {
		printf("once: %s\n", errno == EEXIST ? "there already" : strerror(errno));
	}
	printf("cache: %s\n", mkdir("cache", 0755) == 0 ? "made" :
	       errno == EEXIST ? "there already" : strerror(errno));
	if ((f = fopen("out", "w")) != NULL) {
		fputs("written\n", f);
		fclose(f);
	}
	fd = open("log", O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd >= 0) {
		dprintf(fd, "run\n");
		close(fd);
		printf("log: appended\n");
	}
	return 0;
}
