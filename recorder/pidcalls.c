/*
 * pidcalls.c: the recorder's pass-through interposers for the calls that take or return a
 * process id (kill, sigqueue, tgkill, pidfd_open, the wait family) and that wait for a signal
 * (sigwait, sigwaitinfo, sigsuspend, pause).  They log nothing: a pid is an attribute, and a
 * wait is not an event.  They are in interpose/calls.def because the replayer must see them: in
 * replay, getpid, getppid and fork give back the recorded pids, and its interposers
 * translate those to the live ones and back (replayer/README.md); the list is one for both.
 */
#include "rec.h"

/* <sys/wait.h> is not included: it declares waitid with idtype_t, which calls.def writes as
 * int; the declarations here follow calls.def. */
int tgkill(pid_t tgid, pid_t tid, int sig);
int pidfd_open(pid_t pid, unsigned int flags);
pid_t waitpid(pid_t pid, int *status, int options);
pid_t wait(int *status);
pid_t wait3(int *status, int options, struct rusage *ru);
pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru);
int waitid(int idtype, id_t id, siginfo_t *info, int options);

REC_EXPORT int kill(pid_t pid, int sig)
{
	return IP_REAL(kill)(pid, sig);
}

REC_EXPORT int sigqueue(pid_t pid, int sig, const union sigval val)
{
	return IP_REAL(sigqueue)(pid, sig, val);
}

REC_EXPORT int tgkill(pid_t tgid, pid_t tid, int sig)
{
	return IP_REAL(tgkill)(tgid, tid, sig);
}

/* glibc 2.36 and later: without it, the call does not exist (ENOSYS, as a missing syscall). */
REC_EXPORT int pidfd_open(pid_t pid, unsigned int flags)
{
	if (!IP_REAL(pidfd_open)) {
		errno = ENOSYS;
		return -1;
	}
	return IP_REAL(pidfd_open)(pid, flags);
}





REC_EXPORT int waitid(int idtype, id_t id, siginfo_t *info, int options)
{
	return IP_REAL(waitid)(idtype, id, info, options);
}

/* The SIGNAL_WAIT and WAIT shapes' handlers (interpose/calls.def): sigwait, sigwaitinfo,
 * sigsuspend, pause, waitpid, wait, wait3 and wait4 are generated (rec_wrappers.h, below), and
 * pass through. */
#define REC_SHAPE_SIGNAL_WAIT(nm, wh, call, INFO, realcall) return realcall
#define REC_SHAPE_WAIT(nm, wh, call, PIDP, OPT, realcall) return realcall

#include "rec_wrappers.h"
