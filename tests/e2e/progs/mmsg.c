/*
 * mmsg.c: a parent sends datagrams to its forked child over a socketpair with sendmmsg, two
 * through libc's sendmmsg and two through syscall(SYS_sendmmsg) (libuv's way); the child
 * prints what it receives.  Each message must be a SEND event of the parent, as a sendmsg of
 * its own would be (recorder/io_more.c), and the session replays.
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int send_two(int fd, const char *a, const char *b, int raw)
{
	struct iovec iov[2] = { { (void *)a, strlen(a) }, { (void *)b, strlen(b) } };
	struct mmsghdr m[2];

	memset(m, 0, sizeof(m));
	for (int i = 0; i < 2; i++) {
		m[i].msg_hdr.msg_iov = &iov[i];
		m[i].msg_hdr.msg_iovlen = 1;
	}
	if (raw)
		return (int)syscall(SYS_sendmmsg, fd, m, 2, 0);
	return sendmmsg(fd, m, 2, 0);
}

int main(void)
{
	int sv[2], st;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) != 0)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		char buf[64];

		close(sv[0]);
		for (int i = 0; i < 4; i++) {
			ssize_t n = recv(sv[1], buf, sizeof(buf), 0);

			if (n < 0)
				return 1;
			printf("got %.*s\n", (int)n, buf);
		}
		return 0;
	}
	close(sv[1]);
	if (send_two(sv[0], "one", "two", 0) != 2 || send_two(sv[0], "three", "four", 1) != 2)
		return 1;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 1;
	return 0;
}
