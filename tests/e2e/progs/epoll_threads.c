/* epoll_threads.c: threads making epoll descriptors while another closes sockets, the
 * numbers printed: with threads, epoll_create's number is an FDNUM event, handed out in the
 * recorded order in replay (recorder/epoll.c; replay_epoll_fdnum.sh). */
#include <pthread.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static void *worker(void *arg)
{
	int ep = (long)arg ? epoll_create1(EPOLL_CLOEXEC) : epoll_create(8);
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	printf("worker %ld: epoll %d socket %d\n", (long)arg, ep, s);
	fflush(stdout);
	return NULL;
}

int main(void)
{
	pthread_t t[2];

	for (long i = 0; i < 2; i++) {
		int s = socket(AF_INET, SOCK_DGRAM, 0);

		if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
			return 1;
		close(s); /* racing the worker's epoll_create */
		pthread_join(t[i], NULL);
	}
	return 0;
}
