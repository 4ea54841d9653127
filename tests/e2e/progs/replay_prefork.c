/*
 * replay_prefork.c: a prefork server and its client, for the tests that a replay always ends
 * (replayer/README.md, "How a replay ends").
 *
 *   replay_prefork WORKERS REQUESTS [setsid]
 *
 * The root ("pf") listens on an abstract Unix socket named after its pid, forks WORKERS
 * workers ("pf.1"...) that each loop on accept and answer every request with its length,
 * and then a client that makes REQUESTS connections, one request each, and exits.  When the
 * client is done the root tells the workers to stop (a request "quit" to each) and waits
 * for them.  With "setsid" the root first makes itself a session leader, and each worker
 * starts a session of its own too, as daemons do: none of them is in the process group of
 * `encore replay`'s roots any more.  With PREFORK_DIVERGE=1 in the environment a worker
 * answers with one byte more than it did when recorded: the replay diverges while the
 * other workers block in accept and the root in waitpid; with PREFORK_DIVERGE=stray the
 * worker first starts a process nobody knows about (a raw fork system call, past every
 * interposer, as a library's own clone would be), which leaves the process group and waits
 * for a signal: only a replayer that ends every descendant, known or not, ends it.
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

static void worker(int lfd, int detach)
{
	const char *div = getenv("PREFORK_DIVERGE");
	int extra = div && (strcmp(div, "1") == 0 || strcmp(div, "stray") == 0);
	int stray = div && strcmp(div, "stray") == 0;

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
		if (stray && syscall(SYS_fork) == 0) {
			syscall(SYS_setsid);
			for (;;)
				syscall(SYS_pause);
		}
		m = snprintf(ans, sizeof(ans), "%zd%s", n, extra ? "!" : "");
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
	if ((client = fork()) < 0)
		return 1;
	if (client == 0) {
		close(lfd);
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
