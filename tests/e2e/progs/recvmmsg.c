/*
 * recvmmsg.c: datagrams received with recvmmsg (BIND's named, through libuv): a forked child
 * sends N datagrams on a datagram socketpair, the parent takes them with recvmmsg and
 * MSG_WAITFORONE, and prints how many each call got (as many as had arrived: scheduling)
 * and what.  Recorded, each message is a receive event; replayed, each call gets what it got
 * (tests/e2e/replay_recvmmsg.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int sv[2], n = argc > 1 ? atoi(argv[1]) : 20, got = 0;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) != 0)
		return 1;
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		for (int i = 0; i < n; i++) {
			char b[32];
			int k = snprintf(b, sizeof(b), "dgram %d", i);

			if (send(sv[1], b, (size_t)k, 0) != k)
				_exit(1);
		}
		_exit(0);
	}
	close(sv[1]);
	while (got < n) {
		struct mmsghdr v[8];
		struct iovec io[8];
		char buf[8][32];
		int r;

		memset(v, 0, sizeof(v));
		for (int i = 0; i < 8; i++) {
			io[i].iov_base = buf[i];
			io[i].iov_len = sizeof(buf[i]) - 1;
			v[i].msg_hdr.msg_iov = &io[i];
			v[i].msg_hdr.msg_iovlen = 1;
		}
		r = recvmmsg(sv[0], v, 8, MSG_WAITFORONE, NULL);
		if (r <= 0) {
			perror("recvmmsg");
			return 1;
		}
		printf("recvmmsg got %d:", r);
		for (int i = 0; i < r; i++) {
			buf[i][v[i].msg_len] = '\0';
			printf(" [%s]", buf[i]);
		}
		printf("\n");
		got += r;
	}
	waitpid(pid, NULL, 0);
	return 0;
}
