/*
 * e2e_net.c: a server and a client on two "hosts" (network namespaces made by
 * record_netns.sh), each recorded by its own `encore record` into one session.  Their peers
 * are on another host, so what each receives is INPUT with the bytes (recorder/README.md,
 * "Who is recorded"); the addresses each end logs must name the other end.
 * Report format: tests/e2e/check_trace.c.
 *
 *   e2e_net server ADDR REPORTDIR      prints "ready PORT" on stdout once listening
 *   e2e_net client ADDR PORT REPORTDIR
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "trace.h"

static FILE *rep;

static void rep_open(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s.report", dir, name);
	if (!(rep = fopen(path, "w"))) {
		perror(path);
		exit(99);
	}
	setvbuf(rep, NULL, _IOLBF, 0);
}

static const char *addr(int fd, int peer, char *out)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	if ((peer ? getpeername(fd, (struct sockaddr *)&a, &len)
	          : getsockname(fd, (struct sockaddr *)&a, &len)) != 0)
		return "?";
	sprintf(out, "%s:%u", inet_ntoa(a.sin_addr), ntohs(a.sin_port));
	return out;
}

/* K = 1, fresh channels: the hash of a direction is that of this one message. */
static void data(const char *kind, const char *call, int fd, int ch, ssize_t r, size_t n,
                 const char *b)
{
	size_t i;

	fprintf(rep, "%s %s %d %d %zd 0 n=%zu", kind, call, fd, ch, r, n);
	if (r > 0) {
		fprintf(rep, " h=%08x", trace_hash(0, b, (size_t)r));
		if (!strcmp(kind, "input")) {
			fprintf(rep, " v=");
			for (i = 0; i < (size_t)r; i++)
				fprintf(rep, "%02x", (uint8_t)b[i]);
		}
	}
	fputc('\n', rep);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	char buf[64], a1[64], a2[64];
	int fd, c;
	ssize_t r;

	if (argc == 4 && !strcmp(argv[1], "server")) {
		rep_open(argv[3], "server");
		fd = socket(AF_INET, SOCK_STREAM, 0);
		fprintf(rep, "socket socket %d 1 %d 0 a=%d,%d\n", fd, fd, AF_INET, SOCK_STREAM);
		memset(&sa, 0, sizeof(sa));
		sa.sin_family = AF_INET;
		inet_pton(AF_INET, argv[2], &sa.sin_addr);
		r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
		fprintf(rep, "bind bind %d 1 %zd %d epl=%s\n", fd, r, r ? errno : 0, addr(fd, 0, a1));
		r = listen(fd, 1);
		fprintf(rep, "listen listen %d 1 %zd 0\n", fd, r);
		getsockname(fd, (struct sockaddr *)&sa, &len);
		printf("ready %u\n", ntohs(sa.sin_port));
		fflush(stdout);
		c = accept(fd, NULL, NULL);
		fprintf(rep, "accept accept %d 2 %d 0 a=1 epl=%s epp=%s\n", c, c, addr(c, 0, a1),
		        addr(c, 1, a2));
		r = recv(c, buf, 12, MSG_WAITALL);
		data("input", "recv", c, 2, r, 12, buf);
		r = send(c, "hello from A", 12, 0);
		data("send", "send", c, 2, r, 12, "hello from A");
		r = close(c);
		fprintf(rep, "close close %d 2 %zd 0\n", c, r);
	} else if (argc == 5 && !strcmp(argv[1], "client")) {
		rep_open(argv[4], "client");
		fd = socket(AF_INET, SOCK_STREAM, 0);
		fprintf(rep, "socket socket %d 1 %d 0 a=%d,%d\n", fd, fd, AF_INET, SOCK_STREAM);
		memset(&sa, 0, sizeof(sa));
		sa.sin_family = AF_INET;
		sa.sin_port = htons((uint16_t)atoi(argv[3]));
		inet_pton(AF_INET, argv[2], &sa.sin_addr);
		r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
		fprintf(rep, "connect connect %d 1 %zd %d epl=%s epp=%s\n", fd, r, r ? errno : 0,
		        addr(fd, 0, a1), addr(fd, 1, a2));
		r = send(fd, "hello from B", 12, 0);
		data("send", "send", fd, 1, r, 12, "hello from B");
		r = recv(fd, buf, 12, MSG_WAITALL);
		data("input", "recv", fd, 1, r, 12, buf);
		printf("client got '%.*s'\n", (int)r, buf);
		r = close(fd);
		fprintf(rep, "close close %d 1 %zd 0\n", fd, r);
	} else {
		fprintf(stderr, "usage: e2e_net server ADDR DIR | client ADDR PORT DIR\n");
		return 2;
	}
	fprintf(rep, "exit exit -1 0 0 0\n");
	fclose(rep);
	return 0;
}
