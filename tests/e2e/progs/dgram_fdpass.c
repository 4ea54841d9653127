/*
 * dgram_fdpass.c: a descriptor passed in a datagram on a named Unix datagram socket (as
 * sd_notify's FDSTORE does): a forked client sends the server one end of a socketpair with
 * SCM_RIGHTS in a datagram, then writes a line into the other end; the server receives the
 * datagram, reads the line through the descriptor it got and prints both.  Replayed, the
 * server must get the descriptor the client passed, not a stand-in (recorder/ancillary.c,
 * replayer/lc_ancillary.c; datagrams: replayer/README.md).
 * Usage: dgram_fdpass DIR   (the socket is made in DIR)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(2);
}

int main(int argc, char **argv)
{
	struct sockaddr_un a;
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	char word[16], line[64];
	struct iovec v;
	struct msghdr m;
	struct cmsghdr *c;
	int s, p[2], fd = -1, st;
	ssize_t n;
	pid_t pid;

	if (argc != 2)
		return 2;
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/sock", argv[1]);
	unlink(a.sun_path);
	if ((s = socket(AF_UNIX, SOCK_DGRAM, 0)) < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)))
		die("bind");
	if ((pid = fork()) < 0)
		die("fork");
	if (pid == 0) {
		int cs = socket(AF_UNIX, SOCK_DGRAM, 0);

		if (cs < 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, p) != 0)
			die("client");
		memset(&m, 0, sizeof(m));
		memset(&u, 0, sizeof(u));
		v.iov_base = "pipe";
		v.iov_len = 4;
		m.msg_name = &a;
		m.msg_namelen = sizeof(a);
		m.msg_iov = &v;
		m.msg_iovlen = 1;
		m.msg_control = u.buf;
		m.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &p[0], sizeof(int));
		if (sendmsg(cs, &m, 0) != 4)
			die("sendmsg");
		if (write(p[1], "through the passed socket\n", 26) != 26)
			die("write");
		return 0;
	}
	memset(&m, 0, sizeof(m));
	memset(&u, 0, sizeof(u));
	v.iov_base = word;
	v.iov_len = sizeof(word) - 1;
	m.msg_iov = &v;
	m.msg_iovlen = 1;
	m.msg_control = u.buf;
	m.msg_controllen = sizeof(u.buf);
	if ((n = recvmsg(s, &m, 0)) < 0)
		die("recvmsg");
	word[n] = '\0';
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
	if (fd < 0)
		die("no descriptor");
	if ((n = read(fd, line, sizeof(line) - 1)) <= 0)
		die("read");
	line[n] = '\0';
	printf("got %s: %s", word, line);
	waitpid(pid, &st, 0);
	unlink(a.sun_path);
	return 0;
}
