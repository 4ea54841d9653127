/*
 * core.c: the recorder's process-wide machinery: the real_* pointers, the guard and lock,
 * the one environment variable (parsed at load, written again for exec), opening this
 * process's trace file, the session registry, and appending events.
 *
 * Lifecycle of one process image:
 *   constructor  resolve real_*; parse ENCORE_RECORD; open NAME[@SEG].trace in the session
 *                directory; declare inherited channels; install fatal-signal handlers;
 *                register an on_exit handler (it runs after every atexit handler of the
 *                program, so EXIT is the last event and carries the real status).
 *   destructor   flush only: on_exit handlers run after ELF destructors of preloaded
 *                libraries, and the EXIT event must still be written after us.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "rec.h"
#include "unwind.h"

/* (its first line read by every interposer: aligned, so that nothing written often shares it) */
struct rec_state rec __attribute__((aligned(64)));

__thread int rec_depth __attribute__((tls_model("initial-exec")));
/* Inside a library the recorder calls that calls libc back (dlsym, libunwind): its calls
 * are the recorder's own, not a signal handler's, and are not counted as unlogged. */
__thread int rec_internal __attribute__((tls_model("initial-exec")));
struct rec_lockline rec_lockline;

/* --- real functions --------------------------------------------------------------------- */

/* Around dlsym (interpose/resolve.c): it may itself call malloc or other libc functions;
 * the guard makes any call to an interposer from inside it pass straight through. */
void ip_guard(int delta)
{
	rec_depth += delta;
	rec_internal += delta;
}

/* --- guard and lock --------------------------------------------------------------------- */

int rec_forking;

/* The stream lock under contention.  Threads that wait for it used to yield in a loop: with
 * more threads than CPUs (memcached's four workers and its LRU thread on two), a waiter that
 * yields is picked again at once while the holder waits for a CPU, and the waiters' yields
 * were a fifth of the recorded server's context switches.  So: a short spin (the holder,
 * running on another CPU, is out within a few hundred nanoseconds: one event), a few yields,
 * then a futex wait, which marks the lock 2 so that its release wakes one waiter (rec_leave);
 * the classic three-state mutex (Drepper, "Futexes Are Tricky", mutex 3).  The yields come
 * first because a release that wakes a sleeper often loses its CPU to it: the releasing
 * thread stops right after its event, and the code it runs before its next one (its free
 * code) lands after many events of the others in the trace.  Replay places free code by
 * what the next call is (replayer/README.md, "Threads"), which such a recording contradicts:
 * with a sleep straight after the spin, BIND's dig diverged in 20 of 24 replays (libuv's
 * pending flag read before its loop thread reset it), 0 of 48 with the yields.  The fast path's exchange
 * writes 1 and may so hide a 2 (seen): a waiter that saw a 2 takes the lock as 2, so that its
 * own release wakes the next.  The wait has a timeout, a bound on any wakeup missed (a
 * release by a thread that took the lock while the process looked single-threaded, rec.h). */
#define REC_LOCK_SPIN 64
#define REC_LOCK_YIELDS 16

/* One try of the spin and yield phases: the lock taken (1), else *mark raised to 2 once a
 * waiter was seen (0). */
static inline int lock_try(int *mark)
{
	int v;

	if (__atomic_load_n(&rec_lockv, __ATOMIC_RELAXED) != 0)
		return 0;
	v = __atomic_exchange_n(&rec_lockv, *mark, __ATOMIC_ACQUIRE);
	if (v == 2)
		*mark = 2;
	return v == 0;
}

static int lock_wait(int seen, int may_bail)
{
	int mark = seen == 2 ? 2 : 1, i;

	for (i = 0; i < REC_LOCK_SPIN; i++) {
		rec_cpu_relax();
		if (lock_try(&mark))
			return 1;
	}
	for (i = 0; i < REC_LOCK_YIELDS; i++) {
		IP_REAL(syscall)(SYS_sched_yield);
		if (lock_try(&mark))
			return 1;
	}
	for (;;) {
		struct timespec ts = { 0, 1000 * 1000 };

		if (may_bail && __atomic_load_n(&rec_forking, __ATOMIC_ACQUIRE) && rec_held &&
		    __atomic_load_n(&rec_program_atfork, __ATOMIC_RELAXED))
			return 0; /* it holds a mutex the fork's atfork handlers may want (sync.c) */
		if (__atomic_exchange_n(&rec_lockv, 2, __ATOMIC_ACQUIRE) == 0)
			return 1;
		IP_REAL(syscall)(SYS_futex, &rec_lockv, FUTEX_WAIT_PRIVATE, 2, &ts, NULL, 0);
	}
}

int rec_lock_wait(int seen)
{
	return lock_wait(seen, 1);
}

void rec_lock_take(void)
{
	int seen = __atomic_exchange_n(&rec_lockv, 1, __ATOMIC_ACQUIRE);

	if (seen != 0)
		lock_wait(seen, 0);
}

void rec_lock_wake(void)
{
	int e = errno;

	IP_REAL(syscall)(SYS_futex, &rec_lockv, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	errno = e;
}

/* A fork holds the lock: wake its waiters, so that one holding a program lock gives up
 * waiting (lock_wait) rather than sleep while the fork's handlers may want that lock. */
void rec_lock_wake_all(void)
{
	int e = errno;

	IP_REAL(syscall)(SYS_futex, &rec_lockv, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
	errno = e;
}

void rec_leave_drain(void)
{
	struct trace_writer *w = rec.w;
	int claimed;

	rec_lockline.drain_due = 0;
	claimed = w && trace_writer_claim(w);
#if REC_SINGLE_THREADED
	if (__libc_single_threaded)
		__atomic_store_n(&rec_lockv, 0, __ATOMIC_RELEASE);
	else
#endif
	if (__atomic_exchange_n(&rec_lockv, 0, __ATOMIC_RELEASE) == 2)
		rec_lock_wake();
	/* Still inside the recorder (rec_depth): a signal handler's calls meanwhile pass
	 * unlogged, and a fatal signal waits for the end of the drain (rec_fatal_pending). */
	if (claimed)
		trace_writer_drain(w);
	rec_depth--;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&rec_fatal_pending, __ATOMIC_RELAXED) != 0 && rec_depth == 0 &&
	    rec_in_data == 0)
		rec_fatal_deferred();
}

void rec_lock_reset(void)
{
	/* a fork another thread was making is not this child's */
	__atomic_store_n(&rec_forking, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&rec_lockv, 0, __ATOMIC_RELEASE);
	rec_lockline.drain_due = 0; /* the parent's writer is not this child's */
}

/* --- events ----------------------------------------------------------------------------- */

uint64_t rec_now_ns(void)
{
	struct timespec ts;

	/* The coarse clock costs a few ns (no TSC read); timestamps are for display only. */
	if (!real_clock_gettime || real_clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void rec_event_init(struct trace_event *ev, uint32_t kind, uint32_t call, int fd)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	ev->call = call;
	ev->fd = fd;
	/* Timestamps are for display only (DESIGN.md), so the hot data events are sampled:
	 * one in 16 is stamped, every other kind always is. */
	if ((kind != TRACE_EV_SEND && kind != TRACE_EV_RECV) ||
	    (rec_lockline.data_events++ & 15) == 0)
		ev->time_ns = rec_now_ns();
}

void rec_log(struct trace_event *ev, void *ra)
{
	int *ep = &errno, e = *ep; /* the program's: a failed write of ours must not show through */

	if (!rec.w)
		return;
	if (rec.depth && ra)
		ev->site = rec_site(ra);
	ev->thread = __builtin_expect(rec_thread != REC_NO_THREAD, 1) ? rec_thread :
	                                                               rec_thread_foreign();
	rec_own_say(ev->thread);
	/* A full disk or a broken file leaves the program running unrecorded from here (the
	 * writer marked in the file where and why it stopped). */
	if (trace_writer_event(rec.w, ev) == TRACE_EIO) {
		trace_writer_abandon(rec.w);
		rec.w = NULL;
	}
	*ep = e;
	if (__builtin_expect(rec_sig_npend != 0, 0))
		rec_sig_after_event(ev); /* deferred signal handlers run after the event */
}

/* The content hash of what each channel sent since its last hashed event, in the EXIT
 * event's data: without it, bytes sent after a channel's last hash (every K-th event: a
 * short run's whole output) would go unchecked by a replay (schemas/trace-format.md, kind
 * 14).  (channel id, running hash) pairs, little-endian uint32 each; static storage: the
 * process is ending, and only one thread logs it (under the stream lock). */
#define EXIT_HASHES_MAX 256
static uint8_t exit_hash_buf[EXIT_HASHES_MAX * 8];

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void exit_hashes(struct trace_event *ev)
{
	uint32_t i, n = 0;

	for (i = 0; i < rec.chan_top && n < EXIT_HASHES_MAX; i++) {
		const struct rec_chan *c = &rec.chan[i];

		if (!c->id || !c->since[REC_OUT])
			continue;
		put_le32(exit_hash_buf + 8 * n, c->id);
		put_le32(exit_hash_buf + 8 * n + 4, c->hash[REC_OUT]);
		n++;
	}
	if (n) {
		ev->data = exit_hash_buf;
		ev->data_len = 8 * n;
	}
}

void rec_finish(int status, int signo)
{
	struct trace_event ev;

	if (!rec.w || rec.exited)
		return;
	rec.exited = 1;
	rec_files_flush(); /* open's notes still waiting (files.c) */
	if (signo) {
		rec_event_init(&ev, TRACE_EV_SIGNAL, TRACE_CALL_SIGNAL, -1);
		ev.result = signo;
		ev.naux = 1;
		ev.aux[0] = 1;
	} else {
		rec_event_init(&ev, TRACE_EV_EXIT, TRACE_CALL_EXIT, -1);
		ev.result = status;
	}
	/* Say whether the trace misses calls: those a signal handler made while it had
	 * interrupted the recorder (last aux entry; absent when there were none). */
	if (rec.unlogged)
		ev.aux[ev.naux++] = (int64_t)rec.unlogged;
	if (!signo) {
		rec_files_exit(); /* not from a signal handler: the loader's lock is not safe there */
		exit_hashes(&ev);
	}
	rec_log(&ev, NULL);
	trace_writer_close(rec.w);
	rec.w = NULL;
}

int rec_own_fd(int fd)
{
	return rec.w && fd >= 0 && (fd == trace_writer_fd(rec.w) || rec_registry_fd(fd));
}

/* --- configuration: the one environment variable ----------------------------------------
 * ENCORE_RECORD, encoded and decoded by interpose/env.c (the format is in interpose.h):
 * here the decoded value is applied to `rec`, and `rec` is turned into list iterators. */

static struct rec_chan *chan_by_id(uint32_t id)
{
	uint32_t i;

	for (i = 0; i < rec.chan_top; i++)
		if (rec.chan[i].id == id)
			return &rec.chan[i];
	return NULL;
}

static int apply_channels(struct ip_env_slice l)
{
	const char *p = l.p, *end = l.p + l.len;
	uint64_t v[IP_REC_CH_FIELDS];
	int r;

	while ((r = ip_env_list_next(&p, end, v, IP_REC_CH_FIELDS, 0)) > 0) {
		struct rec_chan *c;

		if (v[0] == 0 || v[0] > UINT32_MAX)
			return -1;
		c = rec_chan_new((uint8_t)v[1]);
		if (!c)
			return -1;
		c->id = (uint32_t)v[0];
		/* EXT: bit 0 external; bit 1 an accepted end still undecided (chan.c,
		 * rec_chan_in_external), with the peer's port in bits 16-31 and ours in 32-47:
		 * the process that accepted may hand the connection to a program it execs. */
		c->external = (v[2] & 1) != 0;
		if (v[2] & 2) {
			c->undecided = 1;
			c->peer_port = (uint16_t)(v[2] >> 16);
			c->local_port = (uint16_t)(v[2] >> 32);
		}
		c->dir = (uint8_t)v[3];
		c->bytes[0] = v[4];
		c->bytes[1] = v[5];
		c->hash[0] = (uint32_t)v[6];
		c->hash[1] = (uint32_t)v[7];
		c->since[0] = (uint32_t)v[8];
		c->since[1] = (uint32_t)v[9];
	}
	return r;
}

static int apply_fds(struct ip_env_slice l)
{
	const char *p = l.p, *end = l.p + l.len;
	uint64_t v[IP_REC_FD_FIELDS];
	int r;

	while ((r = ip_env_list_next(&p, end, v, IP_REC_FD_FIELDS, 0)) > 0) {
		struct rec_chan *c;

		if (v[0] >= REC_FD_MAX)
			return -1;
		c = chan_by_id((uint32_t)v[1]);
		if (!c)
			return -1;
		rec_fd_bind((int)v[0], c);
	}
	return r;
}

/* Returns 0 when the variable is valid.  *stale is set when it was written by another
 * process (a child started by posix_spawn or system(), which we did not see fork): its
 * channels and descriptors are not ours then. */
static int env_parse(const char *s, int *stale)
{
	struct ip_rec_env e;

	*stale = 0;
	if (ip_rec_env_decode(s, &e) != 0)
		return -1;
	*stale = e.pid != 0 && (pid_t)e.pid != (pid_t)syscall(SYS_getpid);
	memcpy(rec.name, e.name, sizeof(rec.name));
	memcpy(rec.parent, e.parent, sizeof(rec.parent));
	memcpy(rec.session, e.session, sizeof(rec.session));
	rec.segment = e.seg;
	rec.first_index = e.first;
	rec.fork_index = e.fork_index;
	rec.forks = e.forks;
	rec.next_chan = e.next_chan;
	rec.hash_every = e.hash_every;
	rec.depth = e.depth;
	rec.max_bytes = e.max_bytes;
	rec.zlevel = e.zlevel;
	snprintf(rec.dir, sizeof(rec.dir), "%s", e.dir);
	rec.dir_len = strlen(rec.dir);
	if (!*stale && (apply_channels(e.ch) != 0 || apply_fds(e.fd) != 0))
		return -1;
	return 0;
}

static uint8_t live[REC_CHAN_MAX]; /* rec_env_format: channel slot survives the exec */

/* Iterators over what survives the exec, for the encoder: the live channels, then the
 * descriptors not marked close-on-exec. */
static int next_chan_item(void *ctx, uint64_t *v)
{
	uint32_t *i = ctx;

	for (; *i < rec.chan_top; (*i)++) {
		struct rec_chan *c = &rec.chan[*i];

		if (!c->id || !live[*i])
			continue;
		v[0] = c->id;
		v[1] = c->type;
		v[2] = c->external ? 1 : 0;
		if (c->undecided)
			v[2] |= 2 | (uint64_t)c->peer_port << 16 | (uint64_t)c->local_port << 32;
		v[3] = c->dir;
		v[4] = c->bytes[0];
		v[5] = c->bytes[1];
		v[6] = c->hash[0];
		v[7] = c->hash[1];
		v[8] = c->since[0];
		v[9] = c->since[1];
		(*i)++;
		return 1;
	}
	return 0;
}

static int next_fd_item(void *ctx, uint64_t *v)
{
	int *fd = ctx;

	for (; *fd < REC_FD_MAX; (*fd)++) {
		int32_t slot = rec.fd[*fd];

		if (slot <= 0 || rec_fd_cloexec(*fd))
			continue;
		v[0] = (uint64_t)*fd;
		v[1] = rec.chan[slot - 1].id;
		(*fd)++;
		return 1;
	}
	return 0;
}

int rec_env_format(char *buf, size_t cap, uint32_t segment, uint64_t first_index)
{
	struct ip_rec_env e;
	uint32_t ci = 0;
	int fd = 0;
	struct ip_env_list ch = { next_chan_item, &ci, IP_REC_CH_FIELDS, 0 };
	struct ip_env_list fds = { next_fd_item, &fd, IP_REC_FD_FIELDS, 0 };

	if (cap < sizeof(REC_ENV) + 1)
		return -1;
	memset(&e, 0, sizeof(e));
	memcpy(e.name, rec.name, sizeof(e.name));
	memcpy(e.parent, rec.parent, sizeof(e.parent));
	memcpy(e.session, rec.session, sizeof(e.session));
	e.seg = segment;
	e.first = first_index;
	e.fork_index = rec.fork_index;
	e.forks = rec.forks;
	e.next_chan = rec.next_chan;
	e.pid = (int64_t)syscall(SYS_getpid);
	e.hash_every = rec.hash_every;
	e.depth = rec.depth;
	e.max_bytes = rec.max_bytes;
	e.zlevel = rec.zlevel;
	e.dir = rec.dir;
	/* Channels that survive the exec: those with a descriptor not marked close-on-exec
	 * (one pass over the descriptors; the new image recounts its descriptors). */
	memset(live, 0, rec.chan_top);
	for (fd = 0; fd < REC_FD_MAX; fd++)
		if (rec.fd[fd] > 0 && !rec_fd_cloexec(fd))
			live[rec.fd[fd] - 1] = 1;
	fd = 0;
	memcpy(buf, REC_ENV "=", sizeof(REC_ENV));
	return ip_rec_env_encode(buf + sizeof(REC_ENV), cap - sizeof(REC_ENV), &e, &ch, &fds);
}

/* --- registry: which pids and TCP ports of this host belong to recorded processes -------
 * Files in DIR/.encore-registry: "pid.N" (created when a recorded process starts), "tcp.P"
 * (a recorded process listens on port P), "conn.P" (a recorded process connected from
 * local port P).  The analyzer does not use them: they only let a recorder decide at record
 * time whether the bytes it receives come from a recorded peer (see README.md). */

/* The registry is used only as a directory of ours that nobody else may write, in a session
 * directory that is ours and closed to others (docs/security.md): a link planted at its name
 * would put these files wherever it points, so a link there is removed (the name, never its
 * target) and the directory made.  Anything else leaves the registry unused: recorded peers
 * then look external and their bytes are recorded, which replays too.  Checked once per
 * image (a forked child shares the answer); 1 when usable. */
static int registry_state; /* 0 not checked yet, 1 usable, -1 not */

/* The registry's directory, opened when the process starts (O_PATH, close-on-exec, moved
 * high like the trace's descriptor) and every entry looked up and made relative to it.  A
 * process that drops its privileges later (nginx's workers: root, then nobody) can no
 * longer reach DIR, 0700 and its owner's, by path; through this descriptor it still looks
 * entries up, the registry itself being 0711 (others may search it, not list it) and its
 * entries 0600 (a lookup needs no more than search).  Making an entry needs write
 * permission, which a dropped process lacks: its side of a connection is then external
 * (README.md, "Bytes").  -1 when not open; dev and inode say whether the number is still
 * ours (a program may close it behind our back with close_range and reuse the number). */
static int registry_fd = -1;
static dev_t registry_dev;
static ino_t registry_ino;

static void registry_release(void)
{
	if (registry_fd >= 0)
		syscall(SYS_close, registry_fd);
	registry_fd = -1;
}

/* Open the registry below dirfd (checked: a directory of ours, not writable by others) as
 * registry_fd. */
static void registry_open(int dirfd)
{
	struct stat st;
	int fd, hi;

	registry_release();
	fd = (int)syscall(SYS_openat, dirfd, REC_REGISTRY,
	                  O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022)) {
		syscall(SYS_close, fd);
		return;
	}
	/* out of the program's low numbers, as the trace's (above it: the trace takes the
	 * first free number from min_fd) */
	hi = ip_dup_high(fd, rec.min_fd > 0 ? rec.min_fd + 1 : 1001);
	syscall(SYS_close, fd);
	if (hi < 0)
		return;
	registry_fd = hi;
	registry_dev = st.st_dev;
	registry_ino = st.st_ino;
}

/* registry_fd if it is still the registry's descriptor, else -1. */
static int registry_dirfd(void)
{
	struct stat st;

	if (registry_fd < 0)
		return -1;
	if (fstat(registry_fd, &st) == 0 && st.st_dev == registry_dev && st.st_ino == registry_ino)
		return registry_fd;
	registry_fd = -1; /* not ours any more: never closed by us */
	return -1;
}

static void registry_check(int dirfd)
{
	struct stat st;

	if (fstatat(dirfd, REC_REGISTRY, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
		syscall(SYS_unlinkat, dirfd, REC_REGISTRY, 0);
	IP_REAL(mkdirat)(dirfd, REC_REGISTRY, 0711); /* not the interposer: ours */
	registry_state = fstatat(dirfd, REC_REGISTRY, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	                 S_ISDIR(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 022)
	                     ? 1
	                     : -1;
	if (registry_state < 0)
		return;
	/* searchable by others, whatever the umask (or an older recorder) made it: checked
	 * above to be our directory, not a link */
	if ((st.st_mode & 07777) != 0711)
		fchmodat(dirfd, REC_REGISTRY, 0711, 0);
	registry_open(dirfd);
}

static int registry_ready(void)
{
	struct stat st;
	int dirfd;

	if (registry_state)
		return registry_state > 0;
	registry_state = -1;
	dirfd = (int)syscall(SYS_openat, AT_FDCWD, rec.dir,
	                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd < 0)
		return 0;
	if (fstat(dirfd, &st) == 0 && st.st_uid == geteuid() && !(st.st_mode & 022))
		registry_check(dirfd);
	syscall(SYS_close, dirfd);
	return registry_state > 0;
}

/* Decimal digits of v at p; returns their number. */
static size_t put_dec(char *p, unsigned long v)
{
	char tmp[24];
	size_t n = 0, i;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	for (i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

/* The name of KIND.KEY[.SUB] in `name`, and the directory to take it relative to in *at:
 * the registry's descriptor, or (where it is gone) DIR/.encore-registry by path, which
 * works only while the process keeps the privileges it started with.  Built by hand: an
 * accepted loopback connection looks the registry up twice, and snprintf took about 1,600
 * instructions each time.  rec.dir is set once per image, before any lookup. */
static int registry_name(char *name, size_t cap, int *at, const char *kind, unsigned long key,
                         long sub)
{
	int dfd = registry_dirfd();
	size_t kl = strlen(kind), n = 0;

	*at = dfd >= 0 ? dfd : AT_FDCWD;
	if (dfd < 0) {
		size_t dl = strnlen(rec.dir, sizeof(rec.dir));

		if (dl + sizeof("/" REC_REGISTRY "/") >= cap)
			return -1;
		memcpy(name, rec.dir, dl);
		memcpy(name + dl, "/" REC_REGISTRY "/", sizeof("/" REC_REGISTRY "/") - 1);
		n = dl + sizeof("/" REC_REGISTRY "/") - 1;
	}
	if (n + kl + 2 * 24 > cap)
		return -1;
	memcpy(name + n, kind, kl);
	n += kl;
	name[n++] = '.';
	n += put_dec(name + n, key);
	if (sub >= 0) {
		name[n++] = '.';
		n += put_dec(name + n, (unsigned long)sub);
	}
	name[n] = '\0';
	return 0;
}

/* Create DIR/.encore-registry/KIND.KEY[.SUB] holding `content` (may be NULL).  With excl, an
 * existing file is a failure (used to claim a number).  Returns 0 or -1 (errno: why). */
static int registry_put(const char *kind, unsigned long key, long sub, const char *content,
                        int excl)
{
	char path[4096 + 64];
	int fd, at;

	if (!registry_ready())
		return -1;
	if (registry_name(path, sizeof(path), &at, kind, key, sub) != 0)
		return -1;
	fd = (int)syscall(SYS_openat, at, path,
	                  O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (excl ? O_EXCL : O_TRUNC),
	                  0600);
	if (fd < 0)
		return -1;
	if (content)
		syscall(SYS_write, fd, content, strlen(content));
	syscall(SYS_close, fd);
	return 0;
}

int rec_registry_add(const char *kind, unsigned long key, long sub)
{
	int e = errno, r = (rec_sandbox & REC_SB_NOREG) ? -1 : registry_put(kind, key, sub, NULL, 0);

	errno = e;
	return r;
}

void rec_registry_threads(void)
{
	/* threads.PID holding the logical name: `encore record` warns from these after the
	 * run, without reading every trace (a thread the recorder did not see start). */
	if (!(rec_sandbox & REC_SB_NOREG))
		registry_put("threads", (unsigned long)syscall(SYS_getpid), -1, rec.name, 0);
}

/* A lookup the registry cannot answer: its descriptor is gone (the program closed the number
 * with close_range or closefrom) and the path is closed to the process (it dropped its
 * privileges).  Taking the peer for an outside one while the peer takes us for a recorded
 * one would make a replay that waits forever, and taking it for a recorded one could leave
 * outside bytes unrecorded: the trace stops here instead, saying why (`encore record` and
 * `encore check` name the process; in replay it runs free from here). */
static void registry_unanswered(void)
{
	if (!rec.w)
		return;
	trace_writer_stop(rec.w, TRACE_STOP_PRIVDROP);
	rec.w = NULL;
}

int rec_registry_has(const char *kind, unsigned long key, long sub)
{
	char path[4096 + 64];
	struct stat st;
	int at, e = errno, r = 0;

	if (rec_sandbox_bar(REC_SB_NOREG)) /* a seccomp filter forbids the lookup (guard.c) */
		return 0;
	if (!registry_ready() || registry_name(path, sizeof(path), &at, kind, key, sub) != 0)
		return 0;
	if (fstatat(at, path, &st, AT_SYMLINK_NOFOLLOW) == 0)
		r = S_ISREG(st.st_mode);
	else if (errno == EACCES || errno == EPERM)
		registry_unanswered();
	errno = e;
	return r;
}

int rec_registry_fd(int fd)
{
	/* checked, not only compared: after a close_range that took it, the number may be the
	 * program's, and a close of it must then really close */
	return fd >= 0 && fd == registry_fd && registry_dirfd() == fd;
}

void rec_registry_fd_lost(void)
{
	/* dup2/dup3 of the program onto our number: move out of its way (to the first free
	 * number above the trace's), or give the descriptor up (lookups then go by path) */
	int nfd = ip_dup_high(registry_fd, rec.min_fd > 0 ? rec.min_fd + 1 : 1001);

	syscall(SYS_close, registry_fd);
	registry_fd = nfd >= 0 ? nfd : -1;
}

void rec_registry_exec(void)
{
	/* the program may have cleared close-on-exec on every descriptor: the new image opens
	 * its own (or, unrecorded, must not hold ours) */
	if (registry_fd >= 0)
		syscall(SYS_fcntl, registry_fd, F_SETFD, FD_CLOEXEC);
}

void rec_registry_unrecorded_child(void)
{
	registry_release(); /* a child that will not be recorded keeps nothing of ours */
}

/* --- opening the trace ------------------------------------------------------------------ */

extern char **environ;
static struct trace_process proc;
static char cmdline[65536];
static char *argvbuf[1024];

static void read_small(const char *path, char *out, size_t cap)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	long n = 0;

	out[0] = '\0';
	if (fd < 0)
		return;
	n = syscall(SYS_read, fd, out, cap - 1);
	syscall(SYS_close, fd);
	if (n < 0)
		n = 0;
	out[n] = '\0';
}

static int build_id_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	int n = rec_build_id(info, proc.build_id, sizeof(proc.build_id));

	(void)size;
	(void)data;
	proc.build_id_len = n > 0 ? (uint32_t)n : 0;
	return 1; /* only the first object: the executable */
}

/* Fill the parts of the header that belong to the image (once per image). */
static void proc_fill_image(void)
{
	struct utsname u;
	char *p, *end;
	long n;
	int fd;

	if (uname(&u) == 0)
		snprintf(proc.host, sizeof(proc.host), "%s", u.nodename);
	read_small("/etc/machine-id", proc.host_id, sizeof(proc.host_id));
	if ((p = strchr(proc.host_id, '\n')))
		*p = '\0';
	n = readlink("/proc/self/exe", proc.exe, sizeof(proc.exe) - 1);
	proc.exe[n > 0 ? n : 0] = '\0';
	if (!getcwd(proc.cwd, sizeof(proc.cwd)))
		proc.cwd[0] = '\0';
	proc.build_id_len = 0;
	dl_iterate_phdr(build_id_cb, NULL);

	fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	n = 0;
	if (fd >= 0) {
		long r;

		while (n < (long)sizeof(cmdline) - 1 &&
		       (r = syscall(SYS_read, fd, cmdline + n, sizeof(cmdline) - 1 - (size_t)n)) > 0)
			n += r;
		syscall(SYS_close, fd);
	}
	cmdline[n] = '\0';
	proc.argc = 0;
	for (p = cmdline, end = cmdline + n; p < end && proc.argc < 1024; p += strlen(p) + 1)
		argvbuf[proc.argc++] = p;
	proc.argv = argvbuf;
}

/* The image's address layout as exec made it (schemas/trace-format.md, "Address layout"):
 * filled by the constructor, written at the start of each trace (a forked child's too: it
 * has its parent's stack), for replay to run it with the same layout (encore record
 * --same-layout). */
static struct trace_layout rec_layout;

static void layout_fill(int argc, char **argv, char **envp)
{
	const char *fn = (const char *)getauxval(AT_EXECFN);
	uint32_t envc = 0;

	while (envp && envp[envc])
		envc++;
	rec_layout.argc = argc > 0 ? (uint32_t)argc : 0;
	rec_layout.envc = envc;
	/* argv's strings, then the environment's, then the file name, up from argv[0]'s */
	if (argc > 0 && argv && argv[0] && fn && fn > argv[0]) {
		rec_layout.argv0 = (uint64_t)(uintptr_t)argv[0];
		rec_layout.strings = (uint64_t)(fn - argv[0]) + strlen(fn) + 1;
	}
}

int rec_open_trace(int64_t ppid)
{
	struct trace_writer_options opt;
	struct trace_diag diag;
	struct timespec ts;
	struct stat st;
	struct rlimit nofile;
	char file[TRACE_NAME_MAX + 32];
	int dirfd, rc, raised = 0;

	snprintf(proc.name, sizeof(proc.name), "%s", rec.name);
	snprintf(proc.parent, sizeof(proc.parent), "%s", rec.parent);
	snprintf(proc.session, sizeof(proc.session), "%s", rec.session);
	proc.pid = (int64_t)syscall(SYS_getpid);
	proc.ppid = ppid;
	proc.fork_index = rec.fork_index;
	proc.segment = rec.segment;
	proc.first_index = rec.first_index;
	proc.flags = rec.owned_mutexes ? TRACE_PROC_OWNED_MUTEXES : 0; /* (sync.c) */
	proc.start_realtime_ns = 0;
	if (real_clock_gettime && real_clock_gettime(CLOCK_REALTIME, &ts) == 0)
		proc.start_realtime_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;

	if (trace_file_name(rec.name, rec.segment, file, sizeof(file)) < 0)
		return -1;
	/* The session directory must be ours and closed to others: a trace is written only
	 * where nobody else can plant a file or a link. */
	dirfd = (int)syscall(SYS_openat, AT_FDCWD, rec.dir,
	                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd < 0 && errno == EMFILE) {
		/* The program holds every descriptor it may have (a child of one that dup2'd onto
		 * all of them): ours go above its limit, which is put back at once. */
		raised = rec_nofile_raise(&nofile, 4);
		dirfd = (int)syscall(SYS_openat, AT_FDCWD, rec.dir,
		                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (dirfd < 0 || fstat(dirfd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
		if (dirfd >= 0)
			syscall(SYS_close, dirfd);
		if (raised)
			rec_nofile_restore(&nofile);
		return -1;
	}
	rec.owner = st.st_uid;
	registry_check(dirfd);
	memset(&opt, 0, sizeof(opt));
	memset(&diag, 0, sizeof(diag));
	opt.max_bytes = rec.max_bytes;
	/* Chunks are stored, and `encore record` compresses each trace once it is finished:
	 * compressing in the program's thread doubled what recording adds to a read of input
	 * bytes (bench/README.md, "Third round").  Compressed here when asked (--compress
	 * inline) or with a budget, whose drops count compressed bytes: at zstd level 1 by
	 * default, not the writer's 3, which on sync events cost 250 instructions per event
	 * against 10 (bench/README.md "sync") for no smaller file. */
	opt.level = rec.zlevel ? (int)rec.zlevel : rec.max_bytes ? 1 : TRACE_LEVEL_STORE;
	/* Two tails: a full one is compressed after the stream lock is released (rec_leave),
	 * not while the process's other threads wait for the lock (recorder/README.md). */
	opt.drain_due = &rec_lockline.drain_due;
	rc = trace_writer_open(dirfd, file, &proc, &opt, rec.min_fd, &rec.w, &diag);
	if (raised)
		rec_nofile_restore(&nofile);
	if (rc != 0) {
		/* No trace (the writer removed what it began): say why in the session, for
		 * `encore record` and `encore check`, as an empty file's name (a full disk still
		 * has room for that). */
		char note[sizeof(file) + sizeof(REC_REGISTRY) + 32];
		int fd;

		snprintf(note, sizeof(note), REC_REGISTRY "/notrace.%d.%s",
		         diag.sys_errno > 0 ? diag.sys_errno : EIO, file);
		fd = (int)syscall(SYS_openat, dirfd, note,
		                  O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			syscall(SYS_close, fd);
		syscall(SYS_close, dirfd);
		rec.w = NULL;
		return -1;
	}
	syscall(SYS_close, dirfd);
	if (trace_writer_fd(rec.w) < rec.min_fd) {
		/* min_fd at a small descriptor limit, which the writer's own move could not pass:
		 * raised for the move (ip_dup_high); where it cannot be (a small hard limit,
		 * unprivileged), the lowest free number past stdio, which the replay's controller
		 * takes for its one descriptor too (replayer/lc.c, move_high): the recorder keeps
		 * no other (the registry is then found by path, and call sites are not unwound:
		 * libunwind's pipe would take two more, site.c) */
		int old = trace_writer_fd(rec.w), hi = ip_dup_high(old, rec.min_fd);

		rec.fd_low = hi < 0 && rec.min_fd <= 64;
		if (rec.fd_low)
			hi = (int)syscall(SYS_fcntl, old, F_DUPFD_CLOEXEC, 3L);
		if (hi >= 0 && (hi < old || hi >= rec.min_fd)) {
			trace_writer_move_fd(rec.w, hi);
			syscall(SYS_close, old);
		} else if (hi >= 0) {
			syscall(SYS_close, hi);
		}
	}
	rec_layout.persona = (uint32_t)syscall(SYS_personality, 0xffffffffUL);
	rec_layout.stack = (uint64_t)(uintptr_t)&ts;
	trace_writer_layout(rec.w, &rec_layout);
	rec_files_new_trace();
	/* The pid file holds the logical name: a child started by posix_spawn or system()
	 * finds its parent's name there (its environment may be older than a fork). */
	registry_put("pid", (unsigned long)proc.pid, -1, rec.name, 0);
	return 0;
}

uint64_t rec_next_index(void)
{
	return rec.first_index + (rec.w ? trace_writer_count(rec.w) : 0) + 1;
}

/* --- load and unload -------------------------------------------------------------------- */

static void on_exit_handler(int status, void *arg)
{
	(void)arg;
	if (rec_enter()) {
		rec_finish(status, 0);
		rec_leave();
	}
}

__attribute__((constructor)) static void rec_init(int argc, char **argv, char **envp)
{
	const char *env;
	int stale = 0;

	layout_fill(argc, argv, envp); /* glibc gives constructors exec's argv and envp */
	ip_resolve_all();
	env = getenv(REC_ENV);
	if (!env || !*env)
		return;
	rec_depth++;
	rec_internal++;
	ip_unwind_load(); /* (before the program runs: the loader may be entered here) */
	{
		const char *om = getenv("ENCORE_OWNED_MUTEXES");

		rec.owned_mutexes = om && om[0] == '1';
	}
	if (env_parse(env, &stale) != 0)
		goto out;
	if (stale) {
		/* Started by a path we do not intercept (system and popen spawn through libc's
		 * internal posix_spawn): a new process, which the parent did not count.  It is
		 * recorded as PARENT.sK, PARENT from the pid registry (its environment may be
		 * older than the parent's last fork); its descriptors are classified at first
		 * use. */
		char base[TRACE_NAME_MAX], path[4096 + 64];
		unsigned long ppid = (unsigned long)syscall(SYS_getppid);
		long k;
		size_t i;

		snprintf(base, sizeof(base), "%s", rec.name);
		snprintf(path, sizeof(path), "%s/" REC_REGISTRY "/pid.%lu", rec.dir, ppid);
		read_small(path, base, sizeof(base));
		if (!ip_valid_name(base, strlen(base), TRACE_NAME_MAX))
			snprintf(base, sizeof(base), "%s", rec.name);
		/* The k-th such child of a parent is PARENT.sK: stable when the parent starts
		 * them one at a time, which is how system() and popen() are used. */
		for (k = 1; k < 100000 && registry_ready(); k++)
			if (registry_put("spawn", ppid, k, NULL, 1) == 0)
				break;
		snprintf(rec.parent, sizeof(rec.parent), "%s", base);
		snprintf(rec.name, sizeof(rec.name), "%.100s.s%ld", base, k);
		rec.segment = 0;
		rec.first_index = 0;
		rec.fork_index = 0;
		rec.forks = 0;
		rec.next_chan = 0;
		for (i = 0; i < REC_FD_MAX; i++)
			rec.fd[i] = REC_FD_UNKNOWN;
		memset(rec.chan, 0, rec.chan_top * sizeof(rec.chan[0]));
		rec.chan_top = 0;
		rec.chan_hint = 0;
	}
	rec.min_fd = ip_pick_min_fd();
	rec.active = 1;
	proc_fill_image();
	if (rec_open_trace((int64_t)syscall(SYS_getppid)) != 0)
		goto out;
	rec_early_flush(); /* the randomness of constructors that ran before ours (io_more.c) */
	rec_files_start();
	rec_chan_inherit_all();
	rec_signals_install();
	rec_atfork_install();
	on_exit(on_exit_handler, NULL);
	{
		/* Stamp our pid into the variable (encore record starts the root with pid=0): a
		 * child started behind our back (system, popen) then sees a pid that is not its
		 * own and knows it is a new process, not this one. */
		static char buf[65536];

		/* putenv: the variable points at buf, where setenv would have taken a copy from
		 * the program's heap and moved its blocks (schemas/trace-format.md, "Address
		 * layout") */
		if (rec_env_format(buf, sizeof(buf), rec.segment, rec.first_index) == 0)
			putenv(buf);
	}
	{
		/* The environment as the program will see it, the stamp included, for replay to
		 * give back (replayer/README.md, "Environment"); too large, it is left out */
		uint32_t envc = 0;

		while (environ && environ[envc] && envc <= TRACE_ENV_MAX_STRINGS)
			envc++;
		trace_writer_env(rec.w, environ, envc);
	}
out:
	rec_internal--;
	rec_depth--;
}

__attribute__((destructor)) static void rec_fini(void)
{
	if (rec_enter()) {
		trace_writer_flush(rec.w);
		rec_leave();
	}
}
