/*
 * guard.c: what the program does that the recorder cannot record through, and how the
 * recorder keeps out of its way while saying what it lost (recorder/README.md, "Limits";
 * the codes are in schemas/trace-format.md, "Truncation").
 *
 *   seccomp      prctl(PR_SET_SECCOMP), seccomp(2) and their syscall() forms: a filter may
 *                forbid the recorder's own calls (a write of the trace, process_vm_readv of
 *                the call-site walk) and kill the program for them, so the trace is written
 *                out and stopped (TRACE_STOP_SECCOMP) just before the filter goes in; then the
 *                recorder makes no system call of its own in the process, and its fatal-signal
 *                handlers, ENCORE_RECORD and its LD_PRELOAD entry are taken away, so that
 *                neither the process nor what it forks or executes under the filter meets
 *                the recorder again.
 *   descriptor   dup2/dup3 (and their syscall() forms) onto the trace's descriptor: the
 *                trace moves to another descriptor first, so the program's call lands on a
 *                free number, as it would have without us.
 *   fork, exec   a child or new image that will not be recorded: after a privilege drop
 *                (the session directory is not the new user's to write) or an exec the
 *                loader runs in secure mode (set-user-ID...): the FORK or EXEC event names
 *                the reason (rec_unrecorded_*), since nothing else in the session can.
 *   privileges   the process itself, once dropped (setuid, setresuid, capset...: nothing
 *                is watched), keeps its trace (its descriptor is open) and the registry
 *                (core.c looks entries up through a descriptor opened at start; the
 *                registry is 0711), but cannot make registry entries: the channels that
 *                would need one are taken for outside ones on both sides (chan.c,
 *                reg_chan), so the two ends never disagree about who logs the bytes; a
 *                lookup it cannot make any more (it closed that descriptor) stops its
 *                trace with TRACE_STOP_PRIVDROP (core.c, registry_unanswered).
 */
#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "rec.h"


extern char **environ;

/* --- seccomp ---------------------------------------------------------------------------- */

/* Remove `so` from the value of the LD_PRELOAD entry s ("LD_PRELOAD=a:so:b"), in place. */
static void preload_drop(char *s, const char *so, size_t solen)
{
	char *v = s + 11, *p = v;

	while (*p) {
		size_t n = strcspn(p, ": ");

		if (n == solen && memcmp(p, so, n) == 0) {
			char *next = p + n + (p[n] ? 1 : 0);

			memmove(p, next, strlen(next) + 1);
			if (!*p && p > v)
				p[-1] = '\0'; /* the last entry went: drop its separator */
			continue;
		}
		p += n + (p[n] ? 1 : 0);
	}
}

/* The environment's ENCORE_RECORD is emptied (an empty value leaves a new image unrecorded)
 * and this library taken out of LD_PRELOAD, in place: a program that forks or executes
 * under its filter must not meet the recorder there (the entries are the process's own
 * writable strings; copies the program made of them earlier are not seen). */
static void env_disarm(void)
{
	const char *so = rec_self_so();
	size_t solen = strlen(so);
	char **e;

	for (e = environ; e && *e; e++) {
		if (strncmp(*e, REC_ENV "=", sizeof(REC_ENV)) == 0)
			(*e)[sizeof(REC_ENV)] = '\0';
		else if (solen && strncmp(*e, "LD_PRELOAD=", 11) == 0)
			preload_drop(*e, so, solen);
	}
}

/* Whether installing a filter now can succeed: the kernel refuses it (EACCES) to a process
 * without no_new_privs unless it may administer the system; a refused filter must not stop
 * the recording.  Root is taken to hold CAP_SYS_ADMIN. */
static int filter_allowed(void)
{
	return syscall(SYS_prctl, PR_GET_NO_NEW_PRIVS, 0L, 0L, 0L, 0L) == 1 ||
	       syscall(SYS_geteuid) == 0;
}

/* Called just before the program installs a seccomp filter (strict: 1, filter: 0). */
static void sandbox_before(int strict)
{
	if (rec_busy() || !rec.w)
		return;
	if (!strict && !filter_allowed())
		return;
	if (!rec_enter())
		return;
	trace_writer_stop(rec.w, TRACE_STOP_SECCOMP);
	rec.w = NULL;
	rec_signals_uninstall();
	env_disarm();
	rec_leave();
}

#define IP_SANDBOX_BEFORE(strict) sandbox_before(strict)
#include "sandbox.h"

/* --- the trace's descriptor ------------------------------------------------------------- */

int rec_nofile_raise(struct rlimit *saved, unsigned int extra)
{
	struct rlimit up;

	if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, saved) != 0 ||
	    saved->rlim_cur == RLIM_INFINITY)
		return 0;
	up = *saved;
	up.rlim_cur = saved->rlim_cur + extra;
	if (up.rlim_max < up.rlim_cur)
		up.rlim_max = up.rlim_cur; /* allowed to a privileged process only */
	return syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &up, NULL) == 0;
}

void rec_nofile_restore(const struct rlimit *saved)
{
	syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, saved, NULL);
}

/* A duplicate of fd at the soft limit, for a program that holds every descriptor it may
 * have.  -1 when the limit cannot be raised. */
static int dup_past_limit(int fd)
{
	struct rlimit rl;
	int nfd;

	if (!rec_nofile_raise(&rl, 1))
		return -1;
	nfd = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, (long)rl.rlim_cur);
	rec_nofile_restore(&rl);
	return nfd;
}

void rec_own_fd_lost(int fd)
{
	int old, nfd;

	if (!rec.w)
		return;
	if (rec_registry_fd(fd)) {
		rec_registry_fd_lost();
		return;
	}
	/* The program asked for our descriptor's number (dup2/dup3 onto it): the trace moves to
	 * the lowest free number at or above the recorder's usual place (close-on-exec, like the
	 * original), and the old number is closed, so the program's call finds it free. */
	old = trace_writer_fd(rec.w);
	nfd = (int)syscall(SYS_fcntl, old, F_DUPFD_CLOEXEC, (long)rec.min_fd);
	if (nfd < 0)
		nfd = dup_past_limit(old);
	if (nfd < 0) {
		/* No descriptor left anywhere: the trace ends here, saying so. */
		trace_writer_stop(rec.w, TRACE_STOP_FDTAKEN);
		rec.w = NULL;
		return;
	}
	trace_writer_move_fd(rec.w, nfd);
	syscall(SYS_close, old);
}

/* syscall(2) forms of the calls above (rec.h, rec_syscall_guard). */
int rec_syscall_special(long nr, const long *a, long *r)
{
	if (rec_busy() || !rec.w)
		return 0;
	switch (nr) {
	case SYS_seccomp: /* (unsigned int op, ...) and prctl(int option, unsigned long...) */
	case SYS_prctl: {
		int strict = ip_sandbox_install(nr, a[0], a[1]);

		if (strict >= 0)
			sandbox_before(strict);
		return 0;
	}
	case SYS_dup2:
	case SYS_dup3:
		if ((int)a[0] != (int)a[1] && rec_own_fd((int)a[1]) && rec_enter()) {
			rec_own_fd_lost((int)a[1]);
			rec_leave();
		}
		return 0;
	case SYS_close:
		if (!rec_own_fd((int)a[0]))
			return 0;
		*r = 0; /* as close() does: the program may not close the trace */
		return 1;
	case SYS_close_range: /* the kernel takes unsigned ints */
		*r = ip_close_range_except((unsigned)a[0], (unsigned)a[1], (int)a[2],
		                           trace_writer_fd(rec.w));
		return 1;
	}
	return 0;
}

/* --- children and images that will not be recorded -------------------------------------- */

/* A child or new image of this process opens its own trace in the session directory, which
 * must belong to its effective user: after a privilege drop it cannot. */
int rec_unrecorded_child(void)
{
	return (uid_t)syscall(SYS_geteuid) != rec.owner ? TRACE_STOP_PRIVDROP : 0;
}

/* The file execve(path) would run, for a PATH search as execvp does it (the first regular
 * executable file); 0 when found. */
static int exec_target(const char *file, int search, char *out, size_t cap)
{
	const char *path, *p;

	if (!file || !*file)
		return -1;
	if (!search || strchr(file, '/')) {
		snprintf(out, cap, "%s", file);
		return 0;
	}
	path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin";
	for (p = path;; p += strcspn(p, ":") + 1) {
		size_t n = strcspn(p, ":");
		struct stat st;

		if ((size_t)snprintf(out, cap, "%.*s%s%s", (int)n, n ? p : ".", "/", file) < cap &&
		    stat(out, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111))
			return 0;
		if (!p[n])
			return -1;
	}
}

/* The loader ignores LD_PRELOAD paths in secure-execution mode: when the new image's
 * effective user or group differs from the real one (set-user-ID or set-group-ID bits the
 * kernel honours, or a process already running with different ids), or when the file
 * carries capabilities for a non-root user. */
int rec_unrecorded_exec(const char *file, int search)
{
	char path[4096];
	struct statvfs vfs;
	struct stat st;
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid;
	int honoured;

	if (rec_unrecorded_child())
		return TRACE_STOP_PRIVDROP;
	if (exec_target(file, search, path, sizeof(path)) != 0 || stat(path, &st) != 0 ||
	    syscall(SYS_getresuid, &ruid, &euid, &suid) != 0 ||
	    syscall(SYS_getresgid, &rgid, &egid, &sgid) != 0)
		return 0;
	/* no_new_privs and nosuid mounts make the kernel ignore the bits */
	honoured = syscall(SYS_prctl, PR_GET_NO_NEW_PRIVS, 0L, 0L, 0L, 0L) != 1 &&
	           !(statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_NOSUID));
	if (honoured && (st.st_mode & S_ISUID))
		euid = st.st_uid;
	if (honoured && (st.st_mode & S_ISGID))
		egid = st.st_gid;
	if (euid != ruid || egid != rgid)
		return TRACE_STOP_SETUID;
	if (honoured && euid != 0 && getxattr(path, "security.capability", NULL, 0) > 0)
		return TRACE_STOP_SETUID;
	return 0;
}
