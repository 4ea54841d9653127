/* udp_threads.c: one thread sends datagrams to an echo process, another thread receives the
 * echoes on a second socket (coturn's relay threads).  An echo can come back before the
 * sending thread has logged its send: the receive must be logged after it (recorder/rec.h,
 * rec_fd_observes_sends: a datagram socket observes our sends), or the analyzer sees a
 * message received before it was sent, a cycle.  A window of 16 datagrams in flight (a mutex
 * and a condition variable: ordered in replay) keeps every socket's buffer from overflowing. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define COUNT 300
#define WINDOW 16

static int s1, s2;
static struct sockaddr_in echo_addr;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t room = PTHREAD_COND_INITIALIZER;
static int sent, got;

static int bound(struct sockaddr_in *a)
{
	socklen_t al = sizeof(*a);
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || bind(s, (struct sockaddr *)a, sizeof(*a)) != 0 ||
	    getsockname(s, (struct sockaddr *)a, &al) != 0)
		return -1;
	return s;
}

static void *sender(void *arg)
{
	(void)arg;
	for (int i = 0; i < COUNT; i++) {
		char b[32];
		int l = snprintf(b, sizeof(b), "msg %d", i);

		pthread_mutex_lock(&lock);
		while (sent - got >= WINDOW)
			pthread_cond_wait(&room, &lock);
		sent++;
		pthread_mutex_unlock(&lock);
		if (sendto(s1, b, (size_t)l, 0, (struct sockaddr *)&echo_addr, sizeof(echo_addr)) != l)
			return NULL;
	}
	return NULL;
}

int main(void)
{
	struct sockaddr_in a1, a2;
	int e, st, last = -1;
	pthread_t t;
	pid_t echo;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((s2 = bound(&a2)) < 0 || (e = bound(&echo_addr)) < 0)
		return perror("socket"), 1;
	if ((echo = fork()) == 0) {
		/* every datagram back to the client's second socket; "quit" ends */
		for (;;) {
			char b[64];
			ssize_t l = recv(e, b, sizeof(b), 0);

			if (l == 4 && memcmp(b, "quit", 4) == 0)
				break;
			if (l > 0 && sendto(e, b, (size_t)l, 0, (struct sockaddr *)&a2, sizeof(a2)) != l)
				return 1;
		}
		printf("echo done\n");
		return 0;
	}
	close(e);
	if ((s1 = bound(&a1)) < 0 || pthread_create(&t, NULL, sender, NULL) != 0)
		return perror("sender"), 1;
	while (got < COUNT) {
		char b[64];
		ssize_t l = recv(s2, b, sizeof(b) - 1, 0);

		if (l <= 0)
			return perror("recv"), 1;
		b[l] = '\0';
		sscanf(b, "msg %d", &last);
		pthread_mutex_lock(&lock);
		got++;
		pthread_cond_signal(&room);
		pthread_mutex_unlock(&lock);
	}
	pthread_join(t, NULL);
	if (sendto(s1, "quit", 4, 0, (struct sockaddr *)&echo_addr, sizeof(echo_addr)) != 4 ||
	    waitpid(echo, &st, 0) != echo)
		return 1;
	printf("client got %d echoes, the last msg %d\n", got, last);
	return 0;
}
