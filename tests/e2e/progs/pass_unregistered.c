/*
 * pass_unregistered.c: a server that listens after dropping its privileges (seteuid to
 * nobody, as vsftpd's session parent listens for passive data connections as its ftp user),
 * accepts a client's connection without reading from it, and passes it (SCM_RIGHTS) to a
 * worker that sends a page on it; the client prints what it got.  The listener could not
 * register with the recorder (its registry is root's), so its client took it for an outside
 * server, and the connection is an outside one to the server too (recorder/chan.c,
 * TRACE_ACCEPT_OUTSIDE): in replay the server must not wait for a connection nobody makes,
 * and the worker must send nothing on the stand-in it is passed (replayer/lc_ancillary.c,
 * lc_is_stand_in).  Needs root (exit 77 otherwise).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static int pass_fd(int sock, int fd)
{
	char c = 'F', ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
	                    .msg_controllen = sizeof(ctl) };
	struct cmsghdr *h = CMSG_FIRSTHDR(&m);

	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(h), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -1;
}

static int take_fd(int sock)
{
	char c, ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
	                    .msg_controllen = sizeof(ctl) };
	struct cmsghdr *h;
	int fd;

	if (recvmsg(sock, &m, 0) != 1 || !(h = CMSG_FIRSTHDR(&m)) || h->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(h), sizeof(int));
	return fd;
}

int main(void)
{
	int sp[2], pp[2], l, c, fd, i, st, ok = 1, one = 1;
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	unsigned short port;
	pid_t worker, client;
	char buf[4096];
	ssize_t n;
	size_t total = 0;

	if (geteuid() != 0)
		return 77;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0 || pipe(pp) != 0)
		return 1;
	/* both children before the privilege drop: a child forked after one is not recorded */
	if ((worker = fork()) == 0) {
		close(sp[0]);
		if ((fd = take_fd(sp[1])) < 0)
			_exit(2);
		for (i = 0; i < 200; i++) {
			n = snprintf(buf, sizeof(buf), "line %d of the page the worker sends\n", i);
			if (write(fd, buf, (size_t)n) != n)
				_exit(3);
		}
		_exit(0);
	}
	if ((client = fork()) == 0) {
		close(pp[1]);
		if (read(pp[0], &port, sizeof(port)) != sizeof(port))
			_exit(2);
		memset(&a, 0, sizeof(a));
		a.sin_family = AF_INET;
		a.sin_port = htons(port);
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if ((c = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
		    connect(c, (struct sockaddr *)&a, sizeof(a)) != 0)
			_exit(3);
		while ((n = read(c, buf, sizeof(buf))) > 0)
			total += (size_t)n;
		printf("client got %zu bytes\n", total);
		fflush(stdout);
		_exit(0);
	}
	close(sp[1]);
	close(pp[0]);
	if (seteuid(65534) != 0)
		return 1;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* SO_REUSEADDR: the worker closes first, and the replay binds the recorded port again */
	if ((l = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(l, 1) || getsockname(l, (struct sockaddr *)&a, &al))
		return 1;
	port = ntohs(a.sin_port);
	/* back to root for the rest: a replayed write on a pipe end another process held at the
	 * fork opens the replay's staging file, root's */
	if (seteuid(0) != 0)
		return 1;
	if (write(pp[1], &port, sizeof(port)) != sizeof(port))
		return 1;
	{
		struct pollfd p = { .fd = l, .events = POLLIN };

		if (poll(&p, 1, -1) != 1)
			return 1;
	}
	if ((fd = accept(l, NULL, NULL)) < 0 || pass_fd(sp[0], fd) != 0)
		return 1;
	close(fd);
	close(l);
	if (waitpid(worker, &st, 0) != worker || !WIFEXITED(st) || WEXITSTATUS(st))
		ok = 0;
	if (waitpid(client, &st, 0) != client || !WIFEXITED(st) || WEXITSTATUS(st))
		ok = 0;
	printf("%s\n", ok ? "served" : "failed");
	return ok ? 0 : 1;
}
