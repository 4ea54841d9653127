/*
 * replay_epoll_data.c: an event loop that keeps in epoll's user data what only this run knows
 * (like nginx's connection pointers): the live pid (read with a raw system call, which neither
 * recorder nor replayer translates) next to the descriptor.  A child sends N messages over a
 * socketpair, a second child over a pipe; the parent waits with epoll and checks that every
 * event's data is what it registered in this run.  Replay must give back the data the replayed
 * program registered, not the recorded run's: the output says "data ok" or names the mismatch.
 * Usage: replay_epoll_data N
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static uint64_t tag(int fd)
{
	return ((uint64_t)syscall(SYS_getpid) << 32) | (uint32_t)fd;
}

static void child(int fd, int n, char c)
{
	char buf[8];

	for (int i = 0; i < n; i++) {
		memset(buf, c, sizeof(buf));
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			_exit(1);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 5, sv[2], pp[2], ep, open_fds = 2, bad = 0;
	long got = 0;
	struct epoll_event ev;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) || pipe(pp))
		return 1;
	if (fork() == 0) {
		close(sv[0]);
		close(pp[0]);
		close(pp[1]);
		child(sv[1], n, 's');
	}
	if (fork() == 0) {
		close(sv[0]);
		close(sv[1]);
		close(pp[0]);
		child(pp[1], n, 'p');
	}
	close(sv[1]);
	close(pp[1]);
	if ((ep = epoll_create1(0)) < 0)
		return 1;
	ev.events = EPOLLIN;
	ev.data.u64 = tag(sv[0]);
	epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ev);
	ev.data.u64 = tag(pp[0]);
	epoll_ctl(ep, EPOLL_CTL_ADD, pp[0], &ev);
	while (open_fds > 0) {
		struct epoll_event out[4];
		int r = epoll_wait(ep, out, 4, -1);

		for (int i = 0; i < r; i++) {
			int fd = (int)(uint32_t)out[i].data.u64;
			char buf[64];
			ssize_t k;

			if (out[i].data.u64 != tag(fd) || (fd != sv[0] && fd != pp[0])) {
				printf("data %#llx is not what this run registered\n",
				       (unsigned long long)out[i].data.u64);
				bad = 1;
				open_fds = 0;
				break;
			}
			k = read(fd, buf, sizeof(buf));
			if (k > 0) {
				got += k;
			} else {
				epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
				close(fd);
				open_fds--;
			}
		}
	}
	while (wait(NULL) > 0)
		;
	printf("%s, %ld bytes\n", bad ? "data wrong" : "data ok", got);
	return bad;
}
