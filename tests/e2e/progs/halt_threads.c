/*
 * halt_threads.c: a multi-threaded client whose threads are each blocked in a different call
 * when it halts, for tests/e2e/replay_halt_threads.sh (replayer/README.md, "Threads" and
 * "Halting": halting stops every thread of a halted process, each at its place).
 *
 *   halt_threads PORT|PATH
 *
 * A forked server listens on 127.0.0.1:PORT (or on the Unix socket PATH, an argument that
 * starts with '/', removed again when it ends), answers one request and ends.  In the client,
 * thread "conn" connects to it (retrying until it listens), sends its request, marks
 * `sent` (encore_mark) and prints the answer; meanwhile thread "reader" waits in read on a
 * pipe, thread "waiter" in pthread_cond_wait, thread "poller" in poll on another pipe, and
 * the main thread in pthread_join of "conn".  Once "conn" is done the main thread wakes the
 * three and each prints what it got.  Halted at `mark.sent >= 1`, the cut holds the server at
 * its start, short of its listen (no edge of the analyzer orders a listen before a connect).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "encore.h"

static int port;
static const char *path; /* a Unix socket's, or NULL for TCP */
static int rpipe[2], ppipe[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int go;

__attribute__((noreturn)) static void die(const char *what)
{
	perror(what);
	exit(2);
}

static union {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_un un;
} addr;
static socklen_t addr_len;

static void server_addr(void)
{
	memset(&addr, 0, sizeof(addr));
	if (path) {
		addr.un.sun_family = AF_UNIX;
		strncpy(addr.un.sun_path, path, sizeof(addr.un.sun_path) - 1);
		addr_len = sizeof(addr.un);
		return;
	}
	addr.in.sin_family = AF_INET;
	addr.in.sin_port = htons((unsigned short)port);
	addr.in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr_len = sizeof(addr.in);
}

static void serve(void)
{
	char buf[64];
	int one = 1, l, c;
	ssize_t n;

	if ((l = socket(addr.sa.sa_family, SOCK_STREAM, 0)) < 0)
		die("socket");
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, &addr.sa, addr_len) != 0 || listen(l, 4) != 0)
		die("bind/listen");
	if ((c = accept(l, NULL, NULL)) < 0)
		die("accept");
	if ((n = read(c, buf, sizeof(buf) - 1)) <= 0)
		die("server read");
	buf[n] = '\0';
	dprintf(c, "answer to %s", buf);
	close(c);
	close(l);
	if (path)
		unlink(path);
	_exit(0);
}

static void *conn(void *arg)
{
	char buf[128];
	ssize_t n, got = 0;
	int s;

	(void)arg;
	for (long tries = 0;; tries++) {
		if ((s = socket(addr.sa.sa_family, SOCK_STREAM, 0)) < 0)
			die("socket");
		if (connect(s, &addr.sa, addr_len) == 0)
			break;
		if ((errno != ECONNREFUSED && errno != ENOENT) || tries == 1000000)
			die("connect (the server never listened?)");
		close(s);
	}
	if (write(s, "request", 7) != 7)
		die("write");
	encore_mark("sent", 1);
	while ((n = read(s, buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	buf[got] = '\0';
	printf("conn: %s\n", buf);
	close(s);
	return NULL;
}

static void *reader(void *arg)
{
	char c = 0;

	(void)arg;
	if (read(rpipe[0], &c, 1) != 1)
		die("reader read");
	printf("reader: got %c\n", c);
	return NULL;
}

static void *waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	while (!go)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	printf("waiter: woken\n");
	return NULL;
}

static void *poller(void *arg)
{
	struct pollfd p = { .fd = ppipe[0], .events = POLLIN };
	char c = 0;

	(void)arg;
	if (poll(&p, 1, -1) != 1 || read(ppipe[0], &c, 1) != 1)
		die("poller");
	printf("poller: got %c\n", c);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[4];
	pid_t srv;
	int st;

	if (argc == 2 && argv[1][0] == '/')
		path = argv[1];
	if (argc != 2 || (!path && (port = atoi(argv[1])) <= 0)) {
		fprintf(stderr, "usage: halt_threads PORT|PATH\n");
		return 2;
	}
	server_addr();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pipe(rpipe) != 0 || pipe(ppipe) != 0)
		die("pipe");
	if ((srv = fork()) < 0)
		die("fork");
	if (srv == 0)
		serve();
	if (pthread_create(&t[0], NULL, reader, NULL) || pthread_create(&t[1], NULL, waiter, NULL) ||
	    pthread_create(&t[2], NULL, poller, NULL) || pthread_create(&t[3], NULL, conn, NULL))
		die("pthread_create");
	pthread_join(t[3], NULL);
	if (write(rpipe[1], "r", 1) != 1 || write(ppipe[1], "p", 1) != 1)
		die("write");
	pthread_mutex_lock(&mu);
	go = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	if (waitpid(srv, &st, 0) != srv || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die("server");
	printf("main: done\n");
	return 0;
}
