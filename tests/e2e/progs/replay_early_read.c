/*
 * replay_early_read.c: a non-blocking TCP server that reads an accepted connection before
 * its first byte, for the recorder's "undecided" accepted ends (recorder/README.md, "Bytes:
 * recorded peers, outside peers") and their replay.
 *
 *   replay_early_read
 *
 * The root ("early") listens on 127.0.0.1 and forks one client ("early.1").  The recorder
 * decides whether an accepted end's peer is recorded from the registry entry the client's
 * recorder makes when the client's connect returns; with a real client that entry may come
 * after the server's accept and first read (lighttpd, haproxy).  Here the client loses that
 * race: both processes share one CPU and the client runs at SCHED_IDLE, so the connection
 * that wakes the server hands it the CPU as the client's connect returns, before its
 * recorder registers the connection; the server accepts and reads at once.  The early read
 * finds nothing (EAGAIN) in every run, whoever wins: the client sends its request only once
 * the server tells it (a pipe) that it has read, then reads the answer; three times, so
 * that a run where the client wins the race every time is next to impossible.  A fourth
 * connection is read early the same way, and the client closes it without sending: the
 * server's read returns the end of the stream.
 *
 * Everything printed is the same in every run; a replay must print it too.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* Connections: the client sends a request on each but the last, which it closes at once. */
#define NCONN 4

static const char request[] = "GET /early HTTP/1.0\r\n\r\n";

/* Waits for the descriptor to be readable: the server's reads are non-blocking. */
static int wait_in(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (poll(&p, 1, -1) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

/* The client: connect, wait for the server's early read, send, read. */
static int client(const struct sockaddr_in *sa, int go, int last)
{
	char buf[128];
	size_t got = 0;
	ssize_t r;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) != 0)
		return 90;
	if (read(go, buf, 1) != 1)
		return 91;
	if (last) {
		close(fd);
		return 0;
	}
	if (write(fd, request, sizeof(request) - 1) != (ssize_t)(sizeof(request) - 1))
		return 93;
	while (got < sizeof(buf) - 1 && (r = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)r;
	buf[got] = '\0';
	printf("client: %s", buf);
	fflush(stdout);
	close(fd);
	return 0;
}

/* One connection, server side: the early read, the go-ahead, then the request or the end. */
static int serve(int lfd, int go, int k)
{
	char buf[128];
	size_t got = 0;
	ssize_t r;
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK);

	if (fd < 0)
		return -1;
	r = read(fd, buf, sizeof(buf));
	if (r >= 0 || errno != EAGAIN) {
		printf("server: the early read returned %zd (%s)\n", r, r < 0 ? strerror(errno) : "-");
		return -1;
	}
	printf("server: connection %d read before its first byte: EAGAIN\n", k + 1);
	fflush(stdout);
	if (write(go, "g", 1) != 1)
		return -1;
	for (;;) {
		if (wait_in(fd) != 0)
			return -1;
		r = read(fd, buf + got, sizeof(buf) - 1 - got);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
		if (got >= sizeof(request) - 1)
			break;
	}
	buf[got] = '\0';
	if (k == NCONN - 1) {
		printf("server: connection %d ended after %zu bytes\n", k + 1, got);
	} else {
		char answer[64];
		int n = snprintf(answer, sizeof(answer), "%zu bytes, %s", got,
		                 strcmp(buf, request) == 0 ? "as sent\n" : "not as sent\n");

		printf("server: connection %d brought %zu bytes\n", k + 1, got);
		fflush(stdout);
		/* a few bytes into an empty socket buffer: never short */
		if (write(fd, answer, (size_t)n) != n)
			return -1;
	}
	fflush(stdout);
	close(fd);
	return 0;
}

int main(void)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int lfd, go[2], st, rc = 0, one = 1;
	pid_t kid;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	/* the replay binds the recorded port, which the recorded run's closes left in TIME_WAIT */
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 4) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &len) != 0 || pipe(go) != 0)
		return 1;
	/* one CPU for both (the one we run on), so that the client's connect wakes the server
	 * onto it; where the machine refuses, the race goes either way and the test still
	 * holds */
	if (sched_getcpu() >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(sched_getcpu(), &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	fflush(stdout);
	kid = fork();
	if (kid < 0)
		return 1;
	if (kid == 0) {
		struct sched_param sp = { .sched_priority = 0 };
		int r = 0;

		sched_setscheduler(0, SCHED_IDLE, &sp);
		close(lfd);
		close(go[1]);
		for (int k = 0; k < NCONN && r == 0; k++)
			r = client(&sa, go[0], k == NCONN - 1);
		_exit(r);
	}
	close(go[0]);
	for (int k = 0; k < NCONN && rc == 0; k++)
		if (serve(lfd, go[1], k) != 0)
			rc = 1;
	if (waitpid(kid, &st, 0) != kid)
		return 1;
	printf("client exited with %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return rc;
}
