/*
 * many_conns.c: a client process that connects 100 times, one connection after the other,
 * to a server it forked (a load generator's pattern: ab, wrk, redis-benchmark); each
 * connection carries a request and its answer.  In replay the server's accept takes the
 * connection of the recorded client, which the GD knows by the local ports its LC reports
 * (replayer/gd_msg.c, note_port): past the 64th the ports went unnoted and the accept waited
 * for ever.  Prints the sum of the answers.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 100

int main(void)
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	int l, c, i, st, one = 1;
	unsigned char b;
	long sum = 0;
	pid_t srv;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((l = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 8) ||
	    getsockname(l, (struct sockaddr *)&a, &al))
		return 1;
	if ((srv = fork()) == 0) {
		for (i = 0; i < N; i++) {
			if ((c = accept(l, NULL, NULL)) < 0 || read(c, &b, 1) != 1)
				_exit(2);
			b = (unsigned char)(b * 3 + 1);
			if (write(c, &b, 1) != 1)
				_exit(3);
			close(c);
		}
		_exit(0);
	}
	close(l);
	for (i = 0; i < N; i++) {
		b = (unsigned char)i;
		if ((c = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
		    connect(c, (struct sockaddr *)&a, sizeof(a)) != 0 || write(c, &b, 1) != 1 ||
		    read(c, &b, 1) != 1)
			return 1;
		sum += b;
		close(c);
	}
	if (waitpid(srv, &st, 0) != srv || !WIFEXITED(st) || WEXITSTATUS(st))
		return 1;
	printf("%d connections, answers summing to %ld\n", N, sum);
	return 0;
}
