/*
 * pidcalls.c: the recorder's interposers for the calls that take or return a process id
 * (pidfd_open, the wait family; kill, sigqueue and tgkill are in signals.c) and that wait for a signal (sigwait,
 * sigwaitinfo, sigsuspend, pause).  The wait family logs a WAIT event: the child it reaped and
 * the child's status, so that the analyzer orders the child's end before it and the replay
 * gives back the same child (schemas/trace-format.md, kind 23).  The others log nothing: a
 * pid is an attribute.  They are in interpose/calls.def because the replayer must see them:
 * in replay, getpid, getppid and fork give back the recorded pids, and its interposers
 * translate those to the live ones and back (replayer/README.md); the list is one for both.
 */
#include <stdlib.h>
#include <string.h>

#include "rec.h"

#define RA() __builtin_return_address(0)

/* <sys/wait.h> is not included: it declares waitid with idtype_t, which calls.def writes as
 * int; the declarations here follow calls.def. */
int pidfd_open(pid_t pid, unsigned int flags);
pid_t waitpid(pid_t pid, int *status, int options);
pid_t wait(int *status);
pid_t wait3(int *status, int options, struct rusage *ru);
pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru);
int waitid(int idtype, id_t id, siginfo_t *info, int options);

/* glibc 2.36 and later: without it, the call does not exist (ENOSYS, as a missing syscall). */
REC_EXPORT int pidfd_open(pid_t pid, unsigned int flags)
{
	if (!IP_REAL(pidfd_open)) {
		errno = ENOSYS;
		return -1;
	}
	return IP_REAL(pidfd_open)(pid, flags);
}





/* A SIGCHLD handler is installed and SIGCHLD is blocked: the wait is likely made inside that
 * handler, at whatever point of the program the signal came (bash reaps there), which no event
 * can pin down (or around a wait the program shields from its handler, as bash does).  Such a
 * wait is not logged; the replayer applies the same rule at the same call.  Unless the
 * handler is one signals.c holds and the trace has a signal event already: handler runs are
 * events, so the waits a handler makes are pinned down and logged (the replayer sees the same
 * signal events before the wait). */
static int chld_frozen;            /* under a seccomp filter forbidding the query (guard.c) */
static struct sigaction chld_sa;  /* the disposition then: the program cannot change it */

void rec_wait_freeze(void)
{
	chld_frozen = IP_REAL(sigaction)(SIGCHLD, NULL, &chld_sa) == 0;
}

static int chld_handled(void)
{
	struct sigaction sa;
	sigset_t cur;

	if (rec_sig_waits_logged())
		return 0;
	if (chld_frozen)
		sa = chld_sa;
	else if (IP_REAL(sigaction)(SIGCHLD, NULL, &sa) != 0)
		return 0;
	if (ip_sa_dfl_or_ign(&sa))
		return 0;
	return pthread_sigmask(SIG_BLOCK, NULL, &cur) == 0 && sigismember(&cur, SIGCHLD) == 1;
}

/* The WAIT event of a wait that returned r (a child's pid, 0 for none, -1 with errno e):
 * code is the child's si_code (CLD_EXITED...; 0 with no child). */
static void wait_log(uint32_t call, pid_t r, int e, int status, int code, void *ra)
{
	struct trace_event ev;

	if (!rec.w)
		return;
	if (chld_handled()) {
		if (__builtin_expect(rec_sig_npend != 0, 0))
			rec_sig_flush_late(); /* no event for them to follow (signals.c) */
		return;
	}
	if (!rec_enter())
		return;
	rec_event_init(&ev, TRACE_EV_WAIT, call, -1);
	ev.result = r;
	ev.err = r < 0 ? e : 0;
	if (r > 0) {
		ev.naux = 2;
		ev.aux[0] = status;
		ev.aux[1] = code;
	}
	rec_log(&ev, ra);
	rec_leave();
}

/* waitpid's status as waitid's si_code (<bits/waitstatus.h> through <stdlib.h>). */
static int status_code(int status)
{
	if (WIFEXITED(status))
		return CLD_EXITED;
	if (WIFSIGNALED(status))
		return status & 0x80 ? CLD_DUMPED : CLD_KILLED; /* WCOREDUMP */
	if (WIFSTOPPED(status))
		return CLD_STOPPED;
	return CLD_CONTINUED;
}

REC_EXPORT int waitid(int idtype, id_t id, siginfo_t *info, int options)
{
	siginfo_t own;
	int r, e;

	/* (the child is logged even when the program passes no siginfo) */
	if (!info) {
		memset(&own, 0, sizeof(own));
		info = &own;
	}
	r = IP_REAL(waitid)(idtype, id, info, options);
	e = errno;
	if (r == 0)
		wait_log(TRACE_CALL_WAITID, info->si_pid, 0, info->si_status,
		         info->si_pid > 0 ? info->si_code : 0, RA());
	else
		wait_log(TRACE_CALL_WAITID, -1, e, 0, 0, RA());
	errno = e;
	return r;
}

/* The SIGNAL_WAIT and WAIT shapes' handlers (interpose/calls.def): sigwait, sigwaitinfo,
 * sigsuspend, pause, waitpid, wait, wait3 and wait4 are generated (rec_wrappers.h, below).
 * The first pass through; a wait logs the child and its status (STATUS: the program's
 * pointer, perhaps NULL: then a status of our own is asked for, which changes nothing). */
#define REC_SHAPE_SIGNAL_WAIT(nm, wh, call, INFO, realcall) return realcall
#define REC_SHAPE_WAIT(nm, wh, call, PIDP, OPT, STATUS, RU, realcall) \
	int st_ = 0, *sp_ = (STATUS); \
	pid_t r_; \
	int e_; \
	if (!sp_) \
		status = &st_; \
	r_ = realcall; \
	e_ = errno; \
	if (__builtin_expect(rec.threads, 0) && r_ > 0) \
		rec_sends_settle(); /* a child's end our sends caused (rec.h) */ \
	status = sp_; \
	wait_log(call, r_, e_, r_ > 0 ? (sp_ ? *sp_ : st_) : 0, \
	         r_ > 0 ? status_code(sp_ ? *sp_ : st_) : 0, RA()); \
	errno = e_; \
	return r_

#include "rec_wrappers.h"
