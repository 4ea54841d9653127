/*
 * udp_pp.c: a UDP server and its clients, for the datagram matching tests (tests/e2e/
 * replay_dgram.sh, analyzer/README.md "Datagrams").  The server binds 127.0.0.1 on any
 * port, then forks N clients; each sends K requests with sendto from its own socket (its port
 * chosen by the implicit bind of the first sendto; client 1 connects instead and uses
 * send/recv) and prints each reply.  The server answers every request to its source address
 * and prints what it got in the order it came, which varies between runs.  Client 2 also
 * sends one datagram to a socket the server binds and closes unread: a datagram lost in the
 * recording.  Each client ends by sending "bye"; the server ends after N byes and reaps them.
 * Client 3 sends one more datagram after its bye, which the server reads (and prints) when it
 * comes before the last bye, and leaves unread otherwise: unread when recorded, the replayed
 * server finds it on its socket and must pass over it.
 * With a directory DIR, the same over Unix datagram sockets bound to paths in DIR (each
 * client binds its own path, so that the server can answer it).
 * Usage: udp_pp N K [DIR]
 */
#include <arpa/inet.h>
#include <netinet/in.h>
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

static const char *dir; /* Unix sockets in it, else UDP on 127.0.0.1 */
static socklen_t alen;

/* A socket bound to `name` in dir (Unix), or to 127.0.0.1 on any port (UDP; name NULL: not
 * bound), its address in *a. */
static int dsock(const char *name, struct sockaddr_storage *a)
{
	int s = socket(dir ? AF_UNIX : AF_INET, SOCK_DGRAM, 0);
	socklen_t l = sizeof(*a);

	if (s < 0)
		die("socket");
	memset(a, 0, sizeof(*a));
	if (dir) {
		struct sockaddr_un *u = (struct sockaddr_un *)a;

		u->sun_family = AF_UNIX;
		snprintf(u->sun_path, sizeof(u->sun_path), "%s/%s", dir, name);
		unlink(u->sun_path);
		if (bind(s, (struct sockaddr *)a, sizeof(*u)))
			die("bind");
		alen = sizeof(*u);
		return s;
	}
	alen = sizeof(struct sockaddr_in);
	if (!name)
		return s;
	((struct sockaddr_in *)a)->sin_family = AF_INET;
	((struct sockaddr_in *)a)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)a, alen) || getsockname(s, (struct sockaddr *)a, &l))
		die("bind");
	return s;
}

static void client(int i, int k, const struct sockaddr_storage *srv,
                   const struct sockaddr_storage *sink)
{
	struct sockaddr_storage me;
	char req[64], rep[128], name[16];
	int s;

	snprintf(name, sizeof(name), "c%d", i);
	s = dsock(dir ? name : NULL, &me);
	if (i == 1 && connect(s, (const struct sockaddr *)srv, alen))
		die("connect");
	for (int j = 0; j <= k; j++) {
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t n;
		int len = j < k ? snprintf(req, sizeof(req), "client %d request %d", i, j)
		                : snprintf(req, sizeof(req), "bye");

		if (i == 1)
			n = send(s, req, (size_t)len, 0);
		else
			n = sendto(s, req, (size_t)len, 0, (const struct sockaddr *)srv, alen);
		if (n != len)
			die("send");
		if (i == 2 && j == 0 &&
		    sendto(s, "never read", 10, 0, (const struct sockaddr *)sink, alen) != 10)
			die("sendto sink");
		if (j == k) {
			if (i == 3 &&
			    sendto(s, "late", 4, 0, (const struct sockaddr *)srv, alen) != 4)
				die("send late");
			break;
		}
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
	struct sockaddr_storage srv, sink;
	int nc = argc > 1 ? atoi(argv[1]) : 3, k = argc > 2 ? atoi(argv[2]) : 3, byes = 0, s, d;

	dir = argc > 3 ? argv[3] : NULL;
	s = dsock("srv", &srv);
	d = dsock("sink", &sink);
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
		struct sockaddr_storage from;
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
		if (!strcmp(buf, "late"))
			continue;
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
