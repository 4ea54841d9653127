/* share_reuse.c: a child inherits a socket as descriptor 3, closes it, and its new pipe takes
 * 3; the pipe crosses a fork (a writer child), so its ends are shared (busybox httpd's CGI
 * children so).  Replay must not take the pipe for the socket the number held at the child's
 * start (replayer/lc_chan.c, lc_share_preopen). */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	int s = socket(AF_INET, SOCK_STREAM, 0), st;
	pid_t c;

	if (s < 0 || (s != 3 && (dup2(s, 3) != 3 || close(s) != 0)))
		return 1;
	c = fork();
	if (c == 0) {
		int p[2];
		char buf[64];
		ssize_t n, got = 0;

		close(3);
		if (pipe(p) != 0)
			_exit(1);
		if (fork() == 0) {
			close(p[0]);
			for (int i = 0; i < 3; i++)
				if (write(p[1], "chunk;", 6) != 6)
					_exit(1);
			_exit(0);
		}
		close(p[1]);
		while ((n = read(p[0], buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
			got += n;
		buf[got] = '\0';
		wait(&st);
		printf("pipe on %d read: %s\n", p[0], buf);
		fflush(stdout);
		_exit(0);
	}
	if (c < 0 || waitpid(c, &st, 0) != c)
		return 1;
	printf("child status %d\n", WEXITSTATUS(st));
	return 0;
}
