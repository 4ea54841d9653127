/*
 * stable_rpc.c: a small RPC program whose stable points are known, for `encore stable`
 * (schemas/stability.md).  Three processes:
 *
 *   rpc     the client: N times, client_call() sends a request to the server and blocks for
 *           the reply, then log_done() tells the logger (one way, nobody answers);
 *   rpc.1   the server: serve() receives a request and sends the reply, until EOF;
 *   rpc.2   the logger: logger() reads the client's notes until EOF.
 *
 * Spezialetti & Gupta's Fig. 1b in miniature: for `rpc: sent(rpc.1) == received(rpc.1) + 1
 * == rpc.1: received == 2` the server is a valid recognition point just after its receive
 * (the client is blocked for the reply: dependent monotonic), while a component on the
 * logger (a pipeline sink) has no valid point.
 * Usage: stable_rpc [N [exec]] (default 3): with `exec` the server runs serve() in a new
 * image (it execs itself as `stable_rpc --serve FD`), so its sites come from a second trace
 * file of the same process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MSG 8

static __attribute__((noinline)) int full_read(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n <= 0)
			return (int)n;
		got += (size_t)n;
	}
	return 1;
}

static __attribute__((noinline)) int client_call(int fd, int i)
{
	char req[MSG], rep[MSG];

	memset(req, 'a' + i, sizeof(req));
	if (write(fd, req, sizeof(req)) != (ssize_t)sizeof(req))
		return -1;
	if (full_read(fd, rep, sizeof(rep)) != 1)
		return -1;
	return rep[0] == 'A' + i ? 0 : -1;
}

static __attribute__((noinline)) int log_done(int fd, int i)
{
	char note[MSG];

	memset(note, '0' + i, sizeof(note));
	return write(fd, note, sizeof(note)) == (ssize_t)sizeof(note) ? 0 : -1;
}

static __attribute__((noinline)) int serve(int fd)
{
	char req[MSG], rep[MSG];
	int rc;

	while ((rc = full_read(fd, req, sizeof(req))) == 1) {
		memset(rep, req[0] - 'a' + 'A', sizeof(rep));
		if (write(fd, rep, sizeof(rep)) != (ssize_t)sizeof(rep))
			return 1;
	}
	return rc == 0 ? 0 : 1;
}

static __attribute__((noinline)) int logger(int fd)
{
	char note[MSG];
	int rc;

	while ((rc = full_read(fd, note, sizeof(note))) == 1)
		;
	return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	int n, sv[2], lp[2], status, bad = 0;
	pid_t server, log;

	if (argc == 3 && strcmp(argv[1], "--serve") == 0)
		return serve(atoi(argv[2]));
	n = argc > 1 ? atoi(argv[1]) : 3;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) || pipe(lp))
		return 2;
	if ((server = fork()) < 0)
		return 2;
	if (server == 0) {
		char fd[16];

		close(sv[0]);
		close(lp[0]);
		close(lp[1]);
		if (argc > 2 && strcmp(argv[2], "exec") == 0) {
			snprintf(fd, sizeof(fd), "%d", sv[1]);
			execl("/proc/self/exe", argv[0], "--serve", fd, (char *)NULL);
			_exit(3);
		}
		_exit(serve(sv[1]));
	}
	close(sv[1]);
	if ((log = fork()) < 0)
		return 2;
	if (log == 0) {
		close(sv[0]);
		close(lp[1]);
		_exit(logger(lp[0]));
	}
	close(lp[0]);
	for (int i = 0; i < n; i++)
		if (client_call(sv[0], i) || log_done(lp[1], i))
			bad = 1;
	close(sv[0]);
	close(lp[1]);
	if (waitpid(server, &status, 0) != server || !WIFEXITED(status) || WEXITSTATUS(status))
		bad = 1;
	if (waitpid(log, &status, 0) != log || !WIFEXITED(status) || WEXITSTATUS(status))
		bad = 1;
	return bad;
}
