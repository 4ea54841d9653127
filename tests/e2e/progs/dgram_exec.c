/*
 * dgram_exec.c: a Unix datagram socket that goes through exec (tests/e2e/replay_dgram.sh,
 * mode exec).  The server binds DIR/s; its child binds DIR/c and execs this
 * program again with the socket's number, which sends a datagram to the server and reads the
 * answer.  The server prints what it got before it answers, the client what it got after:
 * in this order in every run.  Usage: dgram_exec DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static struct sockaddr_un addr(const char *dir, const char *n)
{
	struct sockaddr_un a;

	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s", dir, n);
	return a;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

int main(int argc, char **argv)
{
	struct sockaddr_un s, c, from;
	socklen_t fl = sizeof(from);
	char buf[64], fds[16];
	ssize_t n;
	int sv, cl;

	if (argc < 2)
		return 2;
	s = addr(argv[1], "s");
	c = addr(argv[1], "c");
	if (argc > 2) { /* the client's new image: its socket is descriptor argv[2] */
		int fd = atoi(argv[2]);

		if (sendto(fd, "hello after exec", 16, 0, (struct sockaddr *)&s, sizeof(s)) != 16 ||
		    (n = recv(fd, buf, sizeof(buf), 0)) < 0)
			die("client");
		printf("client got %.*s\n", (int)n, buf);
		return 0;
	}
	unlink(s.sun_path);
	unlink(c.sun_path);
	if ((sv = socket(AF_UNIX, SOCK_DGRAM, 0)) < 0 || bind(sv, (struct sockaddr *)&s, sizeof(s)))
		die("server socket");
	if (fork() == 0) {
		if ((cl = socket(AF_UNIX, SOCK_DGRAM, 0)) < 0 ||
		    bind(cl, (struct sockaddr *)&c, sizeof(c)))
			die("client socket");
		snprintf(fds, sizeof(fds), "%d", cl);
		execl(argv[0], argv[0], argv[1], fds, (char *)NULL);
		die("exec");
	}
	if ((n = recvfrom(sv, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl)) < 0)
		die("recvfrom");
	printf("server got %.*s\n", (int)n, buf);
	fflush(stdout);
	if (sendto(sv, "reply", 5, 0, (struct sockaddr *)&from, fl) != 5)
		die("sendto");
	wait(NULL);
	unlink(s.sun_path);
	unlink(c.sun_path);
	return 0;
}
