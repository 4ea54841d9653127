/*
 * replay_pingpong.c: what replay costs (replayer/README.md, "Tests and benchmark").
 * Two processes play
 * ping-pong over a Unix socketpair and over TCP loopback; the same session is run bare,
 * recorded by `encore record`, replayed to the end by `encore replay`, and replayed to a
 * halt near its end (`--stop`, the time from the command to the halt), all in one run.
 * Default: 50000 round trips, i.e. a 1e5-message session.
 * Printed: wall times of the whole commands (fastest of R runs), and the ratios
 * replay/recorded (target: at most 2) and halt/recorded.
 *
 *   replay_pingpong --encore PATH [--rounds N] [--repeat R]
 *   replay_pingpong worker pair|tcp SIZE ROUNDS        (the measured program)
 */
#include <errno.h>
#include <ftw.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int xfer(int fd, char *buf, size_t n, int out)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = out ? send(fd, buf + done, n - done, 0) : recv(fd, buf + done, n - done, 0);

		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return -1;
		}
		done += (size_t)r;
	}
	return 0;
}

static int worker(const char *transport, size_t size, long rounds)
{
	int fds[2], status;
	char buf[65536];
	pid_t pid;

	memset(buf, 'x', sizeof(buf));
	if (size > sizeof(buf))
		return 2;
	if (!strcmp(transport, "pair")) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0)
			return 1;
	} else {
		struct sockaddr_in sa;
		socklen_t len = sizeof(sa);
		int lfd = socket(AF_INET, SOCK_STREAM, 0);

		memset(&sa, 0, sizeof(sa));
		sa.sin_family = AF_INET;
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
		    listen(lfd, 1) != 0 || getsockname(lfd, (struct sockaddr *)&sa, &len) != 0)
			return 1;
		pid = fork();
		if (pid == 0) {
			int c = socket(AF_INET, SOCK_STREAM, 0);

			if (c < 0 || connect(c, (struct sockaddr *)&sa, sizeof(sa)) != 0)
				_exit(1);
			for (long i = 0; i < rounds; i++)
				if (xfer(c, buf, size, 0) || xfer(c, buf, size, 1))
					_exit(1);
			_exit(0);
		}
		fds[0] = accept(lfd, NULL, NULL);
		if (fds[0] < 0)
			return 1;
		for (long i = 0; i < rounds; i++)
			if (xfer(fds[0], buf, size, 1) || xfer(fds[0], buf, size, 0))
				return 1;
		waitpid(pid, &status, 0);
		return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	}
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		for (long i = 0; i < rounds; i++)
			if (xfer(fds[1], buf, size, 0) || xfer(fds[1], buf, size, 1))
				_exit(1);
		_exit(0);
	}
	close(fds[1]);
	for (long i = 0; i < rounds; i++)
		if (xfer(fds[0], buf, size, 1) || xfer(fds[0], buf, size, 0))
			return 1;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* Run argv, output to /dev/null; returns wall ns, or 0 on failure. */
static uint64_t run(char *const argv[])
{
	uint64_t t0;
	int status;
	pid_t pid;

	fflush(stdout);
	t0 = now_ns();
	pid = fork();

	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return 0;
	return now_ns() - t0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int main(int argc, char **argv)
{
	const char *encore = NULL;
	long rounds = 50000;
	int repeat = 3;
	char self[4096], tmpl[] = "/tmp/replay_bench.XXXXXX", dir[4200], rounds_s[32];
	const char *transports[] = { "pair", "tcp" };
	ssize_t n;

	if (argc >= 2 && !strcmp(argv[1], "worker") && argc == 5)
		return worker(argv[2], (size_t)atol(argv[3]), atol(argv[4]));
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--encore") && i + 1 < argc)
			encore = argv[++i];
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atol(argv[++i]);
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = atoi(argv[++i]);
	}
	if (!encore || rounds <= 0 || repeat <= 0) {
		fprintf(stderr, "usage: replay_pingpong --encore PATH [--rounds N] [--repeat R]\n");
		return 2;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0 || !mkdtemp(tmpl))
		return 1;
	self[n] = '\0';
	snprintf(rounds_s, sizeof(rounds_s), "%ld", rounds);
	snprintf(dir, sizeof(dir), "%s/s", tmpl);
	printf("replay ping-pong, %ld round trips of 64 bytes (2 x %ld messages), fastest of %d\n",
	       rounds, rounds, repeat);
	printf("%-6s %12s %12s %12s %12s %10s %10s\n", "", "bare ms", "record ms", "replay ms",
	       "halt ms", "rep/rec", "halt/rec");
	for (size_t t = 0; t < 2; t++) {
		char stop[128];
		uint64_t best[4] = { 0, 0, 0, 0 };

		snprintf(stop, sizeof(stop), "pp: received >= %ld", rounds - rounds / 100);
		for (int r = 0; r < repeat; r++) {
			char *bare[] = { self, "worker", (char *)transports[t], "64", rounds_s, NULL };
			char *rec[] = { (char *)encore, "record", "-q", "-o", dir, "--name", "pp", "--",
			                self, "worker", (char *)transports[t], "64", rounds_s, NULL };
			char *rep[] = { (char *)encore, "replay", "-q", dir, NULL };
			char *halt[] = { (char *)encore, "replay", "-q", "--then", "kill", "--stop", stop,
			                 dir, NULL };
			uint64_t v[4];

			nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
			v[0] = run(bare);
			v[1] = run(rec);
			v[2] = run(rep);
			v[3] = run(halt);
			for (int k = 0; k < 4; k++) {
				if (!v[k]) {
					fprintf(stderr, "replay_pingpong: run %d of configuration %d failed\n",
					        k, (int)t);
					nftw(tmpl, rm_one, 16, FTW_DEPTH | FTW_PHYS);
					return 1;
				}
				if (!best[k] || v[k] < best[k])
					best[k] = v[k];
			}
		}
		printf("%-6s %12.1f %12.1f %12.1f %12.1f %10.2f %10.2f\n", transports[t],
		       best[0] / 1e6, best[1] / 1e6, best[2] / 1e6, best[3] / 1e6,
		       (double)best[2] / (double)best[1], (double)best[3] / (double)best[1]);
	}
	nftw(tmpl, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}
