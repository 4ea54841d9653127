/*
 * replay_timewait.c: a server (no SO_REUSEADDR) that closes its accepted connection before
 * its client does, which leaves that connection in TIME_WAIT on the listening port for a
 * minute; a replay started within it cannot bind the recorded port again, and says why
 * (tests/e2e/replay_timewait.sh).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int lfd, fd, st;
	char c;
	pid_t kid;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 1) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &len) != 0)
		return 1;
	if ((kid = fork()) < 0)
		return 1;
	if (kid == 0) {
		/* the client closes only after the server's end of file */
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
		    read(fd, &c, 1) != 0)
			_exit(1);
		close(fd);
		_exit(0);
	}
	if ((fd = accept(lfd, NULL, NULL)) < 0)
		return 1;
	close(fd); /* first: TIME_WAIT is this end's, on the listening port */
	close(lfd);
	if (waitpid(kid, &st, 0) != kid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 1;
	return 0;
}
