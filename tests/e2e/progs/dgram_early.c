/* dgram_early.c: a datagram sent once its receiver's port is bound, which the sender learns
 * by reading /proc/net/udp (a shell's wait for a server: the corpus's pdns_recursor); the
 * receiver binds only after some work.  In replay the sender's reads of /proc come from the
 * trace, so only the replayer can hold the send until the port is bound (a datagram to a
 * port nobody holds is dropped: replayer/lc_chan.c, dgram_wait_receiver). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int port_listed(int port)
{
	char line[512], want[16];
	FILE *f = fopen("/proc/net/udp", "r");
	int found = 0;

	if (!f)
		return 0;
	snprintf(want, sizeof(want), ":%04X ", port);
	while (!found && fgets(line, sizeof(line), f)) {
		char *loc = strchr(line, ':');

		found = loc && (loc = strchr(loc + 1, ':')) && strncmp(loc, want, strlen(want)) == 0;
	}
	fclose(f);
	return found;
}

int main(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	int s = socket(AF_INET, SOCK_DGRAM, 0), port, st;
	volatile unsigned long spin = 0;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    getsockname(s, (struct sockaddr *)&a, &al) != 0)
		return 1;
	port = ntohs(a.sin_port);
	close(s);
	if (fork() == 0) { /* the receiver: work first, then its port */
		char buf[64];
		ssize_t n;

		for (unsigned long i = 0; i < 300000000ul; i++)
			spin += i;
		s = socket(AF_INET, SOCK_DGRAM, 0);
		if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) != 0)
			_exit(1);
		n = recv(s, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		printf("received: %s\n", buf);
		fflush(stdout);
		_exit(0);
	}
	if (fork() == 0) { /* the sender: waits for the port as a shell would */
		s = socket(AF_INET, SOCK_DGRAM, 0);
		while (!port_listed(port))
			usleep(1000);
		if (sendto(s, "query", 5, 0, (struct sockaddr *)&a, sizeof(a)) != 5)
			_exit(1);
		_exit(0);
	}
	while (wait(&st) > 0)
		;
	printf("done\n");
	return 0;
}
