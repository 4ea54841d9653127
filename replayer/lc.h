/*
 * lc.h: what the files of libencore-replay.so (the local controller, LC) share.  Private
 * to replayer/, never installed; everything here is hidden (-fvisibility=hidden): the
 * library exports only the interposers of interpose/calls.def and encore_mark.
 *
 * The model (replayer/README.md says more):
 *   - at load, the LC reads its own process's trace whole into memory (events and their
 *     value bytes), connects to the GD and learns its slot and target state index; from
 *     then on its hot paths allocate nothing and log nothing;
 *   - every interposer asks lc_expect() for the next recorded event, checks the call
 *     against it (kind, descriptor), does what the trace says (the real call with the
 *     recorded size for bytes between recorded processes, the recorded value for external
 *     input) and lc_commit()s it;
 *   - before an event whose index is one past the target state, the LC halts: it reports
 *     to the GD and blocks until told to go on (Manabe & Imase section 2.2, 3.2);
 *   - in a process with threads, lc_expect first waits for the calling thread's turn: the
 *     next event must be its own (lc_sync.c), so the threads pass interposed calls in the
 *     recorded order and the LC's state is only ever touched by the thread whose turn it is.
 */
#ifndef ENCORE_REP_LC_H
#define ENCORE_REP_LC_H

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
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#include "interpose.h"
#include "proto.h"
#include "trace.h"

#define LC_HIDDEN IP_HIDDEN
#define LC_EXPORT IP_EXPORT

/* Fixed sizes (interpose.h), the recorder's: descriptors below LC_FD_MAX, channel ids below
 * LC_CHAN_MAX (the channel table is indexed by id). */
#define LC_FD_MAX IP_FD_MAX
#define LC_CHAN_MAX IP_CHAN_MAX

/* The real functions: IP_REAL(name) (interpose.h). */

/* One recorded event, compact; value bytes live in lc.data. */
struct lc_ev {
	uint32_t kind, call, flags;
	int32_t fd;
	uint32_t channel;
	int32_t err;
	int64_t result;
	uint64_t len;
	uint32_t hash;
	uint32_t has_hash;
	uint32_t naux;
	uint32_t data_len;
	uint32_t site;
	uint32_t thread;   /* the thread that made the call (its index, 0 the main thread) */
	uint32_t elided;   /* its mutex acquisitions without events before it (lc_sync.c) */
	int64_t aux[TRACE_AUX_MAX];
	uint64_t data_off;
};

/* fd table values (lc_fd[]): > 0 is a channel id. */
#define LC_FD_UNKNOWN 0
#define LC_FD_IGNORED (-1)
#define LC_FD_RANDOM (-2)

struct lc_chan {
	uint64_t bytes[2]; /* [0] sent, [1] received */
	uint32_t hash[2];
	uint8_t external;  /* its bytes in are INPUT: the peer is outside the session */
	uint8_t kernel;    /* a /proc or /sys file (lc_files.c): reads move its real offset */
};

struct lc_state {
	int active;                /* replaying: the interposers enforce the trace */
	char name[TRACE_NAME_MAX];
	char dir[4096];
	struct lc_ev *ev;          /* events base + 1 .. nev of this image (ev[0] is base + 1) */
	uint64_t loads;            /* traces loaded so far (a fork's child or an exec loads its
	                              own): what caches of the events are keyed on, as a new
	                              array may come at the address of the one it replaced */
	uint64_t base;             /* index of this image's first event minus one (exec) */
	uint64_t nev;              /* index of its last event */
	uint32_t seg;              /* image number: 0, then 1 after the first exec... */
	uint64_t next_base;        /* the base of the image to load next (seg > 0) */
	char **site_funcs;         /* site id -> its stack's function names, each followed by a
	                              NUL, the list ended by an empty name (for in(F)) */
	uint32_t nsites;
	int killed;                /* the trace ends without exit: the process was killed there
	                              (SIGKILL leaves no event) */
	uint8_t *data;
	uint64_t pos;              /* events executed: the state index */
	uint64_t target;           /* halt before event target + 1; REP_NO_TARGET: never */
	int ctl;                   /* control socket to the GD, -1 when none */
	struct rep_slot *slots;    /* the status board, REP_SLOTS_MAX entries */
	struct rep_slot *slot;     /* ours (a private dummy before the GD answered) */
	int min_fd;
	int done;
	int64_t rec_pid;           /* the process's pid in the recorded run (its trace) */
	int64_t rec_t0;            /* the recorded wall clock at its trace's start (ns) */
	/* the online protocol (lc_online.c) */
	int online;                /* CONFIG said REP_CF_ONLINE */
	int halt_check;            /* some halt condition may hold: check before each event */
	int counting;              /* keep the counters of the predicate's terms */
	/* threads (lc_sync.c) */
	int threaded;              /* some event of this image is not thread 0's: turns are taken */
	int sync_on;               /* a thread was created: synchronisation calls are events */
	uint32_t turn_seq;         /* bumped at each commit of a threaded image (a futex) */
	uint32_t turn_waiters;     /* live threads sleeping on it (for the deadlock check) */
	uint32_t turn_sleepers;    /* every thread sleeping on it (to wake) */
	uint32_t live;             /* threads of ours running (1 + created - ended) */
	uint32_t nthreads_made;    /* the highest thread index created so far */
	int in_turn;               /* a thread is between its turn and its commit */
	int owned;                 /* the image's mutexes are owned (TRACE_PROC_OWNED_MUTEXES) */
	uint32_t own_wanted;       /* the index + 1 of a thread whose acquisitions without events a
	                              transfer waits for (lc_sync.c): a hold of it ends (lc.c) */
	uint32_t mutex_waiters;    /* threads in a real mutex lock that found it taken: the hold
	                              of a thread holding a mutex ends (lc.c) */
};

extern struct lc_state lc LC_HIDDEN;
extern int32_t lc_fd[LC_FD_MAX] LC_HIDDEN;
extern struct lc_chan lc_chan[LC_CHAN_MAX] LC_HIDDEN;

/* 1 when the calling thread may enforce the trace (replaying, not inside the LC itself). */
LC_HIDDEN int lc_on(void);
/* Around the real fork: the program's fork handlers' calls pass through (lc.c). */
LC_HIDDEN void lc_fork_pass(int on);
/* 1 inside the LC itself (libunwind, dlsym, the trace reader call libc back). */
LC_HIDDEN int lc_internal(void);
/* Move a descriptor the LC (or a library it called) made to a high number. */
LC_HIDDEN int lc_move_high(int fd);
LC_HIDDEN void lc_enter(void);
LC_HIDDEN void lc_leave(void);

/* Threads (lc_sync.c).  lc_thread is the calling thread's index (LC_NO_THREAD: a thread the LC
 * did not see start: its synchronisation is not replayed).  lc_turn()
 * returns once the next event is the calling thread's (or the trace is over), sleeping on
 * lc.turn_seq meanwhile; lc_turn_done() wakes the sleepers after a commit. */
#define LC_NO_THREAD UINT32_MAX
extern __thread uint32_t lc_thread LC_HIDDEN __attribute__((tls_model("initial-exec")));
/* Owned mutexes (lc_sync.c): what each thread's acquisitions after its last event may be,
 * from the image's n events (at load: 0, or -1 out of memory). */
LC_HIDDEN int lc_own_load(const struct lc_ev *evs, uint64_t n);
/* Owned mutexes (lc_sync.c): the calling thread committed its event ev. */
LC_HIDDEN void lc_own_committed(const struct lc_ev *ev);
/* The mutexes the calling thread holds (owned mutexes only): its free code releases them, so
 * a hold of it ends when another thread waits for a mutex (lc.c, hold_to_turn). */
extern __thread int lc_mutexes_held LC_HIDDEN __attribute__((tls_model("initial-exec")));
LC_HIDDEN void lc_turn_wait(void);
/* lc_turn_wait, and around it the gate of free code run early (lc.c): the calling thread
 * opens the gate it holds, and once its turn came waits for the thread that holds it. */
LC_HIDDEN void lc_turn_gated(void);
/* The calling thread reached an interposed call without an event (a sleep): its gate opens. */
LC_HIDDEN void lc_gate_open(void);
static inline void lc_turn(void)
{
	if (__builtin_expect(lc.threaded, 0))
		lc_turn_gated();
}
LC_HIDDEN void lc_turn_done(void);
/* Descriptor numbers no channel takes, with threads (lc_sync.c): lc_fdnum_turn is 1 when the
 * calling thread's next event is the FDNUM of what (1 taken, 2 freed; fd, or -1 for any) and
 * its turn came: make the real call, then lc_fdnum_taken (the number, put where recorded) or
 * lc_fdnum_freed. */
LC_HIDDEN int lc_fdnum_turn(int what, int fd);
/* The same for a call whose FDNUM events say it (epoll_create): a trace of a recorder that
 * did not log it leaves a later open's event to that open. */
LC_HIDDEN int lc_fdnum_turn_call(int what, uint32_t call);
LC_HIDDEN int lc_fdnum_taken(int r, const char *what);
LC_HIDDEN void lc_fdnum_freed(int fd, const char *what);
/* eventfd descriptors (lc_sync.c): with threads their reads and writes are SYNC events.
 * lc_evfd_io: 1 when fd is one and the call was replayed (*out its result), else 0. */
extern uint8_t lc_evfd[LC_FD_MAX] LC_HIDDEN;
LC_HIDDEN int lc_evfd_io(int fd, const struct iovec *iov, int cnt, int out_dir, ssize_t *out);
static inline void lc_evfd_forget(int fd)
{
	if (fd >= 0 && fd < LC_FD_MAX)
		lc_evfd[fd] = 0;
}
/* A forked child: its one thread is thread 0, objects are numbered anew. */
LC_HIDDEN void lc_threads_fork_child(void);
/* The program's allocator as a library of its own (interpose/dlnext.h, set by lc_sync.c): its
 * calls (ra: the interposer's return address) pass through, as the recorder let them. */
extern uintptr_t lc_alloc_lo LC_HIDDEN, lc_alloc_hi LC_HIDDEN;
static inline int lc_from_alloc(const void *ra)
{
	return (uintptr_t)ra - lc_alloc_lo < lc_alloc_hi - lc_alloc_lo;
}
/* Soft trylocks (lc_sync.c): a trylock or spin that failed changes nothing shared, so their
 * number is not enforced.  lc_try_failed: the event is a failed trylock; lc_trying: the
 * calling thread is in a trylock (lc_expect then takes such an event instead of doing it as a
 * no-op); lc_soft_clocks: the thread is in a lock's slow path (a trylock failed), where a
 * clock read the recorded run did not make is given a value without an event
 * (lc_soft_clock: 1 when *out was filled so, 2 when the real call is to give it). */
extern __thread int lc_trying LC_HIDDEN __attribute__((tls_model("initial-exec")));
/* A recorded sleep through select on no descriptor (soft too: lc_sync.c). */
LC_HIDDEN int lc_sleep_ev(const struct lc_ev *ev);
extern __thread int lc_soft_clocks LC_HIDDEN __attribute__((tls_model("initial-exec")));
LC_HIDDEN int lc_try_failed(const struct lc_ev *ev);
LC_HIDDEN int lc_soft_keeps(const struct lc_ev *ev);
LC_HIDDEN int lc_soft_clock(uint32_t call, int64_t clk, void *out, size_t size);
/* syscall(SYS_futex) with arguments a: 1 when it was a FUTEX_WAIT or FUTEX_WAKE replayed at
 * its turn (*r its recorded result, errno set), 0 to make the real call (lc_sync.c). */
LC_HIDDEN int lc_sync_futex(const long *a, long *r);

/* The next event, which must be of `kind` (RECV also accepts INPUT) on descriptor fd (fd < 0:
 * any).  Halts first when the target state is reached; reports a divergence (and never
 * returns) when the trace says otherwise.  `what` names the call for the report. */
LC_HIDDEN const struct lc_ev *lc_expect(uint32_t kind, int fd, const char *what);
/* At the end of a trace cut short by SIGKILL: stop enforcing (lc_on() is 0 afterwards). */
LC_HIDDEN void lc_run_free(void);
/* The program installs a seccomp sandbox (lc_proc.c): nr and a[5] as syscall(2) takes them,
 * strict mode or a filter; returns the call's result (recorded, or real after running free). */
LC_HIDDEN long lc_sandbox_call(long nr, const long *a, int strict);
/* The next event without checks, or NULL at the end (with threads: once it is the calling
 * thread's turn). */
LC_HIDDEN const struct lc_ev *lc_peek(void);
/* The next event if it is the calling thread's (it follows, in the same thread, the event
 * just committed), without waiting; else NULL. */
LC_HIDDEN const struct lc_ev *lc_peek_now(void);
/* The event returned by lc_expect is done. */
LC_HIDDEN void lc_commit(void);
/* After sigprocmask, pthread_sigmask or a signal sent with syscall(2) (lc_pids.c): the UNMASK
 * event, when it is the calling thread's next, taken (its handlers run after it). */
LC_HIDDEN void lc_unmask_next(const char *what);
/* Report a divergence to the GD and never return. */
LC_HIDDEN void lc_diverge(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Describe an event in a few words ("recv of 10 bytes on channel 3, fd 5"). */
LC_HIDDEN void lc_ev_describe(const struct lc_ev *ev, char *buf, size_t cap);
/* Mark the slot as waiting for the outside world (kind 0: running again). */
LC_HIDDEN void lc_wait_state(uint32_t kind, int fd, uint32_t chan, uint64_t missing);

/* The class of a descriptor as the recorder saw it at this point: a channel id (> 0),
 * LC_FD_IGNORED or LC_FD_RANDOM.  Consumes the recorder's first-use SOCKET/PIPE event. */
LC_HIDDEN int32_t lc_fd_class(int fd);
/* The same for a /proc or /sys file just opened for reading (lc_files.c): judged as a terminal
 * is, taking the PIPE event the recorder logged at its open. */
LC_HIDDEN int32_t lc_fd_class_kernel(int fd);

/* iovec helpers of the data calls (lc_chan.c): the total size; and dst = the bytes
 * [skip, skip + want) of src, at most IOV_MAX_LC entries, returning their count. */
#define IOV_MAX_LC 64
LC_HIDDEN size_t lc_iov_total(const struct iovec *iov, int cnt);
LC_HIDDEN int lc_iov_window(const struct iovec *src, int cnt, size_t skip, size_t want,
                            struct iovec *dst);
/* Before a process-shared lock is taken (lc_sync.c's semaphores): a reader of a pipe several
 * processes read waits for its turn (lc_chan.c). */
LC_HIDDEN void lc_share_turn(void);
/* After a trace is loaded (load_trace): the staging files its shared ends will use, opened
 * before the program may forbid new descriptors (lc_chan.c). */
LC_HIDDEN void lc_share_preopen(void);
/* Machine values (lc_values.c; lc_fsvalues.c, lc_chan.c's socket options): the next event
 * when it is an INPUT of `call`, expected, else NULL (a trace without it: the real call);
 * then the recorded result (errno when `failed`) and at most n recorded bytes into out (the
 * rest cleared when `clear`, else asking for more than was recorded is a divergence). */
LC_HIDDEN const struct lc_ev *lc_value_event(uint32_t call, const char *what);
LC_HIDDEN long lc_value_give(const struct lc_ev *ev, int failed, void *out, size_t n,
                             int clear, const char *what);
/* The staging descriptors of this process (lc_chan.c): whether fd is one, move one out of the
 * way of a dup2 onto its number, list them (for close_range). */
LC_HIDDEN int lc_share_owns(int fd);
LC_HIDDEN void lc_share_move(int fd);
LC_HIDDEN size_t lc_share_fds(int *out, size_t cap);
/* A process-shared semaphore's acquisition, in the order of its recorded tickets (ORDER
 * events, lc_chan.c).  lc_share_sem, first: takes the ORDER event if it is next, once the
 * tickets before it were taken; without synchronisation events (sync 0) makes the whole call
 * (1, *r the result); with them (sync 1) returns 0 and the SYNC event's replay makes the real
 * call, then calls lc_share_sem_done. */
LC_HIDDEN int lc_share_sem(sem_t *s, int sync, int *r);
/* 1 when channel ch's sends or receives in this image went through a pipe end several
 * processes held (TRACE_FL_SHARED): the real pipe then says nothing of the data behind a
 * readiness result (a reader copies its bytes from the staging file), lc_nondet.c. */
LC_HIDDEN int lc_chan_shared(int32_t ch);
LC_HIDDEN void lc_share_sem_done(void);
/* sem_post: takes its ORDER event when it is next (the real call follows as before). */
LC_HIDDEN void lc_share_sem_post(const sem_t *s);
/* A descriptor goes away: forget its class. */
LC_HIDDEN void lc_fd_forget(int fd);
/* syscall(SYS_close, fd) (lc_io_more.c): the raw call, then as close (lc_chan.c). */
LC_HIDDEN long lc_close_raw(int fd);
/* syscall(SYS_clone or SYS_clone3) made as a fork (ip_clone_is_fork), replayed as one */
LC_HIDDEN long lc_fork_raw(long number, const long *a);
/* A call that failed when recorded fails the same way now, without being made. */
#define LC_RECORDED_FAILURE(ev) \
	do { \
		if ((ev)->result < 0) { \
			int e_ = (ev)->err; \
			lc_commit(); \
			errno = e_; \
			return -1; \
		} \
	} while (0)

/* Descriptor passing (lc_ancillary.c), for sendmsg and recvmsg in lc_chan.c.  Send: before
 * the call, lc_anc_out_pre (1: ancillary data to carry; the descriptors' first-use events are
 * consumed), lc_anc_send_ctl on the first real sendmsg, lc_anc_out_done after the send event
 * (its PASS events), or lc_anc_out_clear when the call passes through.  Receive: lc_anc_in_arm
 * before the real receive (armed when PASS events follow the receive event), lc_anc_recv_ctl
 * and lc_anc_recv_got around each real recvmsg, lc_anc_control for the recorded ancillary
 * data, lc_anc_in_done after the receive event (descriptors placed, PASS events consumed). */
LC_HIDDEN int lc_anc_out_pre(const struct msghdr *m);
LC_HIDDEN void lc_anc_send_ctl(struct msghdr *m);
LC_HIDDEN void lc_anc_out_done(const struct msghdr *m);
LC_HIDDEN void lc_anc_out_clear(void);
LC_HIDDEN int lc_anc_follows(void);
LC_HIDDEN void lc_anc_in_arm(int flags);
LC_HIDDEN int lc_anc_armed(void);
LC_HIDDEN void lc_anc_recv_ctl(struct msghdr *m);
LC_HIDDEN void lc_anc_recv_got(struct msghdr *m);
LC_HIDDEN void lc_anc_control(const struct lc_ev *ev, struct msghdr *msg);
LC_HIDDEN void lc_anc_in_done(void);
/* A stand-in socket for a peer outside the session (accept, descriptors passed): for
 * AF_INET or AF_INET6 a TCP connection over loopback whose other end is closed, else one end
 * of a socketpair; close-on-exec; -1 on failure. */
LC_HIDDEN int lc_stand_in(int domain);
/* The loopback address TCP stand-ins are bound to (127.255.255.254), and whether fd is one
 * (a stand-in another recorded process passed on) */
#define LC_STAND_IN_ADDR 0x7ffffffeu
LC_HIDDEN int lc_is_stand_in(int fd);

/* Connections accepted ahead and kept for a later accept (lc_chan.c): 1 when one came
 * through the listening socket lfd. */
LC_HIDDEN int lc_stash_has_listener(int lfd);
/* Our own descriptors, which the program may not close or dup2 over. */
LC_HIDDEN int lc_own_fd(int fd);
LC_HIDDEN void lc_own_fd_move(int fd);

/* The online protocol (lc.c, lc_online.c). */
LC_HIDDEN int lc_online_setup(const char *text, const char *peers, char *why, size_t cap);
LC_HIDDEN int lc_online_stage(const char *text, char *why, size_t cap);
LC_HIDDEN void lc_count(const struct lc_ev *ev);
LC_HIDDEN int lc_sp_holds(void);
LC_HIDDEN int lc_has_sp(void);
LC_HIDDEN void lc_online_reset(void);
/* Trace points (`encore debug`'s trace C print E with var. terms; lc_online.c): text is
 * "C\x1eE" (E as the first term of a simple predicate); lc_traced (lc.c) reports one. */
LC_HIDDEN int lc_trace_add(uint32_t id, const char *text);
LC_HIDDEN void lc_trace_del(uint32_t id);
LC_HIDDEN int lc_ntraces(void);
LC_HIDDEN void lc_trace_check(void);
LC_HIDDEN void lc_traced(uint32_t id, int64_t value);
/* The term counters (sent, received, bytes_sent, bytes_received), kept across exec. */
LC_HIDDEN void lc_counters(int64_t c[4], int set);
LC_HIDDEN void lc_terms_text(char *out, size_t cap);
/* Before receive event k from a recorded peer: ask the GD (REQ) and obey its answer. */
LC_HIDDEN void lc_request(uint64_t k);
/* Ask the GD whether receive event k is a datagram the analyzer matched to a recorded send
 * (lc_chan.c waits for it on the socket then): 1 yes, 0 no. */
LC_HIDDEN int lc_dgram_recorded(uint64_t k);
/* While waiting for bytes: a message from the GD is there; 1 when it says STOP (a halt
 * marker: halt now, nothing of the receive was done). */
LC_HIDDEN int lc_ctl_stop(void);
LC_HIDDEN int lc_ctl_fd(void);
/* While waiting for the data behind a readiness result: a message from the GD is there; 1
 * when it releases this wait (REP_MSG_RELEASE for the current state). */
LC_HIDDEN int lc_ctl_release(void);
/* Tell the GD a connect succeeded (its local TCP port, 0 for Unix sockets), so that the
 * server's LC can tell its recorded peer among the connections it accepts. */
LC_HIDDEN void lc_connected(int port, uint64_t ev_index);
/* Ask the GD whether the connection just accepted is the recorded peer of accept event k. */
LC_HIDDEN int lc_accept_is_recorded(uint64_t k, long peer_pid, int peer_port);
/* Before a call that may block for long without being an event (wait for a child): halt
 * here if the process is at its target state (or online its predicate holds), as it would
 * before its next event, which it may never reach while its children are halted. */
LC_HIDDEN void lc_halt_if_due(void);
/* Halt because of a marker, before the receive; returns when told to go on. */
LC_HIDDEN void lc_halt_marker(void);

/* exec (lc.c): the environment of the next image, carrying our state (segment, channels
 * and descriptors); returns the envp to use (static storage), NULL when it cannot be built. */
LC_HIDDEN char **lc_exec_env(char *const envp[]);
/* The exec failed: continue in the next segment, whose first event says so. */
LC_HIDDEN void lc_exec_failed(void);
LC_HIDDEN char **lc_spawn_env(char *const envp[], uint32_t k);
/* `encore replay --setenv`: NAME=VALUE lines the replayed programs get instead of their
 * recorded values (replayer/README.md, "Environment"). */
#define LC_SETENV "ENCORE_REPLAY_SETENV"
/* Around system() and popen(): the environment their child gets (lc.c says why). */
LC_HIDDEN char **lc_env_spawn_begin(void);
LC_HIDDEN void lc_env_spawn_end(char **saved);

/* Process life (lc.c, lc_proc.c). */
LC_HIDDEN void lc_atfork_install(void);
LC_HIDDEN void lc_child_start(uint32_t k);
LC_HIDDEN void lc_exit_event(int status);

/* Calls made before the LC's constructor ran (lc.c): 1 with the recorded pid and wall clock
 * (ns) at the start when ENCORE_REPLAY gives them (*t0 0 when not), else 0 (live values). */
LC_HIDDEN int lc_before(int64_t *rpid, int64_t *t0);
static inline pid_t lc_pid_before(pid_t live)
{
	int64_t p, t;

	return lc_before(&p, &t) && p > 0 ? (pid_t)p : live;
}
/* Random bytes asked for before the LC started (lc_io_more.c): lc_early_random fills buf
 * with the next of the bytes recorded so (the image's early_random event, read from its
 * trace) and returns how many (0: used up, or none recorded), or -1 when the LC started or
 * the process is not replayed (the real call then).  lc_early_done, at the LC's start,
 * takes that event. */
LC_HIDDEN long lc_early_random(void *buf, size_t n);
LC_HIDDEN void lc_early_done(void);
/* Pids (lc_pids.c): a child forked here, recorded and live pid; forget them in a new child. */
LC_HIDDEN void lc_pid_child(pid_t rec, pid_t live);
LC_HIDDEN void lc_pids_reset(void);
/* fcntl owners (F_SETOWN...): recorded -> live (*unknown: none of the session), and back. */
LC_HIDDEN pid_t lc_owner_live(pid_t rec, int *unknown);
LC_HIDDEN pid_t lc_owner_rec(pid_t live);
/* Across exec (ENCORE_REPLAY "kids="): the children forked so far, "REC:LIVE,...". */
LC_HIDDEN size_t lc_pids_text(char *out, size_t cap);
LC_HIDDEN void lc_pids_parse(const char *text, const char *end);

/* Before fclose(f) (lc_stdio.c): the send of the bytes written into its buffer inline, as
 * the recorder logged it; forget f. */
LC_HIDDEN void lc_stdio_close(FILE *f);

/* Asynchronous signals (lc_signals.c): run the HANDLER events next in the trace (lc_expect
 * calls it when one is next, or a death by a signal, which it then reproduces); sigsuspend and pause: 1 when a handler run next ended the
 * wait (it has run).  lc_pids.c: wait until recorded child `rec` has ended (not reaped). */
LC_HIDDEN void lc_signal_run(void);
/* A trace that ends with the process's death by a signal it left at the default action:
 * the signal is caught until the recorded death point (lc_signals.c), called once a trace
 * is loaded. */
LC_HIDDEN void lc_signal_arm_fatal(void);
/* lc_commit, when a HANDLER event is next: run the deferred ones (TRACE_FL_AFTER, LATE). */
LC_HIDDEN void lc_signal_after(void);
LC_HIDDEN int lc_signal_wait_due(void);
LC_HIDDEN void lc_pid_wait_ended(pid_t rec);
LC_HIDDEN pid_t lc_pid_live(pid_t rec, int *gone);
LC_HIDDEN int lc_signal_held_logged(int sig);
/* A handler run is due next whose signal the calling thread blocks now (lc_signals.c): it
 * belongs to a later call, which lets the signal in */
LC_HIDDEN int lc_signal_due_blocked(void);

/* Raw system calls that never reach an interposer. */
LC_HIDDEN long lc_sys_read(int fd, void *buf, size_t n);
LC_HIDDEN long lc_sys_write(int fd, const void *buf, size_t n);

#endif
