/*
 * raw_close.c: channels closed with syscall(SYS_close, fd), as libuv closes them, for
 * replay_end.sh (recorder/io_more.c): the closes are events where they happened, the numbers
 * they free are taken again by new channels, and the readers see each end of stream.
 *
 *   raw_close
 *
 * The root makes a pipe and a socketpair and forks; each side closes the ends it does not
 * use with the raw call.  The child writes a line into the pipe, closes it, makes a new pipe
 * (on the numbers just freed) and talks to itself through it, then writes a line into the
 * socketpair and closes it, closes its pipe with syscall(SYS_close_range) and makes another
 * on the same numbers.  The root prints what it reads from each until their ends.
 */
#include <stdio.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void drain(const char *what, int fd)
{
	char buf[64];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		printf("%s: %.*s\n", what, (int)n, buf);
	printf("%s: end (%zd)\n", what, n);
}

int main(void)
{
	int p[2], q[2], sv[2], status;
	char c;
	pid_t pid;

	if (pipe(p) != 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 1;
	if ((pid = fork()) < 0)
		return 1;
	if (pid == 0) {
		syscall(SYS_close, p[0]);
		syscall(SYS_close, sv[0]);
		if (write(p[1], "through the pipe", 16) != 16)
			_exit(1);
		syscall(SYS_close, p[1]);
		if (pipe(q) != 0 || write(q[1], "x", 1) != 1 || read(q[0], &c, 1) != 1)
			_exit(1);
		if (write(sv[1], "through the socketpair", 22) != 22)
			_exit(1);
		syscall(SYS_close, sv[1]);
		/* the new pipe's ends, closed as a range (close_range, Linux 5.9) */
		if (syscall(SYS_close_range, q[0] < q[1] ? q[0] : q[1], q[0] < q[1] ? q[1] : q[0],
		            0) != 0) {
			syscall(SYS_close, q[0]);
			syscall(SYS_close, q[1]);
		}
		if (pipe(q) != 0 || write(q[1], "y", 1) != 1 || read(q[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	syscall(SYS_close, p[1]);
	syscall(SYS_close, sv[1]);
	drain("pipe", p[0]);
	drain("socketpair", sv[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 1;
	printf("child done\n");
	return 0;
}
