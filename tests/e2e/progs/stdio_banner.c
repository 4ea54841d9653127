/* stdio_banner.c: a server that speaks first through stdio, as exim's daemon does: it accepts
 * a connection, wraps it in FILEs and forks a child that writes a banner with fprintf and
 * fflush before it reads the client's line.  The client (a forked process of the session)
 * connects CONNS times.  The accept often returns before the client's recorder has said the
 * connection is its own (the end is undecided: recorder/chan.c, decide_peer); the banner
 * sent then must be logged all the same, or the client's receive of it has no send and the
 * next reply is matched at the wrong offset. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define CONNS 5

static int get(int fd, char *buf, size_t cap)
{
	size_t n = 0;

	while (n + 1 < cap) {
		ssize_t r = read(fd, buf + n, 1);

		if (r <= 0)
			break;
		if (buf[n++] == '\n')
			break;
	}
	buf[n] = '\0';
	return (int)n;
}

int main(void)
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	char line[128];
	int l, st;
	pid_t client;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((l = socket(AF_INET, SOCK_STREAM, 0)) < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(l, CONNS) || getsockname(l, (struct sockaddr *)&a, &al))
		return perror("listen"), 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((client = fork()) == 0) {
		close(l);
		for (int i = 0; i < CONNS; i++) {
			int s = socket(AF_INET, SOCK_STREAM, 0);
			char msg[32];

			if (s < 0 || connect(s, (struct sockaddr *)&a, al) != 0)
				return perror("connect"), 1;
			get(s, line, sizeof(line));
			printf("client %d: %s", i, line);
			snprintf(msg, sizeof(msg), "HELO %d\n", i);
			if (write(s, msg, strlen(msg)) != (ssize_t)strlen(msg))
				return 1;
			get(s, line, sizeof(line));
			printf("client %d: %s", i, line);
			close(s);
		}
		return 0;
	}
	for (int i = 0; i < CONNS; i++) {
		int s = accept(l, NULL, NULL), d;
		FILE *out, *in;
		pid_t p;

		if (s < 0 || (d = dup(s)) < 0 || !(out = fdopen(s, "w")) || !(in = fdopen(d, "r")))
			return perror("accept"), 1;
		if ((p = fork()) == 0) {
			close(l);
			fprintf(out, "220 banner of connection %d\r\n", i);
			fflush(out);
			if (fgets(line, sizeof(line), in)) {
				fprintf(out, "250 got %s", line);
				fflush(out);
			}
			/* the client closes first: the TIME_WAIT is its port's, not the listening one
			 * a replay binds again (which would wait for it) */
			while (fgetc(in) != EOF)
				;
			_exit(0);
		}
		fclose(in);
		fclose(out);
		if (p < 0 || waitpid(p, &st, 0) != p)
			return 1;
	}
	if (waitpid(client, &st, 0) != client || !WIFEXITED(st) || WEXITSTATUS(st))
		return 1;
	printf("server: %d connections\n", CONNS);
	return 0;
}
