/*
 * lc_signals.c: asynchronous signals in replay.  The recorder logged where each handler of
 * the program ran, as a HANDLER event before the event it preceded (recorder/signals.c); the
 * controller runs the handler there, with the recorded siginfo and the program's mask, and
 * real asynchronous signals do not run the program's handlers: the kernel sees our
 * trampoline, which drops them (a signal a replayed process sends is still sent, and kills a
 * target whose disposition is the default, as recorded).  Timers are not armed: alarm and
 * setitimer give back their recorded old values.  A signal taken by sigwait, sigwaitinfo or
 * sigtimedwait is given back from the trace (its HANDLER event of that call).
 * replayer/README.md, "Signals".
 *
 * Traces without signal events (older recorders) keep the old behaviour: real signals run
 * the program's handlers where they arrive, and the timers are armed for real.
 */
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <ucontext.h>

#include "lc.h"

static struct sigaction prog[65];
static uint64_t held; /* bit s - 1: the program's handler of s is in prog[s] */

static uint64_t bit(int sig)
{
	return 1ull << (sig - 1);
}

static int sync_sig(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL ||
	       sig == SIGTRAP || sig == SIGSYS || sig == SIGPIPE;
}

/* The trace of this image has signal events (a recorder that logs them): its handler runs
 * come from it.  Decided once per image (the events are in memory). */
static uint64_t scanned; /* lc.loads when scanned (0: never) */
static int from_trace;

static int trace_signals(void)
{
	if (scanned != lc.loads) {
		uint64_t i;

		from_trace = 0;
		for (i = 0; lc.ev && i < lc.nev - lc.base && !from_trace; i++) {
			uint32_t k = lc.ev[i].kind;

			from_trace = k == TRACE_EV_HANDLER || k == TRACE_EV_KILL || k == TRACE_EV_TIMER;
		}
		scanned = lc.loads;
	}
	return from_trace;
}

static void call_handler(const struct sigaction *a, int sig, siginfo_t *si, void *uc)
{
	if (a->sa_flags & SA_SIGINFO)
		a->sa_sigaction(sig, si, uc);
	else
		a->sa_handler(sig);
}

/* Signals another process sent (kill, sigqueue, tgkill), arrived and not yet matched with
 * a handler run of the trace. */
static volatile uint32_t arrived[65];

static void trampoline(int sig, siginfo_t *si, void *uc)
{
	struct sigaction a = prog[sig];
	int e = errno;

	if (lc.active && !lc.done && trace_signals()) {
		/* the trace says where the handler runs: not here; a signal a process sent is
		 * counted, as its handler run waits for it (run_due) */
		if (si && si->si_code <= 0 && si->si_pid > 0)
			__atomic_fetch_add(&arrived[sig], 1, __ATOMIC_RELAXED);
		errno = e;
		return;
	}
	if (a.sa_flags & SA_RESETHAND) {
		__atomic_fetch_and(&held, ~bit(sig), __ATOMIC_RELAXED);
		memset(&prog[sig], 0, sizeof(prog[sig]));
	}
	if (!ip_sa_dfl_or_ign(&a))
		call_handler(&a, sig, si, uc);
	errno = e;
}

/* The siginfo a HANDLER event (or a signal taken by a wait) recorded: si_code, si_pid,
 * si_uid (si_status in its high half for SIGCHLD), si_value (recorder/README.md, "Signals"). */
static void recorded_siginfo(const struct lc_ev *ev, int sig, siginfo_t *si)
{
	memset(si, 0, sizeof(*si));
	si->si_signo = sig;
	si->si_code = ev->naux > 0 ? (int)ev->aux[0] : SI_USER;
	si->si_pid = ev->naux > 1 ? (pid_t)ev->aux[1] : 0;
	si->si_uid = ev->naux > 2 ? (uid_t)(uint32_t)ev->aux[2] : 0;
	if (sig == SIGCHLD)
		si->si_status = ev->naux > 2 ? (int)(ev->aux[2] >> 32) : 0;
	else if (ev->naux > 3)
		si->si_value.sival_ptr = (void *)(intptr_t)ev->aux[3];
}

/* The next event, as lc_peek() without running due handlers (lc.c runs them from there). */
static const struct lc_ev *peek_raw(void)
{
	return lc.pos < lc.nev ? &lc.ev[lc.pos - lc.base] : NULL;
}

/* A handler run of a signal another recorded process sent waits until that process has sent
 * it in the replay too (its kill is made for real, translated): the run follows the kill, as
 * the analyzer's signal edge says, and as receives wait for their bytes.  Not for a signal a
 * process sent itself (its kill comes after the run in the trace: the kernel ran the handler
 * inside the call), from outside the session, or from the kernel.  A sender that ended or
 * halted without sending it does not hold the run (signals merged when recorded and not
 * now, or the other way round). */
static void wait_sender(int sig, int code, pid_t rec, int take)
{
	uint64_t m = bit(sig), old;
	pid_t live;
	int gone = 0;

	if (code > 0 || rec <= 0 || (live = lc_pid_live(rec, &gone)) <= 0)
		return;
	if (live == (pid_t)syscall(SYS_getpid)) { /* (sent to itself: made already, or later) */
		if (__atomic_load_n(&arrived[sig], __ATOMIC_RELAXED) > 0)
			__atomic_fetch_sub(&arrived[sig], 1, __ATOMIC_RELAXED);
		if (take) { /* (a wait takes it: blocked, it is pending now) */
			struct timespec z = { 0, 0 };
			siginfo_t si;

			syscall(SYS_rt_sigtimedwait, &m, &si, &z, sizeof(m));
		}
		return;
	}
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &m, &old, sizeof(m));
	lc_wait_state(TRACE_EV_SIGNAL, -1, 0, 0);
	while (__atomic_load_n(&arrived[sig], __ATOMIC_RELAXED) == 0) {
		struct timespec t = { 0, 100000000 };
		siginfo_t si;

		/* (sigtimedwait takes the signal without running our trampoline) */
		if (syscall(SYS_rt_sigtimedwait, &m, &si, &t, sizeof(m)) == sig) {
			if (si.si_code <= 0 && si.si_pid > 0)
				break;
			continue;
		}
		if (lc_pid_live(rec, &gone) <= 0 || gone)
			break;
	}
	if (__atomic_load_n(&arrived[sig], __ATOMIC_RELAXED) > 0)
		__atomic_fetch_sub(&arrived[sig], 1, __ATOMIC_RELAXED);
	lc_wait_state(0, -1, 0, 0);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old));
}

/* Run the HANDLER events next in the trace (lc_expect and lc_peek call this when one is next,
 * and so do sigsuspend and pause): each is committed, then the program's handler runs as the
 * kernel would have run it, with the recorded siginfo, under the program's mask.  after:
 * lc_commit's, which runs only the deferred runs (TRACE_FL_AFTER, TRACE_FL_LATE). */
static void run_due(int after)
{
	const struct lc_ev *ev;

	/* (lc_peek_now: with threads, only the runs this thread made when recorded) */
	while (lc_on() && (ev = lc_peek_now()) && ev->kind == TRACE_EV_HANDLER &&
	       ev->call == TRACE_CALL_HANDLER && (!after || (ev->flags & (TRACE_FL_AFTER | TRACE_FL_LATE)))) {
		int sig = (int)ev->result;
		struct sigaction a;
		uint64_t m, old;
		siginfo_t si;
		ucontext_t uc;

		lc_halt_if_due();
		ev = peek_raw();
		/* online: a signal another recorded process sent is run once the sender has sent
		 * it (the analyzer's signal edge; the GD pulls the sender) */
		if (ev->naux > 1 && ev->aux[1] > 0 && sig != SIGCHLD && lc.online) {
			lc_request(lc.pos + 1);
			ev = peek_raw();
			if (!ev || ev->kind != TRACE_EV_HANDLER)
				break;
		}
		if (sig <= 0 || sig >= 65 || !(held & bit(sig)))
			lc_diverge("the recorded process ran its handler of signal %d here, but the "
			           "process has no handler for it", sig);
		a = prog[sig];
		recorded_siginfo(ev, sig, &si);
		wait_sender(sig, si.si_code, si.si_pid, 0);
		lc_commit();
		/* a child's end: it has ended in the replay too before its handler runs (the
		 * handler reaps it, as recorded) */
		if (sig == SIGCHLD &&
		    (si.si_code == CLD_EXITED || si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED))
			lc_pid_wait_ended(si.si_pid);
		if (a.sa_flags & SA_RESETHAND) {
			__atomic_fetch_and(&held, ~bit(sig), __ATOMIC_RELAXED);
			memset(&prog[sig], 0, sizeof(prog[sig]));
			IP_REAL(signal)(sig, SIG_DFL);
		}
		memcpy(&m, &a.sa_mask, sizeof(m));
		if (!(a.sa_flags & SA_NODEFER))
			m |= bit(sig);
		syscall(SYS_rt_sigprocmask, SIG_BLOCK, &m, &old, sizeof(m));
		memset(&uc, 0, sizeof(uc));
		memcpy(&uc.uc_sigmask, &old, sizeof(old));
		call_handler(&a, sig, &si, &uc);
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old));
	}
}

/* The process died here of an asynchronous signal with the default action (a shell's or a
 * peer's SIGTERM, Ctrl-C): it dies of it now, raised by the controller (the sender may be
 * outside, and a recorded sender's kill may come later: it is given its recorded result).
 * Synchronous signals (a fault, SIGPIPE, abort) are the program's own doing: not here. */
static void die_as_recorded(const struct lc_ev *ev)
{
	int sig = (int)ev->result;
	struct sigaction sa;
	uint64_t m;

	if (ev->naux < 1 || ev->aux[0] != 1 || sig <= 0 || sig >= 65 || sync_sig(sig) ||
	    sig == SIGABRT || !lc_on())
		return;
	lc_halt_if_due();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	IP_REAL(sigaction)(sig, &sa, NULL);
	m = bit(sig);
	syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &m, NULL, sizeof(m));
	syscall(SYS_tgkill, syscall(SYS_getpid), syscall(SYS_gettid), sig);
	m = 0;
	for (;;)
		syscall(SYS_rt_sigsuspend, &m, sizeof(m));
}

/* The signal the recorded process died of, left at its default action by the program (the
 * trace's last event is a fatal SIGNAL): caught by the LC while the program leaves it so, so
 * that a replayed sender that gets there first (a shell's `kill`, replayed as soon as the
 * shell reaches it) does not end the process before its recorded death point, where
 * die_as_recorded raises it again under the default action.  The program sees the default
 * action (sigaction, below); an action it sets ends the catch.  0: none. */
static int fatal_sig;

static void fatal_catch(int sig)
{
	(void)sig; /* (the death comes at its recorded point; an outlived signal is dropped) */
}

/* Signals the recorded process outlived: asynchronous ones whose default action ends a
 * process, left at it by the program, and not the one the process died of, in a trace that
 * ends cleanly (an exit, an exec).  Had one come while the recorded process ran, it would
 * have died of it: it came after its end, or never.  In replay it may come before (a
 * replayed sender that runs ahead: Python's Pool terminates its workers with SIGTERM at the
 * end, one of which had exited already when recorded and is still finishing its last events
 * in replay, where it died of it, "the replay ended early"), so the LC catches and drops it
 * while the program leaves the default action, as for the fatal signal above. */
static const int outlivable[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM };
static uint64_t outlived;

static int caught(int sig)
{
	return sig > 0 && sig < 65 && ((fatal_sig && sig == fatal_sig) || (outlived & bit(sig)));
}

/* A fork's child inherits the catches: its own trace decides anew. */
static void disarm_outlived(void)
{
	struct sigaction cur, k;

	for (size_t i = 0; i < sizeof(outlivable) / sizeof(outlivable[0]); i++) {
		int sig = outlivable[i];

		if (!(outlived & bit(sig)))
			continue;
		memset(&k, 0, sizeof(k));
		k.sa_handler = SIG_DFL;
		if (IP_REAL(sigaction)(sig, NULL, &cur) == 0 && cur.sa_handler == fatal_catch)
			IP_REAL(sigaction)(sig, &k, NULL);
	}
	outlived = 0;
}

static void arm_outlived(void)
{
	const struct lc_ev *last;
	struct sigaction cur, k;

	if (!lc.ev || lc.nev <= lc.base)
		return;
	last = &lc.ev[lc.nev - lc.base - 1];
	if (last->kind != TRACE_EV_EXIT && last->kind != TRACE_EV_EXEC)
		return; /* (cut short, or died of a signal: the fatal one is caught above) */
	for (size_t i = 0; i < sizeof(outlivable) / sizeof(outlivable[0]); i++) {
		int sig = outlivable[i];

		if (sig == fatal_sig || (lc.slot && sig == lc.slot->fatal_sig) || (held & bit(sig)) ||
		    IP_REAL(sigaction)(sig, NULL, &cur) != 0 || !ip_sa_dfl(&cur))
			continue;
		memset(&k, 0, sizeof(k));
		k.sa_handler = fatal_catch;
		sigemptyset(&k.sa_mask);
		k.sa_flags = SA_RESTART;
		if (IP_REAL(sigaction)(sig, &k, NULL) == 0)
			outlived |= bit(sig);
	}
}

void lc_signal_arm_fatal(void)
{
	const struct lc_ev *last;
	struct sigaction cur, k;
	int sig;

	if (fatal_sig) {
		/* a fork's child inherits the catch: its own trace decides anew */
		memset(&k, 0, sizeof(k));
		k.sa_handler = SIG_DFL;
		if (IP_REAL(sigaction)(fatal_sig, NULL, &cur) == 0 && cur.sa_handler == fatal_catch)
			IP_REAL(sigaction)(fatal_sig, &k, NULL);
		fatal_sig = 0;
	}
	disarm_outlived();
	/* the process's fate, which the GD read from its last image (a kill may come before
	 * the exec that starts it); else this image's last event */
	sig = lc.slot ? lc.slot->fatal_sig : 0;
	if (!sig && lc.ev && lc.nev > lc.base) {
		last = &lc.ev[lc.nev - lc.base - 1];
		if (last->kind == TRACE_EV_SIGNAL && last->naux >= 1 && last->aux[0] == 1)
			sig = (int)last->result;
	}
	if (sig > 0 && sig < 65 && !sync_sig(sig) && sig != SIGKILL && sig != SIGSTOP &&
	    sig != SIGABRT && !(held & bit(sig)) && IP_REAL(sigaction)(sig, NULL, &cur) == 0 &&
	    ip_sa_dfl(&cur)) {
		memset(&k, 0, sizeof(k));
		k.sa_handler = fatal_catch;
		sigemptyset(&k.sa_mask);
		k.sa_flags = SA_RESTART;
		if (IP_REAL(sigaction)(sig, &k, NULL) == 0)
			fatal_sig = sig;
	}
	arm_outlived();
}

void lc_signal_run(void)
{
	const struct lc_ev *ev = peek_raw();

	if (ev && ev->kind == TRACE_EV_SIGNAL) {
		die_as_recorded(ev);
		return;
	}
	run_due(0);
}

/* lc_commit, with a HANDLER event next: the handlers the recorder ran at the end of the call
 * just committed (deferred: TRACE_FL_AFTER), or where the program computed after it
 * (TRACE_FL_LATE: inexact, replayer/README.md, "Signals"), run now, before the call returns.
 * Not after a HANDLER event itself (the recorder never delivers there: the run that follows
 * is its own, in order, run_due's loop). */
void lc_signal_after(void)
{
	const struct lc_ev *ev = peek_raw(), *prev;

	if (!ev || lc.pos <= lc.base || !lc_on())
		return;
	prev = &lc.ev[lc.pos - lc.base - 1];
	if (prev->kind == TRACE_EV_HANDLER || !(ev->flags & (TRACE_FL_AFTER | TRACE_FL_LATE)))
		return;
	run_due(1);
}

/* The program's handler of sig is held here and this image's trace has a signal event before
 * the next event that is no handler run: the recorder logged the waits its SIGCHLD handler
 * made from then on (lc_pids.c's rule, recorder/signals.c's rec_sig_waits_logged). */
int lc_signal_held_logged(int sig)
{
	uint64_t i;

	if (sig <= 0 || sig >= 65 || !(held & bit(sig)) || !lc.active || !trace_signals())
		return 0;
	for (i = lc.base; i < lc.nev; i++) {
		uint32_t k = lc.ev[i - lc.base].kind;

		if (k == TRACE_EV_HANDLER || k == TRACE_EV_KILL || k == TRACE_EV_TIMER)
			return 1;
		if (i >= lc.pos)
			return 0; /* (past the handler runs due now: none before this call) */
	}
	return 0;
}

/* sigsuspend and pause: a handler run recorded next is what ended the wait. */
int lc_signal_wait_due(void)
{
	const struct lc_ev *ev;

	if (!lc_on() || !(ev = lc_peek_now()))
		return 0;
	if (ev->kind == TRACE_EV_SIGNAL && fatal_sig) {
		/* the wait ended in the death recorded next: the signal came already (caught, or
		 * still to come): it ends here */
		lc_signal_run();
		return 0;
	}
	if (ev->kind != TRACE_EV_HANDLER || ev->call != TRACE_CALL_HANDLER)
		return 0;
	lc_signal_run();
	return 1;
}

/* --- the program's actions ------------------------------------------------------------------- */

static int holdable(int sig, const struct sigaction *act)
{
	if (sig <= 0 || sig >= 65 || sync_sig(sig) || sig == SIGKILL || sig == SIGSTOP)
		return 0;
	return !ip_sa_dfl_or_ign(act);
}

LC_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int was = sig > 0 && sig < 65 && (held & bit(sig)), r, e;
	struct sigaction prev, k;

	if (__builtin_expect(fatal_sig != 0 || outlived != 0, 0) && caught(sig) && !lc_internal()) {
		/* the program sees the default action it left; setting one ends the catch */
		if (act) {
			if (sig == fatal_sig)
				fatal_sig = 0;
			outlived &= ~bit(sig);
			memset(&k, 0, sizeof(k));
			k.sa_handler = SIG_DFL;
			IP_REAL(sigaction)(sig, &k, NULL);
		} else {
			if (old) {
				memset(old, 0, sizeof(*old));
				old->sa_handler = SIG_DFL;
			}
			return 0;
		}
	}

	if (was)
		prev = prog[sig];
	if (act && holdable(sig, act) && !lc_internal()) {
		k = *act;
		k.sa_sigaction = trampoline;
		k.sa_flags |= SA_SIGINFO;
		if (lc.active && trace_signals())
			k.sa_flags |= SA_RESTART; /* the trampoline runs nothing: no EINTR for it */
		prog[sig] = *act;
		__atomic_fetch_or(&held, bit(sig), __ATOMIC_RELAXED);
		r = IP_REAL(sigaction)(sig, &k, old);
	} else {
		r = IP_REAL(sigaction)(sig, act, old);
		if (r == 0 && act && sig > 0 && sig < 65)
			__atomic_fetch_and(&held, ~bit(sig), __ATOMIC_RELAXED);
	}
	e = errno;
	if (r != 0 && act && was) {
		prog[sig] = prev;
		__atomic_fetch_or(&held, bit(sig), __ATOMIC_RELAXED);
	} else if (r != 0 && act && sig > 0 && sig < 65) {
		__atomic_fetch_and(&held, ~bit(sig), __ATOMIC_RELAXED);
	}
	if (r == 0 && old && was)
		*old = prev;
	errno = e;
	return r;
}

/* glibc's BSD semantics, as the recorder's signal(). */
LC_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sig > 0 && sig < 65)
		sigaddset(&sa.sa_mask, sig);
	if (sigaction(sig, &sa, &old) != 0)
		return SIG_ERR;
	return (old.sa_flags & SA_SIGINFO) ? (sighandler_t)(void (*)(void))old.sa_sigaction
	                                   : old.sa_handler;
}

/* --- timers ---------------------------------------------------------------------------------- */

/* The TIMER event of this call when the trace has one next (else NULL: arm for real). */
static const struct lc_ev *timer_next(const char *what)
{
	const struct lc_ev *ev;

	if (!lc_on() || !(ev = peek_raw()) ||
	    (ev->kind != TRACE_EV_TIMER && ev->kind != TRACE_EV_HANDLER))
		return NULL;
	return lc_expect(TRACE_EV_TIMER, -1, what);
}

LC_EXPORT unsigned int alarm(unsigned int secs)
{
	const struct lc_ev *ev = timer_next("alarm");
	unsigned int r;

	if (!ev)
		return IP_REAL(alarm)(secs);
	r = (unsigned int)ev->result;
	lc_commit();
	return r;
}

/* getitimer: the recorded value (no timer is armed in replay) */
LC_EXPORT int getitimer(__itimer_which_t which, struct itimerval *cur)
{
	const struct lc_ev *ev = timer_next("getitimer");
	int64_t v[4];

	if (!ev)
		return IP_REAL(getitimer)(which, cur);
	if (ev->result < 0) {
		int e = ev->err;

		lc_commit();
		errno = e;
		return -1;
	}
	if (ev->data_len != sizeof(v))
		lc_diverge("getitimer: the recorded value is damaged");
	memcpy(v, lc.data + ev->data_off, sizeof(v));
	cur->it_interval.tv_sec = v[0];
	cur->it_interval.tv_usec = v[1];
	cur->it_value.tv_sec = v[2];
	cur->it_value.tv_usec = v[3];
	lc_commit();
	return 0;
}

LC_EXPORT int setitimer(__itimer_which_t which, const struct itimerval *nv, struct itimerval *ov)
{
	const struct lc_ev *ev = timer_next("setitimer");
	int64_t v[4];

	if (!ev)
		return IP_REAL(setitimer)(which, nv, ov);
	if (ev->result < 0) {
		int e = ev->err;

		lc_commit();
		errno = e;
		return -1;
	}
	if (ov && ev->data_len == sizeof(v)) {
		memcpy(v, lc.data + ev->data_off, sizeof(v));
		ov->it_interval.tv_sec = v[0];
		ov->it_interval.tv_usec = v[1];
		ov->it_value.tv_sec = v[2];
		ov->it_value.tv_usec = v[3];
	}
	lc_commit();
	return 0;
}

/* A handler run recorded next (in-call) of a signal the calling thread blocks now: it could
 * not have run at this call when recorded, but at a later one that let the signal in (make
 * blocks SIGCHLD and opens it only in pselect).  A sleep, a stdio write or a wait that is no
 * event peeking at it must not run it there (lc_peek would), but leave it to that call. */
int lc_signal_due_blocked(void)
{
	const struct lc_ev *ev = peek_raw();
	sigset_t cur;

	return ev && ev->kind == TRACE_EV_HANDLER && ev->call == TRACE_CALL_HANDLER &&
	       !(ev->flags & (TRACE_FL_AFTER | TRACE_FL_LATE)) && ev->result > 0 && ev->result < 65 &&
	       IP_REAL(syscall)(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &cur, _NSIG / 8) == 0 &&
	       sigismember(&cur, (int)ev->result) == 1;
}

/* --- sleeps ---------------------------------------------------------------------------------- */

/* A handler run recorded next while the process ran no interposed call (in-call, not
 * deferred): it ran while the process slept (rsync's receiver waits for its SIGUSR2 in a
 * loop of 20 ms sleeps): it runs at this sleep, which is cut short by it (EINTR).  Only a
 * run of this thread's: another thread's sleep that ran it too would wait for ever for the
 * signal (memcached's LRU maintainer sleeps while its main thread takes SIGTERM). */
static int sleep_due(void)
{
	const struct lc_ev *ev;

	if (lc.threaded)
		lc_gate_open(); /* the thread sleeps: the others' turns may go on */
	if (!lc_on() || !(ev = lc_peek_now()) || ev->kind != TRACE_EV_HANDLER ||
	    ev->call != TRACE_CALL_HANDLER || (ev->flags & (TRACE_FL_AFTER | TRACE_FL_LATE)) ||
	    lc_signal_due_blocked())
		return 0;
	run_due(0);
	return 1;
}

LC_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
	if (sleep_due()) {
		if (rem && req)
			*rem = *req;
		errno = EINTR;
		return -1;
	}
	return IP_REAL(nanosleep)(req, rem);
}

LC_EXPORT int clock_nanosleep(clockid_t clk, int flags, const struct timespec *req,
                              struct timespec *rem)
{
	if (sleep_due()) {
		if (rem && req && !(flags & TIMER_ABSTIME))
			*rem = *req;
		return EINTR;
	}
	return IP_REAL(clock_nanosleep)(clk, flags, req, rem);
}

LC_EXPORT int usleep(useconds_t usec)
{
	if (sleep_due()) {
		errno = EINTR;
		return -1;
	}
	return IP_REAL(usleep)(usec);
}

LC_EXPORT unsigned int sleep(unsigned int secs)
{
	if (sleep_due())
		return secs;
	return IP_REAL(sleep)(secs);
}

/* --- signals taken by a wait ------------------------------------------------------------------
 * sigwait, sigwaitinfo and sigtimedwait: the recorder logged the signal taken as a HANDLER
 * event of the call (recorder/signals.c).  Replay gives it back with its siginfo once a
 * recorded sender has sent it here too (taking that signal, pending since it is blocked), or
 * at once (the kernel's, a timer's, an outsider's: not sent in replay); a timeout or EINTR
 * is given back as recorded.  Traces without these events: the real wait, as before. */

static int is_wait_call(uint32_t call)
{
	return call == TRACE_CALL_SIGWAIT || call == TRACE_CALL_SIGWAITINFO ||
	       call == TRACE_CALL_SIGTIMEDWAIT;
}

/* A live pid given back by an old trace's real wait, as the recorded one (lc_pids.c's rule,
 * for the session's processes). */
static pid_t to_rec(pid_t live)
{
	for (size_t i = 0; lc.slots && i < REP_SLOTS_MAX; i++)
		if (lc.slots[i].pid == live && lc.slots[i].rec_pid > 0)
			return lc.slots[i].rec_pid;
	return live;
}

/* The receipt recorded for this call, when it is next (the handler runs before it done);
 * NULL: wait for real (not enforcing, halted, or a trace without receipts). */
static const struct lc_ev *sigwait_next(void)
{
	const struct lc_ev *ev;

	if (!lc_on() || lc.done || !(ev = lc_peek()) || ev->kind != TRACE_EV_HANDLER ||
	    !is_wait_call(ev->call))
		return NULL;
	lc_halt_if_due();
	if (!lc_on() || lc.done)
		return NULL;
	ev = peek_raw();
	/* online: a signal another recorded process sent is taken once the sender has sent it
	 * (the analyzer's signal edge, as for handler runs) */
	if (ev->result > 0 && ev->naux > 1 && ev->aux[1] > 0 && lc.online) {
		lc_request(lc.pos + 1);
		if (!lc_on() || lc.done)
			return NULL;
	}
	return peek_raw();
}

/* The recorded receipt next, replayed: the signal (or -1 and errno), info filled as recorded. */
static int sigwait_replay(const char *what, siginfo_t *info)
{
	const struct lc_ev *ev;
	int sig, e;

	ev = lc_expect(TRACE_EV_HANDLER, -1, what);
	if (ev->call == TRACE_CALL_HANDLER)
		lc_diverge("expected a handler run, but the process called %s", what);
	sig = (int)ev->result;
	e = ev->err;
	if (sig > 0 && sig < 65) {
		siginfo_t si;

		recorded_siginfo(ev, sig, &si);
		wait_sender(sig, si.si_code, si.si_pid, 1);
		if (info)
			*info = si;
	}
	lc_commit();
	if (sig <= 0) {
		errno = e;
		return -1;
	}
	return sig;
}

/* The real wait (old traces, or not enforcing); a process at its halt state halts first
 * (the sender may be halted). */
static void real_wait_begin(void)
{
	if (!lc_on())
		return;
	lc_halt_if_due();
	if (!lc.done)
		lc_wait_state(TRACE_EV_SIGNAL, -1, 0, 0);
}

static void real_wait_end(int r, siginfo_t *info)
{
	int e = errno;

	if (lc_on() && !lc.done)
		lc_wait_state(0, -1, 0, 0);
	if (r > 0 && info && info->si_pid > 0)
		info->si_pid = to_rec(info->si_pid);
	errno = e;
}

LC_EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
	const struct lc_ev *ev = sigwait_next();
	int r;

	if (ev)
		return sigwait_replay("sigtimedwait", info);
	real_wait_begin();
	r = IP_REAL(sigtimedwait)(set, info, timeout);
	real_wait_end(r, info);
	return r;
}

LC_EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
	const struct lc_ev *ev = sigwait_next();
	int r;

	if (ev)
		return sigwait_replay("sigwaitinfo", info);
	real_wait_begin();
	r = IP_REAL(sigwaitinfo)(set, info);
	real_wait_end(r, info);
	return r;
}

LC_EXPORT int sigwait(const sigset_t *set, int *sig)
{
	const struct lc_ev *ev = sigwait_next();
	int r;

	if (ev) {
		r = sigwait_replay("sigwait", NULL);
		if (r < 0)
			return errno;
		*sig = r;
		return 0;
	}
	real_wait_begin();
	r = IP_REAL(sigwait)(set, sig);
	real_wait_end(0, NULL);
	return r;
}
