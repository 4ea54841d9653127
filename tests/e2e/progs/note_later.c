/*
 * note_later.c: files opened and used in every way a program may, so that the recorder's
 * file note (recorder/files.c), which waits after an open for the program's own fstat,
 * is made whatever comes first: the program's fstat, a read, a close after mmap, a dup2
 * over the descriptor, close_range, an fclose of an fdopen, an exec with the descriptor
 * still open, the process's end, more files open at once than notes may wait.
 * Usage: note_later DIR      (files DIR/f-*, made by the test; prints "ok")
 *        note_later DIR fstat N   (open + fstat + close of DIR/f-fstat N times)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *dir;

static int open_f(const char *name)
{
	char p[4096];
	int fd;

	snprintf(p, sizeof(p), "%s/f-%s", dir, name);
	fd = open(p, O_RDONLY);
	if (fd < 0) {
		perror(p);
		exit(1);
	}
	return fd;
}

int main(int argc, char **argv)
{
	struct stat st;
	char c;
	int fd, many[6], i;

	if (argc < 2)
		return 2;
	dir = argv[1];
	if (argc == 4 && !strcmp(argv[2], "fstat")) {
		for (i = 0; i < atoi(argv[3]); i++) {
			fd = open_f("fstat");
			if (fstat(fd, &st) != 0 || st.st_size == 0)
				return 1;
			close(fd);
		}
		printf("ok\n");
		return 0;
	}
	fd = open_f("fstat"); /* the program's fstat makes the note */
	fstat(fd, &st);
	close(fd);
	fd = open_f("read"); /* its first read */
	if (read(fd, &c, 1) != 1)
		return 1;
	close(fd);
	fd = open_f("mmap"); /* no interposed use: its close */
	if (mmap(NULL, 1, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED)
		return 1;
	close(fd);
	fd = open_f("dup2"); /* closed by a dup2 over it */
	dup2(0, fd);
	close(fd);
	fd = open_f("range"); /* closed by close_range */
	close_range((unsigned)fd, (unsigned)fd, 0);
	fclose(fdopen(open_f("fdopen"), "r")); /* closed inside libc */
	for (i = 0; i < 6; i++) /* more than wait at once */
		many[i] = open_f(i < 5 ? "many" : "many6");
	for (i = 0; i < 6; i++)
		close(many[i]);
	if (fork() == 0) {
		open_f("exec"); /* left open across an exec */
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	wait(NULL);
	open_f("exit"); /* left open: the process's end */
	printf("ok\n");
	return 0;
}
