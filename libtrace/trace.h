/*
 * trace.h: the public face of libtrace, the part every other part of encore stands on.
 *
 * It holds the event model (what one intercepted call looks like once recorded), the
 * writer that the recorder appends events with, the reader that streams them back, the
 * session (a directory of per-process trace files) and, through predicate.h, the
 * predicate language.  The byte layout is specified in schemas/trace-format.md; this
 * header follows that document, not the other way round.
 *
 * Conventions: functions return 0 (or a count) on success and a negative TRACE_E* code
 * on failure; trace_strerror() names the code.  Objects are opaque, created by *_open or
 * *_new and released by the matching *_close or *_free, which accept NULL.  Nothing here
 * prints or exits: failures are reported through return codes and a struct trace_diag.
 */
#ifndef ENCORE_TRACE_H
#define ENCORE_TRACE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------
 * Errors
 */
enum trace_error {
	TRACE_OK = 0,
	TRACE_EIO = -1,        /* a system call failed; errno-style detail in the diag */
	TRACE_ENOMEM = -2,     /* out of memory */
	TRACE_EMAGIC = -3,     /* not an encore trace file (bad magic) */
	TRACE_EVERSION = -4,   /* written by a newer encore than this reader can read */
	TRACE_ECORRUPT = -5,   /* checksum mismatch, bad varint, impossible value */
	TRACE_ETRUNCATED = -6, /* the file ends inside a header or chunk */
	TRACE_EINVAL = -7,     /* bad argument from the caller */
	TRACE_EFULL = -8,      /* writer: the disk budget leaves no room even after dropping */
	TRACE_ENOENT = -9,     /* no such file, process or channel */
	TRACE_EPARSE = -10,    /* predicate text does not parse */
};

/* A short English name for a TRACE_E* code ("checksum mismatch", ...). Never NULL. */
const char *trace_strerror(int code);

/* Where and why something failed: filled by functions that take one, so that the CLI can
 * print a single clear line naming the file, the byte offset and the problem. */
struct trace_diag {
	int code;              /* TRACE_E* */
	int sys_errno;         /* errno of the failing system call, for TRACE_EIO */
	uint64_t offset;       /* byte offset in the file where the problem was found */
	char file[256];        /* the file concerned, "" when none */
	char msg[256];         /* one line, no trailing newline */
};

/* ---------------------------------------------------------------------------------------
 * The event model (docs/design.md, "Vocabulary").  Events of one process are numbered 1, 2, 3...
 * in the order the process executed them; state k is the process right after event k.
 */
enum trace_kind {
	TRACE_EV_NONE = 0,
	TRACE_EV_SEND = 1,      /* bytes moved out on a channel (send, write, sendmsg...) */
	TRACE_EV_RECV = 2,      /* bytes moved in on a channel (recv, read, recvmsg...) */
	TRACE_EV_SOCKET = 3,    /* a socket was created: channel id assigned */
	TRACE_EV_BIND = 4,      /* endpoint: the local address */
	TRACE_EV_LISTEN = 5,
	TRACE_EV_CONNECT = 6,   /* endpoint: local and peer address once connected */
	TRACE_EV_ACCEPT = 7,    /* creates a channel; aux[0] = the listening channel, aux[1]
	                           (when present) TRACE_ACCEPT_* bits */
	TRACE_EV_SHUTDOWN = 8,  /* aux[0] = how (SHUT_RD/WR/RDWR) */
	TRACE_EV_CLOSE = 9,     /* the process's last descriptor of the channel went away */
	TRACE_EV_PIPE = 10,     /* pipe/socketpair: creates two channel ends; aux = both ids */
	TRACE_EV_DUP = 11,      /* a second descriptor for a channel; aux[0] = new fd */
	TRACE_EV_FORK = 12,     /* result = child pid; aux[0] = child ordinal k (name PARENT.k) */
	TRACE_EV_EXEC = 13,     /* last event of an image; data = the new path */
	TRACE_EV_EXIT = 14,     /* result = exit status */
	TRACE_EV_SIGNAL = 15,   /* result = signal number; aux[0] = 1 when fatal */
	TRACE_EV_READY = 16,    /* poll/select/epoll result; data = the ready set (value) */
	TRACE_EV_CLOCK = 17,    /* clock read; data = the value returned (external input) */
	TRACE_EV_RANDOM = 18,   /* getrandom or /dev/urandom read; data = the bytes */
	TRACE_EV_INPUT = 19,    /* bytes from outside the session (stdin, unrecorded peer) */
	TRACE_EV_MARK = 20,     /* encore_mark(key, value): data = key, aux[0] = value */
	TRACE_EV_PID = 21,      /* getpid/getppid and the like: result = value returned */
	TRACE_EV_THREAD = 22,   /* thread life: pthread_create (result = the new thread's index),
	                           a thread's end, pthread_join (aux[0] = the joined index) */
	TRACE_EV_WAIT = 23,     /* the wait family returned: result = the child reaped (its
	                           recorded pid; 0 none, -1 failed), aux[0] = its status,
	                           aux[1] = si_code (CLD_EXITED...; 0 none) */
	TRACE_EV_SYNC = 24,     /* pthread synchronisation (call says which): aux[0] = the object's
	                           per-process id, result = what the function returned */
	TRACE_EV_UNMASK = 25,   /* sigprocmask or pthread_sigmask returned with handlers of this
	                           thread deferred (a pending signal it unblocked came as it
	                           returned): they run after it (TRACE_FL_AFTER); call signal,
	                           aux[0] = how */
	/* 26: kept for threads; 28-31: asynchronous signals and timers */
	TRACE_EV_ORDER = 27,    /* a process-shared semaphore taken (call sem_wait, sem_trywait,
	                           sem_timedwait): aux[0] = its ticket, the order in which every
	                           process of the session took it (-1: the call failed), aux[1] =
	                           the semaphore's key, aux[2] = 0; result and errno the call's */
	TRACE_EV_HANDLER = 28,  /* the program's handler of an asynchronous signal ran here,
	                           before the process's next event: result = the signal, aux[0] =
	                           si_code, aux[1] = si_pid (recorded pid, or an outsider's),
	                           aux[2] = si_uid | si_status << 32, aux[3] = si_value;
	                           TRACE_FL_LATE when not run at a call (inexact) */
	TRACE_EV_KILL = 29,     /* kill, tgkill, sigqueue: result, err; aux[0] = the target
	                           pid as given (recorded pids), aux[1] = the signal, aux[2] =
	                           the thread id (tgkill), aux[3] = si_value (sigqueue) */
	TRACE_EV_TIMER = 30,    /* alarm, setitimer: result, err; data = the old value
	                           (setitimer: struct itimerval, 32 bytes), aux[0] = the timer
	                           (setitimer's which) */
	TRACE_EV_SANDBOX = 31,  /* prctl(PR_SET_SECCOMP) or seccomp(2) installing a sandbox,
	                           recorded through (the recorder goes on under the filter):
	                           result, err; aux[0] = the mode (SECCOMP_MODE_STRICT/FILTER) or
	                           operation (SECCOMP_SET_MODE_*), aux[1] = seccomp's flags,
	                           aux[2] = the filter's instructions; data = the filter program
	                           (struct sock_filter, 8 bytes each, at most 4096) */
	TRACE_EV_PASS = 32,     /* one descriptor passed (SCM_RIGHTS) by the sendmsg, or
	                           received by the recvmsg, of the send or receive event just
	                           before it: fd = the descriptor, channel = its channel end (a
	                           new one on the receiving side; 0: not a channel), aux[0] =
	                           TRACE_PASS_OUT or _IN, aux[1] = the channel it travelled on,
	                           aux[2] = enum trace_pass_what; data: sending side 16 bytes,
	                           its channel's bytes sent and received so far (little-endian
	                           u64), receiving side the new end's endpoint */
	TRACE_EV_FDNUM = 33,    /* in a process with threads, a descriptor number taken or freed
	                           by a call that makes no channel (open of a file, its close),
	                           so that replay hands numbers out in the recorded order: fd =
	                           the descriptor, result = it (taken) or the close's result,
	                           aux[0] = 1 taken or 2 freed */
	TRACE_EV_KIND_MAX = 33, /* kinds above this are unknown to this reader, not errors */
};

/*
 * Which libc call produced an event: an attribute, never used for ordering.  The numbers
 * are stored in trace files (the `call` field of schemas/trace-format.md, "Calls", which
 * lists them), so each member is numbered explicitly and a number never changes meaning:
 * a new call takes the next free number, a call no longer recorded keeps its number.
 * trace_call_name() (event.c) and the table in the schema follow this list.
 */
enum trace_call {
	TRACE_CALL_NONE = 0,
	TRACE_CALL_SEND = 1,
	TRACE_CALL_SENDTO = 2,
	TRACE_CALL_SENDMSG = 3,
	TRACE_CALL_WRITE = 4,
	TRACE_CALL_WRITEV = 5,
	TRACE_CALL_RECV = 6,
	TRACE_CALL_RECVFROM = 7,
	TRACE_CALL_RECVMSG = 8,
	TRACE_CALL_READ = 9,
	TRACE_CALL_READV = 10,
	TRACE_CALL_SOCKET = 11,
	TRACE_CALL_SOCKETPAIR = 12,
	TRACE_CALL_PIPE = 13,
	TRACE_CALL_PIPE2 = 14,
	TRACE_CALL_BIND = 15,
	TRACE_CALL_LISTEN = 16,
	TRACE_CALL_CONNECT = 17,
	TRACE_CALL_ACCEPT = 18,
	TRACE_CALL_ACCEPT4 = 19,
	TRACE_CALL_SHUTDOWN = 20,
	TRACE_CALL_CLOSE = 21,
	TRACE_CALL_DUP = 22,
	TRACE_CALL_DUP2 = 23,
	TRACE_CALL_DUP3 = 24,
	TRACE_CALL_FCNTL = 25,
	TRACE_CALL_FORK = 26,
	TRACE_CALL_EXECVE = 27,
	TRACE_CALL_EXIT = 28,
	TRACE_CALL_POLL = 29,
	TRACE_CALL_PPOLL = 30,
	TRACE_CALL_SELECT = 31,
	TRACE_CALL_PSELECT = 32,
	TRACE_CALL_EPOLL_WAIT = 33,
	TRACE_CALL_EPOLL_PWAIT = 34,
	TRACE_CALL_CLOCK_GETTIME = 35,
	TRACE_CALL_GETTIMEOFDAY = 36,
	TRACE_CALL_TIME = 37,
	TRACE_CALL_GETRANDOM = 38,
	TRACE_CALL_GETPID = 39,
	TRACE_CALL_GETPPID = 40,
	TRACE_CALL_PTHREAD_CREATE = 41,
	TRACE_CALL_MARK = 42,
	TRACE_CALL_SIGNAL = 43,
	TRACE_CALL_SYSCALL = 44,            /* syscall(SYS_getrandom, ...) */
	TRACE_CALL_SENDFILE = 45,           /* 45..49: bytes moved by the kernel */
	TRACE_CALL_SPLICE = 46,
	TRACE_CALL_COPY_FILE_RANGE = 47,
	TRACE_CALL_TEE = 48,
	TRACE_CALL_VMSPLICE = 49,
	TRACE_CALL_STDIO = 50,              /* fread, fgets, fwrite, printf...: stdio API level */
	TRACE_CALL_GETENTROPY = 51,         /* how OpenSSL 3 seeds itself where glibc has it */
	TRACE_CALL_WAITPID = 52,            /* 52..56: the wait family (TRACE_EV_WAIT) */
	TRACE_CALL_WAIT = 53,
	TRACE_CALL_WAIT3 = 54,
	TRACE_CALL_WAIT4 = 55,
	TRACE_CALL_WAITID = 56,
	/* 57..89: threads (TRACE_EV_SYNC unless said otherwise; schemas/trace-format.md) */
	TRACE_CALL_MUTEX_LOCK = 57,
	TRACE_CALL_MUTEX_TRYLOCK = 58,
	TRACE_CALL_MUTEX_TIMEDLOCK = 59,
	TRACE_CALL_MUTEX_UNLOCK = 60,
	TRACE_CALL_RWLOCK_RDLOCK = 61,
	TRACE_CALL_RWLOCK_TRYRDLOCK = 62,
	TRACE_CALL_RWLOCK_TIMEDRDLOCK = 63,
	TRACE_CALL_RWLOCK_WRLOCK = 64,
	TRACE_CALL_RWLOCK_TRYWRLOCK = 65,
	TRACE_CALL_RWLOCK_TIMEDWRLOCK = 66,
	TRACE_CALL_RWLOCK_UNLOCK = 67,
	TRACE_CALL_COND_WAIT = 68,          /* the wait begins: its mutex is released */
	TRACE_CALL_COND_TIMEDWAIT = 69,     /* the same for pthread_cond_timedwait */
	TRACE_CALL_COND_WAKE = 70,          /* a wait returns (result), its mutex held again */
	TRACE_CALL_COND_SIGNAL = 71,
	TRACE_CALL_COND_BROADCAST = 72,
	TRACE_CALL_SEM_WAIT = 73,
	TRACE_CALL_SEM_TRYWAIT = 74,
	TRACE_CALL_SEM_TIMEDWAIT = 75,
	TRACE_CALL_SEM_POST = 76,
	TRACE_CALL_BARRIER_ARRIVE = 77,     /* pthread_barrier_wait entered */
	TRACE_CALL_BARRIER_LEAVE = 78,      /* it returned (result) */
	TRACE_CALL_SPIN_LOCK = 79,
	TRACE_CALL_SPIN_TRYLOCK = 80,
	TRACE_CALL_SPIN_UNLOCK = 81,
	TRACE_CALL_THREAD_EXIT = 82,        /* TRACE_EV_THREAD: the thread ends */
	TRACE_CALL_PTHREAD_JOIN = 83,       /* TRACE_EV_THREAD: aux[0] = the joined index */
	TRACE_CALL_GETTID = 84,             /* TRACE_EV_PID: the thread's TID */
	TRACE_CALL_PTHREAD_ONCE = 85,       /* result 1 when this call ran the init routine */
	TRACE_CALL_FUTEX_WAIT = 86,         /* syscall(SYS_futex, FUTEX_WAIT[_PRIVATE]) returned */
	TRACE_CALL_FUTEX_WAKE = 87,         /* syscall(SYS_futex, FUTEX_WAKE[_PRIVATE]): result =
	                                       the threads woken */
	/* 88..89: kept for threads */
	TRACE_CALL_KILL = 90,               /* 90..99: signals sent and timers armed */
	TRACE_CALL_TGKILL = 91,
	TRACE_CALL_SIGQUEUE = 92,
	TRACE_CALL_ALARM = 93,
	TRACE_CALL_SETITIMER = 94,
	TRACE_CALL_HANDLER = 95,            /* an asynchronous signal's handler ran */
	TRACE_CALL_SIGWAIT = 96,            /* 96..98: a signal taken by a wait (a HANDLER */
	TRACE_CALL_SIGWAITINFO = 97,        /* event of one of these calls: no handler ran) */
	TRACE_CALL_SIGTIMEDWAIT = 98,
	TRACE_CALL_TIMERFD_CREATE = 99,     /* 99..101: timerfd: its reads are INPUT events */
	TRACE_CALL_TIMERFD_SETTIME = 100,
	TRACE_CALL_TIMERFD_GETTIME = 101,
	TRACE_CALL_SIGNALFD = 102,          /* a signalfd made (its reads are INPUT events) */
	TRACE_CALL_TIMER_CREATE = 103,      /* 103..107: POSIX timers (TIMER events) */
	TRACE_CALL_TIMER_SETTIME = 104,
	TRACE_CALL_TIMER_GETTIME = 105,
	TRACE_CALL_TIMER_GETOVERRUN = 106,
	TRACE_CALL_TIMER_DELETE = 107,
	TRACE_CALL_CLONE = 108,             /* syscall(SYS_clone) made as a fork (a FORK event) */
	TRACE_CALL_CLONE3 = 109,            /* syscall(SYS_clone3) made as a fork (a FORK event) */
	TRACE_CALL_GETLOADAVG = 110,        /* 110..119: the machine's and the process's state
	                                       read past the file and clock interposers (INPUT
	                                       events without channel: schemas/trace-format.md,
	                                       "Machine values") */
	TRACE_CALL_SYSINFO = 111,
	TRACE_CALL_GETRUSAGE = 112,
	TRACE_CALL_TIMES = 113,
	TRACE_CALL_CLOCK = 114,
	TRACE_CALL_UNAME = 115,
	TRACE_CALL_GETHOSTNAME = 116,
	TRACE_CALL_SYSCONF = 117,
	TRACE_CALL_GETITIMER = 118,         /* a TIMER event: the timer's value now (the replay
	                                       arms none: recorder/signals.c) */
	TRACE_CALL_SCHED_GETAFFINITY = 119,
	/* 120: other calls; a number with no name reads as "unknown" */
	TRACE_CALL_PRCTL = 121,             /* prctl(PR_SET_SECCOMP...) (SANDBOX events) */
	TRACE_CALL_SECCOMP = 122,           /* seccomp(2) (SANDBOX events); the syscall(2) forms
	                                       of both log as these */
	/* 123..133: other calls */
	TRACE_CALL_EARLY_RANDOM = 134,      /* random bytes got before the recorder started (a
	                                       RANDOM event, the first of its image) */
	TRACE_CALL_GETSOCKOPT = 135,        /* getsockopt(SO_ERROR) on a channel (a CONNECT event) */
	TRACE_CALL_GETIFADDRS = 136,        /* 136..139: the machine's interfaces (INPUT events) */
	TRACE_CALL_IF_NAMEINDEX = 137,
	TRACE_CALL_IF_NAMETOINDEX = 138,
	TRACE_CALL_IF_INDEXTONAME = 139,
	TRACE_CALL_OPEN = 131,              /* open, openat, creat, fopen... (FDNUM events) */
	TRACE_CALL_STATFS = 140,            /* statfs, fstatfs and 64 forms (INPUT events) */
	TRACE_CALL_STATVFS = 141,           /* statvfs, fstatvfs and 64 forms (INPUT events) */
	TRACE_CALL_ARC4RANDOM = 142,        /* arc4random, arc4random_uniform (RANDOM events) */
	TRACE_CALL_ARC4RANDOM_BUF = 143,    /* arc4random_buf (RANDOM) */
	TRACE_CALL_EPOLL_CREATE = 144,      /* epoll_create, epoll_create1 (FDNUM events) */
	TRACE_CALL_MAX = 145,               /* one past the last number; never stored */
};

/* TRACE_EV_ACCEPT's aux[1]: the listener could not say it was recorded (its registry entry
 * could not be made: privileges dropped), so its clients took it for an outside server and
 * this connection is an outside one to the process, which receives on it as INPUT. */
#define TRACE_ACCEPT_OUTSIDE 1

/* TRACE_EV_PASS (schemas/trace-format.md, "Descriptor passing"): which side, and what the
 * descriptor was. */
#define TRACE_PASS_OUT 1
#define TRACE_PASS_IN 2
enum trace_pass_what {
	TRACE_PASS_OTHER = 0,     /* epoll, eventfd, timerfd...: not a channel */
	TRACE_PASS_SOCKET = 1,    /* a socket (connected, or not yet) */
	TRACE_PASS_LISTENER = 2,  /* a listening socket */
	TRACE_PASS_PIPE = 3,      /* a pipe or FIFO end */
	TRACE_PASS_FILE = 4,      /* a regular file or directory */
	TRACE_PASS_CHAR = 5,      /* a character device (a terminal, /dev/null...) */
};

/* Per-event flag bits (struct trace_event.flags): attributes of the call. */
#define TRACE_FL_PEEK     0x1u  /* MSG_PEEK: the bytes were not consumed */
#define TRACE_FL_NONBLOCK 0x2u  /* the descriptor or the call was non-blocking */
#define TRACE_FL_OOB      0x4u  /* MSG_OOB */
#define TRACE_FL_TRUNC    0x8u  /* the result's msg_flags had MSG_TRUNC (recvmsg) */
#define TRACE_FL_CTRUNC   0x10u /* the result's msg_flags had MSG_CTRUNC (recvmsg) */
#define TRACE_FL_SHARED   0x20u /* SEND/RECV on a pipe end several processes hold: aux[0] is
                                   the direction's offset shared by all of them, aux[1] the
                                   pipe's key, aux[2] the offset when it became shared
                                   (schemas/trace-format.md, "Shared pipe ends") */
#define TRACE_FL_LATE     0x100u /* HANDLER: run where the program computed, not at a call:
                                    replay runs it after the event before it (inexact) */
#define TRACE_FL_AFTER    0x200u /* HANDLER: deferred, run at the end of the call of the event
                                    before it (its event logged): replay runs it there */

#define TRACE_AUX_MAX 4

/*
 * One event, as the writer takes it and the reader returns it.  Fields a kind does not use
 * are zero.  `offset` is never stored: the reader derives it from the running byte count of
 * the channel direction (schemas/trace-format.md, "Derived fields"); the writer ignores it.
 */
struct trace_event {
	uint64_t index;        /* 1, 2, 3... within the process (reader fills it) */
	uint32_t kind;         /* enum trace_kind */
	uint32_t call;         /* enum trace_call */
	uint32_t flags;        /* TRACE_FL_* */
	int32_t fd;            /* the descriptor the call used, -1 when none */
	uint32_t channel;      /* process-local channel id, 0 when none */
	uint32_t site;         /* call-site id in the stack table, 0 when unknown */
	int64_t result;        /* what the call returned (bytes moved, new fd, value...) */
	int32_t err;           /* errno when the call failed, else 0 */
	uint64_t len;          /* bytes asked for (send/recv); equals result when not stored */
	uint64_t offset;       /* derived: byte offset of the first byte moved, per direction */
	uint64_t time_ns;      /* CLOCK_MONOTONIC, display only; 0 when not stamped */
	uint32_t hash;         /* content check of the channel direction so far (has_hash):
	                          trace_hash() of every byte moved up to and including this event,
	                          input events' bytes left out (schemas/trace-format.md) */
	int has_hash;          /* hash is meaningful (the recorder logs it every K events) */
	uint32_t naux;         /* used entries of aux */
	int64_t aux[TRACE_AUX_MAX];
	const uint8_t *data;   /* value bytes (external input, clock, ready set, mark key...) */
	uint32_t data_len;     /* the reader's pointer lives until the next trace_reader_next */
	uint32_t thread;       /* the thread that made the call: its index in the process, in
	                          creation order (0: the main thread) */
	uint32_t elided;       /* the mutex acquisitions this thread made, without an event,
	                          since its previous event (reader; trace_writer_elided) */
};

/* Short lowercase names: "send", "recv", ...; "unknown" outside the known range. */
const char *trace_kind_name(uint32_t kind);
/* The inverse; returns TRACE_EV_NONE for an unknown name. */
uint32_t trace_kind_from_name(const char *name);
const char *trace_call_name(uint32_t call);

/* Is an event of this kind, call and aux a read of SO_ERROR on a channel (how a non-blocking
 * connect learns its outcome)?  1 or 0.  Such a read is a CONNECT event without endpoint,
 * aux[0] = SO_ERROR and aux[1] = the value read: of call TRACE_CALL_GETSOCKOPT, or of call
 * TRACE_CALL_CONNECT in traces of older recorders (schemas/trace-format.md, "Event kinds").
 * Fields rather than an event, for the replayer's copies of events too. */
int trace_is_so_error_read(uint32_t kind, uint32_t call, uint32_t naux, const int64_t *aux);

/*
 * Channel ends.  A TRACE_EV_SOCKET, _CONNECT, _ACCEPT, _BIND or _PIPE event carries in its
 * data a description of the end, in the TLV layout of schemas/trace-format.md.  The analyzer
 * matches two ends of one channel from these alone (never from timestamps).
 */
enum trace_chan_type {
	TRACE_CHAN_UNKNOWN = 0,
	TRACE_CHAN_TCP = 1,       /* IPv4 or IPv6 stream socket */
	TRACE_CHAN_UNIX = 2,      /* AF_UNIX stream socket */
	TRACE_CHAN_SOCKETPAIR = 3,
	TRACE_CHAN_PIPE = 4,
	TRACE_CHAN_UDP = 5,       /* UDP: datagrams matched one by one (schemas/trace-format.md) */
	TRACE_CHAN_OTHER = 6,
};

struct trace_endpoint {
	uint32_t type;            /* enum trace_chan_type */
	uint32_t dir;             /* pipes: 1 read end, 2 write end; sockets 0 (both ways) */
	uint64_t inode;           /* st_ino of this end (sockets, pipes) */
	uint64_t peer_inode;      /* socketpair: the other end's inode; 0 when unknown */
	int64_t peer_pid;         /* SO_PEERCRED pid when known, else 0 */
	uint32_t local_len;       /* bytes used in local (a struct sockaddr), 0 when unknown */
	uint32_t peer_len;
	uint8_t local[128];
	uint8_t peer[128];
};

/* Encode an endpoint into buf (TLV); returns the bytes used, or TRACE_EINVAL if cap is
 * too small.  At most TRACE_ENDPOINT_MAX bytes are ever needed. */
#define TRACE_ENDPOINT_MAX 320
int trace_endpoint_encode(const struct trace_endpoint *ep, uint8_t *buf, size_t cap);
/* Decode; unknown tags are skipped.  Returns 0 or TRACE_ECORRUPT. */
int trace_endpoint_decode(const uint8_t *buf, size_t len, struct trace_endpoint *ep);
/* "127.0.0.1:4000", "[::1]:80", "unix:/tmp/s", "unix:@abstract", "pipe:1234"... */
void trace_endpoint_format(const struct trace_endpoint *ep, int peer, char *out, size_t cap);

/* ---------------------------------------------------------------------------------------
 * Process metadata: the header of every trace file.
 */
#define TRACE_NAME_MAX 128

struct trace_process {
	char name[TRACE_NAME_MAX];    /* logical name: "ring", "ring.1", "ring.1.2" */
	char parent[TRACE_NAME_MAX];  /* logical name of the parent, "" for a root */
	char host[256];               /* host name */
	char host_id[64];             /* /etc/machine-id or boot id: tells hosts apart */
	char session[64];             /* session id shared by every process of a recording */
	int64_t pid;
	int64_t ppid;
	uint64_t fork_index;          /* index of the fork event in the parent, 0 for a root */
	uint32_t segment;             /* 0 for the first image, k after the k-th exec */
	uint64_t first_index;         /* index of this segment's first event minus one */
	uint64_t start_realtime_ns;   /* CLOCK_REALTIME at the start of the segment */
	char exe[4096];               /* absolute path of the executable */
	char cwd[4096];
	uint8_t build_id[64];         /* ELF NT_GNU_BUILD_ID of the executable */
	uint32_t build_id_len;
	uint32_t argc;
	char **argv;                  /* argc strings; owned by whoever filled the struct */
	uint32_t flags;               /* TRACE_PROC_*: how the recorder logged this image */
};

/* trace_process.flags */
enum {
	/* Mutexes are owned (schemas/trace-format.md, "Threads"): a mutex's release is no event,
	 * nor an acquisition by the thread that acquired it last; such acquisitions are counted
	 * in the thread's next event (trace_event.elided). */
	TRACE_PROC_OWNED_MUTEXES = 1u,
};

/* ---------------------------------------------------------------------------------------
 * Stack table: call sites resolved with libunwind, interned per trace.
 */
struct trace_frame {
	uint64_t pc;          /* the return address, as an address in its object when known */
	uint64_t offset;      /* pc - start of function */
	const char *function; /* "" when unknown (the reader names frames offline) */
	const char *object;   /* the ELF object's path (base name in older traces), "" unknown */
};

struct trace_stack {
	uint32_t site;
	uint32_t nframes;
	const struct trace_frame *frames; /* frames[0] is the caller of the intercepted call */
};

/* ---------------------------------------------------------------------------------------
 * Writer.  Appends events to one trace file.  Memory is bounded by the chunk size; the
 * current (not yet compressed) chunk lives in an mmap'd region of the file itself, so a
 * process killed at any instant leaves a file that reads back to its last whole event.
 *
 * After trace_writer_open, trace_writer_event allocates nothing and makes no system call
 * except when a chunk is full (compression and one write).  Not thread-safe: the recorder
 * serialises.  The file is flock'ed (shared) while a writer has it open, so that
 * trace_compact_file never rewrites a trace that is still being written.
 */
struct trace_writer;

#define TRACE_LEVEL_STORE (-0x7fffffff) /* trace_writer_options.level: store the chunks */
struct trace_writer_options {
	uint32_t chunk_size;   /* raw bytes per chunk; 0 = default (64 KiB) */
	int level;             /* zstd level; 0 = default (3); TRACE_LEVEL_STORE: chunks stored,
	                          not compressed (zstd frames of raw blocks), for
	                          trace_compact_file to compress later out of the program; with a
	                          budget (max_bytes) they are compressed at the default level */
	uint64_t max_bytes;    /* disk budget for chunks; 0 = unbounded. Oldest chunks are
	                          dropped (hole-punched) and the drop is recorded in the file */
	int plain_clocks;      /* 1: clock values as plain data, a version-1 file that older
	                          readers read; 0 = default: compact (version 2) */
	int *drain_due;        /* non-NULL (and no budget): two tails, a version-3 file.  A full
	                          tail is not compressed in the call that filled it: the writer
	                          goes on into the other tail and sets *drain_due to 1; the
	                          caller, which serialises its calls with a lock, then calls
	                          trace_writer_claim under that lock and, when it says 1,
	                          trace_writer_drain after releasing it, so that other threads
	                          write events while the chunk is compressed (schemas/
	                          trace-format.md, "Two tails").  A writer never drained still
	                          works: the next full tail drains the previous one first */
	uint32_t drain_wait_ms; /* how long a call waits for another thread's drain before the
	                          trace stops (ETIMEDOUT); 0 = default (60 s) */
};

/* Creates `path` (O_EXCL, 0600, O_NOFOLLOW, O_CLOEXEC) relative to dirfd (AT_FDCWD for
 * none).  The file descriptor is moved to a number >= min_fd if min_fd > 0, so that a
 * recorder can keep it out of the program's way. */
int trace_writer_open(int dirfd, const char *path, const struct trace_process *proc,
                      const struct trace_writer_options *opt, int min_fd,
                      struct trace_writer **out, struct trace_diag *diag);
/* Append one event; its index becomes trace_writer_count() + 1 (ev->index is ignored).
 * Returns 0 or a negative code. */
int trace_writer_event(struct trace_writer *w, const struct trace_event *ev);
/* The same for an event whose only fields are these (fd -1, no channel, site, time, data;
 * naux <= 2): the recorder's synchronisation events, encoded faster, the same bytes.  errno
 * is left as it was, whatever the writer did. */
int trace_writer_sync(struct trace_writer *w, uint32_t thread, uint32_t kind, uint32_t call,
                      int64_t result, int32_t err, uint32_t naux, int64_t aux0, int64_t aux1);
/* trace_writer_sync's most frequent shape, result 0, no errno, one aux value (a lock taken
 * or released, its object's id): fewer arguments, the same bytes. */
int trace_writer_sync1(struct trace_writer *w, uint32_t thread, uint32_t kind, uint32_t call,
                       int64_t aux0);
/* The same for a send or receive as the recorder logs one (kind SEND, RECV or INPUT, a
 * channel, a descriptor, no aux values, no flags): encoded without testing the fields such an
 * event never has, the same bytes as trace_writer_event's; anything else goes to it. */
int trace_writer_data(struct trace_writer *w, const struct trace_event *ev);
/* The same for a clock read that succeeded (kind TRACE_EV_CLOCK, result 0, no errno, fd -1;
 * naux 0 or 1, aux0 the clock id; value: the 16 bytes it filled in): the recorder's most
 * frequent event on servers that time each command, encoded faster when its value has a
 * compact form, the same bytes as trace_writer_event's. */
int trace_writer_clock(struct trace_writer *w, uint32_t thread, uint32_t site, uint32_t call,
                       uint32_t naux, int64_t aux0, uint64_t time_ns, const void *value);
/* Define a call site before the first event that uses it. */
int trace_writer_stack(struct trace_writer *w, uint32_t site, const struct trace_frame *frames,
                       uint32_t nframes);
/* Record that channel `channel` was inherited from the parent (fork) or the previous image
 * (exec), with the byte counts already sent and received on it there, so that the reader's
 * derived offsets continue where the parent's or previous image's stopped. */
int trace_writer_inherit(struct trace_writer *w, uint32_t channel, uint64_t sent,
                         uint64_t received);
/* The next event written is its thread's first after n mutex acquisitions that thread made
 * without an event (the recorder's owned mutexes: schemas/trace-format.md, "Threads"); said
 * in the thread record before it.  Counts add up until that event. */
int trace_writer_elided(struct trace_writer *w, uint32_t n);
/* The number of events written so far (the index of the last one). */
uint64_t trace_writer_count(const struct trace_writer *w);
/* The file descriptor (for a recorder that must keep it out of dup2's way). */
int trace_writer_fd(const struct trace_writer *w);
/* Compress and write the current chunk now (e.g. before exec). */
int trace_writer_flush(struct trace_writer *w);
/* Two tails (options.drain_due), under the caller's lock: 1 when a full tail waits for its
 * drain, now claimed by the caller, which must call trace_writer_drain (without the lock);
 * 0 when none waits. */
int trace_writer_claim(struct trace_writer *w);
/* In a forked child, before trace_writer_abandon of the parent's writer copy: no drain runs
 * in this process, whatever the copy says. */
void trace_writer_forked(struct trace_writer *w);
/* Compress the tail claimed and write it as a chunk, outside the caller's lock, concurrently
 * with the events other threads write meanwhile (errno kept).  Every other writer call that
 * writes chunks (flush, seal, close, stop, the switch to a tail) waits for it first.  A failure
 * stops the writer at the next such call, with the system's reason. */
void trace_writer_drain(struct trace_writer *w);
/* Flush and mark the file closed, keeping the writer usable: before an exec, which either
 * ends the image (the file is then whole) or fails, and the next event reopens it (the
 * closed mark is withdrawn before that event is written). */
int trace_writer_seal(struct trace_writer *w);
/* Flush, close and free.  NULL is fine. */
int trace_writer_close(struct trace_writer *w);
/* Forget the writer without touching the file (a forked child holding its parent's writer
 * calls this: the file and the shared tail belong to the parent).  NULL is fine. */
void trace_writer_abandon(struct trace_writer *w);
/* Why a recorder stopped writing a trace while its program ran on: an errno (ENOSPC, EDQUOT,
 * EIO...) of the writer's own failed call, or one of these codes, above every errno, for what
 * the program did (schemas/trace-format.md, "Truncation").  The same codes name the reason in
 * a session's notrace.CODE.FILE notes. */
enum trace_stop_code {
	TRACE_STOP_SECCOMP = 0x10001,   /* a seccomp filter of the program forbids the recorder's
	                                   calls: stopped there, or before the filter */
	TRACE_STOP_PRIVDROP = 0x10002,  /* it dropped privileges: the session is not its to write */
	TRACE_STOP_SETUID = 0x10003,    /* exec of a set-user/group-ID or file-capability program:
	                                   the loader ignores LD_PRELOAD there */
	TRACE_STOP_FDTAKEN = 0x10004,   /* it took the trace's descriptor and no other was free */
	TRACE_STOP_RESERVE = 0x10005,   /* under a seccomp filter that forbids the writer's calls,
	                                   the trace space reserved before it was used up */
};
/* Stop for good on `reason` (a trace_stop_code or an errno): every event so far is written
 * out, the stop is marked in the file as a failed write would mark it, and the writer is
 * closed and freed.  Returns 0 or the code of a write that failed on the way. */
int trace_writer_stop(struct trace_writer *w, int reason);
/* The writer writes through `fd` from now on (a duplicate of its descriptor, made by a
 * recorder moving it out of the program's way); returns the descriptor it used until now,
 * which the caller closes, or -1 when a drain that a wait gave up on still writes through it
 * (nothing moved: the caller stops the trace). */
int trace_writer_move_fd(struct trace_writer *w, int fd);
/* Reserve and map `bytes` of file space ahead, after the last chunk: from then on chunks are
 * stored into that mapping, and the writer makes no system call at all (stop and close mark
 * the tail and leave the file as it is; abandon leaves the mappings and the descriptor), for
 * a program about to install a seccomp filter that forbids the writer's calls.  When the
 * space is used up the writer stops on TRACE_STOP_RESERVE.  0, or a negative error (nothing
 * changed then). */
int trace_writer_reserve(struct trace_writer *w, uint64_t bytes);

/* What trace_compact_file did. */
struct trace_compact_stats {
	uint64_t before, after; /* file sizes (after: 0 when it was left as it was) */
	uint64_t chunks;        /* stored chunks compressed */
	int busy;               /* left alone: a writer still has it open */
};
/* Compress the stored chunks of the trace `name` in dirfd (written with TRACE_LEVEL_STORE), at
 * zstd `level`, once no writer has it open: the file is rewritten under a temporary name and
 * renamed over the original, so that it is whole at every instant.  Returns 1 when it was
 * rewritten; 0 when it was left as it was (a writer still has it open, nothing stored, a
 * budgeted trace, or a file that does not read back whole: `encore check` says why); or a
 * negative code (diag names the file and the system's reason). */
int trace_compact_file(int dirfd, const char *name, int level,
                       struct trace_compact_stats *stats, struct trace_diag *diag);

/* ---------------------------------------------------------------------------------------
 * Reader.  Streams the events of one trace file.  A file cut short or damaged yields every
 * whole event before the damage; what was dropped is reported by trace_reader_damage().
 */
struct trace_reader;

int trace_reader_open(const char *path, struct trace_reader **out, struct trace_diag *diag);
const struct trace_process *trace_reader_process(const struct trace_reader *r);
/* Next event into *ev.  Returns 1 for an event, 0 at the end (including the end of the
 * readable prefix of a damaged file), or a negative code for an I/O error. */
int trace_reader_next(struct trace_reader *r, struct trace_event *ev);
/* The stack of a site seen so far; NULL when unknown. */
const struct trace_stack *trace_reader_stack(const struct trace_reader *r, uint32_t site);
/* Channels the trace says it inherited, with the byte counts they carried.  The recorder
 * writes these before the first event, so the list is complete after the first call to
 * trace_reader_next. */
struct trace_inherit {
	uint32_t channel;
	uint64_t sent;
	uint64_t received;
};
size_t trace_reader_inherited(const struct trace_reader *r, const struct trace_inherit **list);
/* After chunks dropped by the disk budget: the channels live where the kept events begin,
 * as the writer's checkpoint described them (schemas/trace-format.md, "Disk budget"), so
 * that they can be matched although the events that defined them are gone.  Inherited ones
 * are in trace_reader_inherited() too.  Empty when nothing was dropped; complete after the
 * first call to trace_reader_next. */
struct trace_chan_def {
	uint32_t channel;
	uint32_t pipe_other;      /* the other end of its pipe or socketpair, 0 if none */
	int inherited;            /* from the parent (fork) or the previous image */
	int has_ep;               /* ep holds what the dropped defining events said */
	uint64_t sent, received;  /* bytes moved before the kept events */
	struct trace_endpoint ep;
};
size_t trace_reader_kept_channels(const struct trace_reader *r,
                                  const struct trace_chan_def **list);
/* After the end: 0 when the file was whole; otherwise a TRACE_E* code describing the damage
 * (offset, what was dropped) in *diag.  Events dropped by the disk budget are not damage:
 * trace_reader_dropped() counts them. */
int trace_reader_damage(const struct trace_reader *r, struct trace_diag *diag);
uint64_t trace_reader_dropped(const struct trace_reader *r);
/* 1 if the writer closed the file (trace_writer_close); 0 if it died or is still writing,
 * in which case the events of its unflushed tail were read too. Valid after the end. */
int trace_reader_closed(const struct trace_reader *r);
/* The errno (ENOSPC, EDQUOT, EIO...) on which the recorder stopped writing this trace, the
 * program running on unrecorded; 0 if it never did.  *last_index (may be NULL) gets the index
 * of the last event it kept.  Valid from open. */
int trace_reader_stopped(const struct trace_reader *r, uint64_t *last_index);
/* One line saying why a trace stopped or could not be made, for a stop code or an errno
 * (trace_reader_stopped, notrace notes): strerror's text for an errno.  Never NULL. */
const char *trace_stop_reason(int code);
/* Events recovered from the unflushed tail (0 for a closed file). Valid after the end. */
uint64_t trace_reader_tail_events(const struct trace_reader *r);
void trace_reader_close(struct trace_reader *r);

/* ---------------------------------------------------------------------------------------
 * Session: a directory of trace files (one or more per process: one per exec'd image).
 */
struct trace_session;

int trace_session_open(const char *dir, struct trace_session **out, struct trace_diag *diag);
/* Processes, in a stable order (by logical name). */
size_t trace_session_count(const struct trace_session *s);
const char *trace_session_name(const struct trace_session *s, size_t i);
/* The files of process i, in segment order. */
size_t trace_session_files(const struct trace_session *s, size_t i, const char *const **paths);
void trace_session_close(struct trace_session *s);

/* File name of segment `segment` of process `name`: "NAME.trace", then "NAME@K.trace". */
int trace_file_name(const char *name, uint32_t segment, char *out, size_t cap);

/* ---------------------------------------------------------------------------------------
 * File inputs (schemas/trace-format.md, "File inputs"): what the recorder noted about every
 * regular file a process opened for reading and every executable and shared object it
 * mapped.  They are meta records, not events: they take no event index and replay does not
 * consume them.  The reader collects them (trace_reader_files, complete at the end).
 */
enum trace_file_kind {
	TRACE_FILE_NONE = 0,
	TRACE_FILE_EXE = 1,   /* the executable of the image */
	TRACE_FILE_LIB = 2,   /* a mapped shared object, the dynamic loader included */
	TRACE_FILE_READ = 3,  /* a regular file opened for reading (O_RDONLY or O_RDWR) */
};

#define TRACE_FILE_PATH_MAX 4096

struct trace_file_input {
	uint32_t kind;          /* enum trace_file_kind */
	uint32_t mode;          /* st_mode of the file when noted */
	uint64_t dev, ino;      /* st_dev, st_ino */
	uint64_t size;          /* st_size when noted */
	int64_t mtime_ns;       /* st_mtim in nanoseconds since the epoch */
	uint64_t hashed;        /* bytes [0, hashed) of the file that `crc` covers (READ) */
	uint32_t crc;           /* trace_crc32c of those bytes; 0 when hashed is 0 */
	uint32_t build_id_len;  /* EXE, LIB: ELF NT_GNU_BUILD_ID, 0 when none */
	uint8_t build_id[64];
	const char *path;       /* as the process named it ("" when it named none) */
	const char *resolved;   /* absolute, symbolic links resolved (/proc/self/fd/N) */
};

/* The largest file prefix the recorder hashes when a file is opened (a bigger file gets its
 * first TRACE_FILE_HASH_MAX bytes hashed: size and mtime cover the rest). */
#define TRACE_FILE_HASH_MAX (64u << 10)

/* The GNU build-id in `notes`, the bytes of an ELF PT_NOTE segment (in memory or read from
 * the file): copied to out, its length returned (> 0); 0 when the notes hold none;
 * TRACE_EINVAL when it is longer than cap.  Allocates nothing, calls nothing (libtrace/elfnote.c). */
int trace_elf_build_id(const void *notes, size_t len, uint8_t *out, size_t cap);

/* Append a file input record (writer side; allocates nothing). */
int trace_writer_file(struct trace_writer *w, const struct trace_file_input *f);
/* The file inputs read so far (all of them once trace_reader_next returned 0). */
size_t trace_reader_files(const struct trace_reader *r, const struct trace_file_input **list);
/* "exe", "lib", "file", "unknown". */
const char *trace_file_kind_name(uint32_t kind);
/* Whether the file at `path` is still the one f describes: 0 the same; 1 changed, with what
 * changed in `what` ("missing", "size", "content": size and mtime first, the hash of the first
 * f->hashed bytes only when the mtime differs, so that a file touched but not changed is
 * the same); a negative code when it cannot be read.  Files of kind EXE and LIB, which
 * carry no hash, compare by size and mtime alone. */
int trace_file_check(const struct trace_file_input *f, const char *path, char *what,
                     size_t cap);

/* ---------------------------------------------------------------------------------------
 * Paths created and removed (schemas/trace-format.md, "Paths created"): every file,
 * directory or link a process created where nothing was (an open with O_CREAT that made the
 * file, creat, mkdir, a rename or link onto a free name, symlink), and every name it removed
 * (unlink, rmdir, remove, a rename's old name), by absolute path, so that a replay can show
 * its processes the file system as it was when the recording started (replayer/README.md,
 * "Isolation and packed files").  Meta records, not events: no event index, replay consumes
 * nothing for them.  The reader collects them (trace_reader_paths, complete at the end).
 */
enum trace_path_op {
	TRACE_PATH_NONE = 0,
	TRACE_PATH_FILE = 1,     /* a file created (regular, FIFO...: an open, creat, mknod) */
	TRACE_PATH_DIR = 2,      /* a directory created (mkdir, mkdirat) */
	TRACE_PATH_LINK = 3,     /* a name made for what exists elsewhere: rename's or link's new
	                            name where none was, a symbolic link */
	TRACE_PATH_REMOVED = 4,  /* a name removed: unlink, rmdir, remove, rename's old name */
};

struct trace_path_change {
	uint32_t op;             /* enum trace_path_op */
	int64_t time_ns;         /* CLOCK_REALTIME after the call (orders records across processes) */
	const char *path;        /* absolute (the working or named directory prepended) */
	const char *from;        /* TRACE_PATH_LINK made by a rename: the old name (absolute, as
	                            path); "" otherwise */
};

/* Append a path record (writer side; allocates nothing); from: a rename's old name, or NULL.
 * TRACE_EINVAL for an empty path or a name longer than TRACE_FILE_PATH_MAX. */
int trace_writer_path(struct trace_writer *w, uint32_t op, int64_t time_ns, const char *path,
                      const char *from);
/* The path records read so far (all of them once trace_reader_next returned 0), in the
 * trace's order. */
size_t trace_reader_paths(const struct trace_reader *r, const struct trace_path_change **list);
/* "file", "dir", "link", "removed", "unknown". */
const char *trace_path_op_name(uint32_t op);

/* ---------------------------------------------------------------------------------------
 * Address layout (schemas/trace-format.md, "Address layout"): whether the image ran with
 * address space randomisation off, and where its initial stack began, so that replay can
 * run it with the same layout (encore record --same-layout).  A meta record written once
 * per trace, before the first event.
 */
#define TRACE_ADDR_NO_RANDOMIZE 0x0040000u /* personality(2)'s ADDR_NO_RANDOMIZE */

struct trace_layout {
	uint32_t persona;     /* personality(2) of the process when its trace opened */
	uint32_t argc, envc;  /* the image's argv and environment as exec gave them */
	uint64_t strings;     /* bytes of the exec's strings on the stack: argv's, the
	                         environment's and the file name (AT_EXECFN), with their NULs */
	uint64_t argv0;       /* address of argv[0]'s string (the lowest of those strings) */
	uint64_t stack;       /* an address in the stack frame that opened the trace (informative) */
};

/* Append the layout record (writer side; allocates nothing). */
int trace_writer_layout(struct trace_writer *w, const struct trace_layout *l);
/* The layout record read so far: 1 and *l filled, or 0 when the trace has none (older
 * recorders; it comes before the first event, so one trace_reader_next is enough). */
int trace_reader_layout(const struct trace_reader *r, struct trace_layout *l);

/* The environment an image's program started with (schemas/trace-format.md, "Environment"):
 * its `environ` once the recorder's constructor ran, in order, written before the image's
 * first event.  Replay gives the program these strings (replayer/README.md, "Environment").
 * Writer side: allocates nothing; TRACE_EINVAL when there are more than
 * TRACE_ENV_MAX_STRINGS strings or TRACE_ENV_MAX_BYTES in all (the record is then not
 * written). */
#define TRACE_ENV_MAX_BYTES (64u * 1024)
#define TRACE_ENV_MAX_STRINGS 1024
int trace_writer_env(struct trace_writer *w, char *const *envp, uint32_t envc);
/* 1 and (*envc, *envp) when the trace has the record (read so far: it comes before the first
 * event), 0 when not (an older recorder, a forked child's trace, an environment too large).
 * The strings belong to the reader. */
int trace_reader_env(const struct trace_reader *r, uint32_t *envc, char *const **envp);

/* ---------------------------------------------------------------------------------------
 * Packed sessions (schemas/pack.md): DIR/pack/objects/SHA256HEX holds each distinct file
 * content once, DIR/pack/manifest lists which host used which content at which path.
 * Written by `encore pack`, read by replay.
 */
enum trace_pack_kind {
	TRACE_PACK_EXE = 1,
	TRACE_PACK_LIB = 2,
	TRACE_PACK_FILE = 3,
	TRACE_PACK_DIR = 4,  /* reserved */
};

#define TRACE_PACK_DIRNAME "pack"
#define TRACE_PACK_MANIFEST "manifest"
#define TRACE_PACK_OBJECTS "objects"
#define TRACE_PACK_HEADER "encore-pack 1"

struct trace_pack_entry {
	char host_id[64];     /* META_HOST_ID of the processes that used the file */
	uint32_t kind;        /* enum trace_pack_kind */
	char sha256[65];      /* lowercase hex of the content: the object's name */
	uint32_t mode;        /* permission bits when packed (07777 at most) */
	uint64_t size;
	char *path;           /* absolute, unescaped */
};

struct trace_pack;

/* Read DIR/pack/manifest of session DIR.  TRACE_ENOENT (and an empty *out) when the session
 * is not packed; TRACE_ECORRUPT with the line in diag when a line does not parse. */
int trace_pack_open(const char *dir, struct trace_pack **out, struct trace_diag *d);
/* Parse a manifest held in memory (the same rules; for trace_pack_open and the tests). */
int trace_pack_parse(const char *text, size_t len, struct trace_pack **out,
                     struct trace_diag *d);
/* An empty manifest, to add entries to and write. */
struct trace_pack *trace_pack_new(void);
size_t trace_pack_count(const struct trace_pack *p);
const struct trace_pack_entry *trace_pack_entry(const struct trace_pack *p, size_t i);
/* The entry of `path` for host `host_id` (NULL host_id: any host); NULL when none. */
const struct trace_pack_entry *trace_pack_find(const struct trace_pack *p, const char *host_id,
                                               const char *path);
/* Add a copy of e unless an identical line is there: 1 added, 0 already there, or
 * TRACE_EINVAL (bad hash, kind, relative path, host id with a TAB...) / TRACE_ENOMEM. */
int trace_pack_add(struct trace_pack *p, const struct trace_pack_entry *e);
/* The manifest text (header and lines, in order) into a malloc'd *text of *len bytes. */
int trace_pack_format(const struct trace_pack *p, char **text, size_t *len);
/* Write the manifest into the pack directory `pack_dirfd` (DIR/pack opened O_DIRECTORY|
 * O_NOFOLLOW by the caller): a temporary file made O_CREAT|O_EXCL|O_NOFOLLOW 0600, written,
 * fsync'd and renamed over `manifest`. */
int trace_pack_write(int pack_dirfd, const struct trace_pack *p, struct trace_diag *d);
void trace_pack_free(struct trace_pack *p);
const char *trace_pack_kind_name(uint32_t kind);
/* enum trace_pack_kind of "exe", "lib", "file", "dir"; 0 for anything else. */
uint32_t trace_pack_kind_from_name(const char *name);
/* "DIR/pack/objects/SHA256HEX" into out; TRACE_EINVAL when it does not fit or the hash is
 * not 64 lowercase hex digits. */
int trace_pack_object_path(const char *dir, const char *sha256, char *out, size_t cap);
/* A path as the manifest writes it: %, TAB, newline and bytes below 0x20 (and 0x7f) as %XX.
 * Returns the length, or TRACE_EINVAL when out (cap bytes, NUL included) is too small. */
int trace_pack_escape(const char *path, char *out, size_t cap);
/* The inverse; TRACE_ECORRUPT for a bad %XX or a %00, TRACE_EINVAL when out is too small. */
int trace_pack_unescape(const char *in, size_t len, char *out, size_t cap);

/* SHA-256 (FIPS 180-4), for the pack's content names. */
struct trace_sha256 {
	uint32_t h[8];
	uint64_t bytes;
	uint8_t buf[64];
	uint32_t fill;
};
void trace_sha256_init(struct trace_sha256 *c);
void trace_sha256_update(struct trace_sha256 *c, const void *data, size_t len);
/* The digest as 64 lowercase hex digits and a NUL. */
void trace_sha256_hex(struct trace_sha256 *c, char hex[65]);

/* ---------------------------------------------------------------------------------------
 * Small shared helpers.
 */
/* CRC-32C (Castagnoli) of buf, continuing from crc (0 to start). */
uint32_t trace_crc32c(uint32_t crc, const void *buf, size_t len);
/* The content check of message bytes, continuing a running value (start with 0).  It is
 * CRC-32C, so hash(hash(0, a), b) == hash(0, a || b): partial sends and receives of the same
 * bytes give the same value at the same offset.  Uses SSE4.2 when the CPU has it. */
uint32_t trace_hash(uint32_t h, const void *buf, size_t len);

#ifdef __cplusplus
}
#endif

#include "predicate.h"

#endif
