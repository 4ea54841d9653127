/*
 * replay_connfail.c: a client that connects before its server listens, as asyncio clients
 * and psql do, for the replayer's end-to-end tests (replayer/README.md, "A connect that
 * fails"): failed connects must fail again in replay although the server listens by then.
 *
 *   replay_connfail
 *
 * The root ("cf") binds a socket to an ephemeral port of 127.0.0.1 without listening, and
 * forks the server ("cf.1"), which keeps it and listens only once the client has written a
 * line to a pipe.  The client (the root) first connects blocking (refused), then
 * non-blocking: EINPROGRESS, poll, SO_ERROR says ECONNREFUSED; once more, where the next
 * connect on the socket reports ECONNREFUSED instead; it writes the line and
 * retries, a new non-blocking socket each time, until a connect works, then sends "ping"
 * and prints the server's answer and how many attempts failed.
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
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void server(int lfd, int go)
{
	char line[16], buf[16];
	int c;
	ssize_t n;

	if (read(go, line, sizeof(line)) <= 0)
		die("read go");
	if (listen(lfd, 4) != 0)
		die("listen");
	if ((c = accept(lfd, NULL, NULL)) < 0)
		die("accept");
	if ((n = read(c, buf, sizeof(buf))) != 4 || memcmp(buf, "ping", 4) != 0)
		die("read ping");
	if (write(c, "pong", 4) != 4)
		die("write pong");
	/* the client closes first: the TIME_WAIT is its port's, and replay binds this one again */
	if (read(c, buf, sizeof(buf)) != 0)
		die("read end");
	close(c);
	close(lfd);
	exit(0);
}

/* One non-blocking attempt: 0 when connected, else the error SO_ERROR (or connect) gave. */
static int attempt(const struct sockaddr_in *sa, int *fdp)
{
	struct pollfd p;
	int fd = socket(AF_INET, SOCK_STREAM, 0), err = 0;
	socklen_t el = sizeof(err);

	if (fd < 0)
		die("socket");
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0)
		die("fcntl");
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) != 0) {
		if (errno != EINPROGRESS) {
			err = errno;
			close(fd);
			return err;
		}
		p.fd = fd;
		p.events = POLLOUT;
		p.revents = 0;
		if (poll(&p, 1, -1) != 1)
			die("poll");
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
			die("getsockopt");
		if (err) {
			close(fd);
			return err;
		}
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)
		die("fcntl");
	*fdp = fd;
	return 0;
}

/* One non-blocking attempt whose outcome the next connect on the socket reports: the error. */
static int attempt_by_connect(const struct sockaddr_in *sa)
{
	struct pollfd p;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), err;

	if (fd < 0)
		die("socket");
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0 || errno != EINPROGRESS)
		die("connect in progress");
	p.fd = fd;
	p.events = POLLOUT;
	p.revents = 0;
	if (poll(&p, 1, -1) != 1)
		die("poll");
	err = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0 ? 0 : errno;
	close(fd);
	return err;
}

int main(void)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	struct timespec pause = { 0, 2000000 };
	int lfd, fd, go[2], err, failed = 0;
	char buf[16];
	pid_t pid;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((lfd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sl) != 0)
		die("bind");
	if (pipe(go) != 0)
		die("pipe");
	if ((pid = fork()) < 0)
		die("fork");
	if (pid == 0) {
		close(go[1]);
		server(lfd, go[0]);
	}
	close(lfd);
	close(go[0]);

	/* blocking: refused at once */
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		die("socket");
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		fprintf(stderr, "blocking connect worked before the server listened\n");
		return 1;
	}
	printf("blocking connect: %s\n", strerror(errno));
	close(fd);

	/* non-blocking: refused through SO_ERROR */
	err = attempt(&sa, &fd);
	if (!err) {
		fprintf(stderr, "connect worked before the server listened\n");
		return 1;
	}
	printf("first attempt: %s\n", strerror(err));
	failed++;
	/* non-blocking: refused, as the next connect says */
	if (!(err = attempt_by_connect(&sa))) {
		fprintf(stderr, "connect worked before the server listened\n");
		return 1;
	}
	printf("second attempt: %s\n", strerror(err));
	failed++;
	if (write(go[1], "go\n", 3) != 3)
		die("write go");
	while ((err = attempt(&sa, &fd)) != 0) {
		if (err != ECONNREFUSED)
			die("attempt");
		failed++;
		nanosleep(&pause, NULL);
	}
	if (write(fd, "ping", 4) != 4)
		die("write ping");
	if (read(fd, buf, 4) != 4)
		die("read pong");
	printf("answer %.4s after %d failed attempts\n", buf, failed);
	close(fd);
	if (waitpid(pid, &err, 0) != pid || !WIFEXITED(err) || WEXITSTATUS(err) != 0)
		die("server");
	return 0;
}
