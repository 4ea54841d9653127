/* select_left.c: what select leaves in its timeout (Linux: the time not slept), which
 * programs test (iperf3 runs its timers when it is zero): once with a descriptor ready at
 * once (most of 5 s left), once timing out on an empty pipe (nothing left).  Replay must give
 * back the recorded values (recorder/nondet.c). */
#include <stdio.h>
#include <sys/select.h>
#include <unistd.h>

int main(void)
{
	int p[2], q[2];
	fd_set rs;
	struct timeval tv = { 5, 0 };
	int r;

	if (pipe(p) != 0 || pipe(q) != 0 || write(p[1], "x", 1) != 1)
		return 1;
	FD_ZERO(&rs);
	FD_SET(p[0], &rs);
	r = select(p[0] + 1, &rs, NULL, NULL, &tv);
	printf("ready %d left %ld %ld\n", r, (long)tv.tv_sec, (long)tv.tv_usec);
	FD_ZERO(&rs);
	FD_SET(q[0], &rs);
	tv.tv_sec = 0;
	tv.tv_usec = 20000;
	r = select(q[0] + 1, &rs, NULL, NULL, &tv);
	printf("timeout %d left %ld %ld\n", r, (long)tv.tv_sec, (long)tv.tv_usec);
	return 0;
}
