/* async_wake.c: libuv's uv_async_send in miniature.  A waker writes an eventfd only when the
 * pending flag was clear; the woken thread reads the eventfd, then clears the flag in its own
 * code (no interposed call).  Recorded with ASYNC_WAKE_DELAY set, the woken thread clears
 * the flag late, so the waker's second send finds it set and writes nothing; replayed without
 * the delay (encore replay --setenv ASYNC_WAKE_DELAY=), the flag is clear by then and the
 * waker writes a wake-up the recorded run did not make.  For replay_async_wake.sh. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

static int efd;
static int pending, woke, done;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void send_wake(void)
{
	uint64_t one = 1;

	if (__atomic_exchange_n(&pending, 1, __ATOMIC_ACQ_REL) == 0 &&
	    write(efd, &one, sizeof(one)) != sizeof(one))
		exit(3);
}

static void *loop(void *arg)
{
	const char *d = getenv("ASYNC_WAKE_DELAY");
	uint64_t v;

	(void)arg;
	if (read(efd, &v, sizeof(v)) != sizeof(v))
		exit(4);
	__atomic_store_n(&woke, 1, __ATOMIC_RELEASE);
	if (d && *d) {
		struct timespec t = { 0, 200 * 1000 * 1000 }; /* its own code, slow */

		nanosleep(&t, NULL);
	}
	__atomic_store_n(&pending, 0, __ATOMIC_RELEASE);
	pthread_mutex_lock(&m);
	done++;
	pthread_mutex_unlock(&m);
	return NULL;
}

int main(void)
{
	pthread_t t;

	if ((efd = eventfd(0, EFD_CLOEXEC)) < 0 || pthread_create(&t, NULL, loop, NULL) != 0)
		return 1;
	send_wake();
	while (!__atomic_load_n(&woke, __ATOMIC_ACQUIRE))
		; /* the loop thread has taken the wake-up */
	send_wake(); /* recorded with the delay: the flag is still set, nothing written */
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	pthread_join(t, NULL);
	printf("done %d\n", done);
	return 0;
}
