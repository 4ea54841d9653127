/*
 * listen_closed.c: a socket bound, its descriptor closed under it, then listen on that
 * number: EBADF, recorded (an event on a descriptor that is no channel) and replayed (the
 * replay took no such event before, and diverged at the next one: CPython's
 * test_socket_close; replayer/lc_chan.c).
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	struct sockaddr_in a;
	struct timespec ts;
	int fd = socket(AF_INET, SOCK_STREAM, 0), r, e;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		perror("socket");
		return 2;
	}
	close(fd);
	r = listen(fd, 1);
	e = errno;
	clock_gettime(CLOCK_MONOTONIC, &ts); /* the next event, where replay diverged */
	printf("listen on a closed descriptor: %d %s\n", r, e == EBADF ? "EBADF" : strerror(e));
	return 0;
}
