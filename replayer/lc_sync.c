/*
 * lc_sync.c: threads in replay.  The recorded order in which a process's threads passed
 * interposed calls is enforced with one mechanism, the turn: a thread at an interposed call
 * that is an event waits (a futex on lc.turn_seq, bumped at every commit) until the next
 * event of the process is its own, then does the event as any interposer does and commits.
 * Synchronisation calls are events too (recorder/sync.c logs them), which is Instant Replay
 * (LeBlanc and Mellor-Crummey, IEEE ToC 1987, section 3): the order of the accesses to each
 * shared object is the recorded one, so a data-race-free program computes what it computed.
 *
 * Because the recorder logs a release before its real call and an acquire after, a release
 * is replayed before the acquire it enabled: an acquire at its turn finds the object free,
 * or waits only until the releasing thread (past its turn already) really releases.  Here a
 * release makes its real call before its commit, so that wait is rare.  Calls that would
 * block for another thread's sake are not made: a condition wait releases its mutex at its
 * first event and takes it again at its second (a wakeup POSIX allows), a barrier returns at
 * its turn its recorded result, a trylock that failed fails without being tried.
 *
 * Soft trylocks: a failed trylock changes nothing shared, only its caller's control flow, and
 * how many times a thread tries (jemalloc's malloc_mutex_lock_slow tries again whenever a
 * plain atomic flag looks clear, up to about 600 times) depends on what the other threads
 * did meanwhile, outside interposed calls: the recorded number of failures cannot be
 * reproduced call by call.  So: a trylock (sem_trywait too) whose thread's next recorded
 * event is not a trylock of that kind fails at once with EBUSY (EAGAIN), without an event
 * (bounded: a thread that keeps trying for 20 s without its next event changing diverges); a
 * failed trylock in the trace that its thread does not make (it calls something else) is
 * done at its turn as a no-op (lc.c, lc_expect); a blocking lock may take a recorded
 * successful trylock of the same object kind (the slow path reached the lock where the
 * recorded run got it by trying).  A successful trylock stays a hard acquisition at its
 * turn.  In a lock's slow path (after a failed or invented trylock, until an event other than
 * an acquisition or a clock read) a clock read the recorded run did not make (jemalloc reads
 * the clock before and after waiting, for its statistics; the thread's next recorded event,
 * past the failed trylocks this run did not make, is no clock read) is given the value of the
 * process's next recorded read of that clock (the real one's when there is none), without an
 * event: such a value is not one the recorded run saw, the cost of this rule
 * (replayer/README.md, "Threads").  A clock read whose thread's next recorded event is one,
 * past failed trylocks, is that read (the thread spun fewer times than recorded).
 *
 * Owned mutexes (recorder/sync.c, "Owned mutexes"; a trace says TRACE_PROC_OWNED_MUTEXES): a
 * mutex acquisition by the thread that acquired the mutex last was no event, only counted in
 * the thread's next event (lc_ev.elided).  Here such an acquisition is the real lock, made
 * at once, without a turn, while the count before the thread's next event allows it; each
 * thread counts those it made (own_count).  An acquisition that is an event (a transfer) and
 * says that the last owner's acquisition was one without an event waits, at its turn, until
 * that thread has made that many: the owner runs free code then, no turn to wait for, and a
 * hold of it ends (lc.c).  A release is no event: the real unlock, at once.
 *
 * A process whose threads all wait for turns that never come (the next event is a thread's
 * that ended, or that runs outside interposed calls: a data race on plain memory) is
 * reported: as a divergence when every thread of ours waits, else on the status board for the
 * GD's stall report (replayer/gd_stall.c), which names the thread the process waits for.
 */
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dlnext.h"
#include "lc.h"

__thread uint32_t lc_thread __attribute__((tls_model("initial-exec"))) = LC_NO_THREAD;
/* The thread logged its end: what it does after (TLS destructors) keeps its turns, but it is
 * not counted among the live threads whose waits make a deadlock. */
static __thread int ended __attribute__((tls_model("initial-exec")));

/* Owned mutexes (see the top of this file and "owned mutexes" below). */
#define OWN_THREADS 65536u /* as the recorder's: threads past it made every acquisition an event */
static uint32_t own_count[OWN_THREADS]; /* per thread: its acquisitions without events so far */
__thread int lc_mutexes_held __attribute__((tls_model("initial-exec")));
static __thread int64_t own_done __attribute__((tls_model("initial-exec")));


uintptr_t lc_alloc_lo, lc_alloc_hi;

/* Before the other constructors, as the recorder's. */
__attribute__((constructor(101))) static void alloc_init(void)
{
	ip_alloc_range(&lc_alloc_lo, &lc_alloc_hi);
}

/* The constructor runs in the main thread: it is thread 0. */
__attribute__((constructor)) static void sync_init(void)
{
	lc_thread = 0;
	lc.live = 1;
}

void lc_threads_fork_child(void)
{
	/* (the child's image is a new one, as recorded; only the counts of threads made were
	 * written) */
	memset(own_count, 0, sizeof(own_count[0]) * (lc.nthreads_made < OWN_THREADS
	                                                  ? lc.nthreads_made + 1 : OWN_THREADS));
	own_done = 0;
	/* (the mutexes the forking thread holds stay held: lc_mutexes_held is its count still) */
	lc.own_wanted = 0;
	lc_thread = 0;
	lc.live = 1;
	lc.sync_on = 0;
	lc.in_turn = 0;
	lc.turn_waiters = 0;
	lc.turn_sleepers = 0;
	ended = 0;
}

/* --- the turn ------------------------------------------------------------------------------ */

static long futex(uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
	/* the real call: the interposed syscall() would take the LC's own waits for the
	 * program's (lc_sync_futex) */
	return IP_REAL(syscall)(SYS_futex, w, op, val, ts, NULL, 0);
}

__attribute__((noreturn)) static void sleep_forever(void)
{
	static uint32_t never;

	for (;;)
		futex(&never, FUTEX_WAIT_PRIVATE, 0, NULL);
}

/* Waited for a turn a long time with nothing committed: say who the process waits for. */
static void turn_stuck(const struct lc_ev *next, uint32_t me)
{
	char desc[192];

	if (lc.in_turn)
		return; /* a thread is in its event (waiting for bytes, a child...): the board says */
	lc_ev_describe(next, desc, sizeof(desc));
	if (__atomic_load_n(&lc.turn_waiters, __ATOMIC_SEQ_CST) >= lc.live) {
		(void)me;
		lc_diverge("every thread of the process waits for its turn (%u running), but the next "
		           "event, %s, is thread %u's, which %s", lc.live, desc, next->thread,
		           next->thread > lc.nthreads_made ? "was never created" :
		           "has ended or runs outside interposed calls");
	}
	/* the board: waiting for thread N to reach its next event (gd_stall.c); said once (each
	 * change of the board is progress to the GD's stall detector) */
	if (lc.slot->wait_kind != TRACE_EV_THREAD || lc.slot->wait_fd != (int32_t)next->thread)
		lc_wait_state(TRACE_EV_THREAD, (int)next->thread, 0, lc.turn_waiters);
}

static void turn_wait(void);

/* The program's errno is left as it was (the futex calls set it). */
void lc_turn_wait(void)
{
	int e = errno;

	turn_wait();
	errno = e;
}

static void turn_wait(void)
{
	uint32_t me = lc_thread == LC_NO_THREAD ? 0 : lc_thread;
	uint32_t last = __atomic_load_n(&lc.turn_seq, __ATOMIC_SEQ_CST);
	int idle = 0;

	for (;;) {
		uint32_t seq = __atomic_load_n(&lc.turn_seq, __ATOMIC_SEQ_CST);

		if (seq != last) {
			last = seq;
			idle = 0;
		}
		uint64_t pos = __atomic_load_n(&lc.pos, __ATOMIC_ACQUIRE);
		const struct lc_ev *next = pos < lc.nev ? &lc.ev[pos - lc.base] : NULL;
		struct timespec ts = { 0, 250 * 1000 * 1000 };

		if (!lc.active)
			sleep_forever(); /* another thread diverged (the GD ends us), or the process
			                    exits or runs free past its trace: nothing more is ours */
		if (!next) {
			const struct lc_ev *end = lc.nev > lc.base ? &lc.ev[lc.nev - 1 - lc.base] : NULL;

			/* the recorded process was killed (SIGKILL) here: this thread's call was not
			 * logged; the process runs free from here until killed as it was (lc_run_free),
			 * this thread waiting in its call */
			if (lc.killed) {
				if (lc.active)
					lc_run_free();
				sleep_forever();
			}

			/* the process ends (exit, a fatal signal, exec): the recorded run ended with it,
			 * and a thread still running then was ended with it, wherever it was */
			if (lc.done || (end && (end->kind == TRACE_EV_EXIT ||
			                         end->kind == TRACE_EV_SIGNAL ||
			                         end->kind == TRACE_EV_EXEC)))
				sleep_forever();
			return;
		}
		if (next->thread == me) {
			if (lc.slot->wait_kind == TRACE_EV_THREAD)
				lc_wait_state(0, -1, 0, 0);
			lc.in_turn = 1;
			return;
		}
		if (!ended)
			__atomic_fetch_add(&lc.turn_waiters, 1, __ATOMIC_SEQ_CST);
		__atomic_fetch_add(&lc.turn_sleepers, 1, __ATOMIC_SEQ_CST);
		if (futex(&lc.turn_seq, FUTEX_WAIT_PRIVATE, seq, &ts) != 0 && errno == ETIMEDOUT &&
		    __atomic_load_n(&lc.turn_seq, __ATOMIC_SEQ_CST) == seq && ++idle >= 4 && !ended)
			turn_stuck(next, me);
		__atomic_fetch_sub(&lc.turn_sleepers, 1, __ATOMIC_SEQ_CST);
		if (!ended)
			__atomic_fetch_sub(&lc.turn_waiters, 1, __ATOMIC_SEQ_CST);
	}
}

void lc_turn_done(void)
{
	lc.in_turn = 0;
	__atomic_fetch_add(&lc.turn_seq, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&lc.turn_sleepers, __ATOMIC_SEQ_CST)) {
		int e = errno;

		futex(&lc.turn_seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
		errno = e;
	}
}

/* --- thread life --------------------------------------------------------------------------- */

struct lc_start {
	void *(*fn)(void *);
	void *arg;
	uint32_t index;
};

static void thread_end(void)
{
	const struct lc_ev *ev;

	if (lc_thread == LC_NO_THREAD || !lc_on())
		return;
	if (ended)
		return;
	ev = lc_expect(TRACE_EV_THREAD, -1, "the end of the thread");
	if (ev->call != TRACE_CALL_THREAD_EXIT)
		lc_diverge("expected %s, but the thread ended", trace_call_name(ev->call));
	ended = 1; /* libc's teardown follows, with its index (as recorded): not a live thread */
	lc.live--;
	lc_commit();
}

static void *lc_trampoline(void *p)
{
	struct lc_start s = *(struct lc_start *)p;
	void *ret;

	lc_thread = s.index; /* before free, as the recorder */
	free(p);
	ret = s.fn(s.arg);
	thread_end();
	return ret;
}

/* Threads are created at their recorded place, in the recorded order, with the recorded
 * indices (the event's result). */
LC_EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *),
                             void *arg)
{
	const struct lc_ev *ev;
	struct lc_start *st;
	int r;

	if (!lc_on() || lc_thread == LC_NO_THREAD || lc_from_alloc(__builtin_return_address(0)))
		return IP_REAL(pthread_create)(t, attr, fn, arg); /* (the allocator's: lc.h) */
	ev = lc_expect(TRACE_EV_THREAD, -1, "pthread_create");
	if (ev->call != TRACE_CALL_PTHREAD_CREATE)
		lc_diverge("expected %s, but the process called pthread_create",
		           trace_call_name(ev->call));
	lc.sync_on = 1; /* as the recorder, from the first attempt on */
	if (ev->result <= 0) {
		r = ev->result < 0 ? (int)-ev->result : EAGAIN;
		lc_commit();
		return r; /* it failed when recorded */
	}
	lc_enter();
	st = malloc(sizeof(*st));
	lc_leave();
	if (!st)
		lc_diverge("out of memory creating thread %lld", (long long)ev->result);
	st->fn = fn;
	st->arg = arg;
	st->index = (uint32_t)ev->result;
	if (st->index > lc.nthreads_made)
		lc.nthreads_made = st->index;
	lc_enter(); /* what libc does inside (an allocator's locks) is not the program's */
	r = IP_REAL(pthread_create)(t, attr, lc_trampoline, st);
	lc_leave();
	if (r != 0)
		lc_diverge("pthread_create failed (error %d) where the recorded run created thread "
		           "%u", r, st->index);
	lc.live++;
	lc_commit();
	return 0;
}

/* A library after us that looks pthread_create up with dlsym(RTLD_NEXT) gets this one, as
 * it got the recorder's (interpose/dlnext.h): its thread is made at its recorded place. */
extern __typeof__(pthread_create) lc_pthread_create_ours
	__attribute__((alias("pthread_create"), visibility("hidden"), nothrow));
IP_DLSYM(lc_pthread_create_ours);

LC_EXPORT void pthread_exit(void *ret)
{
	thread_end();
	IP_REAL(pthread_exit)(ret);
	__builtin_unreachable();
}

LC_EXPORT int pthread_join(pthread_t t, void **ret)
{
	const struct lc_ev *ev;
	int r;

	if (!lc.sync_on || lc_thread == LC_NO_THREAD || !lc_on() ||
	    lc_from_alloc(__builtin_return_address(0)))
		return IP_REAL(pthread_join)(t, ret);
	ev = lc_expect(TRACE_EV_THREAD, -1, "pthread_join");
	if (ev->call != TRACE_CALL_PTHREAD_JOIN)
		lc_diverge("expected %s, but the thread called pthread_join", trace_call_name(ev->call));
	if (ev->result != 0) {
		r = (int)ev->result;
		lc_commit();
		return r;
	}
	/* the joined thread committed its end already: it is about to return */
	r = IP_REAL(pthread_join)(t, ret);
	lc_commit();
	return r;
}

/* --- synchronisation ----------------------------------------------------------------------- */

/* Always inlined: the return address is the wrapper's (the allocator's calls pass, lc.h). */
static inline __attribute__((always_inline)) int sync_on(void)
{
	return __builtin_expect(lc.sync_on, 0) && lc_thread != LC_NO_THREAD && lc_on() &&
	       !lc_from_alloc(__builtin_return_address(0));
}

/* --- eventfd ------------------------------------------------------------------------------- */

uint8_t lc_evfd[LC_FD_MAX];

LC_EXPORT int eventfd(unsigned int count, int flags)
{
	int r = IP_REAL(eventfd)(count, flags);

	if (r >= 0 && r < LC_FD_MAX)
		lc_evfd[r] = 1;
	return r;
}

static const struct lc_ev *own_next(uint64_t *at);

/* A write at its turn, real call first; a read at its turn makes the real read (the write it
 * waits for was replayed before it), unless it failed when recorded (EAGAIN: nothing there).
 * A write where the thread's next recorded event is no eventfd write at all is a wake-up the
 * recorded run did not make: another thread's code between two of its events decided it
 * (libuv's uv_async_send writes only when its pending flag was clear, which the woken loop
 * thread resets when its own code runs; where that ran relative to the waker is not in the
 * trace: replayer/README.md, "Threads").  It is not made, and returns as if it were (the
 * counter stays as recorded): BIND's dig diverged there about once in 24 replays. */
int lc_evfd_io(int fd, const struct iovec *iov, int cnt, int out_dir, ssize_t *out)
{
	const char *what = out_dir ? "write of an eventfd" : "read of an eventfd";
	const struct lc_ev *ev;
	long r;

	if (fd < 0 || fd >= LC_FD_MAX || !lc_evfd[fd] || !sync_on())
		return 0;
	if (out_dir && lc.threaded) {
		uint64_t at;
		const struct lc_ev *n = own_next(&at);

		if (n && !(n->kind == TRACE_EV_SYNC && n->call == TRACE_CALL_WRITE)) {
			ssize_t len = 0;

			for (int i = 0; i < cnt; i++)
				len += (ssize_t)iov[i].iov_len;
			*out = len;
			return 1;
		}
	}
	ev = lc_expect(TRACE_EV_SYNC, fd, what);
	if (ev->call != (out_dir ? TRACE_CALL_WRITE : TRACE_CALL_READ))
		lc_diverge("expected %s, but the thread called the %s", trace_call_name(ev->call),
		           what);
	if (!out_dir && ev->result < 0) {
		int e = ev->err;

		lc_commit();
		errno = e;
		*out = -1;
		return 1;
	}
	do
		r = syscall(out_dir ? SYS_writev : SYS_readv, fd, iov, cnt);
	while (r < 0 && errno == EINTR);
	lc_commit();
	*out = r;
	return 1;
}

/* --- soft trylocks (see the top of this file) ------------------------------------------- */

__thread int lc_trying __attribute__((tls_model("initial-exec")));
__thread int lc_soft_clocks __attribute__((tls_model("initial-exec")));
/* invented failures in a row while the thread's next event stayed the same */
static __thread uint64_t invent_at __attribute__((tls_model("initial-exec")));
static __thread uint32_t invented __attribute__((tls_model("initial-exec")));
static __thread struct timespec invent_t0 __attribute__((tls_model("initial-exec")));

#define SOFT_TRY_LIMIT_S 20

/* (a failed sem_trywait, -1 with EAGAIN, changes nothing either) */
static int is_try(uint32_t call)
{
	return call == TRACE_CALL_MUTEX_TRYLOCK || call == TRACE_CALL_RWLOCK_TRYRDLOCK ||
	       call == TRACE_CALL_RWLOCK_TRYWRLOCK || call == TRACE_CALL_SPIN_TRYLOCK ||
	       call == TRACE_CALL_SEM_TRYWAIT;
}

int lc_try_failed(const struct lc_ev *ev)
{
	return (ev->kind == TRACE_EV_SYNC && ev->result != 0 && is_try(ev->call)) || lc_sleep_ev(ev);
}

/* A select or pselect on no descriptor that timed out: a sleep (PostgreSQL's pg_usleep, as
 * its spinlocks back off), which changes nothing but the time, so it is soft as a failed
 * trylock is: done as a no-op where the process now calls something else (it got the lock
 * sooner), and a sleep the recorded run did not make is made without an event
 * (lc_nondet.c). */
int lc_sleep_ev(const struct lc_ev *ev)
{
	/* (no sets: nothing, or only the timeval select left, recorder/nondet.c) */
	return ev->kind == TRACE_EV_READY &&
	       (ev->call == TRACE_CALL_SELECT || ev->call == TRACE_CALL_PSELECT) && ev->result == 0 &&
	       (ev->data_len == 0 ||
	        (ev->call == TRACE_CALL_SELECT && ev->data_len == sizeof(struct timeval)));
}

/* What does not end a lock's slow path: acquisitions, attempts, clock reads. */
int lc_soft_keeps(const struct lc_ev *ev)
{
	if (ev->kind == TRACE_EV_CLOCK)
		return 1;
	if (ev->kind != TRACE_EV_SYNC)
		return 0;
	switch (ev->call) {
	case TRACE_CALL_MUTEX_LOCK: case TRACE_CALL_MUTEX_TIMEDLOCK:
	case TRACE_CALL_RWLOCK_RDLOCK: case TRACE_CALL_RWLOCK_TIMEDRDLOCK:
	case TRACE_CALL_RWLOCK_WRLOCK: case TRACE_CALL_RWLOCK_TIMEDWRLOCK:
	case TRACE_CALL_SPIN_LOCK:
	case TRACE_CALL_SEM_WAIT: case TRACE_CALL_SEM_TIMEDWAIT:
		return 1;
	default:
		return is_try(ev->call);
	}
}

/* The calling thread's next recorded event (its index in *at), or NULL: read without waiting
 * for the turn (the events before it are other threads', and only this thread commits it). */
static const struct lc_ev *own_next(uint64_t *at)
{
	uint32_t me = lc_thread == LC_NO_THREAD ? 0 : lc_thread;

	for (uint64_t i = __atomic_load_n(&lc.pos, __ATOMIC_ACQUIRE); i < lc.nev; i++) {
		const struct lc_ev *ev = &lc.ev[i - lc.base];

		if (ev->thread == me) {
			*at = i;
			return ev;
		}
	}
	return NULL;
}

/* --- descriptor numbers no channel takes (FDNUM events) ------------------------------------
 * The recorder logs, in a process with threads, the number each open of a file took and each
 * close of a descriptor that is no channel freed (recorder/chan.c, rec_fdnum): here the call
 * waits for its turn, so that numbers are handed out in the recorded order, and a number the
 * kernel gives otherwise is put where it was when that one is free (the recorder takes its
 * lock after an open, which may block: another thread's call may have been logged first). */
int lc_fdnum_turn_call(int what, uint32_t call)
{
	const struct lc_ev *ev;
	uint64_t at;

	if (!lc.threaded || lc_thread == LC_NO_THREAD || !lc_on())
		return 0;
	ev = own_next(&at);
	/* (a close's number is not compared: numbers taken or freed by calls that log nothing,
	 * opendir, eventfd, a close through syscall(2), may have moved this one) */
	if (!ev || ev->kind != TRACE_EV_FDNUM || ev->naux < 1 || ev->aux[0] != what ||
	    (call != TRACE_CALL_NONE && ev->call != call))
		return 0;
	lc_turn();
	return 1;
}

int lc_fdnum_turn(int what, int fd)
{
	return lc_fdnum_turn_call(what, TRACE_CALL_NONE);
}

int lc_fdnum_taken(int r, const char *what)
{
	const struct lc_ev *ev = lc_expect(TRACE_EV_FDNUM, -1, what);
	int want = (int)ev->result, e = errno;

	if (r < 0) {
		/* A failed open logs nothing (recorder/files.c): the event is a later open's, left
		 * for it (probing a list of paths).  (Had the recorded open succeeded, the file
		 * gone now, that later open takes it: a divergence will say where.) */
		if (want < 0)
			lc_commit();
		errno = e;
		return r;
	}
	if (r != want && want >= 0) {
		int fl = (int)syscall(SYS_fcntl, r, F_GETFD);

		/* The recorded number, when it is free; else the kernel's, as before these events
		 * existed: calls that log nothing (opendir, eventfd, epoll_create, libc's own
		 * opens) take and free numbers too, and a number taken now is no divergence.
		 * F_DUPFD, never dup3: another thread's unlogged call (opendir) may take the
		 * number between a check and a dup3, which would close its descriptor under it. */
		int d = (int)syscall(SYS_fcntl, r, fl > 0 && (fl & FD_CLOEXEC) ? F_DUPFD_CLOEXEC :
		                     F_DUPFD, want);

		if (d == want) {
			IP_REAL(syscall)(SYS_close, r); /* (ours: not the program's close) */
			r = want;
		} else if (d >= 0) {
			IP_REAL(syscall)(SYS_close, d); /* (taken: the kernel's number stays) */
		}
	}
	lc_commit();
	errno = e;
	return r;
}

void lc_fdnum_freed(int fd, const char *what)
{
	int e = errno;

	lc_expect(TRACE_EV_FDNUM, -1, what); /* (the number may have moved: lc_fdnum_turn) */
	lc_commit();
	errno = e;
}

/* --- owned mutexes ------------------------------------------------------------------------ */

#define OWN_WAIT_LIMIT_S 20


static int is_mutex_acquire(uint32_t call);

/* Acquisitions without events after a thread's last event (memcached's workers at exit take
 * their locks, then block for ever in epoll_wait) are counted in no event of theirs; those
 * another thread's transfer waited for are known: per thread, how many of them, past the sum
 * of its events' counts.  Any others (a thread that never got the lock it was waiting for
 * when the process was killed) are not made: the thread waits for a turn, as for any call
 * the recorded run did not end. */
static uint32_t *own_tail, own_tail_n;

int lc_own_load(const struct lc_ev *evs, uint64_t n)
{
	uint64_t *counted;
	uint32_t nt = 0, *tail;

	for (uint64_t i = 0; i < n; i++)
		if (evs[i].thread >= nt && evs[i].thread < OWN_THREADS)
			nt = evs[i].thread + 1;
	counted = calloc(nt ? nt : 1, sizeof(*counted));
	tail = calloc(nt ? nt : 1, sizeof(*tail));
	if (!counted || !tail) {
		free(counted);
		free(tail);
		return -1;
	}
	for (uint64_t i = 0; i < n; i++)
		if (evs[i].thread < nt)
			counted[evs[i].thread] += evs[i].elided;
	for (uint64_t i = 0; i < n; i++) {
		const struct lc_ev *ev = &evs[i];
		uint32_t base = ev->call == TRACE_CALL_COND_WAKE ? 2 : 1;

		if (ev->kind != TRACE_EV_SYNC || ev->naux < base + 2 ||
		    (base == 1 && !is_mutex_acquire(ev->call)))
			continue;
		uint64_t prev = (uint64_t)ev->aux[base], want = (uint64_t)(uint32_t)ev->aux[base + 1];

		if (prev < nt && want > counted[prev] && want - counted[prev] > tail[prev])
			tail[prev] = (uint32_t)(want - counted[prev]);
	}
	free(counted);
	free(own_tail);
	own_tail = tail;
	own_tail_n = nt;
	return 0;
}

void lc_own_committed(const struct lc_ev *ev)
{
	if (ev->thread == (lc_thread == LC_NO_THREAD ? 0 : lc_thread))
		own_done -= ev->elided; /* (below 0: acquisitions still due before the next event) */
}

/* Whether the calling thread's next mutex acquisition is one without an event. */
static int own_private(void)
{
	const struct lc_ev *n;
	uint64_t at = 0;

	if (!lc.owned)
		return 0;
	for (;;) {
		n = own_next(&at);
		if (!n) { /* after its last event (lc_own_load) */
			uint32_t me = lc_thread == LC_NO_THREAD ? 0 : lc_thread;

			return me < own_tail_n && (int64_t)own_tail[me] - own_done > 0;
		}
		if ((int64_t)n->elided - own_done > 0)
			return 1;
		if (n->kind != TRACE_EV_HANDLER)
			return 0;
		/* A handler ran here when recorded, between two acquisitions without events (a
		 * signal that came while the thread computed): run it now, at its turn, as
		 * lc_expect would at a call; its commit moves the count on to the next event. */
		lc_turn();
		if (lc.pos >= lc.nev || &lc.ev[lc.pos - lc.base] != n)
			return 0; /* (another's run took it: the event path sorts it out) */
		lc_signal_run();
	}
}

/* An acquisition without an event was made: count it, and wake a transfer waiting for it. */
static void own_took(void)
{
	uint32_t me = lc_thread == LC_NO_THREAD ? 0 : lc_thread;

	own_done++;
	if (me >= OWN_THREADS)
		return;
	__atomic_store_n(&own_count[me], own_count[me] + 1, __ATOMIC_RELEASE);
	if (__atomic_load_n(&lc.own_wanted, __ATOMIC_ACQUIRE) == me + 1) {
		int e = errno;

		futex(&own_count[me], FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
		errno = e;
	}
}

/* A transfer's event ev, at its turn: when the mutex's last owner made its last acquisition
 * without an event, wait until that thread made that many (its free code: no turn).  The
 * event's last two aux values say which (the object(s) come first: `base` of them). */
static void own_wait_for(const struct lc_ev *ev, uint32_t base)
{
	uint32_t prev, want, *w;
	struct timespec t0, now, ts = { 0, 1000 * 1000 };
	int e, said = 0;

	if (!lc.owned || ev->naux < base + 2)
		return;
	prev = (uint32_t)ev->aux[base];
	want = (uint32_t)ev->aux[base + 1];
	if (prev >= OWN_THREADS || want == 0)
		return;
	w = &own_count[prev];
	if ((int32_t)(__atomic_load_n(w, __ATOMIC_ACQUIRE) - want) >= 0)
		return;
	e = errno;
	IP_REAL(clock_gettime)(CLOCK_MONOTONIC, &t0);
	for (;;) {
		uint32_t v = __atomic_load_n(w, __ATOMIC_ACQUIRE);

		if ((int32_t)(v - want) >= 0)
			break;
		__atomic_store_n(&lc.own_wanted, prev + 1, __ATOMIC_RELEASE);
		/* a thread held until its next turn (lc.c, hold_to_turn) sleeps on the turn */
		futex(&lc.turn_seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
		futex(w, FUTEX_WAIT_PRIVATE, v, &ts);
		IP_REAL(clock_gettime)(CLOCK_MONOTONIC, &now);
		if (!said && now.tv_sec - t0.tv_sec >= 2) {
			/* the board: waiting for thread N (gd_stall.c's report names it) */
			lc_wait_state(TRACE_EV_THREAD, (int)prev, 0, lc.turn_waiters);
			said = 1;
		}
		if (now.tv_sec - t0.tv_sec > OWN_WAIT_LIMIT_S)
			lc_diverge("thread %u waits for thread %u to take, without an event, its mutex "
			           "acquisition number %u, as recorded before this %s; it made %u",
			           lc_thread == LC_NO_THREAD ? 0 : lc_thread, prev, want,
			           trace_call_name(ev->call), v);
	}
	__atomic_store_n(&lc.own_wanted, 0, __ATOMIC_RELEASE);
	errno = e;
}

/* The real lock of an owned mutex: when it is taken, say so while waiting, so that a thread
 * holding it, held back before its next event, goes on to its release (lc.c, hold_to_turn). */
static int own_lock(pthread_mutex_t *m)
{
	int r;

	if (!lc.owned || (r = IP_REAL(pthread_mutex_trylock)(m)) == EBUSY) {
		if (lc.owned) {
			int e = errno;

			__atomic_fetch_add(&lc.mutex_waiters, 1, __ATOMIC_SEQ_CST);
			futex(&lc.turn_seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
			errno = e;
		}
		r = IP_REAL(pthread_mutex_lock)(m);
		if (lc.owned)
			__atomic_fetch_sub(&lc.mutex_waiters, 1, __ATOMIC_SEQ_CST);
	}
	return r;
}

/* Before the real acquisition of a recorded one that succeeded: a mutex's transfer waits for
 * the run before it (rwlocks, spin locks and semaphores are not owned). */
static int is_mutex_acquire(uint32_t call)
{
	return call == TRACE_CALL_MUTEX_LOCK || call == TRACE_CALL_MUTEX_TRYLOCK ||
	       call == TRACE_CALL_MUTEX_TIMEDLOCK;
}

static void own_before(const struct lc_ev *ev)
{
	if (is_mutex_acquire(ev->call))
		own_wait_for(ev, 1);
}

/* ... and after it: the thread holds one more (before its commit, which may hold it back). */
static void own_after(const struct lc_ev *ev, int r)
{
	if (lc.owned && (r == 0 || r == EOWNERDEAD) && is_mutex_acquire(ev->call))
		lc_mutexes_held++;
}

/* A trylock of `call`: 1 when the thread's next recorded event is one (do it at its turn),
 * 0 when this attempt was not made when recorded: it fails without an event. */
static int try_recorded(uint32_t call)
{
	const struct lc_ev *n;
	struct timespec now;
	uint64_t at = 0;
	char desc[192];

	n = own_next(&at);
	if (!n || (n->kind == TRACE_EV_SYNC && n->call == call)) {
		invented = 0;
		return 1;
	}
	lc_soft_clocks = 1;
	if (!invented || at != invent_at) {
		invent_at = at;
		invented = 0;
		IP_REAL(clock_gettime)(CLOCK_MONOTONIC, &invent_t0);
	}
	if ((++invented & 4095) == 0) {
		IP_REAL(clock_gettime)(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - invent_t0.tv_sec > SOFT_TRY_LIMIT_S) {
			lc_ev_describe(n, desc, sizeof(desc));
			lc_diverge("thread %u keeps calling %s (%u times without progress), which the "
			           "recorded run did not call before its next event, %s",
			           lc_thread == LC_NO_THREAD ? 0 : lc_thread, trace_call_name(call),
			           invented, desc);
		}
	}
	return 0;
}

/* The calling thread's next recorded event that is not a failed trylock (its index in *at),
 * or NULL: the failed trylocks before it are done as no-ops when the thread makes another
 * call first (lc.c, lc_expect). */
static const struct lc_ev *own_next_past_failures(uint64_t *at)
{
	uint32_t me = lc_thread == LC_NO_THREAD ? 0 : lc_thread;

	for (uint64_t i = __atomic_load_n(&lc.pos, __ATOMIC_ACQUIRE); i < lc.nev; i++) {
		const struct lc_ev *ev = &lc.ev[i - lc.base];

		if (ev->thread == me && !lc_try_failed(ev)) {
			*at = i;
			return ev;
		}
	}
	return NULL;
}

/* A recorded read of that clock whose value fits in `size` bytes. */
static int clock_like(const struct lc_ev *ev, uint32_t call, int64_t clk, size_t size)
{
	return ev->kind == TRACE_EV_CLOCK && ev->call == call && ev->result == 0 &&
	       ev->data_len >= size && (clk < 0 || (ev->naux && ev->aux[0] == clk));
}

/* A clock read in a lock's slow path.  When the thread's next recorded event, past the failed
 * trylocks it has not made (the replayed thread tried fewer times before reading the clock),
 * is a clock read, this is that read: an event, the failed trylocks before it done as no-ops
 * at their turns.  Else the recorded run did not make this one (it got the lock by trying
 * where this run gave up): the value of the process's next recorded read of that clock (or
 * its last), without an event (1); when the process recorded none, the real call's, without
 * an event too (2: the caller makes it). */
int lc_soft_clock(uint32_t call, int64_t clk, void *out, size_t size)
{
	const struct lc_ev *n, *v = NULL;
	uint64_t at = 0, past = 0;

	if (!lc_soft_clocks || !own_next(&at))
		return 0;
	n = own_next_past_failures(&past);
	if (n && n->kind == TRACE_EV_CLOCK)
		return 0;
	for (uint64_t i = at; i < lc.nev && !v; i++) {
		const struct lc_ev *ev = &lc.ev[i - lc.base];

		if (clock_like(ev, call, clk, size))
			v = ev;
	}
	for (uint64_t i = at; i > lc.base && !v; i--) {
		const struct lc_ev *ev = &lc.ev[i - 1 - lc.base];

		if (clock_like(ev, call, clk, size))
			v = ev;
	}
	if (!v)
		return 2;
	if (out)
		memcpy(out, lc.data + v->data_off, size);
	return 1;
}

/* A blocking acquire that may take the recorded event `have`: the same call, or a successful
 * trylock of the same kind of object (the recorded run got it by trying). */
static int acquire_takes(uint32_t want, uint32_t have, int64_t result)
{
	if (want == have)
		return 1;
	if (result != 0)
		return 0;
	switch (want) {
	case TRACE_CALL_MUTEX_LOCK:
	case TRACE_CALL_MUTEX_TIMEDLOCK:
		return have == TRACE_CALL_MUTEX_TRYLOCK;
	case TRACE_CALL_RWLOCK_RDLOCK:
	case TRACE_CALL_RWLOCK_TIMEDRDLOCK:
		return have == TRACE_CALL_RWLOCK_TRYRDLOCK;
	case TRACE_CALL_RWLOCK_WRLOCK:
	case TRACE_CALL_RWLOCK_TIMEDWRLOCK:
		return have == TRACE_CALL_RWLOCK_TRYWRLOCK;
	case TRACE_CALL_SPIN_LOCK:
		return have == TRACE_CALL_SPIN_TRYLOCK;
	case TRACE_CALL_SEM_WAIT:
	case TRACE_CALL_SEM_TIMEDWAIT:
		return have == TRACE_CALL_SEM_TRYWAIT;
	default:
		return 0;
	}
}

/* The next event, which must be this sync call: a thread that does something else here
 * diverged.  The objects are not compared: their ids follow addresses, and an address the
 * allocator hands out again (a lock freed, another made) keeps its first id when recorded but
 * may be a fresh one in replay, where the heap is laid out otherwise (the LC's own memory). */
static const struct lc_ev *sync_expect(uint32_t call, const void *obj, const void *obj2)
{
	const char *what = trace_call_name(call);
	const struct lc_ev *ev = lc_expect(TRACE_EV_SYNC, -1, what);

	(void)obj;
	(void)obj2;
	if (ev->call != call && acquire_takes(call, ev->call, ev->result)) {
		lc_soft_clocks = 1; /* a slow path where the recorded run had a fast one */
		return ev;
	}
	if (ev->call != call)
		lc_diverge("expected %s of object %lld, but the thread called %s",
		           trace_call_name(ev->call), (long long)(ev->naux ? ev->aux[0] : 0), what);
	return ev;
}

/* An acquiring call: a recorded failure (EBUSY, ETIMEDOUT...) is returned without the real
 * call; a success is the real blocking acquire, which the release logged before has made
 * possible. */
#define ACQUIRE(call, obj, realcall) \
	do { \
		const struct lc_ev *ev_ = sync_expect(call, obj, NULL); \
		int r_ = (int)ev_->result; \
		if (r_ == 0 || r_ == EOWNERDEAD) { \
			own_before(ev_); \
			r_ = realcall; \
			own_after(ev_, r_); \
		} \
		lc_commit(); \
		return r_; \
	} while (0)

/* A trylock: at its turn when recorded (a failure fails with the recorded error, a success
 * is the real blocking acquire); else it fails at once (soft trylocks, above). */
#define TRY(call, obj, realcall) \
	do { \
		const struct lc_ev *ev_; \
		int r_; \
		if (!try_recorded(call)) \
			return EBUSY; \
		lc_trying = 1; \
		ev_ = sync_expect(call, obj, NULL); \
		lc_trying = 0; \
		r_ = (int)ev_->result; \
		if (r_ == 0 || r_ == EOWNERDEAD) { \
			own_before(ev_); \
			r_ = realcall; \
			own_after(ev_, r_); \
		} else { \
			lc_soft_clocks = 1; \
		} \
		lc_commit(); \
		return r_; \
	} while (0)

/* A releasing call: the real call, then the commit that lets the acquirer go. */
#define RELEASE(call, obj, realcall) \
	do { \
		int r_; \
		sync_expect(call, obj, NULL); \
		r_ = realcall; \
		lc_commit(); \
		return r_; \
	} while (0)

/* An owned mutex's acquisition without an event, where the count before the thread's next
 * event says one is due: the real lock, at once (the recorded one succeeded). */
#define OWN_PRIVATE(m) \
	do { \
		if (own_private()) { \
			int r_; \
			lc_gate_open(); /* (an interposed call: the free code before it has run) */ \
			r_ = own_lock(m); \
			own_took(); \
			lc_mutexes_held++; \
			return r_; \
		} \
	} while (0)

LC_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
	if (!sync_on())
		return IP_REAL(pthread_mutex_lock)(m);
	OWN_PRIVATE(m);
	ACQUIRE(TRACE_CALL_MUTEX_LOCK, m, own_lock(m));
}

LC_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
	if (!sync_on())
		return IP_REAL(pthread_mutex_trylock)(m);
	TRY(TRACE_CALL_MUTEX_TRYLOCK, m, own_lock(m));
}

LC_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *ts)
{
	if (!sync_on())
		return IP_REAL(pthread_mutex_timedlock)(m, ts);
	OWN_PRIVATE(m);
	ACQUIRE(TRACE_CALL_MUTEX_TIMEDLOCK, m, own_lock(m));
}

/* The clock variants, recorded as their timed twins (interpose/calls.def). */
LC_EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clk, const struct timespec *ts)
{
	if (!IP_REAL(pthread_mutex_clocklock))
		return ENOSYS;
	if (!sync_on())
		return IP_REAL(pthread_mutex_clocklock)(m, clk, ts);
	OWN_PRIVATE(m);
	ACQUIRE(TRACE_CALL_MUTEX_TIMEDLOCK, m, own_lock(m));
}

LC_EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
	if (!sync_on())
		return IP_REAL(pthread_mutex_unlock)(m);
	if (lc.owned) { /* a release is no event */
		lc_mutexes_held -= lc_mutexes_held > 0;
		lc_gate_open();
		return IP_REAL(pthread_mutex_unlock)(m);
	}
	RELEASE(TRACE_CALL_MUTEX_UNLOCK, m, IP_REAL(pthread_mutex_unlock)(m));
}

LC_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	if (!sync_on())
		return IP_REAL(pthread_rwlock_rdlock)(l);
	ACQUIRE(TRACE_CALL_RWLOCK_RDLOCK, l, IP_REAL(pthread_rwlock_rdlock)(l));
}

LC_EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	if (!sync_on())
		return IP_REAL(pthread_rwlock_tryrdlock)(l);
	TRY(TRACE_CALL_RWLOCK_TRYRDLOCK, l, IP_REAL(pthread_rwlock_rdlock)(l));
}

LC_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *ts)
{
	if (!sync_on())
		return IP_REAL(pthread_rwlock_timedrdlock)(l, ts);
	ACQUIRE(TRACE_CALL_RWLOCK_TIMEDRDLOCK, l, IP_REAL(pthread_rwlock_rdlock)(l));
}

LC_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	if (!sync_on())
		return IP_REAL(pthread_rwlock_wrlock)(l);
	ACQUIRE(TRACE_CALL_RWLOCK_WRLOCK, l, IP_REAL(pthread_rwlock_wrlock)(l));
}

LC_EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
	if (!sync_on())
		return IP_REAL(pthread_rwlock_trywrlock)(l);
	TRY(TRACE_CALL_RWLOCK_TRYWRLOCK, l, IP_REAL(pthread_rwlock_wrlock)(l));
}

LC_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *ts)
{
	if (!sync_on())
		return IP_REAL(pthread_rwlock_timedwrlock)(l, ts);
	ACQUIRE(TRACE_CALL_RWLOCK_TIMEDWRLOCK, l, IP_REAL(pthread_rwlock_wrlock)(l));
}

LC_EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t clk,
                                         const struct timespec *ts)
{
	if (!IP_REAL(pthread_rwlock_clockrdlock))
		return ENOSYS;
	if (!sync_on())
		return IP_REAL(pthread_rwlock_clockrdlock)(l, clk, ts);
	ACQUIRE(TRACE_CALL_RWLOCK_TIMEDRDLOCK, l, IP_REAL(pthread_rwlock_rdlock)(l));
}

LC_EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clk,
                                         const struct timespec *ts)
{
	if (!IP_REAL(pthread_rwlock_clockwrlock))
		return ENOSYS;
	if (!sync_on())
		return IP_REAL(pthread_rwlock_clockwrlock)(l, clk, ts);
	ACQUIRE(TRACE_CALL_RWLOCK_TIMEDWRLOCK, l, IP_REAL(pthread_rwlock_wrlock)(l));
}

LC_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	if (!sync_on())
		return IP_REAL(pthread_rwlock_unlock)(l);
	RELEASE(TRACE_CALL_RWLOCK_UNLOCK, l, IP_REAL(pthread_rwlock_unlock)(l));
}

/* A condition wait: its first event releases the mutex, its second (the recorded return, at
 * its turn, after the signal that woke it when recorded) takes the mutex again. */
static int cond_wait(uint32_t call, pthread_cond_t *c, pthread_mutex_t *m)
{
	const struct lc_ev *ev;
	int r;

	sync_expect(call, c, m);
	IP_REAL(pthread_mutex_unlock)(m);
	lc_mutexes_held -= lc_mutexes_held > 0;
	lc_commit();
	ev = sync_expect(TRACE_CALL_COND_WAKE, c, m);
	r = (int)ev->result;
	own_wait_for(ev, 2);
	own_lock(m);
	if (lc.owned)
		lc_mutexes_held++;
	lc_commit();
	return r;
}

LC_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	if (!sync_on())
		return IP_REAL(pthread_cond_wait)(c, m);
	return cond_wait(TRACE_CALL_COND_WAIT, c, m);
}

LC_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                                     const struct timespec *ts)
{
	if (!sync_on())
		return IP_REAL(pthread_cond_timedwait)(c, m, ts);
	return cond_wait(TRACE_CALL_COND_TIMEDWAIT, c, m);
}

LC_EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clk,
                                     const struct timespec *ts)
{
	if (!IP_REAL(pthread_cond_clockwait))
		return ENOSYS;
	if (!sync_on())
		return IP_REAL(pthread_cond_clockwait)(c, m, clk, ts);
	return cond_wait(TRACE_CALL_COND_TIMEDWAIT, c, m);
}

LC_EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
	if (!sync_on())
		return IP_REAL(pthread_cond_signal)(c);
	RELEASE(TRACE_CALL_COND_SIGNAL, c, IP_REAL(pthread_cond_signal)(c));
}

LC_EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
	if (!sync_on())
		return IP_REAL(pthread_cond_broadcast)(c);
	RELEASE(TRACE_CALL_COND_BROADCAST, c, IP_REAL(pthread_cond_broadcast)(c));
}

/* Semaphores return 0, or -1 with errno: a recorded failure comes back as it was. */
static int sem_acquire(uint32_t call, sem_t *s)
{
	const struct lc_ev *ev = sync_expect(call, s, NULL);
	int r;

	if (ev->result < 0) {
		int e = ev->err;

		lc_commit();
		errno = e;
		return -1;
	}
	/* Free, as it must be: every post recorded before this acquisition has been made.  Taken,
	 * the thread acquires another semaphore than the recorded one (its path was decided by
	 * what no turn orders: the order of a Python set of threads, which follows addresses),
	 * and the post it needs comes after its turn: the board says so, for the stall report
	 * (gd_stall.c), and it waits for real (a thread encore does not see may still post). */
	r = IP_REAL(sem_trywait)(s);
	if (r < 0) {
		lc_wait_state(TRACE_EV_SYNC, -1, 0, (uint64_t)(ev->naux ? ev->aux[0] : 0));
		do
			r = IP_REAL(sem_wait)(s);
		while (r < 0 && errno == EINTR);
		lc_wait_state(0, -1, 0, 0);
	}
	lc_commit();
	lc_share_sem_done(); /* process-shared: the next ticket's turn (lc_chan.c) */
	return 0;
}

LC_EXPORT int sem_wait(sem_t *s)
{
	int r;

	lc_share_turn(); /* a reader of a shared pipe: its turn first (lc_chan.c) */
	if (lc_share_sem(s, sync_on(), &r))
		return r; /* process-shared: in the recorded order (lc_chan.c) */
	if (!sync_on())
		return IP_REAL(sem_wait)(s);
	return sem_acquire(TRACE_CALL_SEM_WAIT, s);
}

/* As a trylock (soft trylocks, above): tried at its turn when recorded, else EAGAIN at once. */
LC_EXPORT int sem_trywait(sem_t *s)
{
	int r;

	lc_share_turn(); /* a reader of a shared pipe: its turn first (lc_chan.c) */
	if (lc_share_sem(s, sync_on(), &r))
		return r; /* process-shared: in the recorded order (lc_chan.c) */
	if (!sync_on())
		return IP_REAL(sem_trywait)(s);
	if (!try_recorded(TRACE_CALL_SEM_TRYWAIT)) {
		errno = EAGAIN;
		return -1;
	}
	lc_trying = 1;
	r = sem_acquire(TRACE_CALL_SEM_TRYWAIT, s);
	lc_trying = 0;
	if (r != 0)
		lc_soft_clocks = 1;
	return r;
}

LC_EXPORT int sem_timedwait(sem_t *s, const struct timespec *ts)
{
	int r;

	lc_share_turn(); /* a reader of a shared pipe: its turn first (lc_chan.c) */
	if (lc_share_sem(s, sync_on(), &r))
		return r; /* process-shared: in the recorded order (lc_chan.c) */
	if (!sync_on())
		return IP_REAL(sem_timedwait)(s, ts);
	return sem_acquire(TRACE_CALL_SEM_TIMEDWAIT, s);
}

LC_EXPORT int sem_clockwait(sem_t *s, clockid_t clk, const struct timespec *ts)
{
	int r;

	if (!IP_REAL(sem_clockwait)) {
		errno = ENOSYS;
		return -1;
	}
	lc_share_turn(); /* a reader of a shared pipe: its turn first (lc_chan.c) */
	if (lc_share_sem(s, sync_on(), &r))
		return r; /* process-shared: in the recorded order (lc_chan.c) */
	if (!sync_on())
		return IP_REAL(sem_clockwait)(s, clk, ts);
	return sem_acquire(TRACE_CALL_SEM_TIMEDWAIT, s);
}

LC_EXPORT int sem_post(sem_t *s)
{
	lc_share_sem_post(s); /* process-shared: its ORDER event (lc_chan.c) */
	if (!sync_on())
		return IP_REAL(sem_post)(s);
	RELEASE(TRACE_CALL_SEM_POST, s, IP_REAL(sem_post)(s));
}

/* A barrier is not really waited on (the other threads wait for their turns): its arrival
 * and its return are events, the return gives the recorded result (which thread was the
 * serial one). */
LC_EXPORT int pthread_barrier_wait(pthread_barrier_t *b)
{
	const struct lc_ev *ev;
	int r;

	if (!sync_on())
		return IP_REAL(pthread_barrier_wait)(b);
	sync_expect(TRACE_CALL_BARRIER_ARRIVE, b, NULL);
	lc_commit();
	ev = sync_expect(TRACE_CALL_BARRIER_LEAVE, b, NULL);
	r = (int)ev->result;
	lc_commit();
	return r;
}

LC_EXPORT int pthread_spin_lock(pthread_spinlock_t *l)
{
	if (!sync_on())
		return IP_REAL(pthread_spin_lock)(l);
	ACQUIRE(TRACE_CALL_SPIN_LOCK, (const void *)l, IP_REAL(pthread_spin_lock)(l));
}

LC_EXPORT int pthread_spin_trylock(pthread_spinlock_t *l)
{
	if (!sync_on())
		return IP_REAL(pthread_spin_trylock)(l);
	TRY(TRACE_CALL_SPIN_TRYLOCK, (const void *)l, IP_REAL(pthread_spin_lock)(l));
}

LC_EXPORT int pthread_spin_unlock(pthread_spinlock_t *l)
{
	if (!sync_on())
		return IP_REAL(pthread_spin_unlock)(l);
	RELEASE(TRACE_CALL_SPIN_UNLOCK, (const void *)l, IP_REAL(pthread_spin_unlock)(l));
}

/* pthread_once: the thread that ran init when recorded (result 1) calls the real
 * pthread_once at once, so that it runs init again, init's events taking their turns; any
 * other caller waits for its event's turn first, which comes after every event of init (the
 * recorder logs it after the call returned), so that it cannot be the one to run init here
 * (it would wait, inside init, for turns that are the other thread's).  Whether this call
 * is the runner is read from the thread's next event in the trace. */
static int once_runner(void)
{
	uint32_t me = lc_thread;

	for (uint64_t i = __atomic_load_n(&lc.pos, __ATOMIC_ACQUIRE); i < lc.nev; i++) {
		const struct lc_ev *ev = &lc.ev[i - lc.base];

		if (ev->thread == me && lc_try_failed(ev))
			continue; /* done as a no-op before it (soft trylocks) */
		if (ev->thread == me)
			return !(ev->kind == TRACE_EV_SYNC && ev->call == TRACE_CALL_PTHREAD_ONCE &&
			         ev->result == 0);
	}
	return 1;
}

LC_EXPORT int pthread_once(pthread_once_t *o, void (*init)(void))
{
	const struct lc_ev *ev;
	int r;

	if (!sync_on())
		return IP_REAL(pthread_once)(o, init);
	if (once_runner()) {
		r = IP_REAL(pthread_once)(o, init);
		sync_expect(TRACE_CALL_PTHREAD_ONCE, o, NULL);
		lc_commit();
		return r;
	}
	ev = sync_expect(TRACE_CALL_PTHREAD_ONCE, o, NULL);
	(void)ev;
	r = IP_REAL(pthread_once)(o, init); /* init has run (or runs without events) */
	lc_commit();
	return r;
}

/* syscall(SYS_futex) FUTEX_WAIT and FUTEX_WAKE (and _PRIVATE), as recorder/sync.c logs
 * them: a wait is not made; at its turn it returns its recorded result.  Woken (0), the wake
 * that woke it was replayed before it, and the store before that wake with it.  EAGAIN (the
 * word was not the value given) means another thread had changed the word: its store comes
 * before its next event, past which the trace has already run, so the word changes soon; it
 * is waited for (really, 1 ms at a time), so that the program then reads what it read.  A
 * wake makes the real call (a thread outside the turns may wait) and returns the recorded
 * count. */
int lc_sync_futex(const long *a, long *r)
{
	int cmd = (int)a[1] & FUTEX_CMD_MASK;
	const struct lc_ev *ev;

	if ((cmd != FUTEX_WAIT && cmd != FUTEX_WAKE) || !sync_on())
		return 0;
	if (cmd == FUTEX_WAKE) {
		int e = errno;

		ev = sync_expect(TRACE_CALL_FUTEX_WAKE, (const void *)a[0], NULL);
		IP_REAL(syscall)(SYS_futex, a[0], a[1], a[2], a[3], a[4], a[5]);
		errno = e;
	} else {
		ev = sync_expect(TRACE_CALL_FUTEX_WAIT, (const void *)a[0], NULL);
		if (ev->result < 0 && ev->err == EAGAIN) {
			const uint32_t *w = (const uint32_t *)a[0];
			uint32_t val = (uint32_t)a[2];
			int e = errno, n = 0;

			while (__atomic_load_n(w, __ATOMIC_ACQUIRE) == val) {
				struct timespec ts = { 0, 1000 * 1000 };

				if (++n > 20000)
					lc_diverge("futex wait on %p: the word changed when recorded (EAGAIN), "
					           "but stays %u here (a store outside interposed calls)",
					           (const void *)w, val);
				futex((uint32_t *)w, (int)a[1] & ~FUTEX_CLOCK_REALTIME, val, &ts);
			}
			errno = e;
		}
	}
	*r = ev->result;
	if (*r < 0) {
		int e = ev->err;

		lc_commit();
		errno = e;
		return 1;
	}
	lc_commit();
	return 1;
}
