/*
 * guard.c: what the program does that the recorder cannot record through, and how the
 * recorder keeps out of its way while saying what it lost (recorder/README.md, "Limits";
 * the codes are in schemas/trace-format.md, "Truncation").
 *
 *   seccomp      prctl(PR_SET_SECCOMP), seccomp(2) and their syscall() forms: a filter may
 *                forbid the recorder's own calls (a write of the trace, process_vm_readv of
 *                the call-site walk) and kill the program for them.  The filters are
 *                evaluated for those calls first (seccomp.c) and the recorder goes on under
 *                them, taking a way round each call forbidden (trace space reserved ahead,
 *                return addresses alone...) or stopping the trace where it would need one
 *                with none (TRACE_STOP_SECCOMP); the install is a SANDBOX event.  Where even
 *                every event would need a forbidden call, the trace is written out and
 *                stopped just before the filter goes in, and the recorder makes no system
 *                call of its own in the process any more.  Either way its ENCORE_RECORD and
 *                LD_PRELOAD entry are taken away, so that what the process forks or executes
 *                under the filter does not meet the recorder.  setrlimit(RLIMIT_FSIZE) too:
 *                a limit the trace reaches gets trace space reserved first.
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
/* setrlimit must keep its own name (the build's _FILE_OFFSET_BITS=64 renames it to
 * setrlimit64, a row of its own) */
#undef _FILE_OFFSET_BITS
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "rec.h"
#include "seccomp.h"


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

static struct rec_seccomp_set *filters; /* in force, mapped at the first (seccomp.c) */

/* Whether installing a filter now can succeed: the kernel refuses it (EACCES) to a process
 * without no_new_privs unless it may administer the system.  Root is taken to hold
 * CAP_SYS_ADMIN. */
static int filter_allowed(void)
{
	if (filters && filters->n)
		return 1; /* one went in: so may the next (and asking may be forbidden now) */
	return syscall(SYS_prctl, PR_GET_NO_NEW_PRIVS, 0L, 0L, 0L, 0L) == 1 ||
	       syscall(SYS_geteuid) == 0;
}

/* Old behaviour, for a filter the recorder cannot go on under: the trace is written out and
 * stopped just before it, and the process and what it starts leave the recorder behind.
 * Guard held. */
static void sandbox_stop_before(void)
{
	trace_writer_stop(rec.w, TRACE_STOP_SECCOMP);
	rec.w = NULL;
	rec_signals_uninstall();
	env_disarm();
}

/* --- recording on under a filter ---------------------------------------------------------
 * The filters the process installed are kept (seccomp.c evaluates them), and before each new
 * one goes in, the system calls the recorder may make on the program's behalf afterwards are
 * put to all of them together, with the arguments the recorder passes.  Each group below
 * either is let through, or has a way round that needs no system call (taken before the
 * filter is in), or is barred: the trace stops cleanly the first time it would be needed
 * (rec_sandbox_bar).  Only the groups without a way round that every event may need (the
 * signal trampoline's, the lock's) make the recorder stop before the filter, as it always
 * did. */

unsigned rec_sandbox;
static unsigned prepared; /* the ways round taken (SB_*) */

/* Trace space reserved ahead for a writer that may not write (no pwrite64 under the filter,
 * or RLIMIT_FSIZE): chunks are stored into it through a mapping. */
#define SANDBOX_RESERVE (8u << 20)

#define NA(x) ((uint64_t)(x))

struct sb_call {
	int nr;
	uint64_t a[6];
};

/* 1 when every call of the group passes (allowed), or at least fails harmlessly. */
static int sb_group(const struct sb_call *c, size_t n, int harmless_ok)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!(harmless_ok ? rec_seccomp_harmless(filters, c[i].nr, c[i].a)
		                  : rec_seccomp_allows(filters, c[i].nr, c[i].a)))
			return 0;
	return 1;
}

#define SB_GROUP(arr, harmless) sb_group(arr, sizeof(arr) / sizeof(arr[0]), harmless)

/* What the filters in `filters` leave the recorder: REC_SB_* bits, plus these. */
#define SB_STOP 0x10000u   /* stop before the filter */
#define SB_RESERVE 0x20000u /* the writer must reserve ahead */
#define SB_NOFATAL 0x40000u /* fatal-signal handlers must go */
#define SB_NOBOUND 0x80000u /* the deferred-signal bound timer must go */
#define SB_WAITQ 0x100000u /* the waits' query of SIGCHLD's disposition must be frozen */

static int single_threaded(void)
{
#if REC_SINGLE_THREADED
	return __libc_single_threaded;
#else
	return !rec.threads;
#endif
}

static unsigned sandbox_plan(void)
{
	const uint64_t fd = NA(trace_writer_fd(rec.w)), sigsz = 8, ksz = _NSIG / 8;
	const struct sb_call sig[] = {
		{ SYS_getpid, { 0 } },
		{ SYS_rt_sigprocmask, { SIG_BLOCK, 1, 1, sigsz } },
		{ SYS_rt_sigprocmask, { SIG_SETMASK, 1, 0, sigsz } },
		{ SYS_rt_sigprocmask, { SIG_SETMASK, 1, 1, sigsz } },
	};
	const struct sb_call sigaction_call[] = { { SYS_rt_sigaction, { SIGINT, 1, 0, sigsz } } };
	const struct sb_call threads[] = {
		{ SYS_sched_yield, { 0 } },
		{ SYS_futex, { 1, FUTEX_WAIT_PRIVATE, 2, 0, 0, 0 } },
		{ SYS_futex, { 1, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0 } },
	};
	const struct sb_call write[] = {
		{ SYS_pwrite64, { fd, 1, 65536, 65536, 0, 0 } },
		{ SYS_ftruncate, { fd, 65536 } },
		{ SYS_rt_sigprocmask, { SIG_BLOCK, 1, 1, sigsz } },
		{ SYS_rt_sigprocmask, { SIG_SETMASK, 1, 0, sigsz } },
		{ SYS_rt_sigtimedwait, { 1, 0, 1, sigsz } },
		{ SYS_munmap, { 1, 65536 } },
		{ SYS_close, { fd } },
		{ SYS_pread64, { fd, 1, 48, 65536 } }, /* the disk budget's */
		{ SYS_fallocate, { fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 65536, 65536 } },
	};
	const struct sb_call walk[] = {
		{ SYS_getpid, { 0 } },
		{ SYS_process_vm_readv, { 1, 1, 1, 1, 1, 0 } },
		{ SYS_rt_sigprocmask, { SIG_BLOCK, 1, 1, ksz } },
		{ SYS_rt_sigprocmask, { SIG_SETMASK, 1, 0, ksz } },
		{ SYS_sched_yield, { 0 } },
	};
	const struct sb_call fatal[] = {
		{ SYS_rt_sigaction, { SIGSEGV, 1, 0, sigsz } },
		{ SYS_getpid, { 0 } },
		{ SYS_gettid, { 0 } },
		{ SYS_tgkill, { 1, 1, SIGSEGV } },
	};
	const struct sb_call bound[] = {
		{ SYS_gettid, { 0 } },
		{ SYS_timer_create, { CLOCK_MONOTONIC, 1, 1 } },
		{ SYS_timer_settime, { 0, 0, 1, 0 } },
	};
	const struct sb_call chan[] = {
		{ SYS_fstat, { 0, 1 } },
		{ SYS_newfstatat, { 0, 1, 1, AT_EMPTY_PATH } },
		{ SYS_getsockopt, { 0, SOL_SOCKET, SO_DOMAIN, 1, 1 } },
		{ SYS_getsockopt, { 0, SOL_SOCKET, SO_TYPE, 1, 1 } },
		{ SYS_getsockname, { 0, 1, 1 } },
		{ SYS_getpeername, { 0, 1, 1 } },
		{ SYS_fcntl, { 0, F_GETFL } },
		{ SYS_fcntl, { 0, F_GETFD } },
		{ SYS_fcntl, { 0, F_DUPFD_CLOEXEC, 1008 } },
		{ SYS_socket, { AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG } },
		{ SYS_sendto, { 0, 1, 1, 0, 1, 1 } },
		{ SYS_recvfrom, { 0, 1, 1, 0, 0, 0 } },
		{ SYS_close, { 0 } },
		{ SYS_getpid, { 0 } },
	};
	const struct sb_call reg[] = {
		{ SYS_openat, { NA(AT_FDCWD), 1, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC } },
		{ SYS_openat, { 0, 1, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600 } },
		{ SYS_newfstatat, { 0, 1, 1, AT_SYMLINK_NOFOLLOW } },
		{ SYS_fstat, { 0, 1 } },
		{ SYS_write, { 0, 1, 1 } },
		{ SYS_close, { 0 } },
		{ SYS_fcntl, { 0, F_DUPFD_CLOEXEC, 1000 } },
		{ SYS_unlinkat, { 0, 1, 0 } },
		{ SYS_geteuid, { 0 } },
	};
	const struct sb_call files[] = {
		{ SYS_fstat, { 0, 1 } },
		{ SYS_newfstatat, { 0, 1, 1, AT_EMPTY_PATH } },
		{ SYS_newfstatat, { NA(AT_FDCWD), 1, 1, 0 } },
		{ SYS_readlink, { 1, 1, 4096 } },
		/* paths created (files.c): before a call that may create, after one that did */
		{ SYS_newfstatat, { 0, 1, 1, 0 } },
		{ SYS_newfstatat, { NA(AT_FDCWD), 1, 1, AT_SYMLINK_NOFOLLOW } },
		{ SYS_newfstatat, { 0, 1, 1, AT_SYMLINK_NOFOLLOW } },
		{ SYS_getcwd, { 1, 4097 } },
		{ SYS_openat, { NA(AT_FDCWD), 1, O_RDONLY | O_CLOEXEC } },
		{ SYS_read, { 0, 1, 65536 } },
		{ SYS_pread64, { 0, 1, 65536, 0 } },
		{ SYS_close, { 0 } },
		{ SYS_mmap, { 0, 65536, PROT_READ, MAP_PRIVATE, 0, 0 } },
		{ SYS_munmap, { 1, 65536 } },
	};
	const struct sb_call clock_call[] = { { SYS_clock_gettime, { CLOCK_MONOTONIC_COARSE, 1 } } };
	unsigned plan = REC_SB_ON;
	struct rlimit fsize;

	/* Every event: the signal trampoline (when the program may have handlers: some held
	 * now, or sigaction allowed later), the lock between threads, the display clock
	 * where there is no vDSO. */
	if ((rec_sig_any_held() || rec_seccomp_allows(filters, SYS_rt_sigaction,
	                                              sigaction_call[0].a)) &&
	    !SB_GROUP(sig, 0))
		return SB_STOP;
	if (!single_threaded() && !SB_GROUP(threads, 0))
		return SB_STOP;
	if (!getauxval(AT_SYSINFO_EHDR) && !SB_GROUP(clock_call, 1))
		return SB_STOP;
	/* The writer: writes through pwrite64, or (RLIMIT_FSIZE lowered, or calls forbidden)
	 * stores into space reserved now. */
	if (!SB_GROUP(write, 0) || syscall(SYS_prlimit64, 0, RLIMIT_FSIZE, NULL, &fsize) != 0 ||
	    fsize.rlim_cur != RLIM_INFINITY)
		plan |= SB_RESERVE;
	if (!SB_GROUP(walk, 1))
		plan |= REC_SB_NOWALK;
	if (!SB_GROUP(fatal, 0))
		plan |= SB_NOFATAL;
	if (!SB_GROUP(bound, 0))
		plan |= SB_NOBOUND;
	if (!rec_seccomp_allows(filters, SYS_rt_sigaction, (uint64_t[6]){ SIGCHLD, 0, 1, sigsz }))
		plan |= SB_WAITQ;
	if (!SB_GROUP(chan, 1))
		plan |= REC_SB_NOCHAN;
	if (!SB_GROUP(reg, 1))
		plan |= REC_SB_NOREG;
	if (!SB_GROUP(files, 1))
		plan |= REC_SB_NOFILES;
	return plan;
}

/* Copy the program's filter (struct sock_fprog at p) into the set, without trusting the
 * pointers: a bad one fails here as the kernel will fail the call (EFAULT).  0 or -1. */
static int filter_copy(const void *p)
{
	static struct sock_filter buf[REC_BPF_MAXINSNS];
	struct sock_fprog fp;
	struct iovec l, r;
	pid_t self = (pid_t)syscall(SYS_getpid);

	if (filters->n &&
	    !rec_seccomp_allows(filters, SYS_process_vm_readv, (uint64_t[6]){ 1, 1, 1, 1, 1, 0 })) {
		/* an earlier filter forbids the checked copy: the program's pointers, as given */
		if (!p)
			return -1;
		memcpy(&fp, p, sizeof(fp));
		if (!fp.filter || fp.len == 0 || fp.len > REC_BPF_MAXINSNS)
			return -1;
		return rec_seccomp_add(filters, fp.filter, fp.len);
	}
	l.iov_base = &fp;
	l.iov_len = sizeof(fp);
	r.iov_base = (void *)(uintptr_t)p;
	r.iov_len = sizeof(fp);
	if (!p || syscall(SYS_process_vm_readv, self, &l, 1UL, &r, 1UL, 0UL) != (long)sizeof(fp) ||
	    fp.len == 0 || fp.len > REC_BPF_MAXINSNS)
		return -1;
	l.iov_base = buf;
	l.iov_len = fp.len * sizeof(buf[0]);
	r.iov_base = fp.filter;
	r.iov_len = l.iov_len;
	if (syscall(SYS_process_vm_readv, self, &l, 1UL, &r, 1UL, 0UL) != (long)l.iov_len)
		return -1;
	return rec_seccomp_add(filters, buf, fp.len);
}

void rec_sandbox_stop(void)
{
	if (!rec.w)
		return;
	trace_writer_stop(rec.w, TRACE_STOP_SECCOMP);
	rec.w = NULL;
}

/* Whether a sandbox call that returned r left no new filter in force: -1, or with TSYNC the
 * id of a thread that could not follow (a NEW_LISTENER call returns its descriptor). */
static int install_failed(long r, unsigned long flags)
{
	if (r < 0)
		return 1;
	return r > 0 && (flags & SECCOMP_FILTER_FLAG_TSYNC) &&
	       !(flags & SECCOMP_FILTER_FLAG_NEW_LISTENER);
}

/* A sandbox call (prctl(PR_SET_SECCOMP...), seccomp(2) or their syscall(2) forms) installing
 * a strict-mode sandbox (strict) or a filter (struct sock_fprog at prog, seccomp's flags);
 * `real` makes the call.  The recorder stops before it or goes on under it (above), and then
 * logs it as a SANDBOX event. */
static long rec_sandbox_call(uint32_t call, long mode, unsigned long flags, const void *prog,
                             int strict, long (*real)(void *), void *arg, void *ra)
{
	struct trace_event ev;
	unsigned plan, before = rec_sandbox;
	uint32_t ninsn = 0;
	long r;
	int e;

	if (rec_busy() || !rec.w || !rec_enter())
		return real(arg);
	/* (a filter the kernel refuses changes nothing: its failure is logged) */
	if (strict || filter_allowed()) {
		if (!filters) {
			void *m = mmap(NULL, sizeof(*filters), PROT_READ | PROT_WRITE,
			               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			filters = m == MAP_FAILED ? NULL : m;
		}
		if (!filters || (strict ? rec_seccomp_add_strict(filters) : filter_copy(prog)) != 0) {
			plan = SB_STOP;
		} else {
			ninsn = filters->len[filters->n - 1];
			plan = sandbox_plan();
			if (!(plan & SB_STOP) && (plan & SB_RESERVE) &&
			    trace_writer_reserve(rec.w, SANDBOX_RESERVE) != 0)
				plan = SB_STOP;
		}
		if (plan & SB_STOP) {
			sandbox_stop_before();
			rec_leave();
			return real(arg);
		}
		/* each way round is taken once (a later filter only adds to the earlier ones,
		 * which may forbid taking it again) */
		if (!prepared)
			rec_site_prepare();
		if (plan & ~prepared & SB_NOFATAL)
			rec_signals_uninstall();
		if (plan & ~prepared & SB_NOBOUND)
			rec_sig_bound_off();
		if (plan & ~prepared & SB_WAITQ)
			rec_wait_freeze();
		prepared |= plan;
		/* what the process forks or executes from here runs unrecorded */
		env_disarm();
		rec_sandbox = plan & (REC_SB_ON | REC_SB_NOWALK | REC_SB_NOCHAN | REC_SB_NOREG |
		                      REC_SB_NOFILES);
	}
	r = real(arg);
	e = errno;
	if (ninsn && install_failed(r, strict ? 0 : flags)) {
		/* not installed: the filter is not in force (the ways round taken stay) */
		rec_seccomp_pop(filters);
		rec_sandbox = before;
		ninsn = 0;
	}
	rec_event_init(&ev, TRACE_EV_SANDBOX, call, -1);
	ev.result = r;
	ev.err = r < 0 ? e : 0;
	ev.naux = 3;
	ev.aux[0] = mode;
	ev.aux[1] = (int64_t)flags;
	ev.aux[2] = ninsn;
	if (ninsn && !strict) {
		ev.data = (const uint8_t *)&filters->insn[filters->off[filters->n - 1]];
		ev.data_len = ninsn * (uint32_t)sizeof(struct sock_filter);
	}
	rec_log(&ev, ra);
	rec_leave();
	errno = e;
	return r;
}

struct sandbox_args {
	long nr, a[5];
};

static long sandbox_real(void *p)
{
	const struct sandbox_args *s = p;

	return IP_REAL(syscall)(s->nr, s->a[0], s->a[1], s->a[2], s->a[3], s->a[4]);
}

/* The interposers of sandbox.h: the call (nr: SYS_prctl or SYS_seccomp, a: its arguments),
 * strict 1 or 0 (ip_sandbox_install). */
static long sandbox_do(long nr, const long *a, int strict, void *ra)
{
	struct sandbox_args s = { nr, { a[0], a[1], a[2], a[3], a[4] } };

	if (nr == SYS_prctl)
		return rec_sandbox_call(TRACE_CALL_PRCTL, a[1], 0, (const void *)a[2], strict,
		                        sandbox_real, &s, ra);
	return rec_sandbox_call(TRACE_CALL_SECCOMP, a[0], (unsigned long)a[1], (const void *)a[2],
	                        strict, sandbox_real, &s, ra);
}

#define IP_SANDBOX_CALL(nr, a, strict) sandbox_do(nr, a, strict, __builtin_return_address(0))
#include "sandbox.h"

/* A file size limit the trace already reaches fails every write of the writer (EFBIG): its
 * space is reserved first, so that the chunks go on into it (sshd's sandbox sets the limit
 * to 0 just before its filter, which forbids the writes anyway).  prlimit and the syscall(2)
 * forms are not seen. */
static void fsize_before(int resource, uint64_t cur)
{
	struct stat st;

	if (resource != RLIMIT_FSIZE || cur == (uint64_t)RLIM_INFINITY || rec_busy() || !rec.w ||
	    !rec_enter())
		return;
	/* failing, the writer stops at its next write, as it did before */
	if (syscall(SYS_fstat, trace_writer_fd(rec.w), &st) == 0 && (uint64_t)st.st_size >= cur)
		trace_writer_reserve(rec.w, SANDBOX_RESERVE);
	rec_leave();
}

REC_EXPORT int setrlimit(__rlimit_resource_t resource, const struct rlimit *rl)
{
	fsize_before((int)resource, (uint64_t)rl->rlim_cur);
	return IP_REAL(setrlimit)(resource, rl);
}

REC_EXPORT int setrlimit64(__rlimit_resource_t resource, const struct rlimit64 *rl)
{
	fsize_before((int)resource, (uint64_t)rl->rlim_cur);
	return IP_REAL(setrlimit64)(resource, rl);
}

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
	if (rec_sandbox_bar(REC_SB_NOCHAN))
		return; /* moving it needs fcntl, which a seccomp filter forbids: the trace ends */
	if (rec_registry_fd(fd)) {
		rec_registry_fd_lost();
		return;
	}
	/* The program asked for our descriptor's number (dup2/dup3 onto it): the trace moves to
	 * the lowest free number at or above the recorder's usual place (close-on-exec, like the
	 * original), and the old number is closed, so the program's call finds it free. */
	old = trace_writer_fd(rec.w);
	nfd = ip_dup_high(old, rec.min_fd);
	if (nfd < 0)
		nfd = dup_past_limit(old);
	if (nfd < 0 && rec.min_fd <= 64) /* a small hard limit: among the program's numbers */
		nfd = (int)syscall(SYS_fcntl, old, F_DUPFD_CLOEXEC, 3L);
	if (nfd < 0) {
		/* No descriptor left anywhere: the trace ends here, saying so. */
		trace_writer_stop(rec.w, TRACE_STOP_FDTAKEN);
		rec.w = NULL;
		return;
	}
	if (trace_writer_move_fd(rec.w, nfd) < 0) {
		/* a drain stuck in a write through the old number (trace_writer_move_fd): the
		 * trace ends here, saying so */
		syscall(SYS_close, nfd);
		trace_writer_stop(rec.w, TRACE_STOP_FDTAKEN);
		rec.w = NULL;
		return;
	}
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

		if (strict < 0)
			return 0;
		*r = sandbox_do(nr, a, strict, NULL);
		return 1;
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
	if (rec_sandbox & REC_SB_ON)
		return TRACE_STOP_SECCOMP; /* its recorder would meet the filter */
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
