/* kill_flag.c: main sets a plain stop flag, then signals its worker with pthread_kill to
 * interrupt its epoll_wait (knot's workers are stopped so; the flag is read without a lock).
 * The replay must run the worker's wakeup after main's pthread_kill, past the flag's store:
 * the recorder logs the call's event under the stream lock, before the handler's
 * (recorder/signals.c, kill_thread_logged).  Main signals once the worker is in epoll_wait,
 * as /proc says (its reads are replayed from the trace). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <unistd.h>

static volatile int stop;
static int ep, ready[2];

static void on_usr1(int s)
{
	(void)s;
}

static void *worker(void *a)
{
	struct epoll_event ev;
	pid_t tid = (pid_t)syscall(SYS_gettid);

	(void)a;
	if (write(ready[1], &tid, sizeof(tid)) != sizeof(tid))
		return NULL;
	for (;;) {
		int n = epoll_wait(ep, &ev, 1, -1);

		if (stop)
			break;
		if (n < 0 && errno != EINTR)
			break;
	}
	printf("worker stopped\n");
	return NULL;
}

int main(void)
{
	struct sigaction sa = { 0 };
	pthread_t t;
	pid_t tid;
	char path[64], b[64];

	setvbuf(stdout, NULL, _IOLBF, 0);
	sa.sa_handler = on_usr1;
	if (sigaction(SIGUSR1, &sa, NULL) != 0 || pipe(ready) != 0 ||
	    (ep = epoll_create1(0)) < 0 || pthread_create(&t, NULL, worker, NULL) != 0)
		return perror("setup"), 1;
	if (read(ready[0], &tid, sizeof(tid)) != sizeof(tid))
		return 1;
	/* until the worker waits in epoll_wait (232) or epoll_pwait (281) */
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	for (;;) {
		int fd = open(path, O_RDONLY);
		ssize_t n = fd >= 0 ? read(fd, b, sizeof(b) - 1) : -1;

		if (fd >= 0)
			close(fd);
		if (n <= 0)
			return perror(path), 1;
		b[n] = '\0';
		if (strncmp(b, "232 ", 4) == 0 || strncmp(b, "281 ", 4) == 0)
			break;
		sched_yield();
	}
	/* Not a synchronisation (the wait above is): a pause that leaves main's thread cold, so
	 * that the worker's wakeup outruns main's return from pthread_kill, the order that made
	 * a recorder logging the call after it put the handler first (knot). */
	usleep(100000);
	stop = 1;
	pthread_kill(t, SIGUSR1);
	pthread_join(t, NULL);
	printf("main done\n");
	return 0;
}
