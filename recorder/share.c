/*
 * share.c: pipe ends several processes hold (forked workers reading one task pipe, writing
 * one result pipe).  Each process counts the bytes it moved itself, so which reader took
 * which bytes, and where each writer's bytes went, would be lost; instead such an end's
 * sends and receives carry the offset of the direction shared by every holder
 * (recorder/README.md, "Shared pipe ends"; schemas/trace-format.md).
 *
 * The table lives in the session directory (REC_SHARE_FILE), mapped MAP_SHARED by every
 * recorded process that holds a shared end, so that it survives fork and exec.  A slot per
 * pipe (its inode), made when the pipe first crosses a fork; per direction, a lock and the
 * bytes moved.  The lock is held across the real call, so the counter moves exactly as the
 * bytes were taken: a futex word holding the holder's TID, recursive (a signal handler of
 * the holder may read the same pipe), and taken over when its holder died mid-call.
 */
#include <fcntl.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rec.h"

#define REC_SHARE_FILE ".encore-shared"
#define REC_SHARE_SLOTS 2048

struct share_dir {
	uint32_t lock;    /* TID of the holder, 0 free (futex word) */
	uint32_t waiters; /* threads sleeping on lock */
	uint32_t depth;   /* the holder's nesting (its signal handlers) */
	uint32_t ready;   /* base and off are set */
	uint64_t base;    /* offset when it became shared */
	uint64_t off;     /* bytes moved so far by every holder */
};

struct share_slot {
	uint32_t state; /* 0 free, 1 being made, 2 in use */
	uint32_t pad;
	uint64_t dev, ino;
	struct share_dir d[2]; /* [REC_OUT], [REC_IN] */
	uint8_t pad2[128 - 24 - 2 * 32];
};

_Static_assert(sizeof(struct share_slot) == 128, "share slot size");

static struct share_slot *tab;
static int tab_failed;

static long sys(long nr, long a, long b, long c, long d, long e, long f)
{
	return IP_REAL(syscall)(nr, a, b, c, d, e, f);
}

/* Map the table (made by the first process that needs it, when `make`).  0, or -1. */
static int share_map(int make)
{
	char path[sizeof(rec.dir) + sizeof(REC_SHARE_FILE) + 2];
	size_t size = REC_SHARE_SLOTS * sizeof(struct share_slot);
	struct stat st;
	long fd;
	void *p;
	int held;

	if (tab)
		return 0;
	if (tab_failed || !rec.dir[0])
		return -1;
	if ((size_t)snprintf(path, sizeof(path), "%s/" REC_SHARE_FILE, rec.dir) >= sizeof(path) ||
	    !rec_fd_order_own(&held)) {
		tab_failed = 1;
		return -1;
	}
	fd = sys(SYS_openat, AT_FDCWD, (long)path,
	         O_RDWR | O_CLOEXEC | O_NOFOLLOW | (make ? O_CREAT : 0), 0600, 0, 0);
	if (fd < 0 && !make) {
		rec_fd_order_end(&held);
		return -1; /* no table: nothing is shared yet (asked again later) */
	}
	/* The blocks are allocated before the mapping, never left sparse: a store into a hole of
	 * a full file system is a SIGBUS in the program (a full disk degrades recording, never
	 * the program: README.md, "Record").  No room: nothing is shared (as any failure here). */
	if (fd >= 0 && (sys(SYS_fstat, fd, (long)&st, 0, 0, 0, 0) != 0 || st.st_uid != rec.owner ||
	                sys(SYS_fallocate, fd, 0, 0, (long)size, 0, 0) != 0)) {
		sys(SYS_close, fd, 0, 0, 0, 0, 0);
		fd = -1;
	}
	if (fd < 0) {
		rec_fd_order_end(&held);
		tab_failed = 1;
		return -1;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	sys(SYS_close, fd, 0, 0, 0, 0, 0);
	rec_fd_order_end(&held);
	if (p == MAP_FAILED) {
		tab_failed = 1;
		return -1;
	}
	tab = p;
	return 0;
}

/* The slot of pipe (dev, ino): found, or made when `make`.  Its index + 1, or 0. */
static uint32_t share_slot(uint64_t dev, uint64_t ino, int make)
{
	uint32_t h = (uint32_t)((ino * 0x9e3779b97f4a7c15ull) >> 40) % REC_SHARE_SLOTS;

	if (share_map(make) != 0)
		return 0;
	for (uint32_t i = 0; i < REC_SHARE_SLOTS; i++) {
		struct share_slot *s = &tab[(h + i) % REC_SHARE_SLOTS];
		uint32_t st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE), zero = 0;

		if (st == 0) {
			if (!make)
				return 0;
			if (!__atomic_compare_exchange_n(&s->state, &zero, 1, 0, __ATOMIC_ACQ_REL,
			                                 __ATOMIC_ACQUIRE)) {
				st = zero;
			} else {
				s->dev = dev;
				s->ino = ino;
				__atomic_store_n(&s->state, 2, __ATOMIC_RELEASE);
				return (h + i) % REC_SHARE_SLOTS + 1;
			}
		}
		while (st == 1) { /* another process is filling it in */
			sys(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
			st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
		}
		if (s->dev == dev && s->ino == ino)
			return (h + i) % REC_SHARE_SLOTS + 1;
	}
	return 0; /* full: the end stays this process's own (README: limits) */
}

/* A connection handed to a child at its birth (accepted, then forked before any byte moved:
 * inetd-style servers, vsftpd's session processes, which read the control connection in
 * turn): a TCP or Unix stream socket between processes that may be recorded.  One that has
 * moved bytes already stays its process's own when it forks (a server forking a snapshot
 * child, redis's BGSAVE, with every client connected: no lock on their calls for the rest of
 * the run, no slot each); socketpairs too (a parent's and a child's ends, used one each). */
static int socket_kind(const struct rec_chan *c)
{
	/* (an accepted connection whose client is not known yet is undecided, external until
	 * its first bytes say otherwise: chan.c, decide_peer) */
	return (c->type == TRACE_CHAN_TCP || (c->type == TRACE_CHAN_UNIX && !c->unix_dgram)) &&
	       (!c->external || c->undecided);
}

/* Make c (on descriptor fd) a shared end, each direction's count starting from ours (a pipe
 * end has one direction, a socket two).  make: a fork (the slot is made); else a new image
 * looking for the ends its predecessor shared. */
static void share_chan(struct rec_chan *c, int fd, int make)
{
	struct stat st;
	uint32_t slot;
	int sock = socket_kind(c), dirs[2], nd = 0;

	if (c->share || (c->external && !sock))
		return;
	if (sock) {
		if (make && (c->bytes[REC_OUT] || c->bytes[REC_IN]))
			return;
		dirs[nd++] = REC_OUT;
		dirs[nd++] = REC_IN;
	} else if (c->type == TRACE_CHAN_PIPE && (c->dir == 1 || c->dir == 2)) {
		dirs[nd++] = c->dir == 1 ? REC_IN : REC_OUT;
	} else {
		return;
	}
	if (sys(SYS_fstat, fd, (long)&st, 0, 0, 0, 0) != 0 ||
	    !(sock ? S_ISSOCK(st.st_mode) : S_ISFIFO(st.st_mode)))
		return;
	slot = share_slot((uint64_t)st.st_dev, (uint64_t)st.st_ino, make);
	if (!slot)
		return;
	for (int i = 0; i < nd; i++) {
		int dir = dirs[i];
		struct share_dir *d = &tab[slot - 1].d[dir];

		if (__atomic_load_n(&d->ready, __ATOMIC_ACQUIRE))
			continue;
		if (!make)
			return;
		/* under the direction's lock: two processes may make it at once */
		rec_share_lock(slot, dir);
		if (!d->ready) {
			d->base = d->off = c->bytes[dir];
			__atomic_store_n(&d->ready, 1, __ATOMIC_RELEASE);
		}
		rec_share_unlock(slot, dir, 0);
	}
	c->share = slot;
}

static int shareable(const struct rec_chan *c)
{
	return !c->share && (c->type == TRACE_CHAN_PIPE || socket_kind(c));
}

void rec_share_fork(void)
{
	for (int fd = 0; fd < REC_FD_MAX; fd++) {
		int32_t v = rec.fd[fd];

		if (v > 0 && shareable(&rec.chan[v - 1]))
			share_chan(&rec.chan[v - 1], fd, 1);
	}
}

void rec_share_image(void)
{
	/* A new image: the ends it inherited that are shared already (the table says so). */
	if (share_map(0) != 0)
		return;
	for (int fd = 0; fd < REC_FD_MAX; fd++) {
		int32_t v = rec.fd[fd];

		if (v > 0 && shareable(&rec.chan[v - 1]))
			share_chan(&rec.chan[v - 1], fd, 0);
	}
}

/* The calling thread's TID, the lock's owner word: cached (a system call per shared read
 * doubled its cost), forgotten in a new process (rec_share_child). */
static __thread uint32_t share_tid __attribute__((tls_model("initial-exec")));

static uint32_t my_tid(void)
{
	if (__builtin_expect(share_tid == 0, 0))
		share_tid = (uint32_t)sys(SYS_gettid, 0, 0, 0, 0, 0, 0);
	return share_tid;
}

void rec_share_child(void)
{
	share_tid = 0;
}

void rec_share_lock(uint32_t slot, int dir)
{
	struct share_dir *d = &tab[slot - 1].d[dir];
	uint32_t me = my_tid();

	if (__atomic_load_n(&d->lock, __ATOMIC_RELAXED) == me) {
		d->depth++;
		return;
	}
	for (;;) {
		uint32_t cur = 0;
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		/* (the futex and kill below leave errno; rec_share_lock_for keeps the caller's) */

		if (__atomic_compare_exchange_n(&d->lock, &cur, me, 0, __ATOMIC_ACQUIRE,
		                                __ATOMIC_RELAXED)) {
			d->depth = 1;
			return;
		}
		__atomic_fetch_add(&d->waiters, 1, __ATOMIC_RELAXED);
		/* woken at the release; every 100 ms, check that the holder is alive (a reader
		 * killed in its read never releases) */
		if (sys(SYS_futex, (long)&d->lock, FUTEX_WAIT, cur, (long)&ts, 0, 0) != 0 &&
		    errno == ETIMEDOUT && sys(SYS_kill, cur, 0, 0, 0, 0, 0) != 0 && errno == ESRCH)
			__atomic_compare_exchange_n(&d->lock, &cur, 0, 0, __ATOMIC_ACQ_REL,
			                            __ATOMIC_RELAXED);
		__atomic_fetch_sub(&d->waiters, 1, __ATOMIC_RELAXED);
	}
}

/* (rec.h) A call on a shared end: blocking, the lock is waited for, as before a pipe's read;
 * a connection's non-blocking call (MSG_DONTWAIT, O_NONBLOCK) only tries it, since its
 * holder may sit in a blocking call for as long as its peer is silent, and an event loop
 * must not freeze behind it: then the call goes unshared (its offset the process's own; the
 * analyzer may leave the stream unlinked, never the program waiting).  errno is kept. */
int rec_share_lock_for(uint32_t slot, int dir, int fd, int flags, int sock)
{
	struct share_dir *d = &tab[slot - 1].d[dir];
	uint32_t me, cur = 0;
	int e = errno;
	long fl;

	/* (under a seccomp filter, guard.c, no fcntl of ours: sshd's pre-auth child would die of
	 * SIGSYS; its calls are taken as blocking, as before connections were shared) */
	if (sock && !(flags & MSG_DONTWAIT) &&
	    (rec_sandbox || (fl = sys(SYS_fcntl, fd, F_GETFL, 0, 0, 0, 0)) < 0 ||
	     !(fl & O_NONBLOCK)))
		sock = 0; /* blocking */
	if (!sock) {
		rec_share_lock(slot, dir);
		errno = e;
		return 1;
	}
	me = my_tid();
	if (__atomic_load_n(&d->lock, __ATOMIC_RELAXED) == me) {
		d->depth++;
		return 1;
	}
	if (__atomic_compare_exchange_n(&d->lock, &cur, me, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		d->depth = 1;
		return 1;
	}
	errno = e;
	return 0;
}

/* (rec.h) Bytes an unshared call moved on an end a fork shared meanwhile (another thread
 * forked during the call): counted, so that the offsets after it stay the stream's. */
void rec_share_account(uint32_t slot, int dir, long moved)
{
	int e = errno;

	rec_share_lock(slot, dir);
	rec_share_unlock(slot, dir, moved);
	errno = e;
}

uint64_t rec_share_unlock(uint32_t slot, int dir, long moved)
{
	struct share_dir *d = &tab[slot - 1].d[dir];
	uint64_t off = d->off;

	if (moved > 0)
		d->off = off + (uint64_t)moved;
	if (--d->depth == 0) {
		__atomic_store_n(&d->lock, 0, __ATOMIC_RELEASE);
		if (__atomic_load_n(&d->waiters, __ATOMIC_RELAXED))
			sys(SYS_futex, (long)&d->lock, FUTEX_WAKE, 1, 0, 0, 0);
	}
	return off;
}

uint64_t rec_share_off(uint32_t slot, int dir)
{
	return __atomic_load_n(&tab[slot - 1].d[dir].off, __ATOMIC_ACQUIRE);
}

void rec_share_aux(uint32_t slot, int dir, uint64_t off, struct trace_event *ev)
{
	ev->flags |= TRACE_FL_SHARED;
	ev->naux = 3;
	ev->aux[0] = (int64_t)off;
	ev->aux[1] = (int64_t)tab[slot - 1].ino;
	ev->aux[2] = (int64_t)tab[slot - 1].d[dir].base;
}

/* --- process-shared semaphores ------------------------------------------------------------
 *
 * Processes that read one pipe often take a process-shared lock around the read (Python's
 * multiprocessing queues: a POSIX semaphore in shared memory).  Replay must give that lock
 * to them in the recorded order, or a process that took it early holds it while waiting for
 * bytes that come only once a process blocked on it went on.  Each successful sem_wait,
 * sem_trywait or sem_timedwait of a process-shared semaphore takes a ticket from the table
 * (a counter per semaphore, keyed by its address: the same in the processes a fork made)
 * and logs it in an ORDER event; a failed one logs ticket -1. */

/* glibc's sem_t: a 64-bit value, then `private`: FUTEX_SHARED (128) for a process-shared one
 * (sem_init with pshared, or sem_open), FUTEX_PRIVATE (0) otherwise. */
struct glibc_sem {
	uint64_t data;
	int priv;
	int pad;
};

#define SEM_KEY_DEV UINT64_MAX /* table slots of semaphores: (this, address) */

int64_t rec_share_sem_ticket(const sem_t *s, int r)
{
	const struct glibc_sem *g = (const void *)s;
	uint32_t slot;

	if (!s || rec.w == NULL || rec_busy() || __atomic_load_n(&g->priv, __ATOMIC_RELAXED) != 128)
		return -2;
	if (r != 0)
		return -1;
	slot = share_slot(SEM_KEY_DEV, (uint64_t)(uintptr_t)s, 1);
	if (!slot)
		return -2;
	return (int64_t)__atomic_fetch_add(&tab[slot - 1].d[0].off, 1, __ATOMIC_ACQ_REL);
}

void rec_share_sem_event(struct trace_event *ev, const sem_t *s, uint32_t call, int64_t ticket,
                         int r, int e)
{
	rec_event_init(ev, TRACE_EV_ORDER, call, -1);
	ev->result = r;
	ev->err = r < 0 ? e : 0;
	ev->naux = 3;
	ev->aux[0] = ticket;
	ev->aux[1] = (int64_t)(uintptr_t)s;
	ev->aux[2] = 0;
}

void rec_share_sem_log(const sem_t *s, uint32_t call, int64_t ticket, int r, int e, void *ra)
{
	struct trace_event ev;

	if (ticket == -2)
		return;
	/* Taking it observes another process's release, which a send of ours may have caused
	 * (the bytes it waited for): such a send is logged first, as before a receive (rec.h,
	 * REC_DATA_ORDER) */
	if (rec.threads && !rec_busy())
		rec_sends_settle();
	if (!rec_enter())
		return;
	rec_share_sem_event(&ev, s, call, ticket, r, e);
	rec_log(&ev, ra);
	rec_leave();
}

void rec_share_sem_post(const sem_t *s, void *ra)
{
	const struct glibc_sem *g = (const void *)s;
	struct trace_event ev;
	uint32_t slot;

	if (!s || rec.w == NULL || rec_busy() || __atomic_load_n(&g->priv, __ATOMIC_RELAXED) != 128)
		return;
	slot = share_slot(SEM_KEY_DEV, (uint64_t)(uintptr_t)s, 1);
	if (!slot || !rec_enter())
		return;
	/* the tickets taken so far: the next one is taken after this release */
	rec_event_init(&ev, TRACE_EV_ORDER, TRACE_CALL_SEM_POST, -1);
	ev.naux = 3;
	ev.aux[0] = (int64_t)__atomic_load_n(&tab[slot - 1].d[0].off, __ATOMIC_ACQUIRE);
	ev.aux[1] = (int64_t)(uintptr_t)s;
	ev.aux[2] = 0;
	rec_log(&ev, ra);
	rec_leave();
}
