/*
 * record_epoll_regs.c: epoll registrations the recorder must keep track of to name the
 * descriptor behind each readiness result (recorder/epoll.c): one descriptor in two epoll
 * instances, forgotten in one (either the older or the newer registration), re-registered
 * with new data, closed without EPOLL_CTL_DEL and its number reused, and a data value reused
 * by another descriptor.  Each epoll_wait returns one event; the program prints, in order, the
 * descriptor each result must name ("expect FD..."), which record_epoll_regs.sh compares with
 * the READY events of the trace.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

static int expect[16], nexpect;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void ctl(int ep, int op, int fd, uint64_t data)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = data };

	if (epoll_ctl(ep, op, fd, &ev) != 0)
		die("epoll_ctl");
}

/* One readable descriptor waited for in ep: the result must name fd. */
static void wait_one(int ep, int fd, uint64_t data)
{
	struct epoll_event ev;

	if (epoll_wait(ep, &ev, 1, 5000) != 1 || ev.data.u64 != data)
		die("epoll_wait");
	expect[nexpect++] = fd;
}

static void drain(int fd)
{
	char b[16];

	if (read(fd, b, sizeof(b)) <= 0)
		die("read");
}

int main(void)
{
	int a = epoll_create1(0), b = epoll_create1(0), c = epoll_create1(0), d = epoll_create1(0);
	int e = epoll_create1(0), p1[2], p2[2], p3[2], p4[2], p5[2], i, old;

	if (a < 0 || b < 0 || c < 0 || d < 0 || e < 0 || pipe(p1) || pipe(p2) || pipe(p3))
		die("setup");
	/* in two instances; the older registration forgotten: the newer one still names it */
	ctl(a, EPOLL_CTL_ADD, p1[0], 0x1111);
	ctl(b, EPOLL_CTL_ADD, p1[0], 0x2222);
	ctl(a, EPOLL_CTL_DEL, p1[0], 0);
	if (write(p1[1], "x", 1) != 1)
		die("write");
	wait_one(b, p1[0], 0x2222);
	/* the newer forgotten: the older one still names it */
	ctl(c, EPOLL_CTL_ADD, p2[0], 0x3333);
	ctl(d, EPOLL_CTL_ADD, p2[0], 0x4444);
	ctl(d, EPOLL_CTL_DEL, p2[0], 0);
	if (write(p2[1], "x", 1) != 1)
		die("write");
	wait_one(c, p2[0], 0x3333);
	/* new data for a registration (MOD), then forgotten and added again */
	ctl(b, EPOLL_CTL_MOD, p1[0], 0x5555);
	wait_one(b, p1[0], 0x5555);
	ctl(b, EPOLL_CTL_DEL, p1[0], 0);
	ctl(b, EPOLL_CTL_ADD, p1[0], 0x5656);
	wait_one(b, p1[0], 0x5656);
	drain(p1[0]);
	drain(p2[0]);
	/* closed without EPOLL_CTL_DEL, its number taken by a new pipe registered with new data */
	ctl(e, EPOLL_CTL_ADD, p3[0], 0x6666);
	old = p3[0];
	close(p3[0]);
	if (pipe(p4) || p4[0] != old)
		die("pipe (the number was not reused)");
	ctl(e, EPOLL_CTL_ADD, p4[0], 0x7777);
	if (write(p4[1], "x", 1) != 1)
		die("write");
	wait_one(e, p4[0], 0x7777);
	drain(p4[0]);
	/* the closed registration's data taken by another descriptor */
	if (pipe(p5))
		die("pipe");
	ctl(e, EPOLL_CTL_ADD, p5[0], 0x6666);
	if (write(p5[1], "x", 1) != 1)
		die("write");
	wait_one(e, p5[0], 0x6666);
	printf("expect");
	for (i = 0; i < nexpect; i++)
		printf(" %d", expect[i]);
	printf("\n");
	return 0;
}
