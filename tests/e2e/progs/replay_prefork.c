/*
 * replay_prefork.c: a prefork server and its client, for the tests that a replay always ends
 * (replayer/README.md, "How a replay ends").
 *
 *   replay_prefork WORKERS REQUESTS [setsid]
 *
 * The root ("pf") listens on an abstract Unix socket named after its pid, forks WORKERS
 * workers ("pf.1"...) that each loop on accept and answer every request with its length,
 * and then a client that says it started, makes REQUESTS connections, one request each, and
 * exits.  When the client is done the root tells the workers to stop (a request "quit" to
 * each) and waits for them.  With "setsid" the root first makes itself a session leader,
 * and each worker starts a session of its own too, as daemons do: none of them is in the
 * process group of `encore replay`'s roots any more.
 *
 * Set in a replay, the environment makes it go wrong on purpose, at a point that does not
 * depend on which worker accepts which connection:
 *   PREFORK_DIVERGE=1      the root makes a socket it did not make when recorded, after the
 *                          workers started and before the client: a divergence
 *   PREFORK_DIVERGE=stray  the same, after starting a stranger: a process made by a raw fork
 *                          system call (past every interposer, as a library's own clone
 *                          would be) that leaves the process group and waits for a signal;
 *                          only a replayer that ends every descendant, known or not, ends it
 *   PREFORK_HANG=1         the client, once started, waits for a signal: a stall
 *   PREFORK_HANG=stray     the same, after starting a stranger
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static socklen_t addr_of(struct sockaddr_un *sa, pid_t server)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "encore-replay-prefork-%d",
	         (int)server);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(sa->sun_path + 1));
}

/* A process past every interposer, out of the process group, waiting for a signal. */
static void stranger(void)
{
	if (syscall(SYS_fork) == 0) {
		syscall(SYS_setsid);
		for (;;)
			syscall(SYS_pause);
	}
}

static void worker(int lfd, int detach)
{
	if (detach)
		setsid();
	for (;;) {
		char buf[64], ans[32];
		int fd = accept(lfd, NULL, NULL), m;
		ssize_t n;

		if (fd < 0)
			_exit(1);
		n = read(fd, buf, sizeof(buf) - 1);
		if (n <= 0)
			_exit(1);
		buf[n] = '\0';
		if (strcmp(buf, "quit") == 0)
			_exit(0);
		m = snprintf(ans, sizeof(ans), "%zd", n);
		if (write(fd, ans, (size_t)m) != m)
			_exit(1);
		close(fd);
	}
}

static int ask(pid_t server, const char *req, char *ans, size_t cap)
{
	struct sockaddr_un sa;
	socklen_t len = addr_of(&sa, server);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ssize_t n;

	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, len) != 0)
		return -1;
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		return -1;
	n = ans ? read(fd, ans, cap - 1) : 0;
	close(fd);
	if (n < 0)
		return -1;
	if (ans)
		ans[n] = '\0';
	return 0;
}

int main(int argc, char **argv)
{
	int nw = argc > 1 ? atoi(argv[1]) : 3, nreq = argc > 2 ? atoi(argv[2]) : 6;
	int detach = argc > 3 && strcmp(argv[3], "setsid") == 0, lfd, st;
	const char *div = getenv("PREFORK_DIVERGE");
	pid_t kid[16], client, self;
	struct sockaddr_un sa;
	socklen_t len;

	if (nw < 1 || nw > 16 || nreq < 1)
		return 2;
	if (detach)
		setsid();
	self = getpid();
	len = addr_of(&sa, self);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, len) != 0 || listen(lfd, 64) != 0)
		return 1;
	for (int i = 0; i < nw; i++) {
		if ((kid[i] = fork()) < 0)
			return 1;
		if (kid[i] == 0)
			worker(lfd, detach);
	}
	if (div && *div) {
		if (strcmp(div, "stray") == 0)
			stranger();
		if (socket(AF_UNIX, SOCK_STREAM, 0) < 0)
			return 1;
	}
	if ((client = fork()) < 0)
		return 1;
	if (client == 0) {
		const char *hang = getenv("PREFORK_HANG");

		close(lfd);
		printf("pf client: started\n");
		fflush(stdout);
		if (hang && *hang) {
			if (strcmp(hang, "stray") == 0)
				stranger();
			for (;;)
				syscall(SYS_pause);
		}
		for (int i = 0; i < nreq; i++) {
			char req[32], ans[32];


			snprintf(req, sizeof(req), "request %d", i);
			if (ask(self, req, ans, sizeof(ans)) != 0)
				_exit(1);
			printf("pf client: %s -> %s\n", req, ans);
			fflush(stdout);
		}
		_exit(0);
	}
	if (waitpid(client, &st, 0) != client || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 1;
	for (int i = 0; i < nw; i++)
		if (ask(self, "quit", NULL, 0) != 0)
			return 1;
	for (int i = 0; i < nw; i++)
		if (waitpid(kid[i], &st, 0) != kid[i] || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return 1;
	printf("pf: %d workers served %d requests\n", nw, nreq);
	return 0;
}
