/*
 * replay_tcp.c: a TCP server and its clients on loopback, for the replayer's end-to-end
 * tests: socket, bind, listen, accept, connect, partial reads, select, gettimeofday.
 *
 *   replay_tcp NCLIENT NREQ
 *
 * The root ("tcp") listens on an ephemeral port of 127.0.0.1 and forks NCLIENT clients
 * ("tcp.1"...), which connect one after the other (each waits for its predecessor's
 * greeting to be read: the accept order is the fork order) and send NREQ requests each.
 * The server answers each request with the time of day it read it at; clients print
 * nothing, the server prints every piece it read with its arrival time.
 *
 * For peers outside the session (one side recorded, the other not):
 *   replay_tcp serve FIFO        listen, write the port to FIFO, serve one client, exit
 *   replay_tcp client PORT NREQ  connect to PORT, send NREQ requests, print the answers
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAXC 8

static void client(int k, int port, int nreq, int go)
{
	struct sockaddr_in sa;
	char buf[128], tok;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (read(go, &tok, 1) != 1) /* our turn to connect */
		_exit(5);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		_exit(3);
	for (int i = 0; i < nreq; i++) {
		int n = snprintf(buf, sizeof(buf), "req %d.%d;", k, i);

		if (send(fd, buf, (size_t)n, 0) != n)
			_exit(4);
		if (recv(fd, buf, 16, MSG_WAITALL) != 16)
			_exit(4);
	}
	close(fd);
	_exit(0);
}

static int serve_one(const char *fifo)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int lfd = socket(AF_INET, SOCK_STREAM, 0), c;
	char buf[256];
	ssize_t n;
	FILE *f;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 1) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &len) != 0 || !(f = fopen(fifo, "w")))
		return 1;
	fprintf(f, "%d\n", ntohs(sa.sin_port));
	fclose(f);
	if ((c = accept(lfd, NULL, NULL)) < 0)
		return 1;
	while ((n = recv(c, buf, sizeof(buf) - 1, 0)) > 0) {
		struct timeval tv;

		buf[n] = '\0';
		gettimeofday(&tv, NULL);
		printf("server: %s at %ld.%06ld\n", buf, (long)tv.tv_sec, (long)tv.tv_usec);
		for (char *p = buf; (p = strchr(p, ';')); p++) {
			char ans[17];

			snprintf(ans, sizeof(ans), "%015ld;", (long)tv.tv_usec);
			if (send(c, ans, 16, 0) != 16)
				return 1;
		}
	}
	return 0;
}

static int client_only(int port, int nreq)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		return 3;
	for (int i = 0; i < nreq; i++) {
		char buf[64];
		int n = snprintf(buf, sizeof(buf), "req %d;", i);

		if (send(fd, buf, (size_t)n, 0) != n || recv(fd, buf, 16, MSG_WAITALL) != 16)
			return 4;
		buf[16] = '\0';
		printf("client: answer %d: %s\n", i, buf);
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "serve"))
		return serve_one(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "client"))
		return client_only(atoi(argv[2]), atoi(argv[3]));
	{
	int nc = argc > 1 ? atoi(argv[1]) : 2, nreq = argc > 2 ? atoi(argv[2]) : 5;
	int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1, conns[MAXC], go[MAXC][2], open_n;
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);

	if (nc < 1 || nc > MAXC || lfd < 0)
		return 2;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 16) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &len) != 0)
		return 1;
	for (int k = 0; k < nc; k++) {
		if (pipe(go[k]) != 0)
			return 1;
		if (fork() == 0) {
			close(lfd);
			close(go[k][1]);
			client(k + 1, ntohs(sa.sin_port), nreq, go[k][0]);
		}
		close(go[k][0]);
	}
	for (int k = 0; k < nc; k++) {
		if (write(go[k][1], "g", 1) != 1)
			return 1;
		close(go[k][1]);
		conns[k] = accept(lfd, NULL, NULL);
		if (conns[k] < 0)
			return 1;
	}
	open_n = nc;
	while (open_n) {
		fd_set rs;
		int maxfd = -1;

		FD_ZERO(&rs);
		for (int k = 0; k < nc; k++)
			if (conns[k] >= 0) {
				FD_SET(conns[k], &rs);
				if (conns[k] > maxfd)
					maxfd = conns[k];
			}
		if (select(maxfd + 1, &rs, NULL, NULL, NULL) <= 0)
			return 1;
		for (int k = 0; k < nc; k++) {
			char buf[256];
			struct timeval tv;
			ssize_t n;

			if (conns[k] < 0 || !FD_ISSET(conns[k], &rs))
				continue;
			n = recv(conns[k], buf, sizeof(buf) - 1, 0);
			gettimeofday(&tv, NULL);
			if (n <= 0) {
				printf("client %d gone at %ld.%06ld\n", k + 1, (long)tv.tv_sec, (long)tv.tv_usec);
				close(conns[k]);
				conns[k] = -1;
				open_n--;
				continue;
			}
			buf[n] = '\0';
			printf("client %d: %s at %ld.%06ld\n", k + 1, buf, (long)tv.tv_sec, (long)tv.tv_usec);
			for (char *p = buf; (p = strchr(p, ';')); p++) {
				char ans[17];

				snprintf(ans, sizeof(ans), "%015ld;", (long)tv.tv_usec);
				if (send(conns[k], ans, 16, 0) != 16)
					return 1;
			}
		}
	}
	while (wait(NULL) > 0)
		;
	return 0;
}
}
