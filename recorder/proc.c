/*
 * proc.c: process life.  fork (the child gets its own trace, NAME.k), the exec family (the
 * new image continues the logical name as the next segment, its state carried in
 * ENCORE_RECORD), _exit, threads, and fatal signals (recorded, then re-raised with the
 * default disposition so the process dies exactly as it would have).  A child or image
 * that will not be recorded (guard.c says why) is noted in the FORK or EXEC event.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dlnext.h"
#include "rec.h"

#define RA() __builtin_return_address(0)

/* --- fork ----------------------------------------------------------------------------------- */

/* Set around the real fork of our interposer, so that the atfork handlers below know the
 * fork is already taken care of. */
static __thread int in_our_fork __attribute__((tls_model("initial-exec")));

/* The FORK event's aux: the child's number k, then, when the child will not be recorded,
 * why (a trace_stop_code: the parent's event is the only note the session can get). */
static void fork_aux(struct trace_event *ev, uint32_t k, int why)
{
	ev->naux = 1;
	ev->aux[0] = k;
	if (why)
		ev->aux[ev->naux++] = why;
}

/* In a new child (the guard held): forget the parent's writer copy without touching the
 * parent's file and shared tail, and start the trace of PARENT.k, unless the parent knew it
 * could not be made (why != 0). */
static void child_start(uint32_t k, uint64_t fork_index, pid_t parent_pid, int why)
{
	struct trace_writer *old = rec.w;

	/* a fatal signal held back in the parent across the fork was sent to the parent */
	__atomic_store_n(&rec_fatal_pending, 0, __ATOMIC_RELAXED);

	rec_sig_forked();
	rec.w = NULL;
	trace_writer_forked(old);
	trace_writer_abandon(old);
	if (why) {
		rec_registry_unrecorded_child();
		return; /* it could not open its trace (the parent's FORK event says why) */
	}
	snprintf(rec.parent, sizeof(rec.parent), "%s", rec.name);
	if ((size_t)snprintf(rec.name, sizeof(rec.name), "%s.%u", rec.parent, k) >=
	    sizeof(rec.name))
		return; /* name too long: unrecorded */
	rec.segment = 0;
	rec.first_index = 0;
	rec.fork_index = fork_index;
	rec.forks = 0;
	rec.exited = 0;
	rec.threads = 0;
	rec_threads_fork_child();
	rec.unlogged = 0;
	rec_site_new_trace();
	if (rec_open_trace(parent_pid) == 0)
		rec_chan_inherit_all();
}

/* The fork itself: fork(), or the program's own raw clone made as a fork (rec_fork_raw). */
static pid_t fork_call(long number, const long *a)
{
	if (!number)
		return IP_REAL(fork)();
	return (pid_t)IP_REAL(syscall)(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

static pid_t do_fork(void *ra, uint32_t call, long number, const long *a)
{
	/* the recorder's own descriptors (the registry's) must not move the numbers other
	 * threads get meanwhile (rec.h) */
	REC_FD_ORDER;
	struct trace_event ev;
	uint64_t idx;
	pid_t r, self;
	uint32_t k;
	int e, why;

	if (!rec_enter())
		return fork_call(number, a);
	if (rec_sandbox_bar(REC_SB_ON)) { /* under a seccomp filter: guard.c */
		rec_leave();
		return fork_call(number, a);
	}
	/* The guard and the lock are held across the fork: no other thread can be in the
	 * writer, and the child starts with a known state (it releases its copy of the lock). */
	k = ++rec.forks;
	idx = rec_next_index();
	self = (pid_t)syscall(SYS_getpid);
	why = rec_unrecorded_child();
	if (!why)
		rec_share_fork(); /* our pipe ends get offsets all their holders share */
	in_our_fork = 1;
	/* other threads do not wait for the lock while we hold it across the fork (rec.h) */
	__atomic_store_n(&rec_forking, 1, __ATOMIC_RELEASE);
	rec_lock_wake_all();
	r = fork_call(number, a);
	e = errno;
	__atomic_store_n(&rec_forking, 0, __ATOMIC_RELEASE);
	in_our_fork = 0;
	if (r != 0)
		rec_sync_flush_deferred(); /* what other threads did meanwhile */
	if (r == 0) {
		child_start(k, idx, self, why);
		rec_leave();
		return 0;
	}
	if (r < 0)
		rec.forks--;
	rec_event_init(&ev, TRACE_EV_FORK, call, -1);
	ev.result = r;
	ev.err = r < 0 ? e : 0;
	if (r > 0)
		fork_aux(&ev, k, why);
	rec_log(&ev, ra);
	rec_leave();
	errno = e;
	return r;
}

/* Forks made inside libc (daemon() calls fork internally, past our interposer) still run
 * the atfork handlers: the child gets its own trace as PARENT.k, and the parent logs a
 * FORK event whose result is 0 (the child's pid is not known here). */
static uint64_t unseen_fork_index;
static int unseen_fork_why;

static void atfork_prepare(void)
{
	if (!in_our_fork && rec.w && !rec_busy()) {
		unseen_fork_index = rec_next_index();
		unseen_fork_why = rec_unrecorded_child();
	}
}

static void atfork_parent(void)
{
	struct trace_event ev;

	if (in_our_fork || !rec_enter())
		return;
	rec_event_init(&ev, TRACE_EV_FORK, TRACE_CALL_FORK, -1);
	fork_aux(&ev, ++rec.forks, unseen_fork_why);
	rec_log(&ev, NULL);
	rec_leave();
}

static void atfork_child(void)
{
	if (in_our_fork || !rec.w || rec_busy())
		return;
	/* Only this thread exists now: a lock another thread held at the fork is void. */
	rec_lock_reset();
	if (!rec_enter())
		return;
	child_start(rec.forks + 1, unseen_fork_index, (pid_t)syscall(SYS_getppid), unseen_fork_why);
	rec_leave();
}

void rec_atfork_install(void)
{
	rec_depth++; /* ours: not the program's (__register_atfork below) */
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	rec_depth--;
}

REC_EXPORT pid_t fork(void)
{
	return do_fork(RA(), TRACE_CALL_FORK, 0, NULL);
}

/* A raw clone or clone3 made as a fork (ip_clone_is_fork: vsftpd forks its session
 * processes into new namespaces so) runs on from the call as a forked child does, and gets
 * its trace as one; unseen, it went on writing into its parent's trace and damaged it. */
long rec_fork_raw(long number, const long *a, void *ra)
{
	return do_fork(ra, number == SYS_clone ? TRACE_CALL_CLONE : TRACE_CALL_CLONE3, number, a);
}

/* vfork's child shares the parent's memory and stack until it execs: an interposer cannot
 * run its own code there safely, and the child needs a trace of its own anyway.  A fork is
 * a correct vfork for every program that uses vfork correctly (exec or _exit only). */
REC_EXPORT pid_t vfork(void)
{
	return do_fork(RA(), TRACE_CALL_FORK, 0, NULL);
}

/* --- exec ----------------------------------------------------------------------------------- */

extern char **environ;

static char self_path[4096];

const char *rec_self_so(void)
{
	Dl_info info;

	rec_internal_begin();
	if (!self_path[0] && dladdr((void *)rec_self_so, &info) && info.dli_fname &&
	    info.dli_fname[0] == '/')
		snprintf(self_path, sizeof(self_path), "%s", info.dli_fname);
	rec_internal_end();
	return self_path;
}

/* Build the environment of the new image in an mmap'd block (no malloc: exec is async-
 * signal-safe and may follow a fork in a threaded program).  ENCORE_RECORD is replaced by
 * the state of this process; LD_PRELOAD is kept or restored so that the new image is
 * recorded even if the program cleaned its environment. */
/* The variable for a child started by posix_spawn: a new process PARENT.k with no
 * channel map (it classifies the descriptors it got at first use). */
static int spawn_env_format(char *buf, size_t cap, uint32_t k, uint64_t fork_index)
{
	int n = snprintf(buf, cap,
	                 REC_ENV "=v=1;name=%s.%u;parent=%s;sess=%s;seg=0;first=0;fidx=%llu;"
	                         "forks=0;nch=0;pid=0;k=%u;depth=%u;max=%llu;zl=%u;ch=;fd=;dir=%s",
	                 rec.name, k, rec.name, rec.session, (unsigned long long)fork_index,
	                 rec.hash_every, rec.depth, (unsigned long long)rec.max_bytes, rec.zlevel,
	                 rec.dir);

	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* spawn_k > 0: the environment of the k-th child, started by posix_spawn, whose FORK event
 * will have index fork_index; 0: the environment of this process's next image. */
static char **build_env(char *const envp[], size_t *map_len, uint32_t spawn_k,
                        uint64_t fork_index)
{
	size_t n = 0, i, j = 0, strcap = 256 * 1024, len;
	const char *so = rec_self_so();
	char **out, *str, *preload = NULL;
	int have_preload = 0;

	while (envp && envp[n])
		n++;
	len = (n + 3) * sizeof(char *) + strcap + 4096 + 16;
	out = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (out == MAP_FAILED)
		return NULL;
	*map_len = len;
	str = (char *)(out + n + 3);
	if ((spawn_k ? spawn_env_format(str, strcap, spawn_k, fork_index)
	             : rec_env_format(str, strcap, rec.segment + 1, rec_next_index() - 1)) != 0) {
		munmap(out, len);
		return NULL;
	}
	out[j++] = str;
	preload = str + strlen(str) + 1;
	for (i = 0; i < n; i++) {
		if (strncmp(envp[i], REC_ENV "=", sizeof(REC_ENV)) == 0)
			continue;
		if (strncmp(envp[i], "LD_PRELOAD=", 11) == 0) {
			have_preload = 1;
			if (so[0] && !strstr(envp[i] + 11, so)) {
				snprintf(preload, 4096 + 16, "LD_PRELOAD=%s:%s", so, envp[i] + 11);
				out[j++] = preload;
				continue;
			}
		}
		out[j++] = envp[i];
	}
	if (!have_preload && so[0]) {
		snprintf(preload, 4096 + 16, "LD_PRELOAD=%s", so);
		out[j++] = preload;
	}
	out[j] = NULL;
	return out;
}

/* The real exec: execve, execvpe (search 1), or fexecve of fd (search 2). */
static int real_exec(int search, int fd, const char *file, char *const argv[],
                     char *const envp[])
{
	if (search == 2)
		return IP_REAL(fexecve)(fd, argv, envp);
	return search ? IP_REAL(execvpe)(file, argv, envp) : IP_REAL(execve)(file, argv, envp);
}

static int do_exec(int search, int fd, const char *file, char *const argv[],
                   char *const envp[], void *ra)
{
	struct trace_event ev;
	char **env = NULL;
	size_t env_len = 0;
	int r, e;

	if ((rec_sandbox & REC_SB_ON) && rec_enter()) { /* under a seccomp filter: guard.c */
		rec_sandbox_stop();
		rec_leave();
	}
	if (rec_enter()) {
		int why = rec_unrecorded_exec(file, search);

		rec_files_flush(); /* open's notes still waiting (files.c) */
		rec_event_init(&ev, TRACE_EV_EXEC, TRACE_CALL_EXECVE, -1);
		if (file) {
			ev.data = (const uint8_t *)file;
			ev.data_len = (uint32_t)strnlen(file, 4096);
		}
		/* aux[0]: why the new image will not be recorded (a trace_stop_code), if it
		 * will not: this event is the only note the session can get of it. */
		if (why) {
			ev.naux = 1;
			ev.aux[0] = why;
		}
		rec_log(&ev, ra);
		env = build_env(envp, &env_len, 0, 0);
		/* Seal: every event is written out and the file marked closed, so that it is
		 * complete if the exec succeeds (the descriptor is close-on-exec and the tail
		 * mapping goes with the image).  If the exec fails, the image goes on in the
		 * same file: its next event, the failure below, withdraws the closed mark.  A
		 * failed write leaves the writer broken, and the next event abandons it.  (The
		 * program may have cleared close-on-exec on every descriptor: set it again.) */
		if (rec.w) {
			syscall(SYS_fcntl, trace_writer_fd(rec.w), F_SETFD, FD_CLOEXEC);
			trace_writer_seal(rec.w);
		}
		rec_registry_exec();
		rec_leave();
		r = real_exec(search, fd, file, argv, env ? env : envp);
		e = errno;
		if (env)
			munmap(env, env_len);
		if (rec_enter()) {
			rec_event_init(&ev, TRACE_EV_EXEC, TRACE_CALL_EXECVE, -1);
			ev.result = r;
			ev.err = e;
			rec_log(&ev, ra);
			rec_leave();
		}
		errno = e;
		return r;
	}
	return real_exec(search, fd, file, argv, envp);
}

/* No events (interpose/calls.def): the child is recorded as PARENT.sK by its own recorder. */
REC_EXPORT int system(const char *command)
{
	return IP_REAL(system)(command);
}

REC_EXPORT FILE *popen(const char *command, const char *type)
{
	return IP_REAL(popen)(command, type);
}

REC_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return do_exec(0, -1, path, argv, envp, RA());
}

REC_EXPORT int execv(const char *path, char *const argv[])
{
	return do_exec(0, -1, path, argv, environ, RA());
}

REC_EXPORT int execvp(const char *file, char *const argv[])
{
	return do_exec(1, -1, file, argv, environ, RA());
}

REC_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return do_exec(1, -1, file, argv, envp, RA());
}

/* The event names the file as /proc/self/fd/N (what the kernel runs). */
REC_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return do_exec(2, fd, path, argv, envp, RA());
}

/* execl*: gather the arguments into a vector (in an mmap'd block: no malloc). */
#define EXECL_MAX 65536

static char **gather(const char *arg, va_list ap, char ***envp_out, size_t *len)
{
	char **v;
	size_t n = 0;

	*len = EXECL_MAX * sizeof(char *);
	v = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (v == MAP_FAILED)
		return NULL;
	v[n++] = (char *)arg;
	while (arg && n < EXECL_MAX - 1) {
		arg = va_arg(ap, const char *);
		v[n++] = (char *)arg;
	}
	v[n] = NULL;
	if (envp_out)
		*envp_out = va_arg(ap, char **);
	return v;
}

#define EXECL(search, name, with_env) \
	va_list ap; \
	char **v, **envp = environ; \
	size_t len; \
	int r, e; \
	va_start(ap, arg); \
	v = gather(arg, ap, with_env ? &envp : NULL, &len); \
	va_end(ap); \
	if (!v) { \
		errno = ENOMEM; \
		return -1; \
	} \
	r = do_exec(search, -1, name, v, envp, RA()); \
	e = errno; \
	munmap(v, len); \
	errno = e; \
	return r

REC_EXPORT int execl(const char *path, const char *arg, ...)
{
	EXECL(0, path, 0);
}

REC_EXPORT int execlp(const char *file, const char *arg, ...)
{
	EXECL(1, file, 0);
}

REC_EXPORT int execle(const char *path, const char *arg, ...)
{
	EXECL(0, path, 1);
}

/* --- posix_spawn ---------------------------------------------------------------------------
 * The child is the k-th forked child, PARENT.k, with a FORK event in the parent, as for
 * fork.  (system() and popen() spawn through libc's internal entry point, which we do not
 * see: their children name themselves PARENT.sK, see core.c.) */

static int do_spawn(int search, pid_t *pid, const char *file,
                    const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
                    char *const argv[], char *const envp[], void *ra)
{
	struct trace_event ev;
	char **env;
	size_t env_len = 0;
	uint64_t idx;
	uint32_t k;
	int r, why;

	if ((rec_sandbox & REC_SB_ON) && rec_enter()) { /* under a seccomp filter: guard.c */
		rec_sandbox_stop();
		rec_leave();
	}
	if (!rec_enter())
		return search ? IP_REAL(posix_spawnp)(pid, file, fa, attr, argv, envp)
		              : IP_REAL(posix_spawn)(pid, file, fa, attr, argv, envp);
	k = ++rec.forks;
	idx = rec_next_index();
	why = rec_unrecorded_exec(file, search);
	env = build_env(envp, &env_len, k, idx);
	r = search ? IP_REAL(posix_spawnp)(pid, file, fa, attr, argv, env ? env : envp)
	           : IP_REAL(posix_spawn)(pid, file, fa, attr, argv, env ? env : envp);
	if (env)
		munmap(env, env_len);
	rec_event_init(&ev, TRACE_EV_FORK, TRACE_CALL_FORK, -1);
	if (r == 0) {
		ev.result = pid ? *pid : 0;
		fork_aux(&ev, k, why);
	} else {
		rec.forks--;
		ev.result = -1;
		ev.err = r; /* posix_spawn returns the error number, errno is untouched */
	}
	rec_log(&ev, ra);
	rec_leave();
	return r;
}

REC_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                           const posix_spawnattr_t *attr, char *const argv[],
                           char *const envp[])
{
	return do_spawn(0, pid, path, fa, attr, argv, envp, RA());
}

REC_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                            const posix_spawnattr_t *attr, char *const argv[],
                            char *const envp[])
{
	return do_spawn(1, pid, file, fa, attr, argv, envp, RA());
}

/* --- exit ----------------------------------------------------------------------------------- */



/* --- threads --------------------------------------------------------------------------------
 * A thread made through pthread_create runs our trampoline first, which sets its index (the
 * THREAD event's result) before the program's start routine and logs its end after it.  The
 * stream lock is held across the real pthread_create, so the creation is logged before any
 * event of the new thread (its first interposed call waits for the lock): replay creates it
 * at that point, before it can be expected to do anything. */

struct rec_start {
	void *(*fn)(void *);
	void *arg;
	uint32_t index;
};

static __thread int rec_thread_ended __attribute__((tls_model("initial-exec")));

uintptr_t rec_alloc_lo, rec_alloc_hi;

/* Before the other constructors: the allocator may read a clock at its first malloc. */
__attribute__((constructor(101))) static void alloc_init(void)
{
	ip_alloc_range(&rec_alloc_lo, &rec_alloc_hi);
}

/* pthread_t -> index, for pthread_join's aux: a ring of the last threads made. */
#define REC_JOIN_RING 1024
static struct {
	pthread_t t;
	uint32_t index;
} made[REC_JOIN_RING];
static uint32_t made_next;

static void thread_end_event(void *ra)
{
	struct trace_event ev;

	if (rec_thread == REC_NO_THREAD || rec_thread_ended || !rec_enter())
		return;
	rec_thread_ended = 1; /* pthread_exit from a TLS destructor: one end */
	rec_event_init(&ev, TRACE_EV_THREAD, TRACE_CALL_THREAD_EXIT, -1);
	rec_log(&ev, ra);
	rec_leave();
	/* libc's teardown of the thread follows (TLS destructors, an allocator's caches): it
	 * keeps its index, its synchronisation stays ordered (the allocator's state decides
	 * what other threads' trylocks find), and a join returns after it */
}

static void *rec_trampoline(void *p)
{
	struct rec_start s = *(struct rec_start *)p;
	void *ret;

	rec_thread = s.index; /* before free: the allocator's locks are this thread's already */
	free(p);
	ret = s.fn(s.arg);
	thread_end_event(NULL);
	return ret;
}

REC_EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *),
                              void *arg)
{
	REC_FD_ORDER; /* the registry's descriptor, the first time (rec.h) */
	struct rec_start *st;
	struct trace_event ev;
	int r;

	/* a thread the allocator makes (jemalloc's background thread) runs the allocator's code,
	 * which is not ordered (rec.h, rec_from_alloc): it is not one of ours */
	if (!rec.w || rec_busy() || rec_thread == REC_NO_THREAD || rec_from_alloc(RA()))
		return IP_REAL(pthread_create)(t, attr, fn, arg);
	/* the allocator's locks taken here (jemalloc's) are ours, not the program's: the
	 * replayer's allocation is internal too, so both sides order the same calls */
	rec_depth++;
	rec_internal_begin();
	st = malloc(sizeof(*st));
	rec_internal_end();
	rec_depth--;
	if (!st)
		return IP_REAL(pthread_create)(t, attr, fn, arg);
	if (!rec_enter()) {
		free(st);
		return IP_REAL(pthread_create)(t, attr, fn, arg);
	}
	rec.threads = 1; /* from here, synchronisation is logged (sync.c) */
	st->fn = fn;
	st->arg = arg;
	st->index = rec.nthreads + 1;
	/* what libc does inside (an allocator's locks...) is ours, not the program's */
	rec_internal_begin();
	r = IP_REAL(pthread_create)(t, attr, rec_trampoline, st);
	rec_internal_end();
	rec_event_init(&ev, TRACE_EV_THREAD, TRACE_CALL_PTHREAD_CREATE, -1);
	if (r == 0) {
		rec.nthreads++;
		ev.result = st->index;
		made[made_next % REC_JOIN_RING].t = *t;
		made[made_next++ % REC_JOIN_RING].index = st->index;
	} else {
		free(st);
		ev.result = -r;
	}
	rec_log(&ev, RA());
	rec_leave();
	return r;
}

/* A library after us that looks pthread_create up with dlsym(RTLD_NEXT) (jemalloc's
 * background thread) gets this one too (interpose/dlnext.h): its thread gets an index. */
extern __typeof__(pthread_create) rec_pthread_create_ours
	__attribute__((alias("pthread_create"), visibility("hidden"), nothrow));
IP_DLSYM(rec_pthread_create_ours);

REC_EXPORT void pthread_exit(void *ret)
{
	thread_end_event(RA());
	IP_REAL(pthread_exit)(ret);
	__builtin_unreachable();
}

/* An acquiring call: logged once it returned (the thread it joined logged its end before). */
REC_EXPORT int pthread_join(pthread_t t, void **ret)
{
	int r = IP_REAL(pthread_join)(t, ret);
	struct trace_event ev;

	if (!rec.threads || rec_thread == REC_NO_THREAD || rec_from_alloc(RA()) || !rec_enter())
		return r;
	rec_event_init(&ev, TRACE_EV_THREAD, TRACE_CALL_PTHREAD_JOIN, -1);
	ev.result = r;
	ev.naux = 1;
	ev.aux[0] = -1;
	for (uint32_t i = 0; i < REC_JOIN_RING && i < made_next; i++)
		if (made[i].t == t) {
			ev.aux[0] = made[i].index;
			break;
		}
	rec_log(&ev, RA());
	rec_leave();
	return r;
}

uint32_t rec_thread_foreign(void)
{
	static int noted;

	/* before the first pthread_create, the main thread before sync.c's constructor ran */
	if (rec.threads && !noted) {
		noted = 1;
		rec_registry_threads();
	}
	return 0;
}

int rec_program_atfork;

/* glibc's, not in its headers (pthread_atfork calls it). */
int __register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void), void *dso);

REC_EXPORT int __register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void),
                                 void *dso)
{
	if (!rec_busy())
		__atomic_store_n(&rec_program_atfork, 1, __ATOMIC_RELAXED);
	return IP_REAL(__register_atfork)(prepare, parent, child, dso);
}

void rec_threads_fork_child(void)
{
	rec_thread = 0;
	rec.nthreads = 0;
	made_next = 0;
	rec_sync_fork_child();
	rec_stdio_fork_child();
}

/* --- fatal signals -------------------------------------------------------------------------
 * For each signal whose default action kills the process and whose disposition is SIG_DFL,
 * the recorder installs a handler that logs SIGNAL, closes the trace, restores SIG_DFL and
 * raises the signal again.  A program that installs its own handler replaces ours (it then
 * sees its own handler, and a query of the old action reports SIG_DFL, as without us). */

static const int fatal_sigs[] = {
	SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS, SIGTERM, SIGINT, SIGHUP,
	SIGQUIT, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF,
};

static uint64_t ours; /* bit s: our handler is installed for signal s */

int rec_fatal_pending;
__thread int rec_in_data;

static void die_of(int sig);

static void fatal_handler(int sig, siginfo_t *si, void *uc)
{
	int e = errno;

	(void)uc;
	/* The init of a PID namespace (a container's first process, a raw clone with
	 * CLONE_NEWPID): the kernel ignores a sent signal left at the default action there, so
	 * it is ignored here too (our handler was let in only because it is one). */
	if (si && si->si_code <= 0 && syscall(SYS_getpid) == 1) {
		errno = e;
		return;
	}
	/* Sent (kill, tgkill, sigqueue: not a fault, which would recur) while this thread was
	 * inside the recorder, which cannot log then: the death waits for the thread to leave
	 * it (rec_leave), so that the trace ends in its SIGNAL event, closed.  Without this a
	 * shell's `kill` that came as the program made a file the shell waited for (its path
	 * record being written) left the trace cut short, and the replay could not end it at
	 * its recorded death point. */
	if ((rec_depth != 0 || rec_in_data != 0) && !rec_internal && si && si->si_code <= 0 &&
	    rec.w &&
	    __atomic_load_n(&rec_fatal_pending, __ATOMIC_RELAXED) == 0) {
		__atomic_store_n(&rec_fatal_pending, sig, __ATOMIC_RELAXED);
		errno = e;
		return;
	}
	die_of(sig);
	errno = e;
}

void rec_fatal_deferred(void)
{
	int sig = __atomic_exchange_n(&rec_fatal_pending, 0, __ATOMIC_RELAXED);

	if (sig > 0)
		die_of(sig);
}

/* The SIGNAL event, the trace closed, then the signal again under the default action. */
static void die_of(int sig)
{
	struct sigaction sa;

	if (rec_enter()) {
		rec_finish(0, sig);
		rec_leave();
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	IP_REAL(sigaction)(sig, &sa, NULL);
	__atomic_fetch_and(&ours, ~(1ull << sig), __ATOMIC_RELAXED);
	/* In the handler the signal is blocked while we run: it is delivered, with the default
	 * action, as soon as we return (a fault would also recur on the faulting instruction);
	 * deferred, at once: the mask is the program's, which let it in. */
	syscall(SYS_tgkill, (pid_t)syscall(SYS_getpid), (pid_t)syscall(SYS_gettid), sig);
}

static int install_ours(int sig, struct sigaction *old)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fatal_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (IP_REAL(sigaction)(sig, &sa, old) != 0)
		return -1;
	__atomic_fetch_or(&ours, 1ull << sig, __ATOMIC_RELAXED);
	return 0;
}

static int is_fatal(int sig)
{
	size_t i;

	for (i = 0; i < sizeof(fatal_sigs) / sizeof(fatal_sigs[0]); i++)
		if (fatal_sigs[i] == sig)
			return 1;
	return 0;
}

void rec_signals_install(void)
{
	size_t i;

	for (i = 0; i < sizeof(fatal_sigs) / sizeof(fatal_sigs[0]); i++) {
		struct sigaction cur;

		if (IP_REAL(sigaction)(fatal_sigs[i], NULL, &cur) == 0 &&
		    ip_sa_dfl(&cur))
			install_ours(fatal_sigs[i], NULL);
	}
}

void rec_signals_uninstall(void)
{
	struct sigaction sa;
	int sig;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (sig = 1; sig < 64; sig++)
		if (__atomic_load_n(&ours, __ATOMIC_RELAXED) & (1ull << sig)) {
			IP_REAL(sigaction)(sig, &sa, NULL);
			__atomic_fetch_and(&ours, ~(1ull << sig), __ATOMIC_RELAXED);
		}
}

static int is_ours(int sig)
{
	return sig > 0 && sig < 64 && (__atomic_load_n(&ours, __ATOMIC_RELAXED) & (1ull << sig));
}

static void fake_default(struct sigaction *old)
{
	memset(old, 0, sizeof(*old));
	old->sa_handler = SIG_DFL;
}

REC_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int was = is_ours(sig), r, e;
	struct sigaction prev;
	int held = rec_sig_prog(sig, &prev);

	/* A program restoring SIG_DFL keeps our handler, which acts as SIG_DFL plus a log. */
	if (act && ip_sa_dfl(act) && rec.w &&
	    is_fatal(sig)) {
		r = install_ours(sig, old);
		e = errno;
		if (r == 0 && held)
			rec_sig_drop(sig);
		if (r == 0 && old && was)
			fake_default(old);
		else if (r == 0 && old && held)
			*old = prev;
		errno = e;
		return r;
	}
	/* (signals.c keeps the program's handlers of asynchronous signals) */
	r = rec_sig_action(sig, act, old);
	e = errno;
	if (r == 0) {
		if (old && was)
			fake_default(old);
		if (act && was)
			__atomic_fetch_and(&ours, ~(1ull << sig), __ATOMIC_RELAXED);
	}
	errno = e;
	return r;
}

/* signal(): glibc's BSD semantics (SA_RESTART, the signal blocked in its handler), through
 * sigaction above. */
REC_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sig > 0 && sig < 65 && sigaddset(&sa.sa_mask, sig) != 0) {
		errno = EINVAL;
		return SIG_ERR;
	}
	if (sigaction(sig, &sa, &old) != 0)
		return SIG_ERR;
	return (old.sa_flags & SA_SIGINFO) ? (sighandler_t)(void (*)(void))old.sa_sigaction
	                                   : old.sa_handler;
}

/* The EXIT shape's handler (interpose/calls.def): _exit and _Exit are generated
 * (rec_wrappers.h, below): the EXIT event, then the real call. */
#define REC_SHAPE_EXIT(nm, wh, call, STATUS, realcall) \
	if (rec_enter()) { \
		rec_finish(STATUS, 0); \
		rec_leave(); \
	} \
	realcall; \
	__builtin_unreachable()

#include "rec_wrappers.h"
