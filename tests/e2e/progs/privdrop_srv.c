/* privdrop_srv.c: a server whose worker drops its privileges after the fork, as nginx's
 * workers do (see replay_privdrop.sh).  Run as root, it listens on a loopback port and
 * forks a worker that calls setgroups, setgid and setuid to nobody (65534) and then serves
 * N TCP clients one after the other (each: a request line, a reply naming the request's
 * rank); the root then forks the N clients one at a time (recorded processes of the same
 * session), each printing the reply it got, and at the end prints what the worker said it
 * served (its exit status).
 * With `proxy`, the root first forks an upstream server (staying root) and the worker, after
 * its drop, passes each request on to it over a new TCP connection and replies with the
 * upstream's answer, as nginx's proxy_pass does: a connection made after the drop.
 * With `closed`, the worker closes every descriptor above its listening socket after its drop
 * (closefrom, as daemons do), the recorder's registry descriptor among them.
 * Usage: privdrop_srv N [proxy|closed]   (exit 77 when not root or nobody does not exist)
 */
#include <arpa/inet.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* A request line (one receive, unless TCP split it). */
static ssize_t read_line(int fd, char *buf, size_t cap)
{
	size_t n = 0;

	while (n < cap - 1 && !memchr(buf, '\n', n)) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);

		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	return (ssize_t)n;
}

static int connect_to(int port)
{
	struct sockaddr_in a;
	int s = socket(AF_INET, SOCK_STREAM, 0);

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) != 0)
		return -1;
	return s;
}

/* A listening socket on a loopback port of the kernel's choice; its port in *port. */
static int listen_any(int *port)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* as servers do: the replay binds the recorded port again, which closed connections
	 * leave in TIME_WAIT */
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(lfd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(lfd, 16) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &alen) != 0)
		return -1;
	*port = ntohs(a.sin_port);
	return lfd;
}

/* The upstream of `proxy`: privileged, answers n requests. */
static int upstream(int lfd, int n)
{
	char req[128], rep[192];
	int i, len;

	for (i = 0; i < n; i++) {
		int c = accept(lfd, NULL, NULL);

		if (c < 0 || read_line(c, req, sizeof(req)) <= 0)
			return 101;
		len = snprintf(rep, sizeof(rep), "upstream %d (uid %d) saw %s", i + 1, (int)getuid(),
		               req);
		if (write(c, rep, (size_t)len) != len)
			return 103;
		close(c);
	}
	return n;
}

/* The worker: unprivileged from here, as nginx's. */
static int worker(int lfd, int n, int up_port, int closed)
{
	char req[128], rep[384], up[192];
	int i;

	if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
		return 100;
	if (closed)
		closefrom(lfd + 1);
	for (i = 0; i < n; i++) {
		int c = accept(lfd, NULL, NULL);
		int len;

		if (c < 0)
			return 101;
		if (read_line(c, req, sizeof(req)) <= 0)
			return 102;
		up[0] = '\0';
		if (up_port) {
			int u = connect_to(up_port);
			size_t got = 0;
			ssize_t r;

			if (u < 0 || write(u, req, strlen(req)) != (ssize_t)strlen(req))
				return 104;
			while (got < sizeof(up) - 1 && (r = read(u, up + got, sizeof(up) - 1 - got)) > 0)
				got += (size_t)r;
			up[got] = '\0';
			close(u);
		}
		len = snprintf(rep, sizeof(rep), "reply %d (uid %d) to %s%s", i + 1, (int)getuid(), req,
		               up);
		if (write(c, rep, (size_t)len) != len)
			return 103;
		close(c);
	}
	return n;
}

static int client(int port, int k)
{
	char req[64], rep[512];
	int s = connect_to(port), len;
	size_t got = 0;
	ssize_t r;

	if (s < 0)
		return 1;
	len = snprintf(req, sizeof(req), "request of client %d\n", k);
	if (write(s, req, (size_t)len) != len)
		return 1;
	while (got < sizeof(rep) - 1 && (r = read(s, rep + got, sizeof(rep) - 1 - got)) > 0)
		got += (size_t)r;
	rep[got] = '\0';
	printf("client %d got: %s", k, rep);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3, proxy = argc > 2 && strcmp(argv[2], "proxy") == 0;
	int closed = argc > 2 && strcmp(argv[2], "closed") == 0;
	int lfd, ufd, port, up_port = 0, k, st;
	pid_t w, u = 0;

	if (geteuid() != 0 || !getpwnam("nobody"))
		return 77;
	fflush(stdout);
	if (proxy) {
		if ((ufd = listen_any(&up_port)) < 0) {
			perror("privdrop_srv: listen");
			return 1;
		}
		if ((u = fork()) < 0)
			return 1;
		if (u == 0)
			_exit(upstream(ufd, n));
		close(ufd);
	}
	if ((lfd = listen_any(&port)) < 0) {
		perror("privdrop_srv: listen");
		return 1;
	}
	w = fork();
	if (w < 0)
		return 1;
	if (w == 0)
		_exit(worker(lfd, n, up_port, closed));
	close(lfd);
	for (k = 1; k <= n; k++) {
		pid_t c = fork();

		if (c < 0)
			return 1;
		if (c == 0)
			_exit(client(port, k));
		if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "privdrop_srv: client %d failed\n", k);
			return 1;
		}
	}
	if (waitpid(w, &st, 0) != w)
		return 1;
	printf("worker served %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	if (u) {
		if (waitpid(u, &st, 0) != u)
			return 1;
		printf("upstream served %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
	return 0;
}
