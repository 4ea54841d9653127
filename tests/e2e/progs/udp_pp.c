/*
 * udp_pp.c: a UDP server and its clients, for the datagram matching tests (tests/e2e/
 * replay_dgram.sh, analyzer/README.md "Datagrams").  The server binds 127.0.0.1 on any
 * port, then forks N clients; each sends K requests with sendto from its own socket (its port
 * chosen by the implicit bind of the first sendto; client 1 connects instead and uses
 * send/recv) and prints each reply.  The server answers every request to its source address
 * and prints what it got in the order it came, which varies between runs.  Client 2 also
 * sends one datagram to a socket the server binds and closes unread: a datagram lost in the
 * recording.  Each client ends by sending "bye"; the server ends after N byes and reaps them.
 * Usage: udp_pp N K
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void client(int i, int k, const struct sockaddr_in *srv, const struct sockaddr_in *sink)
{
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	char req[64], rep[128];

	if (s < 0)
		die("socket");
	if (i == 1 && connect(s, (const struct sockaddr *)srv, sizeof(*srv)))
		die("connect");
	for (int j = 0; j <= k; j++) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ssize_t n;
		int len = j < k ? snprintf(req, sizeof(req), "client %d request %d", i, j)
		                : snprintf(req, sizeof(req), "bye");

		if (i == 1)
			n = send(s, req, (size_t)len, 0);
		else
			n = sendto(s, req, (size_t)len, 0, (const struct sockaddr *)srv, sizeof(*srv));
		if (n != len)
			die("send");
		if (i == 2 && j == 0 &&
		    sendto(s, "never read", 10, 0, (const struct sockaddr *)sink, sizeof(*sink)) != 10)
			die("sendto sink");
		if (j == k)
			break;
		n = i == 1 ? recv(s, rep, sizeof(rep) - 1, 0)
		           : recvfrom(s, rep, sizeof(rep) - 1, 0, (struct sockaddr *)&from, &fl);
		if (n < 0)
			die("recv");
		rep[n] = '\0';
		printf("client %d: %s\n", i, rep);
		fflush(stdout);
	}
	close(s);
}

int main(int argc, char **argv)
{
	struct sockaddr_in srv, sink;
	socklen_t sl = sizeof(srv);
	int nc = argc > 1 ? atoi(argv[1]) : 3, k = argc > 2 ? atoi(argv[2]) : 3, byes = 0;
	int s = socket(AF_INET, SOCK_DGRAM, 0), d = socket(AF_INET, SOCK_DGRAM, 0);

	if (s < 0 || d < 0)
		die("socket");
	memset(&srv, 0, sizeof(srv));
	srv.sin_family = AF_INET;
	srv.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sink = srv;
	if (bind(s, (struct sockaddr *)&srv, sizeof(srv)) || getsockname(s, (struct sockaddr *)&srv, &sl))
		die("bind");
	sl = sizeof(sink);
	if (bind(d, (struct sockaddr *)&sink, sizeof(sink)) ||
	    getsockname(d, (struct sockaddr *)&sink, &sl))
		die("bind sink");
	for (int i = 1; i <= nc; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			close(s);
			close(d);
			client(i, k, &srv, &sink);
			return 0;
		}
	}
	while (byes < nc) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		char buf[128], rep[160];
		ssize_t n = recvfrom(s, buf, sizeof(buf) - 1, 0, (struct sockaddr *)&from, &fl);

		if (n < 0)
			die("recvfrom");
		buf[n] = '\0';
		if (!strcmp(buf, "bye")) {
			byes++;
			continue;
		}
		printf("server: %s\n", buf);
		fflush(stdout);
		n = snprintf(rep, sizeof(rep), "answer to %s", buf);
		if (sendto(s, rep, (size_t)n, 0, (struct sockaddr *)&from, fl) != n)
			die("sendto");
	}
	close(d);
	while (wait(NULL) > 0)
		;
	printf("server: done\n");
	return 0;
}
