/*
 * replay_accept.c: a server whose clients never send, for the replayer's tests (replayer/README.md:
 * "accept returns the connection of the recorded peer").
 *
 *   replay_accept N
 *
 * The root ("acc") listens on an abstract Unix socket named after its pid and forks N
 * clients ("acc.1"...), which connect at once, all together.  The root accepts them in
 * whatever order they come and tells each its place in that order; a client only reads
 * (nothing it sends could identify it) and exits with its place as status.  The root
 * prints each client's place from its exit status: a replay must give each accept the
 * recorded client, which it knows from the analyzer's connect -> accept edge.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static socklen_t addr_of(struct sockaddr_un *sa, pid_t server)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	/* abstract: sun_path[0] = '\0' */
	snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "encore-replay-accept-%d", (int)server);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(sa->sun_path + 1));
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3, lfd, fds[16];
	struct sockaddr_un sa;
	socklen_t len;
	pid_t kid[16];

	if (n < 1 || n > 16)
		return 2;
	len = addr_of(&sa, getpid());
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, len) != 0 || listen(lfd, 16) != 0)
		return 1;
	for (int i = 0; i < n; i++) {
		kid[i] = fork();
		if (kid[i] < 0)
			return 1;
		if (kid[i] == 0) {
			int fd = socket(AF_UNIX, SOCK_STREAM, 0);
			char buf[32];
			ssize_t r;

			close(lfd);
			len = addr_of(&sa, getppid());
			if (fd < 0 || connect(fd, (struct sockaddr *)&sa, len) != 0)
				_exit(90);
			r = read(fd, buf, sizeof(buf) - 1);
			if (r <= 0)
				_exit(91);
			buf[r] = '\0';
			_exit(atoi(buf));
		}
	}
	for (int i = 0; i < n; i++) {
		char msg[16];
		int m;

		if ((fds[i] = accept(lfd, NULL, NULL)) < 0)
			return 1;
		m = snprintf(msg, sizeof(msg), "%d", i + 1);
		if (write(fds[i], msg, (size_t)m) != m)
			return 1;
	}
	for (int i = 0; i < n; i++) {
		int st;

		if (waitpid(kid[i], &st, 0) != kid[i])
			return 1;
		printf("acc.%d was accepted as number %d\n", i + 1, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		close(fds[i]);
	}
	return 0;
}
