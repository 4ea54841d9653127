/*
 * replay_sharedacc.c: a prefork server, for the replayer's tests (replayer/README.md: accept
 * on a listening socket shared by several processes).
 *
 *   replay_sharedacc block|poll WORKERS CLIENTS
 *
 * The root ("pf") listens on an ephemeral port of 127.0.0.1 and forks WORKERS workers
 * ("pf.1"...), which all accept on that one socket in a loop (block: a blocking accept, as
 * apache prefork does; poll: poll, then a non-blocking accept that may find nothing, as
 * nginx's workers do), then CLIENTS clients, which connect all at once, send "client I" and
 * print the answer, "client I: served by worker W".  Which worker takes which client is up to
 * the scheduler when recorded; a replay must give each worker's accept the recorded client,
 * even when another worker's accept takes it from the shared queue first.  The root waits for
 * the clients, shuts the listening socket down (every blocked accept fails) and waits for the
 * workers.  Each process prints one line: compare the lines sorted.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static void worker(int lfd, int w, int use_poll)
{
	int served = 0;

	for (;;) {
		char buf[64], out[96];
		ssize_t n;
		int c;

		if (use_poll) {
			struct pollfd p = { .fd = lfd, .events = POLLIN };

			if (poll(&p, 1, -1) < 0)
				continue;
			if (p.revents & (POLLERR | POLLHUP | POLLNVAL))
				break;
		}
		c = accept(lfd, NULL, NULL);
		if (c < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			break; /* the root shut the socket down */
		}
		n = read(c, buf, sizeof(buf) - 1);
		if (n > 0) {
			buf[n] = '\0';
			snprintf(out, sizeof(out), "%s: served by worker %d\n", buf, w);
			if (write(c, out, strlen(out)) < 0)
				_exit(3);
			served++;
		}
		close(c);
	}
	printf("worker %d: stopped\n", w);
	fflush(stdout);
	_exit(0);
}

static void client(int port, int i)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char req[32], buf[128];
	ssize_t n, got = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((unsigned short)port);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		_exit(4);
	snprintf(req, sizeof(req), "client %d", i);
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		_exit(5);
	while ((n = read(fd, buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	buf[got] = '\0';
	fputs(buf, stdout);
	fflush(stdout);
	_exit(got > 0 ? 0 : 6);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int use_poll, nw, nc, lfd, status, bad = 0, one = 1;
	pid_t w[8], c[32];

	if (argc != 4)
		return 2;
	use_poll = strcmp(argv[1], "poll") == 0;
	nw = atoi(argv[2]);
	nc = atoi(argv[3]);
	if (nw < 1 || nw > 8 || nc < 1 || nc > 32)
		return 2;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	/* the replay binds the recorded port: the workers' closes left it in TIME_WAIT */
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 64) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &len) != 0)
		return 1;
	if (use_poll && fcntl(lfd, F_SETFL, O_NONBLOCK) != 0)
		return 1;
	fflush(stdout);
	for (int i = 0; i < nw; i++) {
		if ((w[i] = fork()) < 0)
			return 1;
		if (w[i] == 0)
			worker(lfd, i + 1, use_poll);
	}
	for (int i = 0; i < nc; i++) {
		if ((c[i] = fork()) < 0)
			return 1;
		if (c[i] == 0) {
			close(lfd);
			client(ntohs(sa.sin_port), i + 1);
		}
	}
	for (int i = 0; i < nc; i++)
		if (waitpid(c[i], &status, 0) != c[i] || !WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	shutdown(lfd, SHUT_RDWR);
	for (int i = 0; i < nw; i++)
		if (waitpid(w[i], &status, 0) != w[i] || !WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	printf("root: %d clients served, %d failures\n", nc, bad);
	return bad != 0;
}
