/* fork_conn.c: a connection handed to forked children in turn, as inetd-style servers and
 * vsftpd's session processes do: the server accepts a client's connection and, without
 * reading it, forks a worker per request; each worker reads one request from the connection
 * it inherited, answers and exits, and the next is forked once it is gone.  The workers'
 * reads are of one stream, each after the other's: the trace must say where in the stream
 * each read was (recorder/share.c), or they all seem to read from its start.
 * Process names: fork_conn (server), fork_conn.1 (client), fork_conn.2-4 (workers).
 *
 * `fork_conn burst`: the client sends its three requests at once (8 bytes each), and the
 * three workers are alive together, each reading one request, in whatever order the kernel
 * lets them: nothing but the stream orders their reads (a halt on one must hold the workers
 * that read before it past their reads, analyzer/edges.c, link_turns). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define REQUESTS 3

/* One message: the peer sends the next only after the answer to this one. */
static ssize_t get(int fd, char *buf, size_t cap)
{
	ssize_t n = read(fd, buf, cap - 1);

	buf[n > 0 ? n : 0] = '\0';
	return n;
}

static void put(int fd, const char *s)
{
	size_t n = strlen(s);

	if (write(fd, s, n) != (ssize_t)n)
		exit(3);
}

/* Whether the child pid ended well. */
static int reaped(pid_t pid)
{
	int st;

	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* The server's end: the client closes first (the TIME_WAIT is its port's, not the one a
 * replay binds again), then the server's copy of the connection. */
static int served(pid_t client, int c)
{
	if (!reaped(client))
		return fprintf(stderr, "client failed\n"), 1;
	close(c);
	printf("server: %d requests served\n", REQUESTS);
	return 0;
}

/* The burst: requests of 8 bytes sent at once, workers forked together. */
static int burst(int l, struct sockaddr_in *a, socklen_t al)
{
	static const char reqs[] = "req one\nreq two\nreq 3rd\n";
	char buf[64];
	pid_t client, w[REQUESTS];
	int c;

	if ((client = fork()) == 0) {
		int s = socket(AF_INET, SOCK_STREAM, 0);

		close(l);
		if (s < 0 || connect(s, (struct sockaddr *)a, al) != 0)
			return perror("connect"), 1;
		put(s, reqs);
		for (int i = 0; i < REQUESTS; i++) {
			size_t n = 0;

			/* one answer: 15 bytes */
			while (n < 15) {
				ssize_t r = read(s, buf + n, 15 - n);

				if (r <= 0)
					return fprintf(stderr, "no answer %d\n", i + 1), 1;
				n += (size_t)r;
			}
			buf[15] = 0;
			printf("client: %s", buf);
		}
		close(s);
		return 0;
	}
	if ((c = accept(l, NULL, NULL)) < 0)
		return perror("accept"), 1;
	for (int i = 0; i < REQUESTS; i++)
		if ((w[i] = fork()) == 0) {
			size_t n = 0;

			while (n < 8) {
				ssize_t r = read(c, buf + n, 8 - n);

				if (r <= 0)
					_exit(2);
				n += (size_t)r;
			}
			char ans[32];

			buf[7] = '\0';
			/* 15 bytes: "wN got req XXX\n" */
			snprintf(ans, sizeof(ans), "w%d got %.7s\n", i + 1, buf);
			put(c, ans);
			_exit(0);
		}
	for (int i = 0; i < REQUESTS; i++)
		if (!reaped(w[i]))
			return fprintf(stderr, "worker %d failed\n", i + 1), 1;
	return served(client, c);
}

int main(int argc, char **argv)
{
	static const char *const req[REQUESTS] = { "first\n", "second\n", "third\n" };
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	char buf[128], out[160];
	int l, c;
	pid_t client;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((l = socket(AF_INET, SOCK_STREAM, 0)) < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(l, 1) || getsockname(l, (struct sockaddr *)&a, &al))
		return perror("listen"), 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && strcmp(argv[1], "burst") == 0)
		return burst(l, &a, al);
	if ((client = fork()) == 0) {
		int s = socket(AF_INET, SOCK_STREAM, 0);

		close(l);
		if (s < 0 || connect(s, (struct sockaddr *)&a, al) != 0)
			return perror("connect"), 1;
		for (int i = 0; i < REQUESTS; i++) {
			put(s, req[i]);
			if (get(s, buf, sizeof(buf)) <= 0)
				return fprintf(stderr, "no answer to request %d\n", i + 1), 1;
			printf("client: %s", buf);
		}
		close(s);
		return 0;
	}
	if ((c = accept(l, NULL, NULL)) < 0)
		return perror("accept"), 1;
	for (int i = 0; i < REQUESTS; i++) {
		pid_t w = fork();

		if (w == 0) {
			if (get(c, buf, sizeof(buf)) <= 0)
				_exit(2);
			snprintf(out, sizeof(out), "worker %d got %s", i + 1, buf);
			put(c, out);
			_exit(0);
		}
		if (w < 0 || !reaped(w))
			return fprintf(stderr, "worker %d failed\n", i + 1), 1;
	}
	return served(client, c);
}
