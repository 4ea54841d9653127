/*
 * kill_midload.c: a server SIGKILLed mid-load by its parent, as a shell's `kill -9` ends a
 * server whose clients are busy.  The root forks a server (echoes every message on a
 * socketpair) and a client (sends messages and reads the echoes until the connection
 * fails, then prints how many came back), waits for the client to report 200 echoes over a
 * pipe, then sleeps 2 ms while they go on, and SIGKILLs the server: where the kill lands
 * is decided by time alone.  In replay the root's kill must not land before the server's
 * recorded last events (replayer/lc_pids.c), or the client misses echoes it got when
 * recorded.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	int sv[2], pp[2], st;
	char buf[64];
	pid_t srv, cli;
	struct timespec ts = { 0, 2 * 1000 * 1000 };

	signal(SIGPIPE, SIG_IGN);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 || pipe(pp) != 0)
		return 1;
	if ((srv = fork()) == 0) {
		ssize_t n;

		close(sv[0]);
		while ((n = read(sv[1], buf, sizeof(buf))) > 0)
			if (write(sv[1], buf, (size_t)n) != n)
				break;
		_exit(0);
	}
	close(sv[1]);
	if ((cli = fork()) == 0) {
		long echoes = 0;

		close(pp[0]);
		for (;;) {
			int len = snprintf(buf, sizeof(buf), "message %ld", echoes);

			if (write(sv[0], buf, (size_t)len) != len || read(sv[0], buf, sizeof(buf)) <= 0)
				break;
			if (++echoes == 200 && write(pp[1], "y", 1) != 1)
				_exit(3);
		}
		printf("client: %s echoes\n", echoes >= 200 ? "at least 200" : "fewer than 200");
		_exit(0);
	}
	close(sv[0]);
	close(pp[1]);
	if (read(pp[0], buf, 1) != 1)
		return 1;
	nanosleep(&ts, NULL);
	kill(srv, SIGKILL);
	if (waitpid(srv, &st, 0) != srv)
		return 1;
	printf("server: %s\n", WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "exited");
	if (waitpid(cli, &st, 0) != cli)
		return 1;
	printf("client exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}
