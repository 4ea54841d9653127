/*
 * replay_exec.c: a process that execs, for the replayer's tests (a new image continues the
 * logical name as the next segment of its trace, NAME@1.trace; its channels and descriptors
 * go with it).
 *
 *   replay_exec N            the root ("ex") forks "ex.1", which execs `replay_exec child FD N`
 *   replay_exec child FD N   the new image: sends N clock readings on FD, then fails to exec
 *                            a missing program once (a failed exec is an event too) and exits
 *   replay_exec print K      run twice by the root through system() (children started inside
 *                            libc: "ex.s1", "ex.s2" and their shells' children): prints a clock
 *                            reading
 * The root prints whatever pieces it reads, so its output depends on message sizes and time.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int sv[2], n;
	char buf[256];
	ssize_t r;
	pid_t p;

	if (argc == 3 && !strcmp(argv[1], "print")) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		printf("print %s at %ld.%09ld\n", argv[2], (long)ts.tv_sec, ts.tv_nsec);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "child")) {
		int fd = atoi(argv[2]);

		n = atoi(argv[3]);
		for (int i = 0; i < n; i++) {
			struct timespec ts;
			int len;

			clock_gettime(CLOCK_REALTIME, &ts);
			len = snprintf(buf, sizeof(buf), "[image 2, %d, %ld.%09ld]", i, (long)ts.tv_sec,
			               ts.tv_nsec);
			if (write(fd, buf, (size_t)len) != len)
				return 3;
		}
		execl("/nonexistent/program", "x", (char *)NULL);
		n = snprintf(buf, sizeof(buf), "[exec failed: %s]", strerror(errno));
		if (write(fd, buf, (size_t)n) != n)
			return 3;
		return 0;
	}
	n = argc > 1 ? atoi(argv[1]) : 5;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 1;
	p = fork();
	if (p == 0) {
		char fd[16], cnt[16];

		close(sv[0]);
		snprintf(fd, sizeof(fd), "%d", sv[1]);
		snprintf(cnt, sizeof(cnt), "%d", n);
		execl(argv[0], argv[0], "child", fd, cnt, (char *)NULL);
		_exit(9);
	}
	close(sv[1]);
	while ((r = read(sv[0], buf, sizeof(buf) - 1)) > 0) {
		buf[r] = '\0';
		printf("got %zd: %s\n", r, buf);
	}
	waitpid(p, NULL, 0);
	fflush(stdout);
	for (int k = 1; k <= 2; k++) {
		char cmd[4200];

		snprintf(cmd, sizeof(cmd), "%s print %d", argv[0], k);
		printf("system -> %d\n", system(cmd));
		fflush(stdout);
	}
	printf("done at %ld\n", (long)time(NULL));
	return 0;
}
