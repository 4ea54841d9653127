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
 * recorder did not see start (one libc made) or that has ended passes through too.
 */
#include <string.h>

#include "objid.h"
#include "rec.h"

__thread uint32_t rec_thread __attribute__((tls_model("initial-exec"))) = REC_NO_THREAD;

static struct ip_objtab objs;

/* The constructor runs in the main thread: it is thread 0. */
__attribute__((constructor)) static void sync_init(void)
{
	rec_thread = 0;
}

/* Log one sync event: the object, a second one (the mutex of a condition wait) or NULL, what
 * the call returned and its errno (semaphores). */
static void sync_log(uint32_t call, const void *obj, const void *obj2, int64_t r, int e)
{
	struct trace_event ev;

	if (!rec_enter())
		return;
	rec_event_fill(&ev, TRACE_EV_SYNC, call, 0);
	ev.result = r;
	ev.err = e;
	ev.naux = obj2 ? 2 : 1;
	ev.aux[0] = ip_obj_id(&objs, obj);
	ev.aux[1] = obj2 ? ip_obj_id(&objs, obj2) : 0;
	rec_log(&ev, NULL);
	rec_leave();
}

/* Whether this thread's synchronisation is logged: threads exist, and it is one of ours. */
static inline int sync_on(void)
{
	return __builtin_expect(rec.threads, 0) && rec_thread != REC_NO_THREAD;
}

#define ACQUIRE(name, call, obj, ...) \
	do { \
		int r_ = IP_REAL(name)(__VA_ARGS__); \
		if (sync_on()) \
			sync_log(call, obj, NULL, r_, 0); \
		return r_; \
	} while (0)

#define RELEASE(name, call, obj, ...) \
	do { \
		if (sync_on()) \
			sync_log(call, obj, NULL, 0, 0); \
		return IP_REAL(name)(__VA_ARGS__); \
	} while (0)

/* --- mutexes ------------------------------------------------------------------------------ */

REC_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
	ACQUIRE(pthread_mutex_lock, TRACE_CALL_MUTEX_LOCK, m, m);
}

REC_EXPORT int pthread_mutex_trylock(pthread_mutex_t *m)
{
	ACQUIRE(pthread_mutex_trylock, TRACE_CALL_MUTEX_TRYLOCK, m, m);
}

REC_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *ts)
{
	ACQUIRE(pthread_mutex_timedlock, TRACE_CALL_MUTEX_TIMEDLOCK, m, m, ts);
}

REC_EXPORT int pthread_mutex_unlock(pthread_mutex_t *m)
{
	RELEASE(pthread_mutex_unlock, TRACE_CALL_MUTEX_UNLOCK, m, m);
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

REC_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	RELEASE(pthread_rwlock_unlock, TRACE_CALL_RWLOCK_UNLOCK, l, l);
}

/* --- condition variables ------------------------------------------------------------------
 * A wait is two events: its start releases the mutex (logged before), its return holds the
 * mutex again (logged after); a signal or broadcast is a release. */

REC_EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	int r;

	if (!sync_on())
		return IP_REAL(pthread_cond_wait)(c, m);
	sync_log(TRACE_CALL_COND_WAIT, c, m, 0, 0);
	r = IP_REAL(pthread_cond_wait)(c, m);
	sync_log(TRACE_CALL_COND_WAKE, c, m, r, 0);
	return r;
}

REC_EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
                                      const struct timespec *ts)
{
	int r;

	if (!sync_on())
		return IP_REAL(pthread_cond_timedwait)(c, m, ts);
	sync_log(TRACE_CALL_COND_TIMEDWAIT, c, m, 0, 0);
	r = IP_REAL(pthread_cond_timedwait)(c, m, ts);
	sync_log(TRACE_CALL_COND_WAKE, c, m, r, 0);
	return r;
}

REC_EXPORT int pthread_cond_signal(pthread_cond_t *c)
{
	RELEASE(pthread_cond_signal, TRACE_CALL_COND_SIGNAL, c, c);
}

REC_EXPORT int pthread_cond_broadcast(pthread_cond_t *c)
{
	RELEASE(pthread_cond_broadcast, TRACE_CALL_COND_BROADCAST, c, c);
}

/* --- semaphores: 0, or -1 with errno ------------------------------------------------------ */

#define SEM_ACQUIRE(name, call, ...) \
	do { \
		int r_ = IP_REAL(name)(__VA_ARGS__), e_ = errno; \
		if (sync_on()) \
			sync_log(call, s, NULL, r_, r_ < 0 ? e_ : 0); \
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

REC_EXPORT int sem_post(sem_t *s)
{
	RELEASE(sem_post, TRACE_CALL_SEM_POST, s, s);
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

void rec_sync_fork_child(void)
{
	ip_obj_reset(&objs);
}
