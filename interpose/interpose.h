/*
 * interpose.h: what the two preload libraries, the recorder (libencore-record.so) and the
 * replayer's local controller (libencore-replay.so), share about interposing libc: the
 * list of calls (calls.def) and each call's shape, the real functions, the glibc
 * declarations they need, how a descriptor is classified, the environment variables that
 * carry a process's configuration and state (ENCORE_RECORD, ENCORE_REPLAY) and the fixed
 * limits.  interpose/README.md describes the part.
 *
 * The sources of interpose/ are compiled into each preload library (hidden visibility, like
 * the rest of the library), so each library has its own real_* pointers.  The pure parts
 * (classification, environment codec) are also a static library the tests link.
 * Public symbols are prefixed ip_ (macros IP_).
 */
#ifndef ENCORE_INTERPOSE_H
#define ENCORE_INTERPOSE_H

#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"

#define IP_HIDDEN __attribute__((visibility("hidden")))
#define IP_EXPORT __attribute__((visibility("default")))

/* --- limits ------------------------------------------------------------------------------ */
/* Fixed sizes: the interposers allocate nothing on their hot paths.  Descriptors >= IP_FD_MAX
 * are not recorded nor replayed; the recorder keeps at most IP_CHAN_MAX live channels and the
 * replayer indexes its channel table by channel id below IP_CHAN_MAX (documented limits,
 * recorder/README.md).  One value for both sides: a channel the recorder could log, the
 * replayer can follow. */
#define IP_FD_MAX 65536
#define IP_CHAN_MAX 65536

/* --- shapes (the last column of calls.def) ---------------------------------------------- */
enum ip_shape {
	IP_SHAPE_IRREGULAR = 0,
	IP_SHAPE_BYTES_OUT,
	IP_SHAPE_BYTES_OUT_TO,
	IP_SHAPE_MSG_OUT,
	IP_SHAPE_IOV_OUT,
	IP_SHAPE_BYTES_IN,
	IP_SHAPE_BYTES_IN_FROM,
	IP_SHAPE_MSG_IN,
	IP_SHAPE_IOV_IN,
	IP_SHAPE_FREAD,
	IP_SHAPE_FGETS,
	IP_SHAPE_GETDELIM,
	IP_SHAPE_GETC,
	IP_SHAPE_FWRITE,
	IP_SHAPE_FPUTS,
	IP_SHAPE_PUTC,
	IP_SHAPE_VPRINTF,
	IP_SHAPE_KMOVE,
	IP_SHAPE_SIGNAL_WAIT,
	IP_SHAPE_WAIT,
	IP_SHAPE_EXIT,
	IP_SHAPE_VALUE_PID,
	IP_SHAPE_READY_POLL,
	IP_SHAPE_READY_SELECT,
	IP_SHAPE_READY_EPOLL,
	IP_SHAPE_DUP,
	IP_SHAPE_FCNTL,
	IP_SHAPE_VALUE_CLOCK,
	IP_SHAPE_SCANF,
	IP_SHAPE_COUNT
};

/* The shape's name as calls.def writes it ("BYTES_OUT"), NULL when out of range. */
const char *ip_shape_name(int shape);

/* --- the real functions (resolve.c) ----------------------------------------------------- */
/* _FORTIFY_SOURCE entry points glibc does not declare for us. */
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags,
                       struct sockaddr *addr, socklen_t *len);
int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
                const sigset_t *mask, size_t fdslen);

/* The interfaces' calls take these; their headers (ifaddrs.h, net/if.h) are the files'
 * that implement them. */
struct ifaddrs;
struct if_nameindex;
/* The machine values' calls (recorder/values.c): sched.h's cpu_set_t comes with pthread.h */
struct sysinfo;
struct tms;
struct utsname;
int __gethostname_chk(char *name, size_t len, size_t buflen);
/* The system calls that send a signal (the recorder's UNMASK event follows one made through
 * syscall(2) that left the thread handlers to run: recorder/signals.c). */
static inline int ip_sig_send_nr(long nr)
{
	return nr == SYS_kill || nr == SYS_tgkill || nr == SYS_tkill || nr == SYS_rt_sigqueueinfo ||
	       nr == SYS_rt_tgsigqueueinfo || nr == SYS_pidfd_send_signal;
}
/* A signal action that is the default (or to ignore), as the kernel judges it: by the handler
 * alone, SA_SIGINFO or not (sa_handler and sa_sigaction share their storage).  PHP sets
 * SIG_DFL with SA_SIGINFO before sending itself the signal again; taken for a handler, the
 * preloads kept their trampoline and the signal was swallowed. */
static inline int ip_sa_dfl(const struct sigaction *a)
{
	return a->sa_handler == SIG_DFL;
}

static inline int ip_sa_dfl_or_ign(const struct sigaction *a)
{
	return a->sa_handler == SIG_DFL || a->sa_handler == SIG_IGN;
}
/* sysconf's names whose answer is the machine's state (processors, memory pages): an event
 * on both sides; every other name passes through. */
static inline int ip_sysconf_is_value(int name)
{
	return name == _SC_NPROCESSORS_ONLN || name == _SC_NPROCESSORS_CONF ||
	       name == _SC_PHYS_PAGES || name == _SC_AVPHYS_PAGES;
}

/* real_<name> for every row: resolved with dlsym(RTLD_NEXT) by ip_resolve_all() in the
 * library's constructor, and lazily by IP_REAL() for calls that arrive before it ran
 * (another library's constructor may call write or socket first). */
#define ENCORE_CALL(name, ret, params, args, kind, call, flags, shape) \
	extern ret (*real_##name) params IP_HIDDEN;
#include "calls.def"

/* dlsym may itself call malloc or other libc functions, which must reach the real ones:
 * each library defines ip_guard(+1) before and ip_guard(-1) after (its per-thread guard,
 * which makes its own calls pass straight through). */
IP_HIDDEN void ip_guard(int delta);
IP_HIDDEN void *ip_resolve(const char *name);
IP_HIDDEN void ip_resolve_all(void);
/* close_range(first, last, flags) on the program's behalf, leaving the library's own
 * descriptor `own` (-1: none) open: the real call, split around it. */
IP_HIDDEN int ip_close_range_except(unsigned int first, unsigned int last, int flags, int own);
#define IP_REAL(name) \
	(*({ \
		if (__builtin_expect(real_##name == NULL, 0)) \
			real_##name = (__typeof__(real_##name))ip_resolve(#name); \
		&real_##name; \
	}))

/* --- descriptors (fdclass.c) ------------------------------------------------------------ */
/* What a descriptor is, from its fstat(2) mode and device, as both sides must judge it for a
 * descriptor they did not see made (recorder/README.md, "Channels and their ends"). */
enum ip_fd_kind {
	IP_FD_FILE = 0, /* regular file, directory, anonymous inode...: left alone */
	IP_FD_SOCKET,   /* a channel (its type from ip_sock_chan_type) */
	IP_FD_PIPE,     /* a FIFO: a channel */
	IP_FD_CHAR,     /* a character device such as a terminal: a channel */
	IP_FD_RANDOM,   /* /dev/random or /dev/urandom: reads are RANDOM events */
	IP_FD_NULL,     /* /dev/null, /dev/zero, /dev/full: nothing to replay, left alone */
};
int ip_fd_kind(mode_t mode, dev_t rdev);
/* 1 when a file opened read-only under /proc/ or /sys/ holds the kernel's live state: a
 * regular file of procfs, sysfs or a cgroup file system (statfs's f_type, fstat's mode).
 * Its reads are input, recorded with their bytes (recorder/README.md, "Kernel-state
 * files"); the replayer makes the same test before it takes the recorder's event. */
int ip_kernel_state_file(long f_type, mode_t mode);
/* 1 when descriptors of that kind are channels. */
/* sendmmsg as one sendmsg per message, through the preload's own sendmsg (`send1`), so that
 * each is an event (libuv's UDP sends): the messages sent, each msg_len set, or -1 when the
 * first failed (a later failure ends the count, as the kernel's does).  Both preloads. */
static inline int ip_sendmmsg_each(int fd, struct mmsghdr *v, unsigned int n, int flags,
                                   ssize_t (*send1)(int, const struct msghdr *, int))
{
	unsigned int i;

	if (n > UIO_MAXIOV)
		n = UIO_MAXIOV;
	for (i = 0; i < n; i++) {
		ssize_t r = send1(fd, &v[i].msg_hdr, flags);

		if (r < 0) {
			if (i == 0)
				return -1;
			break;
		}
		v[i].msg_len = (unsigned int)r;
	}
	return (int)i;
}

/* recvmmsg as one recvmsg per message, through the preload's own recvmsg (`recv1`), so that
 * each is an event, and a replay gives each back: the messages received, each msg_len set, or
 * -1 when the first failed (a later failure, EAGAIN on a non-blocking socket most often,
 * ends the count, as the kernel's does).  MSG_WAITFORONE: the messages after the first are
 * not waited for.  The timeout is not applied (the kernel looks at it only between
 * datagrams, README.md Limits).  Both preloads. */
static inline int ip_recvmmsg_each(int fd, struct mmsghdr *v, unsigned int n, int flags,
                                   ssize_t (*recv1)(int, struct msghdr *, int))
{
	int f = flags & ~MSG_WAITFORONE;
	unsigned int i;

	if (n > UIO_MAXIOV)
		n = UIO_MAXIOV;
	for (i = 0; i < n; i++) {
		ssize_t r = recv1(fd, &v[i].msg_hdr, f);

		if (r < 0) {
			if (i == 0)
				return -1;
			break;
		}
		v[i].msg_len = (unsigned int)r;
		if (flags & MSG_WAITFORONE)
			f |= MSG_DONTWAIT;
	}
	return (int)i;
}

static inline int ip_fd_kind_is_channel(int kind)
{
	return kind == IP_FD_SOCKET || kind == IP_FD_PIPE || kind == IP_FD_CHAR;
}
/* The enum trace_chan_type of a socket of this domain and type (SOCK_NONBLOCK and
 * SOCK_CLOEXEC ignored). */
uint8_t ip_sock_chan_type(int domain, int type);
/* The lowest descriptor number a preload library keeps its own descriptors at (its trace,
 * its control connection): high, out of the way of the program's dup2, below the limit;
 * under a limit of 64 or less, the limit itself (see ip_dup_high). */
int ip_pick_min_fd(void);
/* A close-on-exec duplicate of fd at the lowest free number >= min (ip_pick_min_fd's), the
 * descriptor limit raised for the moment when min is past it; -1 when none can be had (a
 * small hard limit, unprivileged: the caller then keeps as few descriptors as it can, at
 * the lowest free numbers, the same in record and replay).  errno is kept. */
int ip_dup_high(int fd, int min);

/* Whether system call nr with first arguments a0, a1 installs a seccomp sandbox
 * (seccomp(SECCOMP_SET_MODE_STRICT|FILTER), prctl(PR_SET_SECCOMP, STRICT|FILTER)): 1 strict
 * mode, 0 a filter, -1 not an installation.  Both preloads step aside just before one. */
int ip_sandbox_install(long nr, long a0, long a1);
/* Whether syscall(nr, a[0], a[1]...) is a clone or clone3 made as a fork: no memory,
 * descriptor table, file system data or signal handlers shared, no new stack or TLS (vsftpd
 * forks its session processes into new namespaces with syscall(__NR_clone, CLONE_NEWPID |
 * CLONE_NEWIPC | CLONE_NEWNET | SIGCHLD, 0)).  Such a child runs on from the call as a
 * forked one does: both preloads treat it as a fork.  Other clones pass through. */
int ip_clone_is_fork(long nr, const long *a);

/* POSIX timers notifying by SIGEV_THREAD, left alone by both preloads (timerids.c): note one
 * made; 1 when id is one of them. */
IP_HIDDEN void ip_thread_timer_add(timer_t id);
IP_HIDDEN int ip_thread_timer(timer_t id);

/* --- the environment variables (env.c) -------------------------------------------------- */
/* Each process's configuration and, across exec, its state travel in one variable:
 * ENCORE_RECORD for the recorder, ENCORE_REPLAY for the replayer (written by the GD, then by
 * each LC for the image it execs).  Both are KEY=VALUE;... with `dir` last, running to the
 * end (a path may hold ';').  One encoder and one decoder per variable, pure functions: the
 * decoders keep the lists (channels, descriptors...) as text slices of the input, read with
 * ip_env_list_next(); the encoders take them from iterators (struct ip_env_list). */
#define IP_DIR_MAX 4096      /* the session directory, NUL included */
#define IP_SESSION_MAX 64    /* the session id, NUL included */

/* A list to encode: next() fills v[0..nfields-1] with the next item and returns 1, or
 * returns 0 at the end.  Bit i of neg: field i is signed (an int64_t stored in v[i]). */
struct ip_env_list {
	int (*next)(void *ctx, uint64_t *v);
	void *ctx;
	int nfields;
	unsigned neg;
};

/* A list as decoded: the text between KEY= and the next ';' (NULL when the key is absent). */
struct ip_env_slice {
	const char *p;
	size_t len;
};

/* Read the next item of a list, ITEM,ITEM,... with ITEM = N:N:...: exactly `want` decimal
 * fields (a '-' allowed on the fields whose bit is set in neg).  Returns 1 (item in v),
 * 0 at the end of the list, -1 on a malformed item.  Empty items are skipped. */
int ip_env_list_next(const char **p, const char *end, uint64_t *v, int want, unsigned neg);

/* 1 when s[0..n) is a valid session or process name shorter than cap: letters, digits, '.',
 * '_', '-', not starting with '.'. */
int ip_valid_name(const char *s, size_t n, size_t cap);

/* ENCORE_RECORD=v=1;name=N;parent=P;sess=S;seg=0;first=0;fidx=0;forks=0;nch=0;pid=0;
 *               k=64;depth=4;max=0;[zl=1;]ch=ID:TYPE:EXT:DIR:B0:B1:H0:H1:S0:S1,...;fd=FD:ID,...;
 *               dir=/abs/path
 * EXT is the recorder's: bit 0 external, bit 1 undecided, then the ports (recorder/core.c).
 * `pid` is the process that wrote the value for an exec; 0 from `encore record`.  Unknown
 * keys are ignored; bad values make the whole value invalid (the recorder trusts nothing in
 * the environment beyond its variable). */
#define IP_REC_CH_FIELDS 10
#define IP_REC_FD_FIELDS 2
struct ip_rec_env {
	char name[TRACE_NAME_MAX];
	char parent[TRACE_NAME_MAX];
	char session[IP_SESSION_MAX];
	uint32_t seg;           /* image number (exec count) */
	uint64_t first;         /* process-wide index of the image's first event */
	uint64_t fork_index;    /* index of the parent's FORK event */
	uint32_t forks;         /* children forked so far */
	uint32_t next_chan;     /* last channel id handed out */
	int64_t pid;            /* the process that wrote the value, 0 from `encore record` */
	uint32_t hash_every;    /* K: every K-th event of a direction carries the hash (64) */
	uint32_t depth;         /* call-site frames (4, at most 32) */
	uint64_t max_bytes;     /* disk budget, 0 unbounded */
	uint32_t zlevel;        /* zstd level of the recorder's chunks; 0: stored, for `encore
	                           record` to compress afterwards (always compressed with a
	                           budget) */
	struct ip_env_slice ch, fd; /* decode: the lists; encode: unused (the iterators) */
	const char *dir;        /* absolute, shorter than IP_DIR_MAX */
};
/* Decode the value (what follows "ENCORE_RECORD="): 0, or -1 when it is invalid. */
int ip_rec_env_decode(const char *s, struct ip_rec_env *e);
/* Encode into buf (NUL-terminated, without the "ENCORE_RECORD=" prefix): 0, or -1 when it does
 * not fit (or an iterator gave a bad item).  ch: IP_REC_CH_FIELDS fields, fd: 2. */
int ip_rec_env_encode(char *buf, size_t cap, const struct ip_rec_env *e,
                      const struct ip_env_list *ch, const struct ip_env_list *fd);

/* ENCORE_REPLAY=v=1;name=NAME;pid=P;seg=S;dir=/abs/session from the GD; an LC writing it for
 * the image it execs adds first= (the index after the EXEC event), ch=ID:SENT:RECEIVED:
 * HASH_OUT:HASH_IN:EXTERNAL,..., fd=FD:CLASS,... (CLASS may be negative), cnt=A:B:C:D (the
 * online counters) and kids=REC:LIVE,... (children forked so far); rpid= (the recorded pid)
 * and t0= (the recorded wall clock at the trace's start, ns) from either.  Unknown keys are
 * ignored. */
#define IP_REP_CH_FIELDS 6
#define IP_REP_FD_FIELDS 2
struct ip_rep_env {
	char name[TRACE_NAME_MAX];
	int64_t pid;            /* the process that wrote it; 0 from the GD or for a new image */
	int64_t rpid;           /* rpid=: the process's recorded pid (0: not given), which getpid
	                           gives before the LC started (another library's constructor) */
	int64_t t0;             /* t0=: the recorded run's wall clock (ns) at the start of the
	                           process's trace (0: not given), which the realtime clocks give
	                           before the LC started */
	uint32_t seg;
	int has_first;          /* first= present */
	uint64_t first;
	int has_cnt;            /* cnt= present (and well formed) */
	int64_t cnt[4];
	struct ip_env_slice ch, fd, kids; /* decode: the lists (kids read by lc_pids_parse) */
	const char *kids_text;  /* encode: kids= text, NULL or "" for none */
	const char *dir;
};
int ip_rep_env_decode(const char *s, struct ip_rep_env *e);
/* ch and fd NULL: no ch= and fd= keys (the GD's value). */
int ip_rep_env_encode(char *buf, size_t cap, const struct ip_rep_env *e,
                      const struct ip_env_list *ch, const struct ip_env_list *fd);

#endif
