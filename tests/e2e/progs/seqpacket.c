/*
 * seqpacket.c: a Unix SOCK_SEQPACKET server and two clients (tests/e2e/meson.build,
 * replay_end_seqpacket): the records keep their boundaries, and the server prints each in the
 * order it came (which client first varies between runs), then echoes it.  Only the server
 * prints; a client that gets a wrong echo exits with 1, which the server prints.
 * Usage: seqpacket DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static int client(const struct sockaddr_un *a, int i)
{
	int s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	char rec[64], back[80];

	if (s < 0 || connect(s, (const struct sockaddr *)a, sizeof(*a)))
		return 1;
	for (int j = 0; j < 3; j++) {
		int n = snprintf(rec, sizeof(rec), "client %d record %d%.*s", i, j, j * 7,
		                 "..........................");
		ssize_t r;

		if (send(s, rec, (size_t)n, 0) != n)
			return 1;
		r = recv(s, back, sizeof(back), 0);
		if (r != n + 5 || memcmp(back + 5, rec, (size_t)n))
			return 1;
	}
	close(s);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_un a;
	int l, st;

	if (argc != 2)
		return 2;
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/sp", argv[1]);
	unlink(a.sun_path);
	if ((l = socket(AF_UNIX, SOCK_SEQPACKET, 0)) < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(l, 4))
		die("listen");
	for (int i = 1; i <= 2; i++)
		if (fork() == 0) {
			close(l);
			_exit(client(&a, i));
		}
	for (int c = 0; c < 2; c++) {
		int s = accept(l, NULL, NULL);
		char rec[64], back[80];
		ssize_t r;

		if (s < 0)
			die("accept");
		while ((r = recv(s, rec, sizeof(rec), 0)) > 0) {
			printf("record of %zd bytes: %.*s\n", r, (int)r, rec);
			fflush(stdout);
			memcpy(back, "echo:", 5);
			memcpy(back + 5, rec, (size_t)r);
			if (send(s, back, (size_t)r + 5, 0) != r + 5)
				die("send");
		}
		close(s);
	}
	while (wait(&st) > 0)
		printf("client exited %d\n", WEXITSTATUS(st));
	unlink(a.sun_path);
	return 0;
}
