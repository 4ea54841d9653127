/*
 * thr_shutdown.c: a threaded server in the shape of python's http.server under ab: the main
 * thread waits for a connection (poll), accepts it and starts a thread that sends the answer
 * and shuts the connection down (SHUT_WR) before it closes it; a client process reads each
 * answer to its end, polling before each read, then connects again, 150 times.  The end of stream a request thread's
 * shutdown sends makes the client connect again, which the main thread's poll sees: the
 * shutdown must be logged before that poll result (recorder/chan.c: a shutdown is a send
 * for the ordering of threads), or the replay's poll waits for a connection that comes
 * after the shutdown its turn holds back.  The request threads run as SCHED_IDLE on the
 * client's CPU, the main thread on another: the client, woken by the end of stream, takes
 * the CPU from the request thread before its shutdown returns, and connects again while the
 * main thread waits, so that a recorded run shows the order nearly always.
 */
#include <sched.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 150

static cpu_set_t one_cpu, other_cpus; /* the client's CPU, the others (main's) */

static void *serve(void *arg)
{
	int fd = (int)(intptr_t)arg;
	struct sched_param sp = { 0 };
	char buf[256];
	int n;

	sched_setaffinity(0, sizeof(one_cpu), &one_cpu);
	sched_setscheduler(0, SCHED_IDLE, &sp); /* this thread (Linux: per thread) */
	if (read(fd, buf, 1) != 1)
		return NULL;
	n = snprintf(buf, sizeof(buf), "answer to request %d\n", buf[0]);
	if (write(fd, buf, (size_t)n) != n)
		return NULL;
	shutdown(fd, SHUT_WR);
	close(fd);
	return NULL;
}

int main(void)
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	pthread_t t[N];
	int l, c, i, st, one = 1;
	char buf[256];
	ssize_t n;
	long total = 0;
	pid_t client;

	CPU_ZERO(&one_cpu);
	CPU_ZERO(&other_cpus);
	if (sched_getaffinity(0, sizeof(other_cpus), &other_cpus) == 0)
		for (i = 0; i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &other_cpus)) {
				CPU_SET(i, &one_cpu);
				if (CPU_COUNT(&other_cpus) > 1)
					CPU_CLR(i, &other_cpus);
				break;
			}
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((l = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 8) ||
	    getsockname(l, (struct sockaddr *)&a, &al))
		return 1;
	if ((client = fork()) == 0) {
		sched_setaffinity(0, sizeof(one_cpu), &one_cpu);
		close(l);
		for (i = 0; i < N; i++) {
			char k = (char)(i % 100);

			if ((c = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
			    connect(c, (struct sockaddr *)&a, sizeof(a)) != 0 || write(c, &k, 1) != 1)
				_exit(2);
			/* each read after a poll that says readable, as ab's epoll loop: the replay
			 * gives that result once the end of stream is there for real */
			do {
				struct pollfd p = { .fd = c, .events = POLLIN };

				if (poll(&p, 1, -1) != 1)
					_exit(3);
				if ((n = read(c, buf, sizeof(buf))) > 0)
					total += n;
			} while (n > 0);
			close(c);
		}
		printf("client read %ld bytes in %d answers\n", total, N);
		fflush(stdout);
		_exit(0);
	}
	sched_setaffinity(0, sizeof(other_cpus), &other_cpus);
	for (i = 0; i < N; i++) {
		struct pollfd p = { .fd = l, .events = POLLIN };

		if (poll(&p, 1, -1) != 1 || (c = accept(l, NULL, NULL)) < 0 ||
		    pthread_create(&t[i], NULL, serve, (void *)(intptr_t)c) != 0)
			return 1;
	}
	for (i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	if (waitpid(client, &st, 0) != client || !WIFEXITED(st) || WEXITSTATUS(st))
		return 1;
	printf("served %d\n", N);
	return 0;
}
