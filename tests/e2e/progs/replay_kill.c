/*
 * replay_kill.c: a child killed by SIGKILL, for the replayer's tests.  The root ("kill")
 * forks "kill.1", which answers each byte it reads; the root reads one answer, then kills
 * the child while it may be between a call and its logging (so the child's trace may end
 * one call short), and reports how the child died.  Replay must end the same way.
 *
 *   replay_kill N      N rounds before the kill
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3, sv[2], st;
	char b[4];
	pid_t p;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 1;
	p = fork();
	if (p == 0) {
		if (write(sv[1], "abc", 3) != 3)
			return 1;
		while (read(sv[1], b, 1) == 1)
			if (write(sv[1], "z", 1) != 1)
				break;
		return 0;
	}
	if (read(sv[0], b, 3) != 3)
		return 1;
	for (int i = 0; i < n; i++) {
		struct timespec ts;

		if (write(sv[0], "q", 1) != 1 || read(sv[0], b, 1) != 1)
			return 1;
		clock_gettime(CLOCK_REALTIME, &ts);
		printf("round %d at %ld.%09ld\n", i, (long)ts.tv_sec, ts.tv_nsec);
	}
	if (write(sv[0], "q", 1) != 1)
		return 1;
	kill(p, SIGKILL);
	waitpid(p, &st, 0);
	printf("child killed by signal %d\n", WIFSIGNALED(st) ? WTERMSIG(st) : -1);
	return 0;
}
