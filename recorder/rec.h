/*
 * rec.h: what the files of libencore-record.so share.  Private to recorder/, never
 * installed.  Everything here has hidden visibility (the library is built with
 * -fvisibility=hidden); only the interposers and encore_mark are exported.
 *
 * The model (recorder/README.md says more):
 *   - one global `rec` state per process: the writer, the logical name, the configuration
 *     that came in ENCORE_RECORD, the fd -> channel table and the channel table;
 *   - every interposer calls the real function first, then logs while holding the guard:
 *     a per-thread depth counter that makes every call the recorder makes itself (the
 *     writer's write(2), fstat, getsockname...) and every call made by a signal handler
 *     that interrupted the logging pass straight through, unrecorded;
 *   - a spin lock serialises the writer between threads (the writer is not thread safe):
 *     the order of the events in the one stream is the order in which the process's threads
 *     passed interposed calls, which replay enforces (recorder/README.md, "Threads").
 */
#ifndef ENCORE_REC_H
#define ENCORE_REC_H

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#include "interpose.h"
#include "trace.h"

/* glibc's __libc_single_threaded (2.32+): nonzero while the process has one thread; glibc
 * clears it before it starts the first other thread, however the thread is made (the
 * program's pthread_create, or libc's own: timer and aio helpers), and never sets it again. */
#if defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define REC_SINGLE_THREADED 1
#endif
#endif
#ifndef REC_SINGLE_THREADED
#define REC_SINGLE_THREADED 0
#endif

#define REC_HIDDEN IP_HIDDEN
#define REC_EXPORT IP_EXPORT

/* Name of the one environment variable carrying the configuration and, across exec, the
 * state of the process (segment, event index, fork counter, descriptor map). */
#define REC_ENV "ENCORE_RECORD"
/* Where the registry of recorded pids and TCP ports lives inside the session directory. */
#define REC_REGISTRY ".encore-registry"

/* Fixed sizes (interpose.h): no malloc on hot paths.  Descriptors >= REC_FD_MAX and
 * channels beyond REC_CHAN_MAX live ones are not recorded (documented limit). */
#define REC_FD_MAX IP_FD_MAX
#define REC_CHAN_MAX IP_CHAN_MAX

/* The real functions: IP_REAL(name) (interpose.h). */

/* Per-direction state of a channel end in this process. */
enum { REC_OUT = 0, REC_IN = 1 };

struct rec_chan {
	uint32_t id;          /* process-local channel id; 0 marks a free slot */
	uint8_t type;         /* enum trace_chan_type */
	uint8_t external;     /* peer not known to be recorded: received bytes are INPUT */
	uint8_t undecided;    /* TCP accept from loopback: decide at the first data */
	uint8_t dir;          /* pipes: 1 read end, 2 write end, 0 both ways */
	uint16_t peer_port;   /* TCP: the peer's port, for the undecided case */
	uint16_t local_port;  /* TCP: our port; UDP: our port once a send logged it (chan.c) */
	uint8_t unix_dgram;   /* a Unix datagram socket: its sends log as UDP's do (chan.c) */
	uint8_t dgram_known;  /* unix_dgram is decided (at socket(), else at the first send) */
	uint8_t reg;          /* registry entry made for it: 0 none, REC_REG_TCP, REC_REG_CONN,
	                         REC_REG_FAILED */
	uint16_t share;       /* a pipe end or connection other processes hold: its slot + 1
	                         (share.c), or 0 */
	uint32_t nfds;        /* descriptors of this process referring to it */
	uint64_t bytes[2];    /* bytes sent [REC_OUT] and received [REC_IN] so far */
	uint32_t hash[2];     /* trace_hash() of those bytes */
	uint32_t since[2];    /* events since the last one that carried the hash */
};

/* fd table values. */
#define REC_FD_UNKNOWN 0   /* not classified yet: fstat at first use */
#define REC_FD_IGNORED (-1) /* regular file, directory, epoll, eventfd...: left alone */
#define REC_FD_RANDOM (-2)  /* /dev/urandom or /dev/random: reads are RANDOM events */

struct rec_state {
	/* Read on every event: kept together at the start. */
	struct trace_writer *w;     /* NULL: not recording (disabled, failed or exited) */
	uint32_t hash_every;        /* K: every K-th event of a direction carries the hash */
	uint32_t depth;             /* call-site frames to resolve */
	int exited;                 /* EXIT logged */
	uint64_t unlogged;          /* calls passed through because the guard was held */
	int active;                 /* configuration was found and parsed */
	uint32_t segment;
	uint64_t first_index;
	uint64_t fork_index;
	uint32_t forks;             /* children forked so far: the next is NAME.(forks+1) */
	uint32_t next_chan;         /* last channel id handed out */
	uint64_t max_bytes;         /* disk budget, 0 unbounded */
	uint32_t zlevel;            /* zstd level of the chunks; 0: stored (writer.c, compact.c) */
	int min_fd;                 /* the writer's descriptor lives at or above this */
	int owned_mutexes;          /* ENCORE_OWNED_MUTEXES=1 (encore record --owned-mutexes):
	                               mutexes are owned (sync.c); else every mutex call is an
	                               event, as the traces of older recorders have them */
	int fd_low;                 /* a small hard descriptor limit kept it below min_fd: the
	                             * trace alone, among the program's numbers (core.c) */
	int threads;                /* pthread_create seen: synchronisation is logged (sync.c) */
	uint32_t nthreads;          /* threads started through pthread_create: the last index */
	uid_t owner;                /* owner of the session directory (checked at open) */
	uint32_t chan_hint;         /* where to start looking for a free slot */
	uint32_t chan_top;          /* slots from here on were never used: scans stop there */
	int32_t fd[REC_FD_MAX];     /* fd -> slot + 1, or REC_FD_UNKNOWN / REC_FD_IGNORED */
	struct rec_chan chan[REC_CHAN_MAX];
	char dir[4096];             /* session directory (absolute) */
	size_t dir_len;             /* strlen(dir), set with it (files.c compares a path per open) */
	char name[TRACE_NAME_MAX];
	char parent[TRACE_NAME_MAX];
	char session[64];
};

extern struct rec_state rec REC_HIDDEN;

/* --- guard and lock (core.c) ---------------------------------------------------------- */
/* Inline: they run on every intercepted call (a call into core.c cost more than the lock).
 * rec_depth is the per-thread guard; rec_internal marks calls made from inside a library
 * the recorder called (dlsym, libunwind), which are its own and not counted as unlogged. */
extern __thread int rec_depth REC_HIDDEN __attribute__((tls_model("initial-exec")));
extern __thread int rec_internal REC_HIDDEN __attribute__((tls_model("initial-exec")));
/* The stream lock's word and the counters only its holder writes, alone in one cache line
 * (the type is aligned, so also sized, to 64 bytes): every event's take and release write
 * the word, and it used to share its line with the start of `rec` (rec.w, read first by every
 * interposer in every thread, lock held or not), so that those reads missed in the other
 * threads after each take and release (bench/README.md, "Session 9").  v: see rec_leave. */
struct rec_lockline {
	int v;
	uint32_t data_events;       /* send/recv events so far: one in 16 is timestamped */
	uint32_t clock_events;      /* clock reads so far: one in 16 is timestamped */
	int drain_due;              /* the writer left a full tail to drain (rec_leave_drain) */
} __attribute__((aligned(64)));
extern struct rec_lockline rec_lockline REC_HIDDEN;
#define rec_lockv (rec_lockline.v) /* the lock's word, by its older name */
/* The calling thread's index in the process (creation order, 0 the main thread), or
 * REC_NO_THREAD in a thread the recorder did not see start (made inside libc): its
 * synchronisation is not logged, its other events count as the main thread's.  A thread
 * keeps its index after its end event (libc's teardown of it is still its own). */
#define REC_NO_THREAD UINT32_MAX
extern __thread uint32_t rec_thread REC_HIDDEN __attribute__((tls_model("initial-exec")));
/* The mutex acquisitions this thread made without an event since its last one (sync.c,
 * "Owned mutexes"): said to the writer just before its next event. */
extern __thread uint32_t rec_own_pending REC_HIDDEN __attribute__((tls_model("initial-exec")));

/* Under the stream lock, before the writer gets an event of `thread`. */
static inline void rec_own_say(uint32_t thread)
{
	if (__builtin_expect(rec_own_pending != 0, 0) && thread == rec_thread) {
		trace_writer_elided(rec.w, rec_own_pending);
		rec_own_pending = 0;
	}
}
/* Locks (mutexes, rwlocks, spin locks) the calling thread holds, as sync.c saw them. */
extern __thread int rec_held REC_HIDDEN __attribute__((tls_model("initial-exec")));
/* The program's allocator as a library of its own (interpose/dlnext.h, set by proc.c): a
 * call it makes (ra: the interposer's return address) passes through, no event, for its
 * synchronisation, clock reads and threads. */
extern uintptr_t rec_alloc_lo REC_HIDDEN, rec_alloc_hi REC_HIDDEN;
static inline int rec_from_alloc(const void *ra)
{
	return (uintptr_t)ra - rec_alloc_lo < rec_alloc_hi - rec_alloc_lo;
}

/* A fatal signal sent to the process (kill, a shell's `kill`) while a thread was inside the
 * recorder, which could not log it there: its number, taken when that thread leaves
 * (proc.c, rec_fatal_deferred: the SIGNAL event, then the death). */
extern int rec_fatal_pending REC_HIDDEN;
REC_HIDDEN void rec_fatal_deferred(void);
/* The calling thread is inside a data interposer (chan.c, REC_DATA_CALL), from before its
 * real call to after its event: a fatal signal sent meanwhile waits for the event too.  A
 * shell's SIGTERM that landed after a send's real call and before its event left the trace
 * without bytes the peer had received (ncat's broker: 1 replay in 30 diverged).  A blocked
 * call the signal interrupts returns (EINTR: the recorder's handler has no SA_RESTART); a
 * call that so failed (EINTR, SIGPIPE's EPIPE) is not logged, its result never reaching the
 * program: the death alone is, as before. */
extern __thread int rec_in_data REC_HIDDEN __attribute__((tls_model("initial-exec")));
static inline int rec_data_call_begin(void)
{
	rec_in_data++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return 0;
}
static inline void rec_data_call_end(int *unused)
{
	(void)unused;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (--rec_in_data == 0 &&
	    __builtin_expect(__atomic_load_n(&rec_fatal_pending, __ATOMIC_RELAXED) != 0, 0) &&
	    rec_depth == 0)
		rec_fatal_deferred();
}
#define REC_DATA_CALL \
	int rec_data_call_ __attribute__((cleanup(rec_data_call_end), unused)) = \
	        rec_data_call_begin()

/* The stream lock's values: 0 free, 1 held, 2 held and a thread may sleep on it (a futex
 * wait in rec_lock_wait): only then does the release make a system call to wake one. */
REC_HIDDEN void rec_lock_wake(void);

/* rec_leave when the writer left a full tail to compress (trace.h, trace_writer_claim):
 * the lock is released first, and the tail compressed after, so that the process's other
 * threads log meanwhile (recorder/README.md, "Two tails"). */
REC_HIDDEN void rec_leave_drain(void);

static inline void rec_leave(void)
{
	if (__builtin_expect(rec_lockline.drain_due != 0, 0)) {
		rec_leave_drain();
		return;
	}
#if REC_SINGLE_THREADED
	if (__builtin_expect(__libc_single_threaded, 1))
		__atomic_store_n(&rec_lockv, 0, __ATOMIC_RELEASE); /* (no other thread to wake) */
	else
#endif
	if (__builtin_expect(__atomic_exchange_n(&rec_lockv, 0, __ATOMIC_RELEASE) == 2, 0))
		rec_lock_wake();
	rec_depth--;
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* (a signal after it is not held back) */
	if (__builtin_expect(__atomic_load_n(&rec_fatal_pending, __ATOMIC_RELAXED) != 0, 0) &&
	    rec_depth == 0 && rec_in_data == 0)
		rec_fatal_deferred();
}

/* Contended lock (threads): wait until it is free and return 1, or return 0 without it
 * when a fork holds it (rec_forking), this thread holds a program lock (rec_held) and the
 * program registered fork handlers (rec_program_atfork): the fork runs them, and they may wait
 * for this very thread (a handler locking a mutex this thread holds while calling an
 * interposed function), so waiting could hang the program.  Otherwise it waits: a short spin,
 * then a futex wait (core.c says why).  seen: what the failed exchange found there.
 * Out of line, never on the fast path. */
REC_HIDDEN int rec_lock_wait(int seen);
/* The same without the way out for a fork (a thread that holds no program lock). */
REC_HIDDEN void rec_lock_take(void);
/* A fork takes the lock across the real fork: the waiters re-check whether to give up. */
REC_HIDDEN void rec_lock_wake_all(void);
/* One step of a busy wait: the CPU's pause hint. */
static inline void rec_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}
extern int rec_forking REC_HIDDEN;
/* The program registered fork handlers (proc.c): only then may a fork wait for a thread. */
extern int rec_program_atfork REC_HIDDEN;

/* Enter the logging section: returns 1 (and takes the lock) when the caller may log, 0 when
 * it must not (not recording, or the recorder itself or a signal handler interrupting it is
 * the caller).  Pair a 1 with rec_leave(). */
static inline int rec_enter(void)
{
	int seen;

	if (__builtin_expect(rec.w == NULL, 0))
		return 0;
	if (__builtin_expect(rec_depth != 0, 0)) {
		/* The recorder itself, or a signal handler that interrupted it mid-event: log
		 * nothing (a queued event would need storage a handler cannot allocate). */
		if (!rec_internal)
			__atomic_fetch_add(&rec.unlogged, 1, __ATOMIC_RELAXED);
		return 0;
	}
	rec_depth++;
#if REC_SINGLE_THREADED
	if (__builtin_expect(__libc_single_threaded, 1)) {
		/* One thread: no other can hold the lock, and the atomic exchange (a locked
		 * instruction, a quarter of a clock read's logging cost) is not needed.  The lock
		 * is still marked held: a thread started from a signal handler that interrupts
		 * this event (glibc clears the flag before the thread exists) waits for it. */
		__atomic_store_n(&rec_lockv, 1, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	} else
#endif
	if (__builtin_expect((seen = __atomic_exchange_n(&rec_lockv, 1, __ATOMIC_ACQUIRE)) != 0,
			     0) &&
	    !rec_lock_wait(seen)) {
		/* another thread forks: this call goes unlogged, counted (never waited for) */
		rec_depth--;
		__atomic_fetch_add(&rec.unlogged, 1, __ATOMIC_RELAXED);
		return 0;
	}
	if (__builtin_expect(rec.w == NULL, 0)) {
		rec_leave();
		return 0;
	}
	return 1;
}

/* Around calls into libraries that call libc back (libunwind, dladdr). */
static inline void rec_internal_begin(void)
{
	rec_internal++;
}

static inline void rec_internal_end(void)
{
	rec_internal--;
}

/* 1 when the calling thread is inside the recorder (for the interposers' pass-through). */
static inline int rec_busy(void)
{
	return rec_depth != 0;
}

/* --- events (core.c) ------------------------------------------------------------------ */
/* Fill the common fields of an event: kind, call, fd, time.  The caller sets the rest. */
REC_HIDDEN void rec_event_init(struct trace_event *ev, uint32_t kind, uint32_t call, int fd);
/* Append; `ra` is the interposer's return address, for the call-site id. */
REC_HIDDEN void rec_log(struct trace_event *ev, void *ra);
/* Record that the process ends (idempotent); closes the writer. */
REC_HIDDEN void rec_finish(int status, int signo);
/* 1 when fd is one of ours: the writer's or the registry's.  Interposers refuse to let the
 * program close them. */
REC_HIDDEN int rec_own_fd(int fd);
/* One of our descriptors (fd) about to be replaced by dup2/dup3 of the program (guard.c):
 * the trace moves to another descriptor first; where none is left, it stops, saying why. */
REC_HIDDEN void rec_own_fd_lost(int fd);
REC_HIDDEN uint64_t rec_now_ns(void);

/* rec_event_init for the hot value events (clock reads above all: the most frequent event of
 * servers that time each command): every field the writer reads is set, nothing else (aux
 * stays unwritten with naux 0), instead of clearing the whole event first; the display
 * timestamp is the caller's (0: not stamped).  Same event as rec_event_init's otherwise. */
static inline void rec_event_fill(struct trace_event *ev, uint32_t kind, uint32_t call,
                                  uint64_t time_ns)
{
	ev->index = 0;
	ev->kind = kind;
	ev->call = call;
	ev->flags = 0;
	ev->fd = -1;
	ev->channel = 0;
	ev->site = 0;
	ev->result = 0;
	ev->err = 0;
	ev->len = 0;
	ev->offset = 0;
	ev->time_ns = time_ns;
	ev->hash = 0;
	ev->has_hash = 0;
	ev->naux = 0;
	ev->data = NULL;
	ev->data_len = 0;
}

/* The display timestamp of a clock read: one in 16 is stamped, as sends and receives are
 * (timestamps are for display only, docs/design.md; the value logged is a time already), so
 * that a clock read seldom costs a second clock read. */
static inline uint64_t rec_clock_stamp(void)
{
	return (rec_lockline.clock_events++ & 15) == 0 ? rec_now_ns() : 0;
}

/* --- process start (core.c) ----------------------------------------------------------- */
/* Open this process's trace file (root, forked child or new image). Returns 0 or -1. */
REC_HIDDEN int rec_open_trace(int64_t ppid);
/* The process-wide index the next event will get: events of earlier images (first_index)
 * plus those of this image's file.  Fork indices and exec hand-overs use it, never the
 * writer's per-file count alone. */
REC_HIDDEN uint64_t rec_next_index(void);
/* Serialise the state for an exec into buf: "ENCORE_RECORD=...". Returns 0 or -1. */
REC_HIDDEN int rec_env_format(char *buf, size_t cap, uint32_t segment, uint64_t first_index);

/* --- registry (core.c): who in the session is recorded -------------------------------- */
/* Entries are KIND.KEY, or KIND.KEY.SUB when sub >= 0. */
#define REC_REG_TCP 1  /* tcp.PORT: a recorded process listens on PORT */
#define REC_REG_CONN 2 /* conn.PORT.SERVERPORT: a recorded process connected from PORT */
#define REC_REG_FAILED 3 /* a listener whose tcp.PORT could not be made (privileges dropped) */
/* Make an entry: 0, or -1 when it could not be made (no registry, or privileges dropped:
 * the peer will then take this end for an outside one).  errno is kept. */
REC_HIDDEN int rec_registry_add(const char *kind, unsigned long key, long sub);
/* 1 when the entry exists (looked up through the registry's descriptor). */
REC_HIDDEN int rec_registry_has(const char *kind, unsigned long key, long sub);
/* The registry's descriptor (opened at start, so that a process that drops its privileges
 * keeps using the registry): is fd it; the program dup2s onto it (move it); an exec is
 * made (close-on-exec again); a forked child will not be recorded (close it). */
REC_HIDDEN int rec_registry_fd(int fd);
REC_HIDDEN void rec_registry_fd_lost(void);
REC_HIDDEN void rec_registry_exec(void);
REC_HIDDEN void rec_registry_unrecorded_child(void);
/* A thread the recorder did not see start made an event (threads.PID, holding the logical
 * name): its order is not the recorded one. */
REC_HIDDEN void rec_registry_threads(void);

/* --- channels (chan.c) ---------------------------------------------------------------- */
REC_HIDDEN struct rec_chan *rec_fd_chan(int fd);
REC_HIDDEN struct rec_chan *rec_chan_new(uint8_t type);
REC_HIDDEN void rec_fd_bind(int fd, struct rec_chan *c);
REC_HIDDEN void rec_fd_forget(int fd);
/* With threads: a descriptor number taken (what 1) or freed (2) by a call making no channel
 * (chan.c), under the fd-order lock. */
REC_HIDDEN void rec_fdnum(uint32_t call, int fd, long result, int what, void *ra);
/* files.c: fd was just opened on a regular file (chan.c: classified now, no fstat later). */
REC_HIDDEN void rec_fd_regular(int fd);
/* fd was closed by syscall(SYS_close) (libuv closes so): as close, a CLOSE event of call
 * syscall when it was the last descriptor of its channel.  Called with the guard held. */
REC_HIDDEN void rec_fd_closed_raw(int fd, void *ra);
/* The same for syscall(SYS_close_range, first, last, 0). */
REC_HIDDEN void rec_fd_range_closed_raw(unsigned int first, unsigned int last, void *ra);
REC_HIDDEN uint32_t rec_fd_channel_id(int fd);
/* A receive on c of `asked` bytes returned r (errno e): is it external input?  Decides an
 * accepted end left undecided once the result shows the peer acted (bytes, end of stream,
 * reset). */
REC_HIDDEN int rec_chan_in_external(struct rec_chan *c, long r, int e, size_t asked);
/* A descriptor received with SCM_RIGHTS becomes a channel end (NULL: not a channel); *ep
 * describes it, *what is its enum trace_pass_what. */
REC_HIDDEN struct rec_chan *rec_chan_adopt(int fd, struct trace_endpoint *ep, int *what, void *ra);
/* fd was just opened for reading on a /proc or /sys file: make it an outside channel's end
 * (its reads are INPUT events), logging its PIPE event.  Guard held. */
REC_HIDDEN void rec_chan_kernel_file(int fd, uint64_t ino, void *ra);

/* --- descriptor passing (ancillary.c) ------------------------------------------------- */
/* A sendmsg or recvmsg that succeeded with ancillary data. */
static inline int rec_anc_present(const struct msghdr *m, long r)
{
	return m != NULL && r >= 0 && m->msg_control != NULL && m->msg_controllen != 0;
}
/* Before a sendmsg's event: classify the descriptors it passed (their first-use events come
 * before the send, where the replayer meets them too). */
REC_HIDDEN void rec_anc_classify(const struct msghdr *m);
/* After the send or receive event of sendmsg/recvmsg on fd: one PASS event per descriptor
 * passed (dir REC_OUT) or received (REC_IN). */
REC_HIDDEN void rec_anc_log(int fd, int dir, const struct msghdr *m, void *ra);
/* epoll.c: the descriptor registered in epfd with this user data, -1 when unknown. */
REC_HIDDEN int rec_epoll_fd(int epfd, uint64_t data);
/* After fork or exec: declare every live channel to the new writer. */
REC_HIDDEN void rec_chan_inherit_all(void);
/* Forget channels whose descriptors close on exec (state of the new image). */
REC_HIDDEN int rec_fd_cloexec(int fd);

/* --- stdio (stdio.c) ------------------------------------------------------------------ */
/* Before fclose(f): log the bytes written into its buffer inline (putc_unlocked), which the
 * close flushes unseen, and forget f. */
REC_HIDDEN void rec_stdio_close(FILE *f, void *ra);

/* --- file inputs (files.c) ------------------------------------------------------------ */
/* The trace was opened (root or new image; the caller holds the guard): note the objects
 * mapped. */
REC_HIDDEN void rec_files_start(void);
/* A new trace was opened (a forked child's): the files noted so far are not in it. */
REC_HIDDEN void rec_files_new_trace(void);
/* The process ends (under rec_enter): note the objects loaded since the last scan. */
REC_HIDDEN void rec_files_exit(void);
/* Open's file notes waiting for the program's fstat (files.c): how many (a hint read
 * unlocked); the note of fd made with st, what classify's fstat found (guard held); every
 * waiting note made now (guard held: an exec, the process's end); the note of fd made before
 * its close, or every one for fd < 0 (a dup2, close_range: guard free). */
extern int rec_files_ndeferred REC_HIDDEN;
struct stat;
REC_HIDDEN void rec_files_use(int fd, const struct stat *st);
REC_HIDDEN void rec_files_flush(void);
REC_HIDDEN void rec_files_closing(int fd);
/* fd taken anew (guard held): a note still waiting for the number is dropped (files.c). */
REC_HIDDEN void rec_files_fresh(int fd);
/* Under the writer lock, around a call that takes the loader's lock (site.c): 1 when it may
 * (then pair with rec_loader_end), 0 when another thread is inside dl_iterate_phdr. */
REC_HIDDEN int rec_loader_begin(void);
REC_HIDDEN void rec_loader_end(void);
/* The GNU build-id of a loaded object, from its PT_NOTE segments in memory: its length
 * (copied to out), or 0 when it has none that fits. */
struct dl_phdr_info;
REC_HIDDEN int rec_build_id(const struct dl_phdr_info *info, uint8_t *out, size_t cap);

/* --- pipe ends several processes hold (share.c) -------------------------------------- */
/* Before a fork (the guard held): every pipe end of ours, and every connection that has
 * moved no byte yet (handed to the child at its birth), becomes shared, its directions'
 * offsets counted from now on in the session's table for all its holders. */
REC_HIDDEN void rec_share_fork(void);
/* A new image: the inherited ends the table knows are shared again. */
REC_HIDDEN void rec_share_image(void);
/* A new process (its one thread): forget the TID the forking thread cached. */
REC_HIDDEN void rec_share_child(void);
/* Around the real call on a shared end (slot = rec_chan.share, dir REC_IN or REC_OUT):
 * unlock returns the direction's offset before the call and adds `moved` when positive. */
REC_HIDDEN void rec_share_lock(uint32_t slot, int dir);
REC_HIDDEN uint64_t rec_share_unlock(uint32_t slot, int dir, long moved);
/* The lock for a call on fd with flags (sock: a connection): 1 held, 0 not (a non-blocking
 * call on a connection whose lock another holder has: made unshared); errno kept. */
REC_HIDDEN int rec_share_lock_for(uint32_t slot, int dir, int fd, int flags, int sock);
/* A machine value (values.c, fsvalues.c): an INPUT event without channel of `call`, result
 * r (errno e when it failed), n bytes of out unless it failed, aux[0] = a0 when naux is 1;
 * under rec_enter. */
REC_HIDDEN void rec_log_machine(uint32_t call, long r, int e, int failed, const void *out,
                                size_t n, uint32_t naux, int64_t a0, void *ra);
/* Bytes moved by a call made unshared on an end shared since (a fork during it). */
REC_HIDDEN void rec_share_account(uint32_t slot, int dir, long moved);
/* A peek's place in the shared stream: the direction's offset now (no lock: it moves none). */
REC_HIDDEN uint64_t rec_share_off(uint32_t slot, int dir);
/* Flag the event and set its aux: the shared offset, the pipe's key, the base. */
REC_HIDDEN void rec_share_aux(uint32_t slot, int dir, uint64_t off, struct trace_event *ev);

/* A process-shared semaphore's acquisition (sync.c, after the real call returned r):
 * its ticket (-1: the call failed; -2: not process-shared, or not recorded), then its ORDER
 * event (before sync.c's own event, if any). */
REC_HIDDEN int64_t rec_share_sem_ticket(const sem_t *s, int r);
/* The ORDER event of an acquisition of a process-shared semaphore (ticket as above). */
/* In a fork's child: the scanf capture's buffer is free (stdio.c). */
REC_HIDDEN void rec_stdio_fork_child(void);
REC_HIDDEN void rec_share_sem_event(struct trace_event *ev, const sem_t *s, uint32_t call,
                                    int64_t ticket, int r, int e);
REC_HIDDEN void rec_share_sem_log(const sem_t *s, uint32_t call, int64_t ticket, int r, int e,
                                  void *ra);
/* Before sem_post of a process-shared semaphore: its ORDER event (the tickets taken so far:
 * the acquisition with the next one follows this release). */
REC_HIDDEN void rec_share_sem_post(const sem_t *s, void *ra);

/* --- call sites (site.c) -------------------------------------------------------------- */
/* The site id for return address ra, defining it in the current trace on first use. */
REC_HIDDEN uint32_t rec_site(void *ra);
/* A new trace file begins (fork child): every site must be defined again in it. */
REC_HIDDEN void rec_site_new_trace(void);
/* Before a seccomp filter: what describing a frame needs read once now (the executable's
 * path), so that a site met under the filter costs no system call. */
REC_HIDDEN void rec_site_prepare(void);

/* --- what the program does past the recorder (guard.c) --------------------------------- */
/* syscall(2) with a number that matters to the recorder (a seccomp filter, dup2/dup3/close/
 * close_range on the trace's descriptor): 1 when handled (*r is the result), 0 to pass the
 * call through.  Inline: every syscall() comes here first. */
REC_HIDDEN int rec_syscall_special(long nr, const long *a, long *r);
static inline int rec_syscall_guard(long nr, const long *a, long *r)
{
	if (__builtin_expect(nr != SYS_seccomp && nr != SYS_prctl && nr != SYS_dup2 &&
	                     nr != SYS_dup3 && nr != SYS_close && nr != SYS_close_range, 1))
		return 0;
	return rec_syscall_special(nr, a, r);
}
/* A seccomp filter is in force and the recorder goes on under it (guard.c): rec_sandbox says
 * what it may no longer do.  0 without a filter: every test below costs one branch. */
#define REC_SB_ON 1u      /* children and new images are not recorded */
#define REC_SB_NOWALK 2u  /* call sites: the return address alone (site.c) */
#define REC_SB_NOCHAN 4u  /* a descriptor to classify, a new channel: the trace stops */
#define REC_SB_NOREG 8u   /* registry: entries not made, a lookup stops the trace */
#define REC_SB_NOFILES 16u /* file inputs and kernel-state files are not noted */
extern unsigned rec_sandbox REC_HIDDEN;
/* Stop the trace there (TRACE_STOP_SECCOMP), guard held. */
REC_HIDDEN void rec_sandbox_stop(void);
/* 1 (having stopped the trace) when the filter bars what the caller is about to do. */
static inline int rec_sandbox_bar(unsigned what)
{
	if (__builtin_expect(!(rec_sandbox & what), 1))
		return 0;
	rec_sandbox_stop();
	return 1;
}
/* Raise the soft RLIMIT_NOFILE by `extra` for a moment (*saved: the limit to put back): the
 * recorder's own descriptors in a program that holds every one it may have.  A descriptor
 * above the limit stays valid once it is restored (rec_nofile_restore).  1 when raised. */
REC_HIDDEN int rec_nofile_raise(struct rlimit *saved, unsigned int extra);
REC_HIDDEN void rec_nofile_restore(const struct rlimit *saved);
/* Why a child forked now, or the image an exec of `file` starts (search: execvp's PATH
 * lookup), will not be recorded: a trace_stop_code for its FORK or EXEC event, 0 if it will. */
REC_HIDDEN int rec_unrecorded_child(void);
REC_HIDDEN int rec_unrecorded_exec(const char *file, int search);

/* --- signals and forks inside libc (proc.c) ------------------------------------------- */
REC_HIDDEN void rec_signals_install(void);
/* Our fatal-signal handlers give way to SIG_DFL (recording stopped for good). */
REC_HIDDEN void rec_signals_uninstall(void);
/* signals.c: the program's handlers of asynchronous signals, run where replay can run them
 * (recorder/README.md, "Signals").  rec_sig_action is sigaction as the program sees it;
 * rec_sig_prog gives the program's action when we hold its handler (1), rec_sig_drop
 * forgets it (the disposition changed past signals.c).  rec_sig_npend: deferred handlers of
 * this thread, run by rec_sig_after_event after the next event (rec_log). */
extern __thread int rec_sig_npend REC_HIDDEN __attribute__((tls_model("initial-exec")));
/* An UNMASK event of call (aux[0] = a0): the thread's deferred handlers run after it. */
REC_HIDDEN void rec_sig_unmask_log(uint32_t call, long a0, void *ra);
REC_HIDDEN int rec_sig_action(int sig, const struct sigaction *act, struct sigaction *old);
REC_HIDDEN int rec_sig_prog(int sig, struct sigaction *out);
REC_HIDDEN void rec_sig_drop(int sig);
REC_HIDDEN void rec_sig_after_event(const struct trace_event *ev);
REC_HIDDEN void rec_sig_forked(void);
/* Under a seccomp filter (guard.c): does the program hold a handler we keep for it; the
 * deferral of its handlers is bounded by events only from now on (no timer). */
REC_HIDDEN int rec_sig_any_held(void);
REC_HIDDEN void rec_sig_bound_off(void);
/* signals.c: deferred handlers run now, marked late, after a call that logs no event. */
REC_HIDDEN void rec_sig_flush_late(void);
/* pidcalls.c: the SIGCHLD disposition is read once now and taken as it is from then on (a
 * filter forbids the recorder's query, and so the program's changes too). */
REC_HIDDEN void rec_wait_freeze(void);
REC_HIDDEN int rec_sig_waits_logged(void);
/* A signal event (TIMER...) was logged elsewhere (timers.c): as rec_sig_waits_logged sees it. */
REC_HIDDEN void rec_sig_logged(void);
/* The absolute path of this library, "" if unknown. */
REC_HIDDEN const char *rec_self_so(void);
REC_HIDDEN void rec_atfork_install(void);
/* syscall(SYS_clone or SYS_clone3) made as a fork (ip_clone_is_fork), logged as one */
REC_HIDDEN long rec_fork_raw(long number, const long *a, void *ra);
/* --- threads (proc.c, sync.c) --------------------------------------------------------- */
/* Calls that take or free descriptor numbers (socket, socketpair, pipe, close, dup...): in a
 * process with threads the real call and its event happen under one more lock, so that the
 * events are in the order in which the kernel handed the numbers out (replay makes the calls
 * in event order and checks the numbers).  REC_FD_ORDER at the top of the interposer: the
 * cleanup releases it on every return, after the event.  Not taken inside the recorder, nor
 * again by a signal handler of the thread holding it. */
extern int rec_fdorder REC_HIDDEN;
extern __thread int rec_fdorder_mine REC_HIDDEN __attribute__((tls_model("initial-exec")));
REC_HIDDEN int rec_fd_order_wait(void);
static inline int rec_fd_order_begin(void)
{
	if (__builtin_expect(!rec.threads, 1) || rec_depth || rec_fdorder_mine)
		return 0;
	if (__atomic_exchange_n(&rec_fdorder, 1, __ATOMIC_ACQUIRE) && !rec_fd_order_wait())
		return 0; /* a fork holds it, and this thread holds a lock (rec_lock_wait) */
	rec_fdorder_mine = 1;
	return 1;
}
/* A descriptor the recorder itself makes (libunwind's pipe) while other threads run: the
 * kernel hands out the lowest free numbers, which another thread's call would otherwise get
 * (replay checks them).  1 when it may go ahead: the fd-order lock is this thread's or was
 * free (taken; *held set); 0 when another thread holds it (it may wait for the stream lock
 * this thread holds: the recorder's call fails instead, EMFILE). */
static inline int rec_fd_order_own(int *held)
{
	*held = 0;
	if (__builtin_expect(!rec.threads, 1) || rec_fdorder_mine)
		return 1;
	if (__atomic_exchange_n(&rec_fdorder, 1, __ATOMIC_ACQUIRE))
		return 0;
	rec_fdorder_mine = 1;
	*held = 1;
	return 1;
}
static inline void rec_fd_order_end(int *held)
{
	if (*held) {
		rec_fdorder_mine = 0;
		__atomic_store_n(&rec_fdorder, 0, __ATOMIC_RELEASE);
	}
}
#define REC_FD_ORDER \
	int rec_fd_held_ __attribute__((cleanup(rec_fd_order_end))) = rec_fd_order_begin()
/* Sends and what observes their effects (rec.threads only).  A send holds its descriptor's
 * lock across its real call and its event, so two sends on one connection are logged in the
 * order their bytes went, and counts as in flight meanwhile.  A call that observes the world
 * (a receive, a readiness result, a wait for a child) waits, once its real call returned and
 * before its event, for the sends in flight that started before it returned (sync.c,
 * rec_sends_settle): whatever it saw caused by a send of ours (the peer's answer, the child's
 * end) is then logged after that send, never before (a cycle of messages against program
 * order replay could not follow).  It does not wait while blocked, nor when what it saw
 * cannot be such an answer (rec_fd_observes_sends), and waits 10 ms at most for a send that
 * blocks (a full buffer: its bytes are not the peer's yet, and the peer may wait for this
 * very receive). */
REC_HIDDEN int rec_data_order_begin(int fd);
REC_HIDDEN void rec_data_order_end(int *held);
REC_HIDDEN void rec_sends_settle(void);
#define REC_DATA_ORDER(fd, dir) \
	int rec_data_held_ __attribute__((cleanup(rec_data_order_end))) = \
		__builtin_expect(rec.threads, 0) && (dir) == REC_OUT ? rec_data_order_begin(fd) : 0
/* The same for a call that must not wait for a send in flight on fd (shutdown: another
 * thread's send blocked on a full buffer may be what it is to wake): ordered when the
 * descriptor's lock is free, unordered otherwise. */
REC_HIDDEN int rec_data_order_try(int fd);
#define REC_DATA_ORDER_TRY(fd, dir) \
	int rec_data_held_ __attribute__((cleanup(rec_data_order_end))) = \
		__builtin_expect(rec.threads, 0) && (dir) == REC_OUT ? rec_data_order_try(fd) : 0
/* Whether what fd gives could be the answer to a send of ours that a replay makes again: not
 * when fd is a regular file, an eventfd (its writes are logged with their real call, under
 * the stream lock) or a channel whose peer is outside the session (what it gives replays
 * from the trace, with no peer to wait for).  Read without the stream lock: a descriptor
 * this thread is inside a call on keeps its channel, and a channel's `external` only goes
 * from undecided to decided. */
static inline int rec_fd_observes_sends(int fd)
{
	int32_t v;

	if (fd < 0 || fd >= REC_FD_MAX)
		return 1;
	v = rec.fd[fd];
	if (v == REC_FD_IGNORED)
		return 0;
	if (v > 0) {
		const struct rec_chan *c = &rec.chan[v - 1];

		/* a datagram socket is "external" (anyone may send to it), but what it receives may
		 * be a recorded peer's answer to a send of ours (an echo: the receive was logged
		 * before the sending thread's send, and the analyzer found a cycle) */
		if (c->type == TRACE_CHAN_UDP || c->unix_dgram)
			return 1;
		return !(__atomic_load_n(&c->external, __ATOMIC_RELAXED) &&
		         !__atomic_load_n(&c->undecided, __ATOMIC_RELAXED));
	}
	return 1;
}
#define REC_DATA_ORDER_AFTER(fd, dir, r, e) \
	do { \
		if (__builtin_expect(rec.threads, 0) && (dir) == REC_IN && \
		    ((r) >= 0 || ((e) != EAGAIN && (e) != EWOULDBLOCK && (e) != EINTR)) && \
		    rec_fd_observes_sends(fd)) \
			rec_sends_settle(); /* (nothing there yet, or a signal: nothing seen) */ \
	} while (0)
/* Descriptors made by eventfd (sync.c; 2: with EFD_NONBLOCK): with threads, their reads and
 * writes are SYNC events, the real call made under the stream lock, so that the order logged
 * is the order the counter saw (a blocking read, which could wait for ever, is made before
 * taking it).  rec_evfd_enter: 1 when the lock is held and the event is to be logged. */
extern uint8_t rec_evfd[REC_FD_MAX] REC_HIDDEN;
static inline int rec_is_evfd(int fd)
{
	return fd >= 0 && fd < REC_FD_MAX && rec_evfd[fd];
}
static inline void rec_evfd_forget(int fd)
{
	if (fd >= 0 && fd < REC_FD_MAX)
		rec_evfd[fd] = 0;
}
REC_HIDDEN int rec_evfd_enter(void);
REC_HIDDEN void rec_evfd_event(int fd, int dir, long r, int e);
/* A forked child: its one thread is thread 0, its objects are numbered anew. */
REC_HIDDEN void rec_threads_fork_child(void);
/* syscall(SYS_futex) with arguments a: 1 when it was a FUTEX_WAIT or FUTEX_WAKE logged as a
 * SYNC event (made, *r its result, errno set), 0 to pass it through (sync.c). */
REC_HIDDEN int rec_sync_futex(const long *a, long *r);

/* Random bytes a library's constructor got before the recorder's ran (io_more.c): kept by
 * rec_early_keep (r the call's result, the bytes at buf), logged by rec_early_flush as the
 * first event of the trace core.c just opened. */
REC_HIDDEN void rec_early_keep(const void *buf, long r);
REC_HIDDEN void rec_early_flush(void);
/* The thread an event of a thread the recorder did not see start is given (0); notes the
 * process in the registry once, for `encore record`'s warning. */
REC_HIDDEN uint32_t rec_thread_foreign(void);
/* The parent after a fork, under the lock: log the sync events other threads made during it. */
REC_HIDDEN void rec_sync_flush_deferred(void);
/* sync.c's part of it: the objects' ids start again. */
REC_HIDDEN void rec_sync_fork_child(void);

/* In a child of a fork we did not make: release a lock another thread may have held. */
REC_HIDDEN void rec_lock_reset(void);

#endif
