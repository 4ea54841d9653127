/* fd_limit.c: under a small descriptor limit (`ulimit -n 16`), takes descriptors until the
 * kernel refuses one (EMFILE), in the parent and in a forked child, and prints every number
 * it was given: for replay_fd_limit.sh.  Also waits in epoll at the limit, for a pipe registered
 * with a heap pointer as its data, and prints what the pointer points at: a replay must give
 * the program its own pointer back, which it reads from /proc (no descriptor left for that)
 * or from the registrations it saw (replayer/lc_nondet.c).  The numbers are the program's only if the preloads
 * keep theirs out of its way, or take the same ones recorded and replayed. */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static void take_all(const char *who)
{
	int fds[64][2], n = 0, i;

	while (n < 64 && pipe(fds[n]) == 0) {
		printf("%s: pipe %d %d\n", who, fds[n][0], fds[n][1]);
		n++;
	}
	printf("%s: %d pipes, then %s\n", who, n, n < 64 ? strerror(errno) : "enough");
	for (i = 0; i < n; i++) {
		close(fds[i][0]);
		close(fds[i][1]);
	}
}

struct watched {
	char name[16];
};

static void epoll_at_limit(void)
{
	struct watched *w = malloc(sizeof(*w));
	struct epoll_event ev = { .events = EPOLLIN }, got;
	int ep = epoll_create1(0), p[2], fds[64], n = 0;

	if (!w || ep < 0 || pipe(p) != 0 || write(p[1], "x", 1) != 1)
		exit(1);
	strcpy(w->name, "the pipe");
	ev.data.ptr = w;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev) != 0)
		exit(1);
	while (n < 64 && (fds[n] = dup(0)) >= 0)
		n++;
	if (epoll_wait(ep, &got, 1, -1) != 1)
		exit(1);
	printf("epoll at the limit (%d more descriptors): %s is ready\n", n,
	       ((struct watched *)got.data.ptr)->name);
	while (n > 0)
		close(fds[--n]);
	close(p[0]);
	close(p[1]);
	close(ep);
	free(w);
}

int main(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int l, c, s, st, one = 1;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	epoll_at_limit();
	take_all("parent");
	l = socket(AF_INET, SOCK_STREAM, 0);
	/* (a replay binds the recorded port, which the recorded connection holds in TIME_WAIT) */
	if (l < 0 || setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(l, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(l, 4) != 0 ||
	    getsockname(l, (struct sockaddr *)&a, &al) != 0)
		return 1;
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) != 0)
		return 1;
	s = accept(l, NULL, NULL);
	printf("listen %d, connect %d, accept %d\n", l, c, s);
	if (write(c, "hello", 5) != 5)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		char buf[8] = { 0 };

		if (read(s, buf, 5) != 5)
			_exit(1);
		printf("child: read %s\n", buf);
		take_all("child");
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return 1;
	printf("child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	take_all("parent again");
	return 0;
}
