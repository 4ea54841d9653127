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

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

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
int __ppoll_chk(struct pollfd *fds, nfds_t n, const struct timespec *timeout,
                const sigset_t *mask, size_t fdslen);

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
#define IP_REAL(name) \
	(*({ \
		if (__builtin_expect(real_##name == NULL, 0)) \
			real_##name = (__typeof__(real_##name))ip_resolve(#name); \
		&real_##name; \
	}))

/* --- descriptors (fdclass.c) ------------------------------------------------------------ */
/* What a descriptor is, from its fstat(2) mode and device, as both sides must judge it for a
 * descriptor they did not see made (docs: recorder/README.md "Descriptors"). */
enum ip_fd_kind {
	IP_FD_FILE = 0, /* regular file, directory, anonymous inode...: left alone */
	IP_FD_SOCKET,   /* a channel (its type from ip_sock_chan_type) */
	IP_FD_PIPE,     /* a FIFO: a channel */
	IP_FD_CHAR,     /* a character device such as a terminal: a channel */
	IP_FD_RANDOM,   /* /dev/random or /dev/urandom: reads are RANDOM events */
	IP_FD_NULL,     /* /dev/null, /dev/zero, /dev/full: nothing to replay, left alone */
};
int ip_fd_kind(mode_t mode, dev_t rdev);
/* 1 when descriptors of that kind are channels. */
static inline int ip_fd_kind_is_channel(int kind)
{
	return kind == IP_FD_SOCKET || kind == IP_FD_PIPE || kind == IP_FD_CHAR;
}
/* The enum trace_chan_type of a socket of this domain and type (SOCK_NONBLOCK and
 * SOCK_CLOEXEC ignored). */
uint8_t ip_sock_chan_type(int domain, int type);

#endif
