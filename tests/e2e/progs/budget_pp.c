/*
 * budget_pp.c: a ping-pong whose channel is made long before its messages, for
 * tests/e2e/record_budget_match.sh.  The root makes a socketpair and forks; the child sends
 * a greeting of 500 bytes, then answers every 32-byte ping with a 32-byte pong.  Between the
 * greeting and the pings the root reads 2.4 MB of /dev/urandom (recorded with its bytes, which
 * do not compress), so that a small --max-bytes drops the chunks holding the socketpair's
 * definition and the greeting: what is kept must still match.
 *
 *   budget_pp ROUNDS
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int full(int fd, char *buf, size_t n, int out)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = out ? write(fd, buf + done, n - done) : read(fd, buf + done, n - done);

		if (r <= 0)
			return -1;
		done += (size_t)r;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 200, sv[2], fd, st;
	char buf[4096];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 2;
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		close(sv[0]);
		memset(buf, 'g', 500);
		if (full(sv[1], buf, 500, 1))
			_exit(3);
		for (int i = 0; i < rounds; i++) {
			if (full(sv[1], buf, 32, 0))
				_exit(3);
			buf[0] = 'P';
			if (full(sv[1], buf, 32, 1))
				_exit(3);
		}
		_exit(0);
	}
	close(sv[1]);
	if (full(sv[0], buf, 500, 0))
		return 1;
	fd = open("/dev/urandom", O_RDONLY);
	if (fd < 0)
		return 2;
	for (int i = 0; i < 600; i++)
		if (read(fd, buf, sizeof(buf)) <= 0)
			return 2;
	close(fd);
	for (int i = 0; i < rounds; i++) {
		memset(buf, 'p', 32);
		snprintf(buf, 32, "ping %d", i);
		if (full(sv[0], buf, 32, 1) || full(sv[0], buf, 32, 0) || buf[0] != 'P')
			return 1;
	}
	close(sv[0]);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 1;
	printf("%d rounds\n", rounds);
	return 0;
}
