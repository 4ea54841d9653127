/*
 * replay_fdpass.c: descriptor passing as nginx does it with `master_process on`
 * (recorder/ancillary.c, replayer/lc_ancillary.c).  A master listens on TCP, forks a worker
 * joined to it by a socketpair and N clients one after the other.  It accepts each client's
 * connection, greets the client and reads the first word of its request itself, then passes
 * the connection to the worker with SCM_RIGHTS (one byte plus the descriptor, the
 * ancillary-only case); the worker reads the rest of the request and answers on it, so the
 * bytes of both directions continue across the pass.  A regular file passed in between is
 * read as it is (no channel).  Then the master passes the listening
 * socket itself, with its credentials (SCM_CREDENTIALS), and the worker accepts the last
 * client on it.  The worker reads credentials too (SO_PASSCRED) and checks that the pid they
 * carry is its parent's.  Every line printed depends on the bytes that travelled on the
 * passed connections; the worker marks `served` after each connection.
 * Usage: replay_fdpass [N [seqpacket]]   (N clients served through passed connections,
 *                                        default 2; the master and the worker joined by a
 *                                        SOCK_SEQPACKET socketpair instead of a stream)
 *        replay_fdpass helper PATH    (run bare, outside the session) listen on the Unix
 *                                     socket PATH, pass the first client one end of a
 *                                     socketpair with a line waiting in it, exit
 *        replay_fdpass outside PATH   connect to the helper, receive the descriptor, print
 *                                     what it reads from it (all input from outside)
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "encore.h"

static void die(const char *what)
{
	perror(what);
	exit(2);
}

/* One byte of command plus, optionally, a descriptor and our credentials. */
static void pass(int sock, char cmd, int fd, int creds)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct ucred))];
	} u;
	struct iovec v = { .iov_base = &cmd, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };
	struct cmsghdr *c;
	size_t len = 0;

	memset(&u, 0, sizeof(u));
	m.msg_control = u.buf;
	m.msg_controllen = sizeof(u.buf);
	c = CMSG_FIRSTHDR(&m);
	if (fd >= 0) {
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
		len += CMSG_SPACE(sizeof(int));
		c = CMSG_NXTHDR(&m, c);
	}
	if (creds) {
		struct ucred uc = { .pid = getpid(), .uid = getuid(), .gid = getgid() };

		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_CREDENTIALS;
		c->cmsg_len = CMSG_LEN(sizeof(uc));
		memcpy(CMSG_DATA(c), &uc, sizeof(uc));
		len += CMSG_SPACE(sizeof(uc));
	}
	m.msg_controllen = len;
	if (len == 0)
		m.msg_control = NULL;
	if (sendmsg(sock, &m, 0) != 1)
		die("sendmsg");
}

/* Serve one connection: read a line, answer it. */
static void serve(int c, int k)
{
	char req[128], resp[192];
	ssize_t n = 0, r;

	while (n < (ssize_t)sizeof(req) - 1 && (r = read(c, req + n, sizeof(req) - 1 - (size_t)n)) > 0) {
		n += r;
		if (req[n - 1] == '\n')
			break;
	}
	req[n > 0 ? n - 1 : 0] = '\0';
	/* printed before the answer goes, so that every line comes in one order */
	printf("worker: serves '%s'\n", req);
	fflush(stdout);
	snprintf(resp, sizeof(resp), "worker answers '%s' (connection %d)\n", req, k);
	if (write(c, resp, strlen(resp)) != (ssize_t)strlen(resp))
		die("write");
	close(c);
	encore_mark("served", k);
}

static void worker(int sock)
{
	int one = 1, k = 0, p[2];

	if (setsockopt(sock, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) != 0)
		die("SO_PASSCRED");
	/* A pipe whose read end goes with a raw close (as libuv closes): the recorder learns of
	 * it only when the first descriptor received takes its number. */
	if (pipe(p) != 0)
		die("pipe");
	syscall(SYS_close, p[0]);
	close(p[1]);
	for (;;) {
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct ucred))];
		} u;
		char cmd;
		struct iovec v = { .iov_base = &cmd, .iov_len = 1 };
		struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1, .msg_control = u.buf,
		                    .msg_controllen = sizeof(u.buf) };
		int fd = -1, credok = 0;

		if (recvmsg(sock, &m, 0) != 1)
			die("recvmsg");
		if (m.msg_flags & MSG_CTRUNC) {
			fprintf(stderr, "worker: ancillary data cut\n");
			exit(3);
		}
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
				memcpy(&fd, CMSG_DATA(c), sizeof(int));
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
				struct ucred uc;

				memcpy(&uc, CMSG_DATA(c), sizeof(uc));
				credok = uc.pid == getppid() && uc.uid == getuid();
			}
		}
		printf("worker: command %c, descriptor %s, credentials %s\n", cmd,
		       fd >= 0 ? "received" : "none", credok ? "of the master" : "wrong");
		fflush(stdout);
		if (cmd == 'q')
			exit(0);
		if (fd < 0)
			exit(4);
		if (cmd == 'f') {
			/* a regular file: not a channel, read as it is */
			char head[4] = { 0 };

			if (read(fd, head, 4) != 4)
				die("read file");
			printf("worker: the file passed starts with %s\n",
			       memcmp(head, "\177ELF", 4) == 0 ? "ELF" : "something else");
			fflush(stdout);
			close(fd);
		} else if (cmd == 'c') {
			serve(fd, ++k);
		} else if (cmd == 'l') {
			/* the listening socket itself: accept one client here */
			int c = accept(fd, NULL, NULL);

			if (c < 0)
				die("accept");
			close(fd);
			serve(c, ++k);
		}
	}
}

static void client(int port, int k)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	char req[64], resp[256];
	ssize_t n = 0, r;
	int s = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) != 0)
		die("connect");
	snprintf(req, sizeof(req), "hello from client %d\n", k);
	if (write(s, req, strlen(req)) != (ssize_t)strlen(req))
		die("write");
	while ((r = read(s, resp + n, sizeof(resp) - 1 - (size_t)n)) > 0)
		n += r;
	resp[n] = '\0';
	printf("client %d: %s", k, resp);
	fflush(stdout);
	exit(0);
}

/* The master's part of a connection before it passes it: a greeting out, a word in. */
static void greet(int s)
{
	const char hello[] = "welcome\n";
	char word[7];
	size_t n = 0;
	ssize_t r;

	if (write(s, hello, sizeof(hello) - 1) != (ssize_t)sizeof(hello) - 1)
		die("write");
	while (n < 6 && (r = read(s, word + n, 6 - n)) > 0)
		n += (size_t)r;
	word[n] = '\0';
	printf("master: read '%s', passes the rest\n", word);
	fflush(stdout);
}

static pid_t spawn_client(int lfd, int port, int k)
{
	pid_t p = fork();

	if (p < 0)
		die("fork");
	if (p == 0) {
		close(lfd);
		client(port, k);
	}
	return p;
}

static void unix_addr(struct sockaddr_un *a, const char *path)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	snprintf(a->sun_path, sizeof(a->sun_path), "%s", path);
}

static int helper(const char *path)
{
	struct sockaddr_un a;
	const char line[] = "a line from a process outside the session\n";
	int l = socket(AF_UNIX, SOCK_STREAM, 0), c, sv[2];

	unix_addr(&a, path);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(l, 1) != 0)
		die("helper listen");
	if ((c = accept(l, NULL, NULL)) < 0)
		die("helper accept");
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 ||
	    write(sv[1], line, sizeof(line) - 1) != (ssize_t)sizeof(line) - 1)
		die("helper socketpair");
	close(sv[1]);
	pass(c, 'o', sv[0], 0);
	close(sv[0]);
	close(c);
	unlink(path);
	return 0;
}

static int outside(const char *path)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct sockaddr_un a;
	char cmd, line[128];
	struct iovec v = { .iov_base = &cmd, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1, .msg_control = u.buf,
	                    .msg_controllen = sizeof(u.buf) };
	ssize_t n = 0, r;
	int s = socket(AF_UNIX, SOCK_STREAM, 0), fd = -1;

	unix_addr(&a, path);
	while (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof(a)) != 0)
		usleep(1000); /* the helper starts beside us: its path comes soon */
	if (recvmsg(s, &m, 0) != 1)
		die("recvmsg");
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
	printf("command %c, descriptor %s\n", cmd, fd >= 0 ? "received" : "none");
	while (fd >= 0 && (r = read(fd, line + n, sizeof(line) - 1 - (size_t)n)) > 0)
		n += r;
	line[n] = '\0';
	printf("read from it: %s", line);
	return fd >= 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2, sv[2], lfd, port, one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	pid_t w, c;

	if (argc > 2 && strcmp(argv[1], "helper") == 0)
		return helper(argv[2]);
	if (argc > 2 && strcmp(argv[1], "outside") == 0)
		return outside(argv[2]);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((lfd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(lfd, 8) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &alen) != 0)
		die("listen");
	port = ntohs(a.sin_port);
	if (socketpair(AF_UNIX, argc > 2 && strcmp(argv[2], "seqpacket") == 0 ? SOCK_SEQPACKET :
	                                                                      SOCK_STREAM, 0, sv) != 0)
		die("socketpair");
	if ((w = fork()) < 0)
		die("fork");
	if (w == 0) {
		close(sv[0]);
		close(lfd);
		worker(sv[1]);
	}
	close(sv[1]);
	for (int k = 1; k <= n; k++) {
		int s;

		c = spawn_client(lfd, port, k);
		if ((s = accept(lfd, NULL, NULL)) < 0)
			die("accept");
		greet(s);
		pass(sv[0], 'c', s, 0);
		close(s);
		waitpid(c, NULL, 0);
	}
	/* a file (our own program), then the listening socket itself, with our credentials */
	if ((c = open(argv[0], O_RDONLY)) < 0)
		die("open");
	pass(sv[0], 'f', c, 0);
	close(c);
	pass(sv[0], 'l', lfd, 1);
	c = spawn_client(lfd, port, n + 1);
	close(lfd);
	waitpid(c, NULL, 0);
	pass(sv[0], 'q', -1, 1);
	waitpid(w, NULL, 0);
	printf("master: %d connections passed\n", n + 1);
	return 0;
}
