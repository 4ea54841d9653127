/*
 * replay_ready.c: a readiness result that depends on another process, for the replayer's
 * tests (replayer/README.md: "readiness calls return the recorded result once the data
 * behind it has really arrived").
 *
 *   replay_ready poll|select|epoll N
 *
 * The root ("rd") forks "rd.1" on a socketpair.  N rounds: the root sends "g", waits with
 * poll, select or epoll_wait until its end is readable, then trusts that result as programs
 * do: FIONREAD (not an intercepted call) must say bytes are queued, and a non-blocking recv
 * takes them.  The child answers each "g" only after it has read it, so the answer cannot
 * be there before the root asked; a replay whose readiness call returned at once, before
 * the answer arrived, makes the root find nothing queued and stop with an error, and its
 * output differs from the recorded run's.  Then the root says "q", the child closes, and
 * the root waits for the end of the stream the same way.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *mode;
static int epfd = -1;

/* Wait until fd is readable; returns what the call said about fd (1 readable). */
static int wait_readable(int fd)
{
	if (strcmp(mode, "select") == 0) {
		fd_set rs, ws;

		FD_ZERO(&rs);
		FD_ZERO(&ws);
		FD_SET(fd, &rs);
		if (select(fd + 1, &rs, &ws, NULL, NULL) != 1)
			return 0;
		return FD_ISSET(fd, &rs);
	}
	if (strcmp(mode, "epoll") == 0) {
		struct epoll_event ev;

		if (epoll_wait(epfd, &ev, 1, -1) != 1)
			return 0;
		return ev.data.u64 == 42 && (ev.events & (EPOLLIN | EPOLLHUP));
	}
	{
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, -1) != 1)
			return 0;
		return (p.revents & (POLLIN | POLLHUP)) != 0;
	}
}

int main(int argc, char **argv)
{
	int sv[2], n, st;
	char buf[64];
	pid_t pid;

	if (argc != 3)
		return 2;
	mode = argv[1];
	n = atoi(argv[2]);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		close(sv[0]);
		for (int i = 0;; i++) {
			struct timespec ts;
			int len;

			if (read(sv[1], buf, 1) != 1 || buf[0] != 'g')
				break;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			len = snprintf(buf, sizeof(buf), "answer %d t=%ld", i, (long)(ts.tv_nsec % 1000));
			if (write(sv[1], buf, (size_t)len) != len)
				_exit(3);
		}
		close(sv[1]);
		_exit(0);
	}
	close(sv[1]);
	fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
	if (strcmp(mode, "epoll") == 0) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 42 };

		epfd = epoll_create1(EPOLL_CLOEXEC);
		if (epfd < 0 || epoll_ctl(epfd, EPOLL_CTL_ADD, sv[0], &ev) != 0)
			return 1;
	}
	for (int i = 0; i < n; i++) {
		int queued = 0;
		ssize_t r;

		if (write(sv[0], "g", 1) != 1)
			return 1;
		if (!wait_readable(sv[0])) {
			printf("round %d: %s did not say readable\n", i, mode);
			return 1;
		}
		if (ioctl(sv[0], FIONREAD, &queued) != 0 || queued <= 0) {
			printf("round %d: %s said readable, but nothing is there\n", i, mode);
			fflush(stdout);
			return 1;
		}
		r = recv(sv[0], buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (r <= 0) {
			printf("round %d: %s said readable, but recv gave %zd\n", i, mode, r);
			return 1;
		}
		buf[r] = '\0';
		printf("round %d: %s: %s\n", i, mode, buf);
	}
	if (write(sv[0], "q", 1) != 1)
		return 1;
	if (!wait_readable(sv[0]))
		return 1;
	printf("end: recv gives %zd\n", recv(sv[0], buf, sizeof(buf), MSG_DONTWAIT));
	waitpid(pid, &st, 0);
	printf("child: %s %d\n", WIFEXITED(st) ? "exit" : "signal",
	       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	return 0;
}
