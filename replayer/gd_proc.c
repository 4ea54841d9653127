/*
 * gd_proc.c: the replayed processes' lives as the global debugger sees them: starting the
 * recorded roots (argv, directory, environment with the LC preloaded, one process group,
 * death with the GD), reaping them, judging at the end whether each ended where its trace
 * does, and ending them all (rep_kill), however far they strayed from the group: the GD is
 * a subreaper, and it finds every descendant through /proc (replayer/README.md, "How a replay
 * ends").
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gd_internal.h"
#include "interpose.h"

/* The value of ENCORE_REPLAY for root p (proto.h): all its LC needs to find its trace,
 * the control socket and the board. */
static void replay_env(const struct rep *r, const struct gd_proc *p, char *out, size_t cap)
{
	struct ip_rep_env e = { .dir = r->dir };

	snprintf(e.name, sizeof(e.name), "%s", p->name);
	e.rpid = p->rec_pid; /* getpid and the clocks before its LC started (lc.c, lc_before) */
	e.t0 = p->rec_t0;
	/* cap (8 KiB) holds a name and a path: the encoding cannot fail for want of room */
	if (ip_rep_env_encode(out, cap, &e, NULL, NULL) != 0)
		out[0] = '\0';
}

/* In the forked child, before exec: its host's namespaces (gd_isolate.c), environment,
 * directory, group, death with the GD.  A failure is reported through `err` (close-on-exec):
 * what failed (1 chdir, 2 exec, 3 setns), errno. */
static void child_exec(struct rep *r, struct gd_proc *p, long pgid, int err)
{
	static char preload[8192], cfg[8192];
	const char *old = getenv("LD_PRELOAD");
	int what[2], e;

	setpgid(0, (pid_t)pgid);
	/* first: what follows (the output file, the directory, the executable) is seen as the
	 * replayed process sees it; the death signal after, entering a user namespace clears it */
	if ((e = rep__iso_enter(r, p)) != 0) {
		what[0] = 3;
		what[1] = -e;
		if (write(err, what, sizeof(what)) < 0)
			what[0] = 0;
		_exit(127);
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (r->opt.roots_stdout > 0 && r->opt.roots_stdout != STDOUT_FILENO)
		dup2(r->opt.roots_stdout, STDOUT_FILENO);
	if (r->opt.roots_output) { /* encore debug: the console keeps the terminal */
		char out[4096 + 512];
		int fd;

		snprintf(out, sizeof(out), "%s/" REP_SUBDIR "/%s.out", r->dir, p->name);
		if ((fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600)) >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		if ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
			dup2(fd, STDIN_FILENO);
	}
	snprintf(preload, sizeof(preload), "%s%s%s", r->lib, old && *old ? ":" : "",
	         old ? old : "");
	setenv("LD_PRELOAD", preload, 1);
	replay_env(r, p, cfg, sizeof(cfg));
	setenv(REP_ENV, cfg, 1);
	unsetenv("ENCORE_RECORD");
	if (p->cwd[0] && chdir(p->cwd) != 0) {
		what[0] = 1;
		what[1] = errno;
	} else {
		execv(p->exe, p->argv && p->argc ? p->argv : (char *[]){ p->exe, NULL });
		what[0] = 2;
		what[1] = errno;
	}
	if (write(err, what, sizeof(what)) < 0)
		what[0] = 0;
	_exit(127);
}

int rep_start(struct rep *r, struct trace_diag *d)
{
	int rc;

	if ((rc = rep__make_control(r, d)) != 0)
		return rc;
	/* a mount namespace per recorded host: overlays, packed files (gd_isolate.c) */
	if ((rc = rep__iso_setup(r, d)) != 0)
		return rc;
	/* Orphans of the replayed programs become our children: all are reaped here. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];
		pid_t pid;

		if (p->parent[0])
			continue;
		int err[2], what[2];
		ssize_t n;

		if (pipe2(err, O_CLOEXEC) != 0) {
			rep__diag_set(d, TRACE_EIO, NULL, "pipe: %s", strerror(errno));
			return TRACE_EIO;
		}
		fflush(NULL);
		pid = fork();
		if (pid < 0) {
			rep__diag_set(d, TRACE_EIO, NULL, "fork: %s", strerror(errno));
			close(err[0]);
			close(err[1]);
			return TRACE_EIO;
		}
		if (pid == 0) {
			close(err[0]);
			child_exec(r, p, r->pgid, err[1]);
		}
		close(err[1]);
		if (!r->pgid)
			r->pgid = pid;
		setpgid(pid, (pid_t)r->pgid);
		p->pid = pid;
		p->started = 1;
		r->started = 1;
		/* the exec happened (end of the pipe) or failed (its errno) */
		do
			n = read(err[0], what, sizeof(what));
		while (n < 0 && errno == EINTR);
		close(err[0]);
		if (n == (ssize_t)sizeof(what)) {
			errno = what[1];
			rep__diag_set(d, TRACE_EIO, what[0] == 1 ? p->cwd : what[0] == 2 ? p->exe : NULL,
			              what[0] == 1 ? "process %s: cannot enter its recorded directory: %s" :
			              what[0] == 2 ? "process %s: cannot run its recorded executable: %s" :
			                        "process %s: cannot enter its host's mount namespace: %s",
			         p->name, strerror(what[1]));
			return TRACE_EIO;
		}
	}
	r->started = 1;
	clock_gettime(CLOCK_MONOTONIC, &r->last_change);
	return 0;
}

void rep__reap(struct rep *r)
{
	int st;
	pid_t pid;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		struct gd_proc *p = rep__by_pid(r, pid);

		if (p) {
			p->reaped = 1;
			p->wait_status = st;
		}
		rep__note_change(r);
	}
}

int rep__children_left(void)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	return waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == 0;
}

int rep__finish_check(struct rep *r)
{
	size_t pos = 0;
	int bad = 0;

	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];
		uint64_t idx = r->board && p->started ? r->board[i].index : p->index;
		struct ana_event ev;
		int signalled = 0;
		char how[160] = "";

		if (p->ana >= 0 && p->nevents &&
		    ana_event_get(r->ana, (size_t)p->ana, p->nevents, &ev) == 0 &&
		    ev.kind == TRACE_EV_SIGNAL)
			signalled = (int)ev.result > 0 ? (int)ev.result : -1;
		if (p->done && idx == p->nevents)
			continue;
		/* recorded death by a signal: now by that one (any when the record does not say) */
		if (p->started && signalled && idx + 1 >= p->nevents &&
		    (signalled < 0 || !p->reaped ||
		     (WIFSIGNALED(p->wait_status) && WTERMSIG(p->wait_status) == signalled)))
			continue;
		if (p->started && !p->done && p->reaped && idx == p->nevents)
			continue;
		/* killed by SIGKILL when recorded, and now: where the kill lands is not ordered by
		 * any event (the killer's kill is not one) */
		if (p->killed_rec && idx <= p->nevents && !p->done &&
		    ((p->reaped && WIFSIGNALED(p->wait_status) && WTERMSIG(p->wait_status) == SIGKILL) ||
		     (!p->reaped && p->gone)))
			continue;
		bad = 1;
		/* how it ended: the status reaped (a crash names its signal) */
		if (p->started && p->reaped && WIFSIGNALED(p->wait_status))
			snprintf(how, sizeof(how), ", killed by signal %d (%s)%s",
			         WTERMSIG(p->wait_status), strsignal(WTERMSIG(p->wait_status)),
			         WCOREDUMP(p->wait_status) ? ", core dumped" : "");
		else if (p->started && p->reaped && WIFEXITED(p->wait_status))
			snprintf(how, sizeof(how), ", exit status %d", WEXITSTATUS(p->wait_status));
		if (p->started && signalled > 0)
			snprintf(how + strlen(how), sizeof(how) - strlen(how),
			         "; the recorded run died of signal %d (%s)", signalled,
			         strsignal(signalled));
		if (pos < sizeof(r->message) - 400)
			pos += (size_t)snprintf(r->message + pos, sizeof(r->message) - pos,
			                        "%s%s %s at state %llu of %llu%s\n",
			                        pos ? "" : "the replay ended early:\n  ", p->name,
			                        p->started ? "ended" : "never started; its parent stopped",
			                        (unsigned long long)idx, (unsigned long long)p->nevents,
			                        how);
	}
	return bad ? REP_FAILED : REP_END;
}

/* Every live descendant of this process, from the parent links in /proc/PID/stat: the
 * replayed processes and whatever they started, known to us or not, in our process group or
 * not (a daemon's setsid, a child made past the interposers).  As a subreaper we are the
 * parent of every orphan among them, so the links always lead back here.  Returns how many
 * it found (at most cap); -1 when /proc cannot be read. */
static long descendants(pid_t *out, size_t cap)
{
	struct { pid_t pid, ppid; } *all = NULL;
	size_t n = 0, acap = 0, found = 0;
	DIR *d = opendir("/proc");
	struct dirent *e;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL) {
		char path[64], buf[512], *rp;
		long pid = strtol(e->d_name, &rp, 10), ppid;
		ssize_t len;
		int fd;

		if (*rp || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		/* "PID (COMM) STATE PPID ...": COMM may hold anything, the last ')' ends it */
		if (!(rp = strrchr(buf, ')')) || sscanf(rp + 1, " %*c %ld", &ppid) != 1)
			continue;
		if (n == acap) {
			void *na = realloc(all, (acap = acap ? 2 * acap : 1024) * sizeof(*all));

			if (!na)
				break;
			all = na;
		}
		all[n].pid = (pid_t)pid;
		all[n++].ppid = (pid_t)ppid;
	}
	closedir(d);
	/* breadth first from ourselves: out[] is the queue */
	for (size_t i = 0; i < n && found < cap; i++)
		if (all[i].ppid == getpid())
			out[found++] = all[i].pid;
	for (size_t q = 0; q < found; q++)
		for (size_t i = 0; i < n && found < cap; i++)
			if (all[i].ppid == out[q])
				out[found++] = all[i].pid;
	free(all);
	return (long)found;
}

/* SIGKILL to everything that may still run: the group and every descendant /proc shows
 * (the processes we know are among them).  Without /proc, the processes we know by pid
 * (one a replayed parent reaped itself may have lent its pid to a stranger meanwhile: /proc
 * spares the rest of the machine that risk). */
static void kill_all(struct rep *r)
{
	pid_t pids[4096];
	long n = descendants(pids, sizeof(pids) / sizeof(pids[0]));

	if (r->pgid > 0)
		kill(-(pid_t)r->pgid, SIGKILL);
	for (long i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	if (n >= 0)
		return;
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].pid > 0 && !r->procs[i].reaped && r->procs[i].started)
			kill((pid_t)r->procs[i].pid, SIGKILL);
}

/* How long rep_kill waits for the killed processes to be reaped: only a process stuck in
 * the kernel (uninterruptible sleep on a dead NFS server...) outlasts SIGKILL that long, and
 * we must end anyway. */
#define GD_KILL_WAIT_MS 5000

void rep_kill(struct rep *r)
{
	struct timespec start, now;

	if (!r || !r->started || r->killed)
		return;
	r->killed = 1;
	clock_gettime(CLOCK_MONOTONIC, &start);
	/* Kill, reap what died, again until no child is left: a process forking while we kill
	 * gives a new descendant the next round finds.  Every replayed process is our descendant
	 * and, as a subreaper, we reap them all. */
	for (;;) {
		struct timespec nap = { 0, 2 * 1000 * 1000 };
		int st;
		pid_t pid;

		kill_all(r);
		while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
			struct gd_proc *p = rep__by_pid(r, pid);

			if (p) {
				p->reaped = 1;
				p->wait_status = st;
			}
		}
		if (pid < 0 && errno == ECHILD)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 >=
		    GD_KILL_WAIT_MS)
			break;
		nanosleep(&nap, NULL);
	}
}
