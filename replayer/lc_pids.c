/*
 * lc_pids.c: process ids in replay.  getpid and getppid give back the recorded values (they
 * are PID events, external input), and so does fork (the recorded child pid), so that a
 * program prints, stores and compares the pids it had when recorded.  The calls that hand a
 * pid to the kernel or take one from it translate:
 *
 *   kill, sigqueue, tgkill  recorded pid -> live pid (process groups too: -pgid)
 *   pidfd_open              recorded pid -> live pid (ESRCH for none of the session)
 *   the wait family         the recorded child: a WAIT event names the child reaped and
 *                           its status; the LC waits for that child's live pid (whatever
 *                           the pid asked for: waitpid(-1) reaps the recorded child, not
 *                           whichever ends first), then returns the recorded pid and status.
 *                           Traces without WAIT events (older recorders): the pid asked for,
 *                           recorded -> live; the pid returned (or si_pid), live -> recorded
 *   sigwaitinfo             si_pid, live -> recorded
 *   fcntl F_SETOWN(_EX)     the owner, recorded -> live (-pgid too); F_GETOWN(_EX) back
 *
 * The map: the children this process forked (kept here at fork: the child may not have
 * reached its LC yet), then the status board, where the GD wrote every process's recorded
 * pid and, at its HELLO, its live one.  A pid that is no process of the session (the
 * recorder's parent of a root, a process outside the session) is not signalled: the outside
 * world is not touched, and kill says it succeeded; waiting for one gives ECHILD.
 * kill(-1, ...) (every process the user may signal) is not sent either.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "lc.h"

#define LC_KIDS_MAX 1024

/* Translating: in a replayed process, also once it runs free past the end of a trace cut
 * short by SIGKILL (its pids are still the recorded ones), not inside the LC itself. */
static int on(void)
{
	return (lc.active || lc.done) && lc.slots && !lc_internal();
}

static struct {
	pid_t rec, live;
} kids[LC_KIDS_MAX];
static size_t nkids;

void lc_pid_child(pid_t rec, pid_t live)
{
	if (rec <= 0 || live <= 0)
		return;
	for (size_t i = 0; i < nkids; i++)
		if (kids[i].rec == rec) {
			kids[i].live = live;
			return;
		}
	if (nkids < LC_KIDS_MAX) {
		kids[nkids].rec = rec;
		kids[nkids].live = live;
		nkids++;
	}
}

/* Across exec: "REC:LIVE,..." of the children forked so far (the new image waits for them). */
size_t lc_pids_text(char *out, size_t cap)
{
	size_t pos = 0;

	out[0] = '\0';
	for (size_t i = 0; i < nkids && pos + 32 < cap; i++)
		pos += (size_t)snprintf(out + pos, cap - pos, "%s%d:%d", i ? "," : "",
		                        (int)kids[i].rec, (int)kids[i].live);
	return pos;
}

void lc_pids_parse(const char *text, const char *end)
{
	while (text < end) {
		int rec, live, used = 0;

		if (sscanf(text, "%d:%d%n", &rec, &live, &used) != 2 || used <= 0)
			return;
		lc_pid_child(rec, live);
		text += used;
		if (*text == ',')
			text++;
	}
}

void lc_pids_reset(void)
{
	nkids = 0; /* a new child: its parent's children are not its own */
}

/* The live pid of recorded pid `rec`; 0 when it is no process of the session (yet). */
static pid_t to_live(pid_t rec)
{
	for (size_t i = 0; i < nkids; i++)
		if (kids[i].rec == rec)
			return kids[i].live;
	for (size_t i = 0; lc.slots && i < REP_SLOTS_MAX; i++)
		if (lc.slots[i].rec_pid == rec && lc.slots[i].pid > 0)
			return lc.slots[i].pid;
	return 0;
}

/* Whether recorded pid `rec` is a process of the session (started or not). */
static int rec_of_session(pid_t rec)
{
	for (size_t i = 0; lc.slots && i < REP_SLOTS_MAX; i++)
		if (lc.slots[i].rec_pid == rec)
			return 1;
	return 0;
}

/* The recorded pid of live pid `live`; itself when unknown. */
static pid_t to_rec(pid_t live)
{
	for (size_t i = 0; i < nkids; i++)
		if (kids[i].live == live)
			return kids[i].rec;
	for (size_t i = 0; lc.slots && i < REP_SLOTS_MAX; i++)
		if (lc.slots[i].pid == live && lc.slots[i].rec_pid > 0)
			return lc.slots[i].rec_pid;
	return live;
}

/* A pid argument of the wait family: -1 and 0 as they are; a recorded pid (or -pgid) to the
 * live one; an unknown one to a pid that cannot be a child (ECHILD). */
static pid_t wait_arg(pid_t pid)
{
	pid_t live;

	if (pid == -1 || pid == 0 || pid == INT_MIN)
		return pid;
	live = to_live(pid < 0 ? -pid : pid);
	if (!live)
		return pid < 0 ? pid : INT_MAX;
	return pid < 0 ? -live : live;
}

/* Blocking in a wait: a process at its halt state halts here, before it blocks (its children
 * may be halted too); the board says what it waits for (a halted child would hold it). */
static void wait_begin(int options, pid_t pid)
{
	if (options & WNOHANG)
		return;
	lc_halt_if_due();
	if (!lc.done) /* (the board says DONE of one running free) */
		lc_wait_state(TRACE_EV_EXIT, -1, 0, (uint64_t)(int64_t)pid);
}

static void wait_end(int options)
{
	if (!(options & WNOHANG) && !lc.done)
		lc_wait_state(0, -1, 0, 0);
}

/* A SIGCHLD handler is installed and SIGCHLD is blocked (inside the handler, which may reap at
 * any point of the program): the recorder logged no wait then, nor does the replay expect one
 * (the recorder's rule, at the same call of the same program). */
static int chld_handled(void)
{
	struct sigaction sa;
	sigset_t cur;

	if (lc_signal_held_logged(SIGCHLD))
		return 0; /* (a recorder that logs handler runs logged these waits too) */
	if (IP_REAL(sigaction)(SIGCHLD, NULL, &sa) != 0 || ip_sa_dfl_or_ign(&sa))
		return 0;
	return pthread_sigmask(SIG_BLOCK, NULL, &cur) == 0 && sigismember(&cur, SIGCHLD) == 1;
}

/* The next event is the WAIT this call logged when recorded (NULL: a trace without them, or
 * a process with a SIGCHLD handler). */
static const struct lc_ev *wait_next(void)
{
	const struct lc_ev *ev;

	if (!lc_on() || chld_handled())
		return NULL;
	/* a handler run due of a signal blocked now belongs to a later call (make's pselect),
	 * and so does the WAIT after it: this wait is no event, and must not run it */
	if (!lc.threaded && lc_signal_due_blocked())
		return NULL;
	ev = lc_peek();
	return ev && ev->kind == TRACE_EV_WAIT ? ev : NULL;
}

/* Replay a recorded WAIT: the child it reaped (a recorded pid), once that child has ended in
 * the replay too, whatever pid or options the call asked for; the status is the recorded one
 * (the child's own LC checked its end).  Online, the GD first pulls the child to its end (the
 * analyzer's edge from the child's end to this event).  A failure, no child (WNOHANG) and a
 * stopped or continued child are given back as recorded, without a real call; the real call
 * reaps the live child (waitid with WNOWAIT leaves it waitable, as the program asked).
 * Returns the recorded result; fills *status, *ru (the live child's usage) and *si. */
static pid_t wait_replay(const char *what, int options, int *status, struct rusage *ru,
                         siginfo_t *si)
{
	const struct lc_ev *ev = lc_expect(TRACE_EV_WAIT, -1, what);
	pid_t rec = (pid_t)ev->result, live = 0;
	int code = ev->naux > 1 ? (int)ev->aux[1] : 0, st = ev->naux > 0 ? (int)ev->aux[0] : 0;
	int ended = code == CLD_EXITED || code == CLD_KILLED || code == CLD_DUMPED;

	if (rec < 0) {
		int e = ev->err;

		lc_commit();
		errno = e;
		return -1;
	}
	if (ru)
		memset(ru, 0, sizeof(*ru));
	if (si)
		memset(si, 0, sizeof(*si));
	if (rec > 0 && ended)
		live = to_live(rec);
	/* a child forked inside libc (forkpty, daemon: no pid the parent's LC saw) is known by
	 * its live pid once its LC said hello to the GD: waited for (1 ms steps, at most 10 s),
	 * so that the wait reaps it, not returning before it has even started (forkpty's child
	 * then found its terminal's master closed by the parent: CPython's test_pty).  Only for
	 * an end: a stop or continue seen is given back as recorded, and a real wait for that
	 * child's exit then blocked the parent before the SIGCONT or message that lets it end */
	for (int i = 0; ended && !live && rec > 0 && i < 10000 && rec_of_session(rec); i++) {
		struct timespec ms = { 0, 1000 * 1000 };

		syscall(SYS_nanosleep, &ms, NULL);
		live = to_live(rec);
	}
	if (live > 0) {
		siginfo_t own;
		int r, dummy;

		lc_request(lc.pos + 1);
		lc_wait_state(TRACE_EV_EXIT, -1, 0, (uint64_t)(int64_t)rec);
		do {
			if (options & WNOWAIT)
				r = IP_REAL(waitid)(P_PID, (id_t)live, &own,
				                    WEXITED | WNOWAIT | (options & __WALL));
			else
				r = IP_REAL(wait4)(live, &dummy, options & __WALL, ru);
		} while (r < 0 && errno == EINTR);
		lc_wait_state(0, -1, 0, 0);
	}
	if (status && rec > 0)
		*status = st;
	if (si && rec > 0) {
		si->si_signo = SIGCHLD;
		si->si_pid = rec;
		si->si_status = st;
		si->si_code = code;
	}
	lc_commit();
	return rec;
}

/* fcntl's owner of a descriptor's signals (F_SETOWN, F_SETOWN_EX; lc_chan.c): a pid, or
 * -pgid, recorded -> live; 0 for none of the session (not set: kill's rule) or when not
 * translating (then the caller passes the value through). */
pid_t lc_owner_live(pid_t rec, int *unknown)
{
	pid_t live;

	*unknown = 0;
	if (!on() || rec == 0 || rec == INT_MIN)
		return rec;
	if (!(live = to_live(rec < 0 ? -rec : rec))) {
		*unknown = 1;
		return 0;
	}
	return rec < 0 ? -live : live;
}

/* F_GETOWN's answer, live -> recorded (-pgid too). */
pid_t lc_owner_rec(pid_t live)
{
	if (!on() || live == 0 || live == INT_MIN)
		return live;
	return live < 0 ? -to_rec(-live) : to_rec(live);
}

/* Traces with signal events: the KILL event this call logged (its target and signal are
 * checked); NULL for older traces.  The call is made first, as when recorded: a handler run
 * logged before the KILL event ran after the real call (a SIGCHLD of the child it killed,
 * which the replayed handler waits for); the result is the recorded one (kill_done). */
static const struct lc_ev *kill_next(const char *what, pid_t pid, int sig)
{
	const struct lc_ev *ev;

	if (!lc_on() || !(ev = lc_peek()) ||
	    (ev->kind != TRACE_EV_KILL && ev->kind != TRACE_EV_HANDLER))
		return NULL;
	ev = lc_expect(TRACE_EV_KILL, -1, what);
	if (ev->naux > 1 && (ev->aux[0] != pid || ev->aux[1] != sig))
		lc_diverge("expected %s(%lld, %lld), but the process called %s(%d, %d)", what,
		           (long long)ev->aux[0], (long long)ev->aux[1], what, (int)pid, sig);
	return ev;
}

static int kill_done(const struct lc_ev *ev, int r)
{
	int e;

	if (!ev)
		return r;
	r = (int)ev->result;
	e = ev->err;
	lc_commit();
	if (r < 0)
		errno = e;
	return r;
}

/* A SIGKILL to a process whose recorded trace was cut short by one (the GD marks it on the
 * board, fatal_sig): sent once that process has reached the end of its trace (it runs free
 * there, or ended, halted or diverged), not before.  Sent as soon as the sender gets there,
 * it ended the process before events the recorded one made before its death (its last
 * replies, which a client then missed: "Connection reset by peer").  Nothing the target
 * still has to do waits for the sender: it all came before the kill when recorded. */
static void kill_after_end(pid_t rec, pid_t live)
{
	struct timespec ts = { 0, 1000 * 1000 };

	if (live == (pid_t)syscall(SYS_getpid))
		return; /* the process kills itself (`kill -9 $$`): it is where it died, no wait */

	for (size_t i = 0; lc.slots && i < REP_SLOTS_MAX; i++) {
		volatile struct rep_slot *s = &lc.slots[i];

		if (s->rec_pid != rec || s->pid != live || s->fatal_sig != SIGKILL)
			continue;
		while (s->state < REP_SLOT_HALTED && s->pid == live && IP_REAL(kill)(live, 0) == 0)
			syscall(SYS_nanosleep, &ts, NULL);
		return;
	}
}

/* SIGSTOP, and SIGTSTP, SIGTTIN or SIGTTOU under their default action (stop) in process
 * live, as the kernel sees it (/proc/PID/status: neither ignored nor caught, the LC's
 * trampoline counting as caught); a group (live <= 0: -pgid, or 0 for the caller's) is taken
 * as stopped by them.  The status is read raw (no stdio): kill may be called in a handler. */
static int stops(pid_t live, int sig)
{
	char path[48], buf[4096];
	unsigned long long ign = 0, cgt = 0, b;
	size_t have = 0;
	const char *p;
	long r;
	int fd, e = errno;

	if (sig == SIGSTOP)
		return 1;
	if (sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU)
		return 0;
	if (live <= 0)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)live);
	fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	errno = e; /* (the call's errno is the kill's own) */
	if (fd < 0)
		return 1;
	while (have < sizeof(buf) - 1 &&
	       (r = syscall(SYS_read, fd, buf + have, sizeof(buf) - 1 - have)) > 0)
		have += (size_t)r;
	syscall(SYS_close, fd);
	errno = e;
	buf[have] = '\0';
	if ((p = strstr(buf, "\nSigIgn:")))
		ign = strtoull(p + 8, NULL, 16);
	if ((p = strstr(buf, "\nSigCgt:")))
		cgt = strtoull(p + 8, NULL, 16);
	b = 1ull << (sig - 1);
	return !(ign & b) && !(cgt & b);
}

static int kill_live(pid_t pid, int sig)
{
	pid_t live;

	/* A process of the session is not stopped for real: where a stop caught it when recorded
	 * is in no trace (it runs no handler, logs nothing), and sent where the sender gets there
	 * it froze the target at another point, holding what the others then waited for (an
	 * nginx worker stopped by a shell under ab's load: the replay stalled).  What the stop did
	 * that the replay needs is in the traces: the parent's SIGCHLD handler runs and wait
	 * results, replayed as recorded; the target's events keep their order.  SIGCONT is sent:
	 * harmless to a running process, and it wakes one stopped by a stop signal this filter
	 * let through or by the terminal (a shell's `kill -TSTP $!; kill -CONT $!`). */
	if (on() && pid == 0 && stops(0, sig))
		return 0;
	if (!on() || pid == 0 || pid == INT_MIN)
		return IP_REAL(kill)(pid, sig);
	if (pid == -1)
		return 0;
	if (!(live = to_live(pid < 0 ? -pid : pid)))
		return 0;
	if (stops(pid < 0 ? -live : live, sig))
		return 0;
	if (sig == SIGKILL && pid > 0)
		kill_after_end(pid, live);
	return IP_REAL(kill)(pid < 0 ? -live : live, sig);
}

LC_EXPORT int kill(pid_t pid, int sig)
{
	int r = kill_live(pid, sig);

	return kill_done(kill_next("kill", pid, sig), r);
}

static int sigqueue_live(pid_t pid, int sig, const union sigval val)
{
	pid_t live;

	if (!on() || pid <= 0)
		return IP_REAL(sigqueue)(pid, sig, val);
	if (!(live = to_live(pid)) || stops(live, sig))
		return 0;
	return IP_REAL(sigqueue)(live, sig, val);
}

LC_EXPORT int sigqueue(pid_t pid, int sig, const union sigval val)
{
	int r = sigqueue_live(pid, sig, val);

	return kill_done(kill_next("sigqueue", pid, sig), r);
}

static int tgkill_live(pid_t tgid, pid_t tid, int sig)
{
	pid_t live;

	if (!on() || tgid <= 0)
		return IP_REAL(tgkill)(tgid, tid, sig);
	if (!(live = to_live(tgid)) || stops(live, sig))
		return 0;
	/* single-threaded processes (the replayer's limit): the thread is the process */
	return IP_REAL(tgkill)(live, tid == tgid ? live : tid, sig);
}

LC_EXPORT int tgkill(pid_t tgid, pid_t tid, int sig)
{
	int r = tgkill_live(tgid, tid, sig);

	return kill_done(kill_next("tgkill", tgid, sig), r);
}

/* raise and pthread_kill (the recorder's KILL events of call tgkill): the real call, the
 * signal sent in this replay's process or thread, then the recorded event (its signal
 * checked; its pid is the recorded process's own). */
static const struct lc_ev *raise_next(const char *what, int sig)
{
	const struct lc_ev *ev;

	if (!lc_on() || !(ev = lc_peek()) ||
	    (ev->kind != TRACE_EV_KILL && ev->kind != TRACE_EV_HANDLER))
		return NULL;
	ev = lc_expect(TRACE_EV_KILL, -1, what);
	if (ev->naux > 1 && ev->aux[1] != sig)
		lc_diverge("expected a signal %lld sent, but the process called %s(%d)",
		           (long long)ev->aux[1], what, sig);
	return ev;
}

/* A stop signal the process sends itself is not sent either (kill_live says why). */
static int stops_self(int sig)
{
	return on() && stops((pid_t)syscall(SYS_getpid), sig);
}

LC_EXPORT int raise(int sig)
{
	int r = stops_self(sig) ? 0 : IP_REAL(raise)(sig);

	return kill_done(raise_next("raise", sig), r);
}

LC_EXPORT int pthread_kill(pthread_t thread, int sig)
{
	int r = stops_self(sig) ? 0 : IP_REAL(pthread_kill)(thread, sig), e = errno;
	const struct lc_ev *ev = raise_next("pthread_kill", sig);

	if (ev) {
		r = ev->result < 0 ? ev->err : 0;
		lc_commit();
	}
	errno = e;
	return r;
}

/* sigprocmask and pthread_sigmask: the real call, then the UNMASK event when it is the
 * calling thread's next recorded event (the recorder logs one only when the new mask let a
 * deferred handler in): taken, and the handlers recorded after it run (lc_commit), before
 * the call returns, as recorded. */
void lc_unmask_next(const char *what)
{
	uint32_t self = lc_thread == LC_NO_THREAD ? 0 : lc_thread;

	if (!lc_on())
		return;
	for (uint64_t i = lc.pos; i < lc.nev; i++) {
		const struct lc_ev *ev = &lc.ev[i - lc.base];

		if (lc.threaded && ev->thread != self)
			continue;
		if (ev->kind == TRACE_EV_UNMASK) {
			sigset_t cur;
			int sig = 0;

			/* the signal whose handler ran as the call returned: the HANDLER after it */
			for (uint64_t j = i + 1; j < lc.nev && !sig; j++) {
				const struct lc_ev *h = &lc.ev[j - lc.base];

				if (lc.threaded && h->thread != self)
					continue;
				if (h->kind != TRACE_EV_HANDLER)
					break;
				sig = (int)h->result;
			}
			/* not the call that unblocked it when recorded if this one leaves it blocked
			 * (two masks set in a row, the second unblocking: found in review) */
			if (sig > 0 && sig < 65 && IP_REAL(pthread_sigmask)(SIG_BLOCK, NULL, &cur) == 0 &&
			    sigismember(&cur, sig) == 1)
				return;
			lc_expect(TRACE_EV_UNMASK, -1, what);
			lc_commit();
		}
		return;
	}
}

LC_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	int r = IP_REAL(sigprocmask)(how, set, old), e = errno;

	if (r == 0 && set && how != SIG_BLOCK)
		lc_unmask_next("sigprocmask");
	errno = e;
	return r;
}

LC_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	int r = IP_REAL(pthread_sigmask)(how, set, old), e = errno;

	if (r == 0 && set && how != SIG_BLOCK)
		lc_unmask_next("pthread_sigmask");
	errno = e;
	return r;
}

/* The live pid of recorded pid rec (0: none of the session); *gone: it ended, halted or
 * diverged (the board says so). */
pid_t lc_pid_live(pid_t rec, int *gone)
{
	*gone = 0;
	for (size_t i = 0; lc.slots && i < REP_SLOTS_MAX; i++)
		if (lc.slots[i].rec_pid == rec && lc.slots[i].pid > 0) {
			*gone = lc.slots[i].state >= REP_SLOT_HALTED;
			return lc.slots[i].pid;
		}
	return to_live(rec);
}

/* Before a SIGCHLD handler run replayed from the trace: the recorded child has ended in the
 * replay too (left waitable: the handler reaps it), as it had when the handler ran. */
void lc_pid_wait_ended(pid_t rec)
{
	siginfo_t own;
	pid_t live;
	int r;

	if (rec <= 0 || !(live = to_live(rec)))
		return;
	lc_wait_state(TRACE_EV_EXIT, -1, 0, (uint64_t)(int64_t)rec);
	do
		r = IP_REAL(waitid)(P_PID, (id_t)live, &own, WEXITED | WNOWAIT);
	while (r < 0 && errno == EINTR);
	lc_wait_state(0, -1, 0, 0);
}

int pidfd_open(pid_t pid, unsigned int flags);

/* A descriptor naming the live process (glibc 2.36 and later, else ENOSYS).  Signals sent
 * through it (pidfd_send_signal) and waits on it (waitid P_PIDFD) reach the live process. */
LC_EXPORT int pidfd_open(pid_t pid, unsigned int flags)
{
	pid_t live;

	if (!IP_REAL(pidfd_open)) {
		errno = ENOSYS;
		return -1;
	}
	if (!on() || pid <= 0)
		return IP_REAL(pidfd_open)(pid, flags);
	if (!(live = to_live(pid))) {
		errno = ESRCH; /* no process of the session: none to name */
		return -1;
	}
	return IP_REAL(pidfd_open)(live, flags);
}





LC_EXPORT int waitid(idtype_t idtype, id_t id, siginfo_t *info, int options)
{
	int r, e;

	if (!on())
		return IP_REAL(waitid)((int)idtype, id, info, options);
	if (wait_next()) {
		siginfo_t own;

		r = wait_replay("waitid", options, NULL, NULL, info ? info : &own);
		return r < 0 ? -1 : 0;
	}
	if (idtype == P_PID || idtype == P_PGID) {
		pid_t live = to_live((pid_t)id);

		id = live ? (id_t)live : (id_t)INT_MAX;
	}
	wait_begin(options, idtype == P_ALL ? -1 : (pid_t)id);
	r = IP_REAL(waitid)((int)idtype, id, info, options);
	e = errno;
	wait_end(options);
	if (r == 0 && info && info->si_pid > 0)
		info->si_pid = to_rec(info->si_pid);
	errno = e;
	return r;
}

/* --- waiting for a signal ------------------------------------------------------------------- */

/* Not events; a process at its halt state halts before it blocks (the sender may be halted). */
/* A shell waiting for a child (dash: wait3(WNOHANG) gives 0, then sigsuspend until its
 * SIGCHLD handler ran) may find in replay that the child ended earlier than when recorded:
 * its SIGCHLD was consumed before the WNOHANG wait, which replay answers with the recorded
 * 0, and the sigsuspend would wait for good.  When the next recorded event reaps a child and
 * the program handles SIGCHLD, the controller queues a SIGCHLD to itself: the wait returns,
 * the handler runs, and the program's next wait gets its child (wait_replay blocks until it
 * has ended).  The handler may so run once more than recorded (replayer/README.md). */
static void sigchld_if_reaping_next(void)
{
	const struct lc_ev *ev = lc.done ? NULL : lc_peek();
	struct sigaction sa;

	if (!ev || ev->kind != TRACE_EV_WAIT || ev->result <= 0)
		return;
	if (IP_REAL(sigaction)(SIGCHLD, NULL, &sa) != 0 || ip_sa_dfl_or_ign(&sa))
		return;
	IP_REAL(syscall)(SYS_tgkill, IP_REAL(syscall)(SYS_getpid), IP_REAL(syscall)(SYS_gettid),
	                 SIGCHLD);
}

static void signal_wait_begin(void)
{
	lc_halt_if_due();
	if (!lc.done)
		lc_wait_state(TRACE_EV_SIGNAL, -1, 0, 0);
	sigchld_if_reaping_next();
}

/* sigsuspend and pause, in a trace with handler runs: the one recorded next ended the wait,
 * so it runs here instead of a real wait (the wait's result: -1, EINTR). */
#define SIGNAL_WAIT_DUE(wh) \
	((__builtin_strcmp(wh, "sigsuspend") == 0 || __builtin_strcmp(wh, "pause") == 0) && \
	 lc_signal_wait_due())

/* The SIGNAL_WAIT shape's handler (interpose/calls.def): sigwait, sigwaitinfo, sigsuspend and
 * pause are generated (lc_wrappers.h, below).  INFO: the sender's pid, given back recorded. */
#define LC_SHAPE_SIGNAL_WAIT(nm, wh, call, INFO, realcall) \
	int r_, e_; \
	if (!on()) \
		return realcall; \
	if (SIGNAL_WAIT_DUE(wh)) { \
		errno = EINTR; \
		return -1; \
	} \
	signal_wait_begin(); \
	r_ = realcall; \
	e_ = errno; \
	wait_end(0); \
	if (r_ > 0 && (INFO) && (INFO)->si_pid > 0) \
		(INFO)->si_pid = to_rec((INFO)->si_pid); \
	errno = e_; \
	return r_

/* A wait that is no event (chld_handled: SIGCHLD blocked under a handler, before the trace's
 * first handler run) made with WNOHANG: when the child ready now is one a later recorded
 * WAIT reaps, it had not ended yet at this call when recorded (a logged wait reaped it), so
 * the call finds none, as then.  make blocks SIGCHLD throughout and polls with
 * waitpid(WNOHANG) between its jobs: in replay its first compiler had ended sooner, make
 * reaped it there and went on to give back its job token instead of waiting in pselect.
 * Looks at most 4096 events ahead.  1: answer 0 (no child ready). */
static int wnohang_reaped_later(pid_t pid, int options)
{
	siginfo_t si;
	pid_t rec;

	if (!(options & WNOHANG) || !lc_on() || (pid != -1 && pid <= 0))
		return 0;
	memset(&si, 0, sizeof(si));
	if (IP_REAL(waitid)(pid == -1 ? P_ALL : P_PID, pid == -1 ? 0 : (id_t)pid, &si,
	                    WEXITED | WNOHANG | WNOWAIT | (options & __WALL)) != 0 ||
	    si.si_pid <= 0)
		return 0;
	rec = to_rec(si.si_pid);
	for (uint64_t i = lc.pos; i < lc.nev && i < lc.pos + 4096; i++) {
		const struct lc_ev *ev = &lc.ev[i - lc.base];

		if (ev->kind == TRACE_EV_WAIT && ev->result == rec)
			return 1;
	}
	return 0;
}

/* A wait that returned a child where the trace has no WAIT event next but the process's death
 * by a signal: the recorded wait never returned, the signal ended the process inside it (a
 * shell in `wait`, killed with its child by the child's kill(0, SIGTERM)).  In replay the
 * signal was caught until that point (lc_signals.c, fatal_catch) and the wait went on: the
 * process dies here, before it does anything the recorded one did not (the shell printed
 * the status of a wait it never saw end). */
static void death_in_wait(void)
{
	const struct lc_ev *ev = lc.done ? NULL : lc_peek_now();

	if (ev && ev->kind == TRACE_EV_SIGNAL && ev->naux >= 1 && ev->aux[0] == 1)
		lc_signal_run();
}

/* The WAIT shape's handler: waitpid, wait, wait3 and wait4 are generated too.  With a WAIT
 * event next, the recorded child (wait_replay).  Else (older traces) PIDP: the pid argument,
 * translated recorded -> live (NULL for wait and wait3: any child); the pid returned goes
 * back live -> recorded. */
#define LC_SHAPE_WAIT(nm, wh, call, PIDP, OPT, STATUS, RU, realcall) \
	pid_t *pp_ = (PIDP), r_; \
	int e_; \
	if (!on()) \
		return realcall; \
	if (wait_next()) \
		return wait_replay(wh, OPT, STATUS, RU, NULL); \
	wait_begin(OPT, pp_ ? *pp_ : -1); \
	if (pp_) \
		*pp_ = wait_arg(*pp_); \
	if (wnohang_reaped_later(pp_ ? *pp_ : -1, OPT)) \
		return 0; \
	r_ = realcall; \
	e_ = errno; \
	wait_end(OPT); \
	if (r_ > 0) \
		death_in_wait(); \
	errno = e_; \
	return r_ > 0 ? to_rec(r_) : r_

#include "lc_wrappers.h"
