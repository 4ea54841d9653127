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
#include <sys/personality.h>
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

extern char **environ;

/* Layout codes a root's child sends the GD before its exec (child_exec's err pipe); the
 * exec goes on. */
enum { LAYOUT_NO_PERSONALITY = 4, LAYOUT_STACK_LOWER = 5, LAYOUT_ENVC = 6 };

/* The strings exec copies onto the new stack: argv's, the environment's, the file name. */
static uint64_t exec_strings(const struct gd_proc *p, uint32_t *envc)
{
	uint64_t n = strlen(p->exe) + 1;
	uint32_t c = 0;

	if (p->argv && p->argc)
		for (uint32_t i = 0; i < p->argc; i++)
			n += strlen(p->argv[i]) + 1;
	else
		n += strlen(p->exe) + 1;
	for (char **e = environ; e && *e; e++, c++)
		n += strlen(*e) + 1;
	*envc = c;
	return n;
}

/* A root recorded with address space randomisation off (encore record --same-layout,
 * schemas/trace-format.md "Address layout"): off here too, and its stack where it was.
 * The kernel puts exec's strings (argv, environment, file name) at the top of the stack and
 * the stack pointer below them, so the same number of strings of the same total size give
 * the same stack addresses; the replay's environment differs from the recording's by the
 * preloaded library's path and its configuration variable (ENCORE_REPLAY is shorter than
 * ENCORE_RECORD), so empty variables make up the count and ':'s at the end of LD_PRELOAD,
 * which the loader skips, the size.  0, or a LAYOUT_* code with *arg for the GD's warning. */
static int same_layout(const struct gd_proc *p, char *preload, size_t cap, int *arg)
{
	uint32_t envc, k = 0;
	uint64_t have;
	size_t n;
	int old;

	if (!p->has_layout || !(p->layout.persona & TRACE_ADDR_NO_RANDOMIZE))
		return 0;
	old = personality(0xffffffff);
	if (old == -1 || personality((unsigned long)old | ADDR_NO_RANDOMIZE) == -1) {
		*arg = errno;
		return LAYOUT_NO_PERSONALITY;
	}
	if (!p->layout.strings)
		return 0; /* not known: ASLR off is all we can do */
	have = exec_strings(p, &envc);
	while (envc < p->layout.envc && k < 4096) {
		char name[32];

		snprintf(name, sizeof(name), "ENCORE_PAD%u", k++);
		setenv(name, "", 1);
		have = exec_strings(p, &envc);
	}
	if (envc != p->layout.envc) {
		*arg = (int)(envc - p->layout.envc);
		return LAYOUT_ENVC;
	}
	n = strlen(preload);
	if (have > p->layout.strings || n + (p->layout.strings - have) >= cap) {
		*arg = (int)(have - p->layout.strings);
		return LAYOUT_STACK_LOWER;
	}
	memset(preload + n, ':', (size_t)(p->layout.strings - have));
	preload[n + (p->layout.strings - have)] = '\0';
	setenv("LD_PRELOAD", preload, 1);
	return 0;
}

/* In the forked child, before exec: its host's namespaces (gd_isolate.c), environment,
 * directory, group, death with the GD.  A failure is reported through `err` (close-on-exec):
 * what failed (1 chdir, 2 exec, 3 setns), errno. */
/* The recorder's library in a LD_PRELOAD list (the recorded value names it). */
static int recorder_lib(const char *entry, size_t len)
{
	static const char base[] = "libencore-record.so";
	const char *slash = memrchr(entry, '/', len);
	const char *b = slash ? slash + 1 : entry;

	return (size_t)(entry + len - b) >= sizeof(base) - 1 && memcmp(b, base, sizeof(base) - 1) == 0;
}

/* In the child, before its exec: a root starts with the environment it was recorded with
 * (replayer/README.md, "Environment"), so that what the dynamic loader and constructors
 * read before the replay controller runs (LD_LIBRARY_PATH, GLIBC_TUNABLES) is as recorded;
 * ENCORE_RECORD dropped, the recorded LD_PRELOAD without the recorder's library returned (our
 * library goes before it), --setenv's lines applied.  NULL when the trace has no
 * environment: the replaying one is kept. */
static const char *recorded_env(const struct gd_proc *p, char *preload_rest, size_t cap)
{
	char *spec = getenv("ENCORE_REPLAY_SETENV");

	if (!p->env)
		return NULL;
	preload_rest[0] = '\0';
	spec = spec ? strdup(spec) : NULL;
	clearenv();
	for (uint32_t i = 0; i < p->envc; i++) {
		const char *v = p->env[i];

		if (strncmp(v, "ENCORE_RECORD=", 14) == 0)
			continue;
		if (strncmp(v, "LD_PRELOAD=", 11) == 0) {
			size_t n = 0;

			for (v += 11; *v; v += strspn(v, ": ")) {
				size_t l = strcspn(v, ": ");

				if (l && !recorder_lib(v, l) && n + l + 2 < cap) {
					if (n)
						preload_rest[n++] = ':';
					memcpy(preload_rest + n, v, l);
					n += l;
					preload_rest[n] = '\0';
				}
				v += l;
			}
			continue;
		}
		putenv(p->env[i]);
	}
	if (spec) {
		setenv("ENCORE_REPLAY_SETENV", spec, 1);
		for (char *line = spec, *next; line && *line; line = next) {
			if ((next = strchr(line, '\n')))
				*next++ = '\0';
			if (strchr(line, '=') && line[0] != '=')
				putenv(line);
		}
	}
	return preload_rest;
}

static void child_exec(struct rep *r, struct gd_proc *p, long pgid, int err)
{
	static char preload[16384], cfg[8192], rest[8192];
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
	if (p->env)
		old = recorded_env(p, rest, sizeof(rest));
	snprintf(preload, sizeof(preload), "%s%s%s", r->lib, old && *old ? ":" : "",
	         old ? old : "");
	setenv("LD_PRELOAD", preload, 1);
	replay_env(r, p, cfg, sizeof(cfg));
	setenv(REP_ENV, cfg, 1);
	unsetenv("ENCORE_RECORD");
	if ((what[0] = same_layout(p, preload, sizeof(preload), &what[1])) != 0 &&
	    write(err, what, sizeof(what)) < 0)
		what[0] = 0; /* a warning: the exec goes on */
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

/* The warning for a LAYOUT_* code (rep_warnings). */
static void layout_warning(struct rep *r, const struct gd_proc *p, int code, int arg)
{
	size_t wl = strlen(r->warnings);
	char text[512];

	if (code == LAYOUT_NO_PERSONALITY)
		snprintf(text, sizeof(text), "recorded with address space randomisation off "
		         "(--same-layout), which this system refuses (personality: %s): replayed at "
		         "other addresses, it may diverge", strerror(arg));
	else if (code == LAYOUT_ENVC)
		snprintf(text, sizeof(text), "the replay's environment has %d variable%s more than "
		         "the recording's: its stack is lower than recorded (--same-layout), it may "
		         "diverge; replay from the environment that recorded", arg, arg == 1 ? "" : "s");
	else
		snprintf(text, sizeof(text), "the replay's environment is %d bytes larger than the "
		         "recording's: its stack is lower than recorded (--same-layout), it may "
		         "diverge; replay from the environment that recorded", arg);
	if (wl + strlen(p->name) + strlen(text) + 5 < sizeof(r->warnings))
		snprintf(r->warnings + wl, sizeof(r->warnings) - wl, "%s%s: %s", wl ? "; " : "",
		         p->name, text);
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
		/* the exec happened (end of the pipe) or failed (its errno); layout warnings before */
		for (;;) {
			do
				n = read(err[0], what, sizeof(what));
			while (n < 0 && errno == EINTR);
			if (n != (ssize_t)sizeof(what) || what[0] < LAYOUT_NO_PERSONALITY)
				break;
			layout_warning(r, p, what[0], what[1]);
		}
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
		/* its last event an exec into an image that was not recorded (a set-user-ID
		 * helper: tmux's utempter; `encore check` names it): that image runs unreplayed, as
		 * it ran unrecorded, and ends wherever it does */
		if (p->started && idx == p->nevents && p->nevents && p->ana >= 0 &&
		    ana_event_get(r->ana, (size_t)p->ana, p->nevents, &ev) == 0 &&
		    ev.kind == TRACE_EV_EXEC && ev.result >= 0)
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
		if (pos < sizeof(r->message) - 400 && p->started) {
			pos += (size_t)snprintf(r->message + pos, sizeof(r->message) - pos,
			                        "%s%s ended at state %llu of %llu%s\n",
			                        pos ? "" : "the replay ended early:\n  ", p->name,
			                        (unsigned long long)idx, (unsigned long long)p->nevents,
			                        how);
		} else if (pos < sizeof(r->message) - 400) {
			/* never started: where its parent stopped, not its own count */
			const struct gd_proc *pp = NULL;

			for (size_t k = 0; k < r->nprocs && p->parent[0]; k++)
				if (strcmp(r->procs[k].name, p->parent) == 0)
					pp = &r->procs[k];
			if (pp) {
				uint64_t pidx = r->board && pp->started ? r->board[pp - r->procs].index
				                                        : pp->index;

				pos += (size_t)snprintf(r->message + pos, sizeof(r->message) - pos,
				                        "%s%s never started: its parent %s stopped at state "
				                        "%llu of %llu before starting it\n",
				                        pos ? "" : "the replay ended early:\n  ", p->name,
				                        pp->name, (unsigned long long)pidx,
				                        (unsigned long long)pp->nevents);
			} else {
				pos += (size_t)snprintf(r->message + pos, sizeof(r->message) - pos,
				                        "%s%s never started (%llu events recorded)\n",
				                        pos ? "" : "the replay ended early:\n  ", p->name,
				                        (unsigned long long)p->nevents);
			}
		}
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
