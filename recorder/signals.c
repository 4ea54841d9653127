/*
 * signals.c: asynchronous signals while recording.  The recorder owns every handler the
 * program installs for an asynchronous signal: the kernel sees our trampoline, with the
 * program's flags and mask; the program's action is kept in a table here (sigaction(sig,
 * NULL, &old) gives back the program's own).  The trampoline decides where the program's
 * handler runs, so that replay can run it at the same point (recorder/README.md, "Signals"):
 *
 *   - the thread is blocked in a system call (an interposed call's real call, as a server in
 *     epoll_wait or accept, a shell in sigsuspend): the handler runs at once, after a
 *     HANDLER event; the call's own event (EINTR or its result) comes after it.  Replay runs
 *     the handler at the entry of that call: exact;
 *   - the thread runs program code, or the recorder itself (its lock may be held): the
 *     signal is deferred (a per-thread queue) and the handler runs at the end of the next
 *     call that logs an event, after its event (TRACE_FL_AFTER): replay runs it there too,
 *     once that event is done: exact for the program's state, since no program code runs in
 *     between, and in the order the other processes saw (the call's effect, then the
 *     handler's);
 *   - the deferral is bounded: a program spinning on a flag logs nothing, so a per-thread
 *     timer (REC_SIG_BOUND after REC_BOUND_NS) runs the handler where the thread is; in a
 *     system call that is the first case, in program code the HANDLER event is marked
 *     TRACE_FL_LATE: replay runs it once the event before it is done, perhaps earlier than
 *     recorded.
 *
 * A signal taken by sigwait, sigwaitinfo or sigtimedwait is the wait's own event (a HANDLER
 * event of that call: no handler ran), at the end of this file.
 *
 * Synchronous signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, raised by the
 * faulting instruction, and SIGPIPE, raised by the write that failed) are left to the kernel
 * as before: their handlers run where the program is, which replay reproduces by itself.
 * Everything on the signal path is async-signal-safe: raw system calls, no lock the
 * interrupted thread may hold (the writer's lock is taken only when this thread holds none).
 */
#include <string.h>
#include <ucontext.h>

#include "rec.h"

/* The delay after which a deferred handler runs wherever the thread is. */
#define REC_BOUND_NS 5000000L
/* Deferred signals per thread; one more runs at once (late). */
#define REC_PEND_MAX 8

__thread int rec_sig_npend __attribute__((tls_model("initial-exec")));

/* One deferred signal: what the handler is given, and the action it arrived under. */
struct pend {
	int sig, code, pid, uid, status, flags;
	int self; /* the process it arrived in: a fork's child copies the queue, not the signals */
	int64_t value;
	void *fn;
	uint64_t mask; /* the kernel's sigset: signal s is bit s - 1 */
};

static __thread struct pend pendq[REC_PEND_MAX] __attribute__((tls_model("initial-exec")));
static __thread int bound_timer __attribute__((tls_model("initial-exec")));  /* id + 1 */

/* A signal event (HANDLER, KILL, TIMER) was logged in this image's trace already: from then
 * on, the waits a held SIGCHLD handler makes are logged (rec_sig_waits_logged). */
static int sig_logged;

/* The program's actions for the signals whose handler we hold (bit s of held). */
static struct sigaction prog[65];
static uint64_t held;
static int bound_sig;     /* REC_SIG_BOUND: SIGRTMAX unless the program uses it */
static int bound_off;     /* the program installed its own action for it: no bound */

static int sync_sig(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL ||
	       sig == SIGTRAP || sig == SIGSYS || sig == SIGPIPE;
}

static uint64_t bit(int sig)
{
	return 1ull << (sig - 1);
}

static void sys_mask(int how, const uint64_t *set, uint64_t *old)
{
	syscall(SYS_rt_sigprocmask, how, set, old, sizeof(uint64_t));
}

static uint64_t kmask(const sigset_t *s)
{
	uint64_t m;

	memcpy(&m, s, sizeof(m)); /* glibc's sigset_t starts with the kernel's 64 bits */
	return m;
}

static int rec_sig_held(int sig)
{
	return sig > 0 && sig < 65 && (__atomic_load_n(&held, __ATOMIC_RELAXED) & bit(sig));
}

/* --- where the thread was -------------------------------------------------------------------
 * Interrupted in a system call: the kernel left the instruction pointer on the syscall
 * instruction (a call it restarts, SA_RESTART: the handler runs before it completes), or just
 * after it with the result -EINTR (the call was cut short).  Just after it with another
 * result, the call completed before the signal came (signals are delivered as a call
 * returns): the signal is deferred, its handler run after the call's event, as it came. */
static int insn_syscall(const unsigned char *p)
{
#if defined(__x86_64__)
	return p[0] == 0x0f && p[1] == 0x05;
#elif defined(__aarch64__)
	uint32_t w;

	memcpy(&w, p, 4);
	return w == 0xd4000001u; /* svc #0 */
#else
	(void)p;
	return 0;
#endif
}

static int in_syscall(void *ucv)
{
	const ucontext_t *uc = ucv;
	uintptr_t pc;
	size_t len;
	long ret;

#if defined(__x86_64__)
	pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	ret = (long)uc->uc_mcontext.gregs[REG_RAX];
	len = 2;
#elif defined(__aarch64__)
	pc = (uintptr_t)uc->uc_mcontext.pc;
	ret = (long)uc->uc_mcontext.regs[0];
	len = 4;
#else
	(void)uc;
	return 0;
#endif
	/* (the instruction before pc is read only when it lies on pc's page: mapped) */
	if ((pc & 4095) >= len && insn_syscall((const unsigned char *)(pc - len)))
		return ret == -EINTR;
	return (pc & 4095) <= 4096 - len && insn_syscall((const unsigned char *)pc);
}

/* --- running the program's handler ---------------------------------------------------------- */

/* The signal whose handler of the program's runs in this thread (run), 0 for none: the
 * deferred ones wait for it to return.  The kernel blocks a signal while its handler runs;
 * running a second one from an event inside the first (a handler that takes a mutex: its
 * event ran the queue) nested it, and a handler that locks a mutex then waited for the mutex
 * the outer run held.  A handler left by siglongjmp (PostgreSQL's) unblocked its signal as
 * it left: flush sees that, and the mark goes.  (SA_NODEFER: no mark, as the kernel.) */
static __thread int handler_sig __attribute__((tls_model("initial-exec")));

static void run(const struct pend *p)
{
	uint64_t m = p->mask, old;
	siginfo_t si;
	ucontext_t uc;

	if (!(p->flags & SA_NODEFER))
		m |= bit(p->sig);
	sys_mask(SIG_BLOCK, &m, &old);
	memset(&si, 0, sizeof(si));
	si.si_signo = p->sig;
	si.si_code = p->code;
	si.si_pid = p->pid;
	si.si_uid = (uid_t)p->uid;
	if (p->sig == SIGCHLD)
		si.si_status = p->status;
	else
		si.si_value.sival_ptr = (void *)(intptr_t)p->value;
	/* a handler that looks at its context sees where the thread is now */
	memset(&uc, 0, sizeof(uc));
	memcpy(&uc.uc_sigmask, &old, sizeof(old));
	{
		int outer = handler_sig;

		if (!(p->flags & SA_NODEFER))
			handler_sig = p->sig;
		if (p->flags & SA_SIGINFO)
			((void (*)(int, siginfo_t *, void *))p->fn)(p->sig, &si, &uc);
		else
			((void (*)(int))p->fn)(p->sig);
		handler_sig = outer;
	}
	sys_mask(SIG_SETMASK, &old, NULL);
}

static void log_handler(const struct pend *p, uint32_t flags, void *ra)
{
	struct trace_event ev;

	if (!rec_enter())
		return;
	rec_event_init(&ev, TRACE_EV_HANDLER, TRACE_CALL_HANDLER, -1);
	ev.result = p->sig;
	ev.flags = flags;
	ev.naux = 4;
	ev.aux[0] = p->code;
	ev.aux[1] = p->pid;
	ev.aux[2] = (int64_t)(uint32_t)p->uid | (int64_t)(uint64_t)(uint32_t)p->status << 32;
	ev.aux[3] = p->value;
	rec_log(&ev, ra);
	sig_logged = 1;
	rec_leave();
}

/* Whether the program's action for the queued signal is still the one it came under. */
static int same_action(const struct pend *p)
{
	const struct sigaction *a = &prog[p->sig];
	void *fn = (a->sa_flags & SA_SIGINFO) ? (void *)a->sa_sigaction : (void *)a->sa_handler;

	/* (a one-shot handler, SA_RESETHAND: the kernel reset the action as it delivered, and
	 * the trampoline with it; its run is still due) */
	if (p->flags & SA_RESETHAND)
		return 1;
	return rec_sig_held(p->sig) && fn == p->fn;
}

static void disarm_bound(void);

/* Log and run the deferred handlers of this thread, oldest first (the guard is free);
 * flags: where they run (0: in a call, before its event; TRACE_FL_AFTER, TRACE_FL_LATE). */
static void flush(uint32_t flags)
{
	if (handler_sig) {
		uint64_t none = 0, cur;

		sys_mask(SIG_BLOCK, &none, &cur);
		if (cur & bit(handler_sig))
			return; /* (after it: the loop that ran it, or the thread's next event) */
		handler_sig = 0; /* it left by siglongjmp, which unblocked its signal */
	}
	for (;;) {
		uint64_t all = ~0ull, old;
		struct pend p;

		sys_mask(SIG_BLOCK, &all, &old); /* the queue is the handlers' too */
		if (rec_sig_npend == 0) {
			disarm_bound();
			sys_mask(SIG_SETMASK, &old, NULL);
			return;
		}
		p = pendq[0];
		memmove(pendq, pendq + 1, (size_t)(rec_sig_npend - 1) * sizeof(pendq[0]));
		rec_sig_npend--;
		sys_mask(SIG_SETMASK, &old, NULL);
		if (p.self != (int)syscall(SYS_getpid))
			continue; /* the parent's, deferred when it forked */
		if (!same_action(&p)) {
			/* The program changed the signal's action since it came (bash sets SIGCHLD
			 * back to the default before an exec): it is delivered again, under the
			 * action the program has now, as if it had come after the change, which
			 * the kernel could have done.  Running the old handler would run what the
			 * program had uninstalled, and a replay could not (the handler is gone). */
			siginfo_t si;

			memset(&si, 0, sizeof(si));
			si.si_signo = p.sig;
			si.si_code = p.code;
			si.si_pid = p.pid;
			si.si_uid = (uid_t)p.uid;
			if (p.sig == SIGCHLD)
				si.si_status = p.status;
			else
				si.si_value.sival_ptr = (void *)(intptr_t)p.value;
			/* (to itself, any si_code is allowed: the same siginfo as it came with) */
			/* (the real syscall: ours is no program's signal sent, no UNMASK event) */
			if (IP_REAL(syscall)(SYS_rt_tgsigqueueinfo, (pid_t)syscall(SYS_getpid),
			                     (pid_t)syscall(SYS_gettid), p.sig, &si) != 0)
				IP_REAL(syscall)(SYS_tgkill, (pid_t)syscall(SYS_getpid),
				                 (pid_t)syscall(SYS_gettid), p.sig);
			continue;
		}
		log_handler(&p, flags, NULL);
		run(&p);
	}
}

/* --- the bound ------------------------------------------------------------------------------- */

/* 1 while this thread's bound timer is armed: disarmed once its queue is empty, or it would
 * fire later into a pause or sigsuspend of the program, which the kernel never restarts (an
 * EINTR no handler of the program explains: CPython's test_itimer_real saw pause return
 * without its SIGALRM). */
static __thread int bound_armed __attribute__((tls_model("initial-exec")));

static void disarm_bound(void)
{
	struct itimerspec its;

	if (!bound_armed)
		return;
	bound_armed = 0;
	memset(&its, 0, sizeof(its));
	syscall(SYS_timer_settime, bound_timer - 1, 0, &its, NULL);
}

static void arm_bound(void)
{
	struct itimerspec its;

	if (bound_off || !bound_sig)
		return;
	if (!bound_timer) {
		struct sigevent sev;
		int id;

		memset(&sev, 0, sizeof(sev));
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = bound_sig;
		sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
		if (syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, &id) != 0)
			return;
		bound_timer = id + 1;
	}
	memset(&its, 0, sizeof(its));
	its.it_value.tv_nsec = REC_BOUND_NS;
	if (syscall(SYS_timer_settime, bound_timer - 1, 0, &its, NULL) == 0)
		bound_armed = 1;
}

static void bound_handler(int sig, siginfo_t *si, void *uc)
{
	int e = errno;

	(void)sig;
	(void)si;
	bound_armed = 0; /* (it fired) */
	if (rec_sig_npend) {
		if (rec_depth != 0 || __atomic_load_n(&rec_forking, __ATOMIC_ACQUIRE)) {
			arm_bound();
		} else {
			/* the handlers run under the mask the thread had, not ours (all blocked) */
			uint64_t m = kmask(&((ucontext_t *)uc)->uc_sigmask);

			sys_mask(SIG_SETMASK, &m, NULL);
			flush(in_syscall(uc) ? 0 : TRACE_FL_LATE);
		}
	}
	errno = e;
}

/* --- the trampoline -------------------------------------------------------------------------- */

static int push(const struct pend *p)
{
	uint64_t all = ~0ull, old;
	int ok = 0;

	sys_mask(SIG_BLOCK, &all, &old);
	if (rec_sig_npend < REC_PEND_MAX) {
		pendq[rec_sig_npend++] = *p;
		ok = 1;
	}
	sys_mask(SIG_SETMASK, &old, NULL);
	return ok;
}

static void trampoline(int sig, siginfo_t *si, void *uc)
{
	const struct sigaction *a = &prog[sig];
	struct pend p;
	int e = errno;

	memset(&p, 0, sizeof(p));
	p.sig = sig;
	p.self = (int)syscall(SYS_getpid);
	p.flags = a->sa_flags;
	p.fn = (a->sa_flags & SA_SIGINFO) ? (void *)a->sa_sigaction : (void *)a->sa_handler;
	p.mask = kmask(&a->sa_mask);
	if (si) {
		p.code = si->si_code;
		p.pid = si->si_pid;
		p.uid = (int)si->si_uid;
		if (sig == SIGCHLD)
			p.status = si->si_status;
		else
			p.value = (int64_t)(intptr_t)si->si_value.sival_ptr;
	}
	if (a->sa_flags & SA_RESETHAND) { /* the kernel reset it as it delivered */
		__atomic_fetch_and(&held, ~bit(sig), __ATOMIC_RELAXED);
		memset(&prog[sig], 0, sizeof(prog[sig]));
	}
	if (p.fn == (void *)SIG_DFL || p.fn == (void *)SIG_IGN) {
		/* (changed under us by another thread: nothing to run) */
	} else if (rec_depth != 0 || __atomic_load_n(&rec_forking, __ATOMIC_ACQUIRE)) {
		/* inside the recorder (a fork's child opening its trace too): later */
		if (push(&p))
			arm_bound();
		else
			run(&p);
	} else if (!rec.w) {
		run(&p); /* not recording */
	} else if (in_syscall(uc)) {
		if (!push(&p)) {
			flush(0);
			push(&p);
		}
		flush(0);
	} else if (push(&p)) {
		arm_bound();
	} else {
		run(&p); /* more deferred than we keep: unlogged (the queue is the bound) */
	}
	errno = e;
}

/* A call came back with handlers deferred (the signal arrived as it returned its result) and
 * logs no event they could follow (a wait that is not logged: recorder/pidcalls.c): they run
 * now, marked late, as the bound would run them 5 ms on (replay runs them once the event
 * before is done).  Waiting for the bound changed what the program did: bash, whose `wait`
 * returned as its child exited just after sending it SIGUSR1, went on to its end within the
 * 5 ms, and its trap never ran. */
void rec_sig_flush_late(void)
{
	if (rec_sig_npend == 0 || rec_depth != 0 || rec_internal || !rec.w ||
	    __atomic_load_n(&rec_forking, __ATOMIC_ACQUIRE))
		return;
	flush(TRACE_FL_LATE);
}

/* An event was logged (rec_log, the guard held once): the deferred handlers run now, at the
 * end of its call (its real call made, as when they arrived), each logged first, with the
 * guard and lock released around them. */
void rec_sig_after_event(const struct trace_event *ev)
{
	/* (not at the events the recorder makes on its own, with no call: a descriptor's
	 * first-use declaration, in the middle of the call that uses it) */
	if (ev->kind == TRACE_EV_HANDLER || ev->kind == TRACE_EV_EXIT ||
	    ev->kind == TRACE_EV_SIGNAL || ev->call == TRACE_CALL_NONE || rec_depth != 1 ||
	    rec_internal ||
	    __atomic_load_n(&rec_forking, __ATOMIC_ACQUIRE))
		return;
	rec_leave();
	flush(TRACE_FL_AFTER);
	rec_depth++;
	rec_lock_take();
}

/* A new child: the parent's timer is not its own (its deferred signals are told apart by
 * their pid: one that arrived in the child while it was still in our fork is its own). */
int rec_sig_any_held(void)
{
	return __atomic_load_n(&held, __ATOMIC_RELAXED) != 0;
}

void rec_sig_bound_off(void)
{
	bound_off = 1; /* as when the program takes SIGRTMAX: no timer is armed any more */
}

void rec_sig_forked(void)
{
	bound_timer = 0;
	bound_armed = 0;
	sig_logged = 0; /* (a trace of its own) */
}

/* The waits made with SIGCHLD blocked and its handler held are logged once this image's
 * trace has a signal event (before, the old rule: not logged; the replayer decides the same
 * from the trace: replayer/lc_signals.c). */
int rec_sig_waits_logged(void)
{
	return rec_sig_held(SIGCHLD) && sig_logged;
}

void rec_sig_logged(void)
{
	sig_logged = 1;
}

/* --- the program's actions ------------------------------------------------------------------- */

static int holdable(int sig, const struct sigaction *act)
{
	if (sig <= 0 || sig >= 65 || sync_sig(sig) || sig == SIGKILL || sig == SIGSTOP)
		return 0;
	if (ip_sa_dfl_or_ign(act))
		return 0;
	return 1;
}

static void bound_install(void)
{
	struct sigaction sa;

	if (bound_sig || bound_off)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = bound_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	if (IP_REAL(sigaction)(SIGRTMAX, &sa, NULL) == 0)
		bound_sig = SIGRTMAX;
}

/* sigaction as the program sees it: act (if any) becomes the program's action for sig, and
 * old (if any) gets the program's previous one. */
int rec_sig_action(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction prev, k;
	int was = rec_sig_held(sig), r, e;

	if (was)
		prev = prog[sig];
	if (sig == SIGRTMAX && bound_sig && act) {
		bound_off = 1; /* the program's signal now: deferral bounded by events only */
		bound_sig = 0;
	}
	if (act && rec.w && holdable(sig, act) && !(sig == SIGRTMAX && bound_off)) {
		bound_install();
		k = *act;
		k.sa_sigaction = trampoline;
		k.sa_flags |= SA_SIGINFO;
		prog[sig] = *act;
		__atomic_fetch_or(&held, bit(sig), __ATOMIC_RELAXED);
		r = IP_REAL(sigaction)(sig, &k, old);
	} else {
		r = IP_REAL(sigaction)(sig, act, old);
		if (r == 0 && act)
			__atomic_fetch_and(&held, ~bit(sig), __ATOMIC_RELAXED);
	}
	e = errno;
	if (r != 0 && act) { /* (nothing changed) */
		if (was) {
			prog[sig] = prev;
			__atomic_fetch_or(&held, bit(sig), __ATOMIC_RELAXED);
		} else {
			__atomic_fetch_and(&held, ~bit(sig), __ATOMIC_RELAXED);
		}
	}
	if (r == 0 && old && was)
		*old = prev;
	errno = e;
	return r;
}

void rec_sig_drop(int sig)
{
	if (sig > 0 && sig < 65)
		__atomic_fetch_and(&held, ~bit(sig), __ATOMIC_RELAXED);
}

/* The program's action for sig, if we hold its handler (for a query that bypasses us). */
int rec_sig_prog(int sig, struct sigaction *out)
{
	if (!rec_sig_held(sig))
		return 0;
	*out = prog[sig];
	return 1;
}

/* --- signals sent and timers ----------------------------------------------------------------- */

/* The KILL event, the stream lock held. */
static void kill_event(uint32_t call, int r, int e, pid_t pid, int sig, pid_t tid, int64_t val,
                       void *ra)
{
	struct trace_event ev;

	rec_event_init(&ev, TRACE_EV_KILL, call, -1);
	ev.result = r;
	ev.err = r < 0 ? e : 0;
	ev.naux = 4;
	ev.aux[0] = pid;
	ev.aux[1] = sig;
	ev.aux[2] = tid;
	ev.aux[3] = val;
	rec_log(&ev, ra);
	sig_logged = 1;
}

/* A signal for another thread of this process (pthread_kill, tgkill): the real call is made
 * under the stream lock, so that its KILL event comes before the HANDLER event of the thread
 * it interrupts, which waits for the lock to log it.  Logged after the call, the handler's
 * event could come first, and a replay ran the handler before the sender reached its call:
 * knot sets a flag, then signals its workers, which read the flag in the handler's wake
 * and, in replay, found it still clear.  -1 (errno e) when it could not be logged so: the
 * caller makes the call itself and logs it after. */
static int kill_thread_logged(uint32_t call, long (*real)(long, long, long), long a0, long a1,
                              long a2, pid_t pid, int sig, pid_t tid, int *e, void *ra,
                              int errno_result)
{
	long r;

	if (!rec_enter())
		return -2;
	r = real(a0, a1, a2);
	*e = errno;
	if (errno_result) /* pthread_kill: the error number, not -1 and errno */
		kill_event(call, r ? -1 : 0, (int)r, pid, sig, tid, 0, ra);
	else
		kill_event(call, (int)r, *e, pid, sig, tid, 0, ra);
	rec_leave();
	return (int)r;
}

static void kill_log(uint32_t call, int r, int e, pid_t pid, int sig, pid_t tid, int64_t val,
                     void *ra)
{
	if (!rec_enter())
		return;
	kill_event(call, r, e, pid, sig, tid, val, ra);
	rec_leave();
}

REC_EXPORT int kill(pid_t pid, int sig)
{
	int r = IP_REAL(kill)(pid, sig), e = errno;

	kill_log(TRACE_CALL_KILL, r, e, pid, sig, 0, 0, __builtin_return_address(0));
	errno = e;
	return r;
}

REC_EXPORT int sigqueue(pid_t pid, int sig, const union sigval val)
{
	int r = IP_REAL(sigqueue)(pid, sig, val), e = errno;

	kill_log(TRACE_CALL_SIGQUEUE, r, e, pid, sig, 0, (int64_t)(intptr_t)val.sival_ptr,
	         __builtin_return_address(0));
	errno = e;
	return r;
}

int tgkill(pid_t tgid, pid_t tid, int sig);

static long real_tgkill_l(long tgid, long tid, long sig)
{
	return IP_REAL(tgkill)((pid_t)tgid, (pid_t)tid, (int)sig);
}

static long real_pthread_kill_l(long thread, long sig, long unused)
{
	(void)unused;
	return IP_REAL(pthread_kill)((pthread_t)thread, (int)sig);
}

REC_EXPORT int tgkill(pid_t tgid, pid_t tid, int sig)
{
	int r, e = errno;

	/* another thread of ours: the call and its event under the lock (kill_thread_logged) */
	if (rec.threads && sig > 0 && tgid == (pid_t)syscall(SYS_getpid) &&
	    tid != (pid_t)syscall(SYS_gettid) &&
	    (r = kill_thread_logged(TRACE_CALL_TGKILL, real_tgkill_l, tgid, tid, sig, tgid, sig, tid,
	                            &e, __builtin_return_address(0), 0)) != -2) {
		errno = e;
		return r;
	}
	r = IP_REAL(tgkill)(tgid, tid, sig);
	e = errno;
	kill_log(TRACE_CALL_TGKILL, r, e, tgid, sig, tid, 0, __builtin_return_address(0));
	errno = e;
	return r;
}

/* raise and pthread_kill: glibc's tgkill, made inside libc with every signal blocked; the
 * signal sent to the caller itself arrives as the mask is put back, a call that completed:
 * deferred, its handler runs after this event, before the call returns, as the program
 * expects (without an event here it ran only after the process's next event). */
REC_EXPORT int raise(int sig)
{
	int r = IP_REAL(raise)(sig), e = errno;

	kill_log(TRACE_CALL_TGKILL, r, e, (pid_t)syscall(SYS_getpid), sig,
	         (pid_t)syscall(SYS_gettid), 0, __builtin_return_address(0));
	errno = e;
	return r;
}

/* pthread_kill returns the error number, errno untouched */
REC_EXPORT int pthread_kill(pthread_t thread, int sig)
{
	int self = pthread_equal(thread, pthread_self()), e = errno, e2 = 0;
	int r;

	/* another thread: the call and its event under the lock (kill_thread_logged) */
	if (!self && sig > 0 &&
	    (r = kill_thread_logged(TRACE_CALL_TGKILL, real_pthread_kill_l, (long)thread, sig, 0,
	                            (pid_t)syscall(SYS_getpid), sig, 0, &e2,
	                            __builtin_return_address(0), 1)) != -2) {
		errno = e;
		return r;
	}
	r = IP_REAL(pthread_kill)(thread, sig);

	kill_log(TRACE_CALL_TGKILL, r ? -1 : 0, r, (pid_t)syscall(SYS_getpid), sig,
	         self ? (pid_t)syscall(SYS_gettid) : 0, 0, __builtin_return_address(0));
	errno = e;
	return r;
}

/* sigprocmask and pthread_sigmask: a pending signal the new mask unblocks is delivered as
 * the call returns, a call that completed: deferred.  POSIX has its handler run before the
 * call returns (CPython's test_signal checks it), so when the thread has deferred handlers
 * after a call that may have unblocked one (a new mask, not SIG_BLOCK) an UNMASK event is
 * logged, after which they run (rec_sig_after_event); otherwise nothing is logged (replay looks for the event: replayer/lc_signals.c). */
void rec_sig_unmask_log(uint32_t call, long a0, void *ra)
{
	struct trace_event ev;

	if (!rec_enter())
		return;
	rec_event_init(&ev, TRACE_EV_UNMASK, call, -1);
	ev.naux = 1;
	ev.aux[0] = a0;
	rec_log(&ev, ra);
	rec_leave();
}

REC_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	int r = IP_REAL(sigprocmask)(how, set, old), e = errno;

	if (__builtin_expect(rec_sig_npend != 0, 0) && r == 0 && set && how != SIG_BLOCK)
		rec_sig_unmask_log(TRACE_CALL_SIGNAL, how, __builtin_return_address(0));
	errno = e;
	return r;
}

REC_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	int r = IP_REAL(pthread_sigmask)(how, set, old), e = errno;

	if (__builtin_expect(rec_sig_npend != 0, 0) && r == 0 && set && how != SIG_BLOCK)
		rec_sig_unmask_log(TRACE_CALL_SIGNAL, how, __builtin_return_address(0));
	errno = e;
	return r;
}

/* getitimer: the value now, logged as setitimer logs the old one (replay arms no timer, so
 * the real getitimer there would say none runs) */
REC_EXPORT int getitimer(__itimer_which_t which, struct itimerval *cur)
{
	int r = IP_REAL(getitimer)(which, cur), e = errno;
	struct trace_event ev;

	if (rec_enter()) {
		int64_t v[4] = { 0 };

		if (r == 0) {
			v[0] = cur->it_interval.tv_sec;
			v[1] = cur->it_interval.tv_usec;
			v[2] = cur->it_value.tv_sec;
			v[3] = cur->it_value.tv_usec;
		}
		rec_event_init(&ev, TRACE_EV_TIMER, TRACE_CALL_GETITIMER, -1);
		ev.result = r;
		ev.err = r < 0 ? e : 0;
		ev.naux = 1;
		ev.aux[0] = which;
		if (r == 0) {
			ev.data = (const uint8_t *)v;
			ev.data_len = sizeof(v);
		}
		rec_log(&ev, __builtin_return_address(0));
		sig_logged = 1;
		rec_leave();
	}
	errno = e;
	return r;
}

/* alarm and setitimer: the timers are armed for real; the old value is logged, as replay
 * gives it back without arming anything (the handler runs come from the trace). */
REC_EXPORT unsigned int alarm(unsigned int secs)
{
	unsigned int r = IP_REAL(alarm)(secs);
	struct trace_event ev;
	int e = errno;

	if (rec_enter()) {
		rec_event_init(&ev, TRACE_EV_TIMER, TRACE_CALL_ALARM, -1);
		ev.result = r;
		rec_log(&ev, __builtin_return_address(0));
		sig_logged = 1;
		rec_leave();
	}
	errno = e;
	return r;
}

REC_EXPORT int setitimer(__itimer_which_t which, const struct itimerval *nv, struct itimerval *ov)
{
	struct itimerval own;
	struct trace_event ev;
	int r, e;

	r = IP_REAL(setitimer)(which, nv, &own);
	e = errno;
	if (r == 0 && ov)
		*ov = own;
	if (rec_enter()) {
		int64_t v[4] = { own.it_interval.tv_sec, own.it_interval.tv_usec,
			         own.it_value.tv_sec, own.it_value.tv_usec };

		rec_event_init(&ev, TRACE_EV_TIMER, TRACE_CALL_SETITIMER, -1);
		ev.result = r;
		ev.err = r < 0 ? e : 0;
		ev.naux = 1;
		ev.aux[0] = which;
		if (r == 0) {
			ev.data = (const uint8_t *)v;
			ev.data_len = sizeof(v);
		}
		rec_log(&ev, __builtin_return_address(0));
		sig_logged = 1;
		rec_leave();
	}
	errno = e;
	return r;
}

/* Sleeps pass through: a handler run while the thread sleeps in one is logged before the
 * next event as for any call (in a system call); replay runs it at the sleep. */
REC_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
	return IP_REAL(nanosleep)(req, rem);
}

REC_EXPORT int clock_nanosleep(clockid_t clk, int flags, const struct timespec *req,
                               struct timespec *rem)
{
	return IP_REAL(clock_nanosleep)(clk, flags, req, rem);
}

REC_EXPORT int usleep(useconds_t usec)
{
	return IP_REAL(usleep)(usec);
}

REC_EXPORT unsigned int sleep(unsigned int secs)
{
	return IP_REAL(sleep)(secs);
}

/* --- signals taken by a wait ----------------------------------------------------------------
 * sigwait, sigwaitinfo and sigtimedwait: a HANDLER event of the call (no handler ran) with
 * the signal taken and its siginfo, as a handler run's, or -1 and errno (a timeout, EINTR);
 * replay gives them back from the trace, and the analyzer orders a recorded sender's kill
 * before the receipt as before a handler run (schemas/trace-format.md, kind 28). */
static void sigwait_log(uint32_t call, int r, int e, const siginfo_t *si, void *ra)
{
	struct trace_event ev;

	if (!rec_enter())
		return;
	rec_event_init(&ev, TRACE_EV_HANDLER, call, -1);
	ev.result = r;
	ev.err = r < 0 ? e : 0;
	if (r > 0) {
		ev.naux = 4;
		ev.aux[0] = si->si_code;
		ev.aux[1] = si->si_pid;
		ev.aux[2] = (int64_t)(uint32_t)si->si_uid |
		            (int64_t)(uint64_t)(uint32_t)(r == SIGCHLD ? si->si_status : 0) << 32;
		ev.aux[3] = r == SIGCHLD ? 0 : (int64_t)(intptr_t)si->si_value.sival_ptr;
	}
	rec_log(&ev, ra);
	sig_logged = 1;
	rec_leave();
}

REC_EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
	siginfo_t own;
	int r, e;

	if (!info)
		info = &own; /* (the sender is logged: the program did not ask, which changes nothing) */
	r = IP_REAL(sigtimedwait)(set, info, timeout);
	e = errno;
	sigwait_log(TRACE_CALL_SIGTIMEDWAIT, r, e, info, __builtin_return_address(0));
	errno = e;
	return r;
}

REC_EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
	siginfo_t own;
	int r, e;

	if (!info)
		info = &own;
	r = IP_REAL(sigwaitinfo)(set, info);
	e = errno;
	sigwait_log(TRACE_CALL_SIGWAITINFO, r, e, info, __builtin_return_address(0));
	errno = e;
	return r;
}

/* glibc's sigwait: sigtimedwait with no timeout until it takes a signal (EINTR retried); the
 * error number returned, not set. */
REC_EXPORT int sigwait(const sigset_t *set, int *sig)
{
	siginfo_t si;
	int r, e;

	do
		r = IP_REAL(sigtimedwait)(set, &si, NULL);
	while (r < 0 && errno == EINTR);
	e = errno;
	sigwait_log(TRACE_CALL_SIGWAIT, r, e, &si, __builtin_return_address(0));
	if (r < 0) {
		errno = e;
		return e;
	}
	*sig = r;
	return 0;
}
