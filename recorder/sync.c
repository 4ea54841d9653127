/*
 * sync.c: the order in which a process's threads pass pthread synchronisation (mutexes,
 * rwlocks, condition variables, semaphores, barriers, spin locks), logged as SYNC events
 * (schemas/trace-format.md, "Threads").  This is Instant Replay (LeBlanc and Mellor-Crummey,
 * "Debugging parallel programs with Instant Replay", IEEE ToC 1987, section 3): for a
 * program whose threads share data only under these objects, the order of the accesses to
 * the objects decides the execution, and replay enforces it (replayer/lc_sync.c).
 *
 * The rule that makes the order right: an acquiring call (lock, a wait that returned) is
 * logged after the real call returned, a releasing call (unlock, post, signal, the start of a
 * condition wait, which releases its mutex) before the real call, both under the stream
 * lock.  Every release then precedes, in the one stream, the acquire it enabled.
 *
 * Cost: a process that never started a thread (rec.threads 0) passes straight through, no
 * event; after its first pthread_create every call is an event of a few bytes: no call site
 * (the site would cost a lookup and bytes on the hottest calls), no timestamp.  A thread the
 * recorder did not see start (one libc made) passes through too.  Mutexes are cheaper still
 * ("Owned mutexes" below): most of their calls are no event at all.
 */
#include <linux/futex.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "objid.h"
#include "rec.h"

__thread uint32_t rec_thread __attribute__((tls_model("initial-exec"))) = REC_NO_THREAD;
__thread int rec_held __attribute__((tls_model("initial-exec")));
__thread uint32_t rec_own_pending __attribute__((tls_model("initial-exec")));

static struct ip_objtab objs;
/* The last object named and its id (under the stream lock, sync_write): a lock's release
 * most often comes right after its acquire, in the same thread. */
static const void *last_obj;
static int64_t last_id;

int rec_fdorder;
__thread int rec_fdorder_mine __attribute__((tls_model("initial-exec")));

/* Per descriptor (rec.h, REC_DATA_ORDER): 0 free, 1 held, 2 held with sleepers (Drepper,
 * "Futexes are tricky", mutex 2); and the sends in flight, which observers wait to see 0. */
static uint32_t data_order[REC_FD_MAX];
/* inflight: the sends between their take and their end, by every thread (also how many
 * descriptor locks are held: a fork's child resets them, rec_sync_fork_child) */
static uint32_t inflight, settle_waiters;
static __thread int data_order_mine __attribute__((tls_model("initial-exec")));

/* Which sends an observer waits for (rec_sends_settle): only those whose real call started
 * before the observer's returned, since a send that started later cannot have caused what it
 * saw.  Each send takes a ticket from send_tickets as it starts and shows it in its thread's
 * slot until its event is logged; the observer reads the ticket counter once its real call
 * returned and waits for the slots holding a ticket at or below it.  Threads without a slot
 * (no index, or an index past SEND_SLOTS) count in sends_unslotted, which is waited for to
 * reach 0 as every send once was.  Without this, an observer under load waited for sends
 * that kept starting after it (four memcached workers replying at once: inflight was seldom
 * 0, and half of the recorded server's CPU went to sleeping and waking). */
#define SEND_SLOTS 1024
static uint64_t send_tickets;
static uint64_t send_slot[SEND_SLOTS];
static uint32_t send_slots_used; /* slots ever shown a ticket: observers scan these */
static uint32_t sends_unslotted;
static __thread uint64_t *send_mine __attribute__((tls_model("initial-exec")));

static int data_order_take(int fd, int wait);

int rec_data_order_begin(int fd)
{
	return data_order_take(fd, 1);
}

int rec_data_order_try(int fd)
{
	return data_order_take(fd, 0);
}

static int data_order_take(int fd, int wait)
{
	uint32_t *w, c = 0;
	int e = errno;

	if (fd < 0 || fd >= REC_FD_MAX || rec.fd[fd] == REC_FD_IGNORED || rec_depth ||
	    data_order_mine || !rec.w)
		return 0;
	w = &data_order[fd];
	if (!__atomic_compare_exchange_n(w, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		if (!wait)
			return 0; /* (errno untouched: a compare-exchange sets none) */
		if (c != 2)
			c = __atomic_exchange_n(w, 2, __ATOMIC_ACQUIRE);
		while (c != 0) {
			IP_REAL(syscall)(SYS_futex, w, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
			c = __atomic_exchange_n(w, 2, __ATOMIC_ACQUIRE);
		}
	}
	data_order_mine = 1;
	__atomic_fetch_add(&inflight, 1, __ATOMIC_SEQ_CST);
	/* The ticket, then the slot, both before the real call (sequentially consistent): an
	 * observer that finds the slot empty read it before this send could start. */
	if (rec_thread < SEND_SLOTS) {
		uint32_t used = __atomic_load_n(&send_slots_used, __ATOMIC_SEQ_CST);

		/* (a thread that sends before its creator counted it: rec.nthreads is not yet
		 * past it, so the slots scanned are the ones ever used) */
		while (used < rec_thread + 1 &&
		       !__atomic_compare_exchange_n(&send_slots_used, &used, rec_thread + 1, 0,
		                                    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			;
		send_mine = &send_slot[rec_thread];
		__atomic_store_n(send_mine, __atomic_add_fetch(&send_tickets, 1, __ATOMIC_SEQ_CST),
		                 __ATOMIC_SEQ_CST);
	} else {
		send_mine = NULL;
		__atomic_fetch_add(&sends_unslotted, 1, __ATOMIC_SEQ_CST);
	}
	errno = e;
	return fd + 1;
}

void rec_data_order_end(int *held)
{
	uint32_t *w;
	int e;

	if (!*held)
		return;
	e = errno;
	w = &data_order[*held - 1];
	data_order_mine = 0;
	if (send_mine)
		__atomic_store_n(send_mine, 0, __ATOMIC_SEQ_CST);
	else
		__atomic_fetch_sub(&sends_unslotted, 1, __ATOMIC_SEQ_CST);
	/* Sleeping observers wait on inflight's value: any send's end wakes them to look. */
	__atomic_fetch_sub(&inflight, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&settle_waiters, __ATOMIC_SEQ_CST))
		IP_REAL(syscall)(SYS_futex, &inflight, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
	if (__atomic_fetch_sub(w, 1, __ATOMIC_RELEASE) != 1) {
		__atomic_store_n(w, 0, __ATOMIC_RELEASE);
		IP_REAL(syscall)(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
	errno = e;
}

/* Whether a send that started before ticket `upto` was taken is still in flight. */
static int sends_before(uint64_t upto)
{
	uint32_t i, n;

	if (__atomic_load_n(&sends_unslotted, __ATOMIC_SEQ_CST))
		return 1;
	n = __atomic_load_n(&send_slots_used, __ATOMIC_SEQ_CST);
	for (i = 0; i < n; i++) {
		uint64_t t = __atomic_load_n(&send_slot[i], __ATOMIC_SEQ_CST);

		if (t && t <= upto)
			return 1;
	}
	return 0;
}

void rec_sends_settle(void)
{
	uint64_t upto;
	uint32_t v;
	int e, i;

	if (data_order_mine || rec_depth || !__atomic_load_n(&inflight, __ATOMIC_SEQ_CST))
		return;
	upto = __atomic_load_n(&send_tickets, __ATOMIC_SEQ_CST);
	if (!sends_before(upto))
		return;
	e = errno;
	/* A send in flight finishes in microseconds unless it blocks (a full buffer): first a
	 * short spin and a few yields (the sender may share this CPU), which cost less than a
	 * sleep and a wakeup; then sleeps of 1 ms.  A send that blocks has not reached the peer,
	 * nothing seen now is its answer, and waiting for it could wait for ever (the peer waits
	 * for this thread to read): so 10 ms at most. */
	for (i = 0; i < 64 && sends_before(upto); i++)
		rec_cpu_relax();
	for (i = 0; i < 8 && sends_before(upto); i++)
		IP_REAL(syscall)(SYS_sched_yield);
	if (sends_before(upto)) {
		__atomic_fetch_add(&settle_waiters, 1, __ATOMIC_SEQ_CST);
		for (i = 0; i < 10; i++) {
			struct timespec ts = { 0, 1000 * 1000 };

			v = __atomic_load_n(&inflight, __ATOMIC_SEQ_CST);
			if (!sends_before(upto))
				break;
			IP_REAL(syscall)(SYS_futex, &inflight, FUTEX_WAIT_PRIVATE, v, &ts, NULL, 0);
		}
		__atomic_fetch_sub(&settle_waiters, 1, __ATOMIC_SEQ_CST);
	}
	errno = e;
}

/* The wait is bounded: the holder may be waiting for a lock this thread holds outside the
 * recorder (the loader's, when this thread opens a file from a dl_iterate_phdr callback and
 * the holder's call-site lookup unwinds through dl_iterate_phdr).  After FD_ORDER_MAX_MS the
 * call goes on unordered (0): its number may replay out of order, which the replay then
 * reports as a divergence, where waiting on would hang the program. */
#define FD_ORDER_MAX_MS 200

int rec_fd_order_wait(void)
{
	struct timespec t0 = { 0, 0 }, now;
	unsigned n = 0;

	while (__atomic_exchange_n(&rec_fdorder, 1, __ATOMIC_ACQUIRE)) {
		if (__atomic_load_n(&rec_forking, __ATOMIC_ACQUIRE) && rec_held &&
		    __atomic_load_n(&rec_program_atfork, __ATOMIC_RELAXED))
			return 0;
		if ((++n & 63) == 0) {
			if (!t0.tv_sec && !t0.tv_nsec)
				IP_REAL(clock_gettime)(CLOCK_MONOTONIC, &t0);
			IP_REAL(clock_gettime)(CLOCK_MONOTONIC, &now);
			if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 >
			    FD_ORDER_MAX_MS)
				return 0;
		}
		syscall(SYS_sched_yield);
	}
	return 1;
}

/* The constructor runs in the main thread: it is thread 0. */
__attribute__((constructor)) static void sync_init(void)
{
	rec_thread = 0;
}

/* --- events that meet a fork ---------------------------------------------------------------
 * A fork holds the stream lock across the real fork, and a thread that needs the lock then
 * does not wait for it (rec.h, rec_lock_wait): the program's atfork handlers may wait for a
 * mutex that thread holds.  A sync event cannot be dropped (replay would miss an acquire or a
 * release), so it is kept here and logged by the forking thread, under the lock, right after
 * the real fork, before the FORK event (rec_sync_flush_deferred).  A thread that finds the
 * fork over by the time it holds ring_lock logs normally instead. */
#define DEFER_MAX 256
static struct deferred {
	uint32_t call, thread;
	const void *obj, *obj2;
	int64_t r;
	int32_t e;
	uint32_t prev, pseq; /* an owned mutex's last owner before it (sync_write) */
	uint32_t pending;    /* the thread's acquisitions without events before it */
} deferred[DEFER_MAX];
static uint32_t ndeferred;
static int ring_lock;

static void ring_take(void)
{
	while (__atomic_exchange_n(&ring_lock, 1, __ATOMIC_ACQUIRE))
		syscall(SYS_sched_yield);
}

static void ring_give(void)
{
	__atomic_store_n(&ring_lock, 0, __ATOMIC_RELEASE);
}

/* 1 when kept for the forking thread, 0 when the fork is over (log it normally). */
static int defer(uint32_t call, const void *obj, const void *obj2, int64_t r, int e,
                 uint32_t prev, uint32_t pseq)
{
	int kept = 0;

	ring_take();
	if (__atomic_load_n(&rec_forking, __ATOMIC_ACQUIRE)) {
		if (ndeferred < DEFER_MAX) {
			deferred[ndeferred++] = (struct deferred){ call, rec_thread, obj, obj2, r, e,
			                                           prev, pseq, rec_own_pending };
			rec_own_pending = 0; /* (said before this event, by the forking thread) */
		} else
			__atomic_fetch_add(&rec.unlogged, 1, __ATOMIC_RELAXED);
		kept = 1;
	}
	ring_give();
	return kept;
}

/* Under the stream lock: one sync event of the thread given, the event rec_log would log,
 * through the writer's fast path (no call site, no timestamp: nothing else to fill in).
 * Inlined down to the writer's call: a lock or unlock is the most frequent event of a
 * threaded server (memcached -t 4: 23 per request), and each call level's frame cost it
 * about 20 instructions (bench/README.md, "Session 9"). */
static inline __attribute__((always_inline)) void sync_write(uint32_t call, uint32_t thread,
                                                             const void *obj,
                                                             const void *obj2, int64_t r,
                                                             int e)
{
	int64_t a0, a1 = 0; /* (the writer leaves errno, the program's, as it was) */

	if (!rec.w)
		return;
	rec_own_say(thread);
	if (obj != last_obj || !obj) {
		last_id = ip_obj_id(&objs, obj);
		last_obj = obj;
	}
	a0 = last_id;
	if (obj2)
		a1 = ip_obj_id(&objs, obj2);
	/* A full disk or a broken file leaves the program running unrecorded (as rec_log) */
	if ((!obj2 && !r && !e ? trace_writer_sync1(rec.w, thread, TRACE_EV_SYNC, call, a0)
	                       : trace_writer_sync(rec.w, thread, TRACE_EV_SYNC, call, r, e,
	                                           obj2 ? 2 : 1, a0, a1)) == TRACE_EIO) {
		int saved = errno;

		trace_writer_abandon(rec.w);
		rec.w = NULL;
		errno = saved;
	}
}

/* An owned mutex's acquisition that follows acquisitions without events by its last owner
 * ("Owned mutexes" below): that owner's index and the number of its last one, as two aux
 * values after the object(s).  Out of line: the general path. */
__attribute__((noinline)) static void sync_write_prev(uint32_t call, uint32_t thread,
                                                      const void *obj, const void *obj2,
                                                      int64_t r, int e, uint32_t prev,
                                                      uint32_t pseq)
{
	struct trace_event ev;
	int saved = errno;

	if (!rec.w)
		return;
	rec_own_say(thread);
	memset(&ev, 0, sizeof(ev));
	ev.kind = TRACE_EV_SYNC;
	ev.call = call;
	ev.fd = -1;
	ev.result = r;
	ev.err = e;
	ev.thread = thread;
	ev.aux[ev.naux++] = ip_obj_id(&objs, obj);
	if (obj2)
		ev.aux[ev.naux++] = ip_obj_id(&objs, obj2);
	ev.aux[ev.naux++] = prev;
	ev.aux[ev.naux++] = pseq;
	if (trace_writer_event(rec.w, &ev) == TRACE_EIO) {
		trace_writer_abandon(rec.w);
		rec.w = NULL;
	}
	errno = saved;
}

/* Deferred signal handlers run after the event (rec_log); out of line, seldom due. */
__attribute__((noinline)) static void sync_signals(uint32_t call, uint32_t thread)
{
	struct trace_event ev;

	rec_event_fill(&ev, TRACE_EV_SYNC, call, 0);
	ev.thread = thread;
	rec_sig_after_event(&ev);
}

/* pseq: see sync_write_prev (0: no run before this event to wait for). */
static inline __attribute__((always_inline)) void sync_event(uint32_t call, uint32_t thread,
                                                             const void *obj, const void *obj2,
                                                             int64_t r, int e, uint32_t prev,
                                                             uint32_t pseq)
{
	if (__builtin_expect(pseq != 0, 0))
		sync_write_prev(call, thread, obj, obj2, r, e, prev, pseq);
	else
		sync_write(call, thread, obj, obj2, r, e);
	if (__builtin_expect(rec_sig_npend != 0, 0))
		sync_signals(call, thread);
}

void rec_sync_flush_deferred(void)
{
	ring_take();
	for (uint32_t i = 0; i < ndeferred; i++) {
		const struct deferred *d = &deferred[i];

		if (d->pending && rec.w)
			trace_writer_elided(rec.w, d->pending); /* (the event below is d's thread's) */
		sync_event(d->call, d->thread, d->obj, d->obj2, d->r, d->e, d->prev, d->pseq);
	}
	ndeferred = 0;
	ring_give();
}

/* sync_log when rec_enter said no: a fork holds the stream lock (the event is kept for the
 * forking thread, or logged once the fork is over), or nothing is to be logged.  Out of line:
 * the common case keeps a small frame. */
__attribute__((noinline)) static void sync_log_refused(uint32_t call, const void *obj,
                                                        const void *obj2, int64_t r, int e,
                                                        uint32_t prev, uint32_t pseq)
{
	for (;;) {
		if (!rec.w || rec_depth || !__atomic_load_n(&rec_forking, __ATOMIC_ACQUIRE))
			return;
		/* rec_enter counted it unlogged: it is not */
		__atomic_fetch_sub(&rec.unlogged, 1, __ATOMIC_RELAXED);
		if (defer(call, obj, obj2, r, e, prev, pseq))
			return;
		if (rec_enter()) { /* the fork is over */
			sync_event(call, rec_thread, obj, obj2, r, e, prev, pseq);
			rec_leave();
			return;
		}
	}
}

/* Log one sync event: the object, a second one (the mutex of a condition wait) or NULL, what
 * the call returned and its errno (semaphores). */
static inline __attribute__((always_inline)) void sync_log_prev(uint32_t call, const void *obj,
                                                                const void *obj2, int64_t r,
                                                                int e, uint32_t prev,
                                                                uint32_t pseq)
{
	if (__builtin_expect(rec_enter(), 1)) {
		sync_event(call, rec_thread, obj, obj2, r, e, prev, pseq);
		rec_leave();
		return;
	}
	sync_log_refused(call, obj, obj2, r, e, prev, pseq);
}

static void sync_log(uint32_t call, const void *obj, const void *obj2, int64_t r, int e)
{
	sync_log_prev(call, obj, obj2, r, e, 0, 0);
}

/* Whether this thread's synchronisation is logged: threads exist, it is one of ours, and the
 * call is not the allocator's (rec.h; always inlined: the return address is the wrapper's). */
static inline __attribute__((always_inline)) int sync_on(void)
{
	return __builtin_expect(rec.threads, 0) && rec_thread != REC_NO_THREAD &&
	       !rec_from_alloc(__builtin_return_address(0));
}

/* --- eventfd ------------------------------------------------------------------------------- */

uint8_t rec_evfd[REC_FD_MAX];

REC_EXPORT int eventfd(unsigned int count, int flags)
{
	int r = IP_REAL(eventfd)(count, flags);

	if (r >= 0 && r < REC_FD_MAX)
		rec_evfd[r] = (flags & EFD_NONBLOCK) ? 2 : 1;
	return r;
}

int rec_evfd_enter(void)
{
	return sync_on() && rec_enter();
}

/* A read (dir REC_IN) or a write (REC_OUT) of an eventfd, r and e its result, under the lock;
 * aux[0] names the descriptor's object (its number + 1 as the key). */
void rec_evfd_event(int fd, int dir, long r, int e)
{
	struct trace_event ev;

	rec_event_fill(&ev, TRACE_EV_SYNC, dir == REC_IN ? TRACE_CALL_READ : TRACE_CALL_WRITE, 0);
	ev.fd = fd;
	ev.result = r;
	ev.err = r < 0 ? e : 0;
	ev.naux = 1;
	ev.aux[0] = ip_obj_id(&objs, (const void *)(uintptr_t)(fd + 1));
	rec_log(&ev, NULL);
}

/* Locks count in rec_held (even before threads: a lock taken then may be held at a fork). */
#define ACQUIRE(name, call, obj, ...) \
	do { \
		int r_ = IP_REAL(name)(__VA_ARGS__); \
		rec_held += r_ == 0; \
		if (sync_on()) \
			sync_log(call, obj, NULL, r_, 0); \
		return r_; \
	} while (0)

#define RELEASE(name, call, obj, ...) \
	do { \
		if (sync_on()) \
			sync_log(call, obj, NULL, 0, 0); \
		rec_held -= rec_held > 0; \
		return IP_REAL(name)(__VA_ARGS__); \
	} while (0)

/* Not a lock: sem_post, cond_signal, cond_broadcast. */
#define POST(name, call, obj, ...) \
	do { \
		if (sync_on()) \
			sync_log(call, obj, NULL, 0, 0); \
		return IP_REAL(name)(__VA_ARGS__); \
	} while (0)

/* --- owned mutexes -------------------------------------------------------------------------
 * Most mutex acquisitions are by the thread that acquired the mutex last (memcached -t 4: 86%
 * of them; a worker's own statistics lock, an item lock taken twice in a row), and the order
 * that matters is only where a mutex passes from one thread to another.  So, after Instant
 * Replay's versions (LeBlanc and Mellor-Crummey, section 3) kept per thread rather than per
 * object: each mutex remembers its owner, the thread that acquired it last, and the number of
 * that acquisition among the owner's acquisitions without events.  An acquisition by the
 * owner is no event, and takes no stream lock: it is counted in the thread's next event
 * (trace_event.elided, said in its thread record: schemas/trace-format.md, "Threads").  An
 * acquisition by another thread (a transfer) is an event, at its place in the stream, and
 * carries the last owner's index and acquisition number when that acquisition was one
 * without an event; replay makes it wait until that thread has made that many
 * (replayer/lc_sync.c).  A release is no event: the next acquisition is ordered after the
 * owner's, and the real lock waits for the release.  The table is the only shared state, and
 * a mutex's slot is read and written only by the thread holding that mutex (after its
 * acquisition, with the acquisition's own memory ordering); a slot is claimed with a
 * compare-and-swap.  A mutex the table has no room for is always an event (a transfer with
 * no run before it), which replay handles alike.  A forked child starts a new generation
 * (the key's top bits): its parent's owners are not its threads. */
#define OWN_SLOTS 65536u
#define OWN_PROBES 8
#define OWN_THREADS 65536u /* threads past it make every acquisition an event */
#define OWN_GEN_SHIFT 48

static struct own_slot {
	uintptr_t key;  /* the mutex's address | generation << OWN_GEN_SHIFT, 0 free */
	uint32_t owner; /* the last acquirer's index + 1 */
	uint32_t seq;   /* that acquisition's number among the owner's without events, or 0 */
} own_tab[OWN_SLOTS];
static uintptr_t own_gen;
static __thread uint32_t own_seq __attribute__((tls_model("initial-exec")));

/* The slot of mutex m (the caller holds it), claimed if new; NULL when there is no room. */
static struct own_slot *own_slot(const void *m)
{
	uintptr_t a = (uintptr_t)m, key = a | own_gen;
	uint32_t h;

	if (a >> OWN_GEN_SHIFT)
		return NULL;
	h = (uint32_t)(((uint64_t)a >> 3) * 0x9e3779b97f4a7c15ull >> 48);
	for (uint32_t i = 0; i < OWN_PROBES; i++) {
		struct own_slot *s = &own_tab[(h + i) & (OWN_SLOTS - 1)];
		uintptr_t k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);

		if (k == key)
			return s;
		/* free, or a slot of an earlier generation (a parent's mutex) */
		if ((k == 0 || (k >> OWN_GEN_SHIFT) != (own_gen >> OWN_GEN_SHIFT)) &&
		    __atomic_compare_exchange_n(&s->key, &k, key, 0, __ATOMIC_ACQ_REL,
		                                __ATOMIC_ACQUIRE)) {
			s->owner = 0;
			s->seq = 0;
			return s;
		}
	}
	return NULL;
}

/* Mutex m acquired by this thread (r 0, or EOWNERDEAD: acquired from an owner that died):
 * no event when this thread owned it already, else the transfer's event. */
static void mutex_acquired(uint32_t call, const void *m, int r)
{
	struct own_slot *s;
	uint32_t me = rec_thread, prev = 0, pseq = 0;

	if (rec_depth || !rec.w) {
		sync_log(call, m, NULL, r, 0); /* (counted unlogged inside the recorder) */
		return;
	}
	if (me >= OWN_THREADS) {
		/* an event (waiting, in replay, for the run before it), and the mutex is nobody's
		 * after: its next acquisition is an event too */
		rec_depth++;
		if ((s = own_slot(m)) != NULL) {
			prev = s->owner - 1;
			pseq = s->owner ? s->seq : 0;
			s->owner = s->seq = 0;
		}
		rec_depth--;
		sync_log_prev(call, m, NULL, r, 0, prev, pseq);
		return;
	}
	rec_depth++; /* a signal handler's lock meanwhile is counted unlogged (rec_enter) */
	s = own_slot(m);
	/* (a successful trylock is an event all the same: replay cannot count a thread's tries,
	 * replayer/lc_sync.c "soft trylocks", so it would not know which try this was) */
	if (s && s->owner == me + 1 && r == 0 && call != TRACE_CALL_MUTEX_TRYLOCK) {
		s->seq = ++own_seq;
		rec_own_pending++;
		rec_depth--;
		return;
	}
	if (s) {
		prev = s->owner - 1;
		pseq = s->owner ? s->seq : 0;
		s->owner = me + 1;
		s->seq = 0;
	}
	rec_depth--;
	sync_log_prev(call, m, NULL, r, 0, prev, pseq);
}

/* A condition wait returned: its mutex m is held again, an acquisition that is always an
 * event (the wake), with the run before it as a transfer's. */
static void cond_woke(const void *c, const void *m, int r)
{
	struct own_slot *s;
	uint32_t me = rec_thread, prev = 0, pseq = 0;

	if (!rec_depth && rec.w) {
		rec_depth++;
		if ((s = own_slot(m)) != NULL) {
			prev = s->owner - 1;
			pseq = s->owner && s->owner != me + 1 ? s->seq : 0;
			s->owner = me < OWN_THREADS ? me + 1 : 0; /* (past the table: nobody's) */
			s->seq = 0;
		}
		rec_depth--;
	}
	sync_log_prev(TRACE_CALL_COND_WAKE, c, m, r, 0, prev, pseq);
}

/* Acquired: 0, or EOWNERDEAD (a robust mutex whose owner died: held all the same). */
#define MUTEX_ACQUIRE(name, call, obj, ...) \
	do { \
		int r_ = IP_REAL(name)(__VA_ARGS__); \
		rec_held += r_ == 0; \
		if (sync_on()) { \
			if ((r_ == 0 || r_ == EOWNERDEAD) && rec.owned_mutexes) \
				mutex_acquired(call, obj, r_); \
			else \
				sync_log(call, obj, NULL, r_, 0); \
		} \
		return r_; \
	} while (0)

/* --- mutexes ------------------------------------------------------------------------------ */

REC_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
	MUTEX_ACQUIRE(pthread_mutex_lock, TRACE_CALL_MUTEX_LOCK, m, m);
}

REC_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
	MUTEX_ACQUIRE(pthread_mutex_trylock, TRACE_CALL_MUTEX_TRYLOCK, m, m);
}

REC_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *ts)
{
	MUTEX_ACQUIRE(pthread_mutex_timedlock, TRACE_CALL_MUTEX_TIMEDLOCK, m, m, ts);
}

/* The clock variants are logged as their timed twins (interpose/calls.def).  They exist in
 * every libc a program calling them was linked against; a missing one says so all the same. */
REC_EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clk, const struct timespec *ts)
{
	if (!IP_REAL(pthread_mutex_clocklock))
		return ENOSYS;
	MUTEX_ACQUIRE(pthread_mutex_clocklock, TRACE_CALL_MUTEX_TIMEDLOCK, m, m, clk, ts);
}

/* Owned mutexes: no event, the next acquisition by another thread is ordered after this
 * thread's last one, and its real lock waits for this release.  Else a release's event. */
REC_EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
	if (__builtin_expect(!rec.owned_mutexes, 1))
		RELEASE(pthread_mutex_unlock, TRACE_CALL_MUTEX_UNLOCK, m, m);
	rec_held -= rec_held > 0;
	return IP_REAL(pthread_mutex_unlock)(m);
}

/* --- rwlocks ------------------------------------------------------------------------------ */

REC_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	ACQUIRE(pthread_rwlock_rdlock, TRACE_CALL_RWLOCK_RDLOCK, l, l);
}

REC_EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	ACQUIRE(pthread_rwlock_tryrdlock, TRACE_CALL_RWLOCK_TRYRDLOCK, l, l);
}

REC_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *ts)
{
	ACQUIRE(pthread_rwlock_timedrdlock, TRACE_CALL_RWLOCK_TIMEDRDLOCK, l, l, ts);
}

REC_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	ACQUIRE(pthread_rwlock_wrlock, TRACE_CALL_RWLOCK_WRLOCK, l, l);
}

REC_EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
	ACQUIRE(pthread_rwlock_trywrlock, TRACE_CALL_RWLOCK_TRYWRLOCK, l, l);
}

REC_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *ts)
{
	ACQUIRE(pthread_rwlock_timedwrlock, TRACE_CALL_RWLOCK_TIMEDWRLOCK, l, l, ts);
}

REC_EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t clk,
                                          const struct timespec *ts)
{
	if (!IP_REAL(pthread_rwlock_clockrdlock))
		return ENOSYS;
	ACQUIRE(pthread_rwlock_clockrdlock, TRACE_CALL_RWLOCK_TIMEDRDLOCK, l, l, clk, ts);
}

REC_EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clk,
                                          const struct timespec *ts)
{
	if (!IP_REAL(pthread_rwlock_clockwrlock))
		return ENOSYS;
	ACQUIRE(pthread_rwlock_clockwrlock, TRACE_CALL_RWLOCK_TIMEDWRLOCK, l, l, clk, ts);
}

REC_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	RELEASE(pthread_rwlock_unlock, TRACE_CALL_RWLOCK_UNLOCK, l, l);
}

/* --- condition variables ------------------------------------------------------------------
 * A wait is two events: its start releases the mutex (logged before), its return holds the
 * mutex again (logged after); a signal or broadcast is a release. */

#define COND_WAIT(name, call, ...) \
	do { \
		int r_; \
		if (!sync_on()) \
			return IP_REAL(name)(__VA_ARGS__); \
		sync_log(call, c, m, 0, 0); \
		r_ = IP_REAL(name)(__VA_ARGS__); \
		if (rec.owned_mutexes) \
			cond_woke(c, m, r_); \
		else \
			sync_log(TRACE_CALL_COND_WAKE, c, m, r_, 0); \
		return r_; \
	} while (0)

REC_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	COND_WAIT(pthread_cond_wait, TRACE_CALL_COND_WAIT, c, m);
}

REC_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                                      const struct timespec *ts)
{
	COND_WAIT(pthread_cond_timedwait, TRACE_CALL_COND_TIMEDWAIT, c, m, ts);
}

REC_EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk,
                                      const struct timespec *ts)
{
	if (!IP_REAL(pthread_cond_clockwait))
		return ENOSYS;
	COND_WAIT(pthread_cond_clockwait, TRACE_CALL_COND_TIMEDWAIT, c, m, clk, ts);
}

REC_EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
	POST(pthread_cond_signal, TRACE_CALL_COND_SIGNAL, c, c);
}

REC_EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
	POST(pthread_cond_broadcast, TRACE_CALL_COND_BROADCAST, c, c);
}

/* --- semaphores: 0, or -1 with errno ------------------------------------------------------ */

/* A process-shared semaphore taken by a thread whose synchronisation is logged: its ORDER
 * event and its SYNC event under one hold of the stream lock, next to each other.  Replay
 * takes the ORDER event's ticket in turn holding the process's turn, and the SYNC event's
 * real call gives the ticket's successor its go (replayer/lc_chan.c): another thread's
 * ticket logged between them made each wait for the other. */
static void sem_order_sync(const sem_t *s, uint32_t call, int64_t ticket, int r, int e, void *ra)
{
	struct trace_event ev;

	if (!rec_busy())
		rec_sends_settle(); /* (as rec_share_sem_log: what it saw may follow a send of ours) */
	if (!rec_enter()) {
		rec_share_sem_log(s, call, ticket, r, e, ra);
		sync_log(call, s, NULL, r, r < 0 ? e : 0);
		return;
	}
	rec_share_sem_event(&ev, s, call, ticket, r, e);
	rec_log(&ev, ra);
	sync_event(call, rec_thread, s, NULL, r, r < 0 ? e : 0, 0, 0);
	rec_leave();
}

#define SEM_ACQUIRE(name, call, ...) \
	do { \
		int r_ = IP_REAL(name)(__VA_ARGS__), e_ = errno; \
		int64_t t_ = rec_share_sem_ticket(s, r_); \
		if (t_ != -2 && sync_on()) { \
			sem_order_sync(s, call, t_, r_, e_, __builtin_return_address(0)); \
		} else { \
			/* process-shared: its ticket's ORDER event first (share.c) */ \
			rec_share_sem_log(s, call, t_, r_, e_, __builtin_return_address(0)); \
			if (sync_on()) \
				sync_log(call, s, NULL, r_, r_ < 0 ? e_ : 0); \
		} \
		errno = e_; \
		return r_; \
	} while (0)

REC_EXPORT int sem_wait(sem_t *s)
{
	SEM_ACQUIRE(sem_wait, TRACE_CALL_SEM_WAIT, s);
}

REC_EXPORT int sem_trywait(sem_t *s)
{
	SEM_ACQUIRE(sem_trywait, TRACE_CALL_SEM_TRYWAIT, s);
}

REC_EXPORT int sem_timedwait(sem_t *s, const struct timespec *ts)
{
	SEM_ACQUIRE(sem_timedwait, TRACE_CALL_SEM_TIMEDWAIT, s, ts);
}

REC_EXPORT int sem_clockwait(sem_t *s, clockid_t clk, const struct timespec *ts)
{
	if (!IP_REAL(sem_clockwait)) {
		errno = ENOSYS;
		return -1;
	}
	SEM_ACQUIRE(sem_clockwait, TRACE_CALL_SEM_TIMEDWAIT, s, clk, ts);
}

REC_EXPORT int sem_post(sem_t *s)
{
	rec_share_sem_post(s, __builtin_return_address(0)); /* process-shared: share.c */
	POST(sem_post, TRACE_CALL_SEM_POST, s, s);
}

/* --- barriers: arriving releases, leaving acquires ---------------------------------------- */

REC_EXPORT int pthread_barrier_wait(pthread_barrier_t *b)
{
	int r;

	if (!sync_on())
		return IP_REAL(pthread_barrier_wait)(b);
	sync_log(TRACE_CALL_BARRIER_ARRIVE, b, NULL, 0, 0);
	r = IP_REAL(pthread_barrier_wait)(b);
	sync_log(TRACE_CALL_BARRIER_LEAVE, b, NULL, r, 0);
	return r;
}

/* --- spin locks --------------------------------------------------------------------------- */

REC_EXPORT int pthread_spin_lock(pthread_spinlock_t *l)
{
	ACQUIRE(pthread_spin_lock, TRACE_CALL_SPIN_LOCK, (const void *)l, l);
}

REC_EXPORT int pthread_spin_trylock(pthread_spinlock_t *l)
{
	ACQUIRE(pthread_spin_trylock, TRACE_CALL_SPIN_TRYLOCK, (const void *)l, l);
}

REC_EXPORT int pthread_spin_unlock(pthread_spinlock_t *l)
{
	RELEASE(pthread_spin_unlock, TRACE_CALL_SPIN_UNLOCK, (const void *)l, l);
}

/* --- pthread_once: an acquire, logged after; result 1 in the thread that ran init -------- */

static __thread void (*once_init)(void) __attribute__((tls_model("initial-exec")));
static __thread int once_ran __attribute__((tls_model("initial-exec")));

/* Runs in the calling thread (pthread_once calls init there): the TLS says it ran. */
static void once_trampoline(void)
{
	void (*init)(void) = once_init;

	once_ran = 1;
	init();
}

REC_EXPORT int pthread_once(pthread_once_t *o, void (*init)(void))
{
	void (*saved)(void) = once_init; /* an init that calls pthread_once itself */
	int r, ran, saved_ran = once_ran;

	if (!sync_on())
		return IP_REAL(pthread_once)(o, init);
	once_init = init;
	once_ran = 0;
	r = IP_REAL(pthread_once)(o, once_trampoline);
	ran = once_ran;
	once_init = saved;
	once_ran = saved_ran;
	sync_log(TRACE_CALL_PTHREAD_ONCE, o, NULL, ran, 0);
	return r;
}

/* --- syscall(SYS_futex): FUTEX_WAIT and FUTEX_WAKE (and their _PRIVATE forms) ------------
 * A wait is an acquire, logged after it returned (its result: 0 woken, -1 with EAGAIN when
 * the word had changed, ETIMEDOUT, EINTR); a wake is a release whose result (the threads
 * woken) is known only after the real call, so it is made under the stream lock: the
 * return of a wait it woke is logged after it.  Other operations pass through (README.md,
 * Limits). */
int rec_sync_futex(const long *a, long *r)
{
	int cmd = (int)a[1] & FUTEX_CMD_MASK, e;

	if ((cmd != FUTEX_WAIT && cmd != FUTEX_WAKE) || !sync_on() || rec_busy())
		return 0;
	if (cmd == FUTEX_WAKE && rec_enter()) {
		*r = IP_REAL(syscall)(SYS_futex, a[0], a[1], a[2], a[3], a[4], a[5]);
		e = errno;
		sync_event(TRACE_CALL_FUTEX_WAKE, rec_thread, (const void *)a[0], NULL, *r,
		           *r < 0 ? e : 0, 0, 0);
		rec_leave();
		errno = e;
		return 1;
	}
	*r = IP_REAL(syscall)(SYS_futex, a[0], a[1], a[2], a[3], a[4], a[5]);
	e = errno;
	sync_log(cmd == FUTEX_WAIT ? TRACE_CALL_FUTEX_WAIT : TRACE_CALL_FUTEX_WAKE,
	         (const void *)a[0], NULL, *r, *r < 0 ? e : 0);
	errno = e;
	return 1;
}

void rec_sync_fork_child(void)
{
	__atomic_store_n(&rec_fdorder, 0, __ATOMIC_RELEASE); /* another thread's, void here */
	rec_fdorder_mine = 0;
	ndeferred = 0; /* the parent's */
	if (__atomic_load_n(&inflight, __ATOMIC_RELAXED)) {
		memset(data_order, 0, sizeof(data_order)); /* other threads' */
		inflight = 0;
	}
	/* (a fork between a send's count going down and its slot's clearing: not its own) */
	memset(send_slot, 0, sizeof(send_slot));
	sends_unslotted = 0;
	data_order_mine = 0;
	ring_lock = 0;
	ip_obj_reset(&objs);
	last_obj = NULL;
	/* the parent's owners are not this child's threads ("Owned mutexes") */
	own_gen = (own_gen + ((uintptr_t)1 << OWN_GEN_SHIFT)) & ~(((uintptr_t)1 << OWN_GEN_SHIFT) - 1);
	if (!own_gen)
		own_gen = (uintptr_t)1 << OWN_GEN_SHIFT; /* (0 is the first image's alone) */
	own_seq = 0;
	rec_own_pending = 0;
}
