/*
 * epoll.c: which descriptor is behind an epoll event.  epoll_wait returns only the user data a
 * program registered (nginx and libevent store pointers there), so the recorder keeps, per
 * epoll instance, the data each descriptor was registered with (epoll_ctl), and logs with each
 * readiness result the descriptor of every event (nondet.c).  Replay then gives back the
 * data the replayed program registered for that descriptor, not the recorded pointer, and
 * waits on the right descriptor.
 *
 * A fixed open-addressing table keyed by (epfd, data): no allocation, one probe sequence per
 * event; each descriptor remembers the slot of its newest registration, so that forgetting it
 * (EPOLL_CTL_DEL, once per connection) takes no scan of the table.  A registration whose descriptor was closed without EPOLL_CTL_DEL stays until its
 * data is registered again (programs reuse their structures, so the newest registration of
 * a data value wins) or the table is full, when new registrations go unrecorded and their
 * events are logged with descriptor -1 (replay then matches by data, as it did before).
 */
#include <string.h>
#include <sys/epoll.h>

#include "rec.h"

#define REC_EPOLL_SLOTS 8192u /* a power of two */

static struct epoll_reg {
	int epfd;   /* 0: free (an epoll descriptor is never 0 in practice: stdin) */
	int fd;     /* -1: forgotten (EPOLL_CTL_DEL), the slot reusable */
	uint64_t data;
} regs[REC_EPOLL_SLOTS];
/* fd -> 1 + the slot of its newest registration, 0 when none is known. */
static uint16_t fd_slot[REC_FD_MAX];

static uint32_t slot_of(int epfd, uint64_t data)
{
	uint64_t h = (data ^ ((uint64_t)(uint32_t)epfd << 32)) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(h >> 40) & (REC_EPOLL_SLOTS - 1);
}

/* Called with the recorder's lock held.  The key's own slot if it is there (a data value
 * registered again), else the first free or forgotten slot on its probe sequence. */
static void reg_put(int epfd, int fd, uint64_t data)
{
	uint32_t i = slot_of(epfd, data), reuse = UINT32_MAX;

	for (uint32_t n = 0; n < REC_EPOLL_SLOTS; n++, i = (i + 1) & (REC_EPOLL_SLOTS - 1)) {
		if (regs[i].epfd == epfd && regs[i].data == data && regs[i].fd >= 0) {
			regs[i].fd = fd;
			return;
		}
		if (regs[i].epfd && regs[i].fd < 0 && reuse == UINT32_MAX)
			reuse = i;
		if (!regs[i].epfd) {
			if (reuse == UINT32_MAX)
				reuse = i;
			break;
		}
	}
	if (reuse == UINT32_MAX)
		return; /* full: this registration's events are logged with descriptor -1 */
	regs[reuse].epfd = epfd;
	regs[reuse].fd = fd;
	regs[reuse].data = data;
	if (fd >= 0 && fd < REC_FD_MAX)
		fd_slot[fd] = (uint16_t)(reuse + 1);
}

/* Forget the registration of fd in epfd that fd_slot remembers; 1 if there was one.  The
 * kernel holds one registration per (epfd, fd), so that slot is the live one; older slots of
 * the same descriptor number are registrations a close ended, whose data is never returned
 * again (a new registration of that data takes the slot over). */
static int reg_forget_newest(int epfd, int fd)
{
	struct epoll_reg *r;

	if (fd < 0 || fd >= REC_FD_MAX || !fd_slot[fd])
		return 0;
	r = &regs[fd_slot[fd] - 1];
	if (r->epfd != epfd || r->fd != fd)
		return 0;
	r->fd = -1;
	fd_slot[fd] = 0;
	return 1;
}

/* Forget fd's registration in epfd (EPOLL_CTL_DEL, a MOD that changes the data): without a
 * scan when fd_slot knows it (once per connection), else (the descriptor is in several epoll
 * instances) by scanning the table.  The slot stays on the probe sequences that pass it
 * (fd -1), for reg_put to take again. */
static void reg_drop_fd(int epfd, int fd)
{
	if (reg_forget_newest(epfd, fd))
		return;
	for (uint32_t i = 0; i < REC_EPOLL_SLOTS; i++)
		if (regs[i].epfd == epfd && regs[i].fd == fd)
			regs[i].fd = -1;
}

int rec_epoll_fd(int epfd, uint64_t data)
{
	uint32_t i = slot_of(epfd, data);

	for (uint32_t n = 0; n < REC_EPOLL_SLOTS; n++, i = (i + 1) & (REC_EPOLL_SLOTS - 1)) {
		if (!regs[i].epfd)
			return -1;
		if (regs[i].epfd == epfd && regs[i].data == data && regs[i].fd >= 0)
			return regs[i].fd;
	}
	return -1;
}

/* epoll_create, epoll_create1: with threads, the number taken is an FDNUM event under the
 * fd-order lock, as an open's (chan.c, rec_fdnum), so that replay hands it out in the
 * recorded order against the other threads' opens and closes: each of pdns_recursor's
 * threads makes its epoll descriptor while another closes a socket, and in replay the epoll
 * took the number the socket had had (a divergence in 3 of 16 recordings). */
static int epoll_made(int r, void *ra)
{
	int e = errno;

	if (__builtin_expect(rec.threads, 0) && r >= 0 && !rec_busy()) {
		REC_FD_ORDER;
		rec_fdnum(TRACE_CALL_EPOLL_CREATE, r, r, 1, ra);
	}
	errno = e;
	return r;
}

REC_EXPORT int epoll_create(int size)
{
	return epoll_made(IP_REAL(epoll_create)(size), __builtin_return_address(0));
}

REC_EXPORT int epoll_create1(int flags)
{
	return epoll_made(IP_REAL(epoll_create1)(flags), __builtin_return_address(0));
}

REC_EXPORT int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	int r = IP_REAL(epoll_ctl)(epfd, op, fd, ev), e = errno;

	if (r != 0 || epfd <= 0 || !rec_enter())
		return r;
	/* an event loop may MOD on every change of interest, mostly with the same data (libuv
	 * keeps the descriptor there): then the table already says it, no linear scan */
	if (op == EPOLL_CTL_MOD && ev && rec_epoll_fd(epfd, ev->data.u64) == fd) {
		rec_leave();
		errno = e;
		return r;
	}
	if (op == EPOLL_CTL_DEL || op == EPOLL_CTL_MOD)
		reg_drop_fd(epfd, fd);
	else if (op == EPOLL_CTL_ADD)
		reg_forget_newest(epfd, fd); /* a registration a close ended, now stale */
	if ((op == EPOLL_CTL_ADD || op == EPOLL_CTL_MOD) && ev)
		reg_put(epfd, fd, ev->data.u64);
	rec_leave();
	errno = e;
	return r;
}
