/* unix_late_accept.c: a prefork Unix-socket server whose worker accepts only after its client
 * has connected, sent and closed (the parent listens, forks the worker, connects, sends "quit",
 * closes, then lets the worker go through a pipe): the client's end is gone by the accept, so
 * the kernel names no peer inode, and the client's SO_PEERCRED pid is the listener's (the
 * parent), not the worker's.  For record_unix_late_accept.sh. */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	struct sockaddr_un sa;
	int lfd, go[2], st;
	char buf[16];
	pid_t w;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "encore-late-accept-%d", (int)getpid());
	if ((lfd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0 || pipe(go) != 0 ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 4) != 0)
		return 1;
	if ((w = fork()) == 0) {
		int fd;
		ssize_t n;

		close(go[1]);
		if (read(go[0], buf, 1) != 1 || (fd = accept(lfd, NULL, NULL)) < 0)
			_exit(2);
		n = read(fd, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		printf("worker got '%s'\n", buf);
		fflush(stdout);
		_exit(strcmp(buf, "quit") == 0 ? 0 : 3);
	}
	{
		int c = socket(AF_UNIX, SOCK_STREAM, 0);

		if (c < 0 || connect(c, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
		    write(c, "quit", 4) != 4 || close(c) != 0)
			return 1;
	}
	if (write(go[1], "g", 1) != 1 || waitpid(w, &st, 0) != w)
		return 1;
	printf("worker exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}
