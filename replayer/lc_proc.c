/*
 * lc_proc.c: the local controller's process-life interposers, the twins of recorder/proc.c:
 * fork, exec, posix_spawn, exit, threads and the signal calls the replayer must see.  A fork
 * gives the child the recorded name PARENT.k and its own trace; an exec continues the
 * process in the next segment of its trace (the state in ENCORE_REPLAY, lc.c).
 */
#undef _FILE_OFFSET_BITS
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ENCORE_NO_MARK_MACRO
#include "encore.h"
#include "lc.h"

/* --- process life ---------------------------------------------------------------------------- */

/* Set around the real fork of our interposer: the atfork handlers below then know the fork
 * is taken care of. */
static __thread int in_our_fork __attribute__((tls_model("initial-exec")));

/* Every signal is blocked across a fork until the child's controller has its own trace: a
 * signal another process sends the new child at once (its pid is known as soon as fork
 * returns in the parent) would otherwise reach the trampoline (lc_signals.c) while the
 * child has no events yet, and run the program's handler there instead of being counted for
 * the handler run the trace places later (a replay that then waited for it for ever).  Kept
 * pending, it is delivered once the mask is restored.  The program's mask is unchanged. */
static void fork_block(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, old, _NSIG / 8);
}

static void fork_unblock(const sigset_t *old)
{
	int e = errno;

	syscall(SYS_rt_sigprocmask, SIG_SETMASK, old, NULL, _NSIG / 8);
	errno = e;
}

/* Forks made inside libc (daemon() forks past our interposer) still run the atfork handlers;
 * the recorder logged them the same way: a FORK event (result 0) in the parent, and the
 * child as PARENT.k. */
static __thread sigset_t libc_fork_mask __attribute__((tls_model("initial-exec")));
static __thread int libc_fork_blocked __attribute__((tls_model("initial-exec")));

static void atfork_prepare(void)
{
	if (in_our_fork || !lc_on())
		return;
	fork_block(&libc_fork_mask);
	libc_fork_blocked = 1;
}

static void atfork_parent(void)
{
	if (in_our_fork || !lc_on())
		return;
	lc_expect(TRACE_EV_FORK, -1, "fork (inside libc)");
	lc_commit();
	if (libc_fork_blocked) {
		libc_fork_blocked = 0;
		fork_unblock(&libc_fork_mask);
	}
}

static void atfork_child(void)
{
	const struct lc_ev *ev;

	if (in_our_fork || !lc_on())
		return;
	ev = lc_peek();
	if (!ev || ev->kind != TRACE_EV_FORK)
		lc_diverge("a fork inside libc the recorded run did not make");
	lc_child_start(ev->naux ? (uint32_t)ev->aux[0] : 0);
	if (libc_fork_blocked) {
		libc_fork_blocked = 0;
		fork_unblock(&libc_fork_mask);
	}
}

void lc_atfork_install(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* The fork itself: fork(), or the program's own raw clone made as a fork (lc_fork_raw). */
static pid_t fork_call(long number, const long *a)
{
	if (!number)
		return IP_REAL(fork)();
	return (pid_t)IP_REAL(syscall)(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

static pid_t do_fork(const char *what, long number, const long *a)
{
	const struct lc_ev *ev;
	sigset_t mask;
	uint32_t k;
	pid_t r;

	if (!lc_on())
		return fork_call(number, a);
	ev = lc_expect(TRACE_EV_FORK, -1, what);
	LC_RECORDED_FAILURE(ev);
	k = ev->naux ? (uint32_t)ev->aux[0] : 0;
	in_our_fork = 1;
	fork_block(&mask);
	lc_fork_pass(1);
	r = fork_call(number, a);
	lc_fork_pass(0);
	in_our_fork = 0;
	if (r == 0) {
		lc_child_start(k);
		fork_unblock(&mask);
		return 0;
	}
	fork_unblock(&mask);
	if (r < 0)
		lc_diverge("%s failed: %s (it succeeded when recorded)", what, strerror(errno));
	/* The recorded child pid, as the child's getpid says; kill and the wait family
	 * translate it (lc_pids.c). */
	lc_pid_child((pid_t)ev->result, r);
	if (ev->result > 0)
		r = (pid_t)ev->result;
	lc_commit();
	return r;
}

LC_EXPORT pid_t fork(void)
{
	return do_fork("fork", 0, NULL);
}

LC_EXPORT pid_t vfork(void)
{
	return do_fork("fork", 0, NULL); /* as the recorder does: a fork is a correct vfork */
}

/* A raw clone or clone3 made as a fork (ip_clone_is_fork): the recorder logged it as one. */
long lc_fork_raw(long number, const long *a)
{
	return do_fork(number == SYS_clone ? "syscall(SYS_clone)" : "syscall(SYS_clone3)",
	               number, a);
}

/* exec (the recorder: an EXEC event ends the image's trace; the new image continues the
 * logical name as the next segment, NAME@s.trace; a failed exec continues in a segment whose
 * first event is a second EXEC with the error).  The new image's LC gets our channels and
 * descriptors in ENCORE_REPLAY. */
/* The real exec: execve, execvpe (search 1), or fexecve of fd (search 2). */
static int real_exec(int search, int fd, const char *path, char *const argv[],
                     char *const envp[])
{
	if (search == 2)
		return IP_REAL(fexecve)(fd, argv, envp);
	return search ? IP_REAL(execvpe)(path, argv, envp) : IP_REAL(execve)(path, argv, envp);
}

static int do_exec(int search, int fd, const char *path, char *const argv[],
                   char *const envp[])
{
	const struct lc_ev *ev;
	char **env;
	int r, e;

	if (!lc_on())
		return real_exec(search, fd, path, argv, envp);
	lc_expect(TRACE_EV_EXEC, -1, "exec");
	env = lc_exec_env(envp);
	if (!env)
		lc_diverge("exec: the replay state does not fit in the new image's environment");
	lc_commit();
	lc.slot->index = lc.pos;
	r = real_exec(search, fd, path, argv, env);
	e = errno;
	/* The failure is the next event: in this image's trace, or first in the next segment
	 * (recorders before the segment numbering fix closed the image at every exec). */
	ev = lc_peek();
	if (!ev || ev->kind != TRACE_EV_EXEC)
		lc_exec_failed();
	ev = lc_expect(TRACE_EV_EXEC, -1, "exec");
	if (ev->result >= 0)
		lc_diverge("exec of %s failed: %s (it succeeded when recorded)", path, strerror(e));
	e = ev->err;
	lc_commit();
	errno = e;
	return r;
}

/* The child gets the replay's own variables, not the recorded ones the program now sees
 * (lc.c, lc_env_spawn_begin). */
LC_EXPORT int system(const char *command)
{
	char **saved = lc_env_spawn_begin();
	int r = IP_REAL(system)(command), e = errno;

	lc_env_spawn_end(saved);
	errno = e;
	return r;
}

LC_EXPORT FILE *popen(const char *command, const char *type)
{
	char **saved = lc_env_spawn_begin();
	FILE *r = IP_REAL(popen)(command, type);
	int e = errno;

	lc_env_spawn_end(saved);
	errno = e;
	return r;
}

LC_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return do_exec(0, -1, path, argv, envp);
}

LC_EXPORT int execv(const char *path, char *const argv[])
{
	return do_exec(0, -1, path, argv, environ);
}

LC_EXPORT int execvp(const char *file, char *const argv[])
{
	return do_exec(1, -1, file, argv, environ);
}

LC_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return do_exec(1, -1, file, argv, envp);
}

LC_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return do_exec(2, fd, path, argv, envp);
}

/* posix_spawn: a FORK event in the parent (aux[0] = k); the child is PARENT.k from its start. */
static int do_spawn(int search, pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                    const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	const struct lc_ev *ev;
	char **env;
	int r;

	static int (*real_spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
	                         const posix_spawnattr_t *, char *const[], char *const[]);
	static int (*real_spawnp)(pid_t *, const char *, const posix_spawn_file_actions_t *,
	                          const posix_spawnattr_t *, char *const[], char *const[]);
	int (*real)(pid_t *, const char *, const posix_spawn_file_actions_t *,
	            const posix_spawnattr_t *, char *const[], char *const[]);

	if (!real_spawn)
		real_spawn = (__typeof__(real_spawn))ip_resolve("posix_spawn");
	if (!real_spawnp)
		real_spawnp = (__typeof__(real_spawnp))ip_resolve("posix_spawnp");
	real = search ? real_spawnp : real_spawn;
	if (!lc_on())
		return real(pid, file, fa, attr, argv, envp);
	ev = lc_expect(TRACE_EV_FORK, -1, "posix_spawn");
	if (ev->result < 0) {
		int e = ev->err;

		lc_commit();
		return e ? e : EAGAIN;
	}
	env = lc_spawn_env(envp, ev->naux ? (uint32_t)ev->aux[0] : 0);
	r = real(pid, file, fa, attr, argv, env ? env : envp);
	if (r != 0)
		lc_diverge("posix_spawn of %s failed: %s (it succeeded when recorded)", file,
		           strerror(r));
	if (pid && ev->result > 0) {
		lc_pid_child((pid_t)ev->result, *pid);
		*pid = (pid_t)ev->result;
	}
	lc_commit();
	return 0;
}

LC_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                          const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return do_spawn(0, pid, path, fa, attr, argv, envp);
}

LC_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                           const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return do_spawn(1, pid, file, fa, attr, argv, envp);
}

/* Variadic execs: collect the arguments (at most 1024) and go through execve. */
static int execl_common(const char *path, const char *arg, va_list ap, int with_env, int search)
{
	char *argv[1024];
	char *const *envp = environ;
	int n = 0;

	argv[n++] = (char *)arg;
	while (arg && n < 1023) {
		arg = va_arg(ap, const char *);
		argv[n++] = (char *)arg;
	}
	argv[n] = NULL;
	if (with_env)
		envp = va_arg(ap, char *const *);
	return do_exec(search, -1, path, argv, envp);
}

LC_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = execl_common(path, arg, ap, 0, 0);
	va_end(ap);
	return r;
}

LC_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = execl_common(file, arg, ap, 0, 1);
	va_end(ap);
	return r;
}

LC_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	int r;

	va_start(ap, arg);
	r = execl_common(path, arg, ap, 1, 0);
	va_end(ap);
	return r;
}

LC_EXPORT void exit(int status)
{
	IP_REAL(exit)(status); /* EXIT is consumed by the on_exit handler, after atexit ones */
	__builtin_unreachable();
}



/* pthread_create, pthread_exit, pthread_join: lc_sync.c, with the turn. */

/* Only the recorder needs to know (recorder/proc.c). */
/* glibc's, not in its headers (pthread_atfork calls it). */
int __register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void), void *dso);

LC_EXPORT int __register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void),
                                void *dso)
{
	return IP_REAL(__register_atfork)(prepare, parent, child, dso);
}

/* A seccomp sandbox (prctl(PR_SET_SECCOMP), seccomp(2), their syscall(2) forms; nr and
 * a[5] as syscall(2) takes them).  Recorded through (a SANDBOX event): the recorded result
 * is returned and the filter is NOT installed, since it would forbid the controller's own
 * calls (its messages to the GD); the process runs without its sandbox in replay
 * (replayer/README.md, "Differences").  Where the recorder stopped the trace just before it
 * (recorder/guard.c), the process is at the end of its trace: it runs free from here, before
 * the filter can forbid the controller's calls, and the filter goes in. */
long lc_sandbox_call(long nr, const long *a, int strict)
{
	const struct lc_ev *ev;
	long r;

	(void)strict;
	if (lc_on() && (ev = lc_peek()) != NULL && ev->kind == TRACE_EV_SANDBOX) {
		ev = lc_expect(TRACE_EV_SANDBOX, -1, nr == SYS_prctl ? "prctl" : "seccomp");
		r = (long)ev->result;
		if (r < 0)
			errno = ev->err;
		lc_commit();
		return r;
	}
	if (lc_on())
		lc_run_free();
	return IP_REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4]);
}

#define IP_SANDBOX_CALL(nr, a, strict) lc_sandbox_call(nr, a, strict)
#include "sandbox.h"

/* Only the recorder needs to know (recorder/guard.c: trace space reserved ahead). */
LC_EXPORT int setrlimit(__rlimit_resource_t resource, const struct rlimit *rl)
{
	return IP_REAL(setrlimit)(resource, rl);
}

LC_EXPORT int setrlimit64(__rlimit_resource_t resource, const struct rlimit64 *rl)
{
	return IP_REAL(setrlimit64)(resource, rl);
}

/* (sigaction and signal: lc_signals.c) */

/* The EXIT shape's handler (interpose/calls.def): _exit and _Exit are generated
 * (lc_wrappers.h, below): the recorded EXIT event, then the real call. */
#define LC_SHAPE_EXIT(nm, wh, call, STATUS, realcall) \
	if (lc_on()) \
		lc_exit_event(STATUS); \
	realcall; \
	__builtin_unreachable()

#include "lc_wrappers.h"
