/*
 * chan.c: channels.  The fd -> channel table, the interposers that create, copy and end
 * channels (socket, socketpair, pipe, bind, listen, connect, accept, shutdown, close, dup,
 * fcntl F_DUPFD) and the ones that move bytes (send*, write*, recv*, read*).
 *
 * A descriptor is classified once: when a recorded call creates it, or at its first use by
 * fstat (descriptors inherited from outside the session, or made by calls we do not
 * intercept).  Regular files, directories and anonymous inodes (epoll, eventfd...) are
 * ignored; sockets, pipes and character devices other than /dev/null and /dev/zero are
 * channels; /dev/urandom and /dev/random reads are RANDOM events.
 *
 * Bytes between recorded processes are logged as size and order plus, every K-th event of
 * a direction, the running CRC-32C of the direction.  Bytes from a peer not known to be
 * recorded are logged whole, as INPUT (README.md: "Who is recorded").
 */
/* The build defines _FILE_OFFSET_BITS=64, with which glibc renames fcntl to fcntl64 in its
 * headers: both names are interposed here, so each must keep its own name. */
#undef _FILE_OFFSET_BITS
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "rec.h"

/* --- the tables --------------------------------------------------------------------------- */

struct rec_chan *rec_chan_new(uint8_t type)
{
	uint32_t i, slot;

	if (rec_sandbox_bar(REC_SB_NOCHAN)) /* a seccomp filter forbids describing it (guard.c) */
		return NULL;
	for (i = 0; i < REC_CHAN_MAX; i++) {
		slot = (rec.chan_hint + i) % REC_CHAN_MAX;
		if (rec.chan[slot].id == 0) {
			struct rec_chan *c = &rec.chan[slot];

			memset(c, 0, sizeof(*c));
			c->id = ++rec.next_chan;
			c->type = type;
			rec.chan_hint = slot + 1;
			if (slot >= rec.chan_top)
				rec.chan_top = slot + 1;
			return c;
		}
	}
	return NULL;
}

void rec_fd_bind(int fd, struct rec_chan *c)
{
	if (fd < 0 || fd >= REC_FD_MAX)
		return;
	rec.fd[fd] = (int32_t)(c - rec.chan) + 1;
	c->nfds++;
}

uint32_t rec_fd_channel_id(int fd)
{
	if (fd < 0 || fd >= REC_FD_MAX || rec.fd[fd] <= 0)
		return 0;
	return rec.chan[rec.fd[fd] - 1].id;
}

int rec_fd_cloexec(int fd)
{
	int f = (int)syscall(SYS_fcntl, fd, F_GETFD);

	return f < 0 || (f & FD_CLOEXEC);
}

void rec_chan_inherit_all(void)
{
	uint32_t i;

	/* a new process: the TID share.c cached is the forking thread's; a new image (not a
	 * forked child, whose ends the parent shared before the fork): the pipe ends it
	 * inherited that other processes hold */
	rec_share_child();
	if (rec.segment > 0)
		rec_share_image();

	for (i = 0; i < rec.chan_top; i++)
		if (rec.chan[i].id)
			trace_writer_inherit(rec.w, rec.chan[i].id, rec.chan[i].bytes[REC_OUT],
			                     rec.chan[i].bytes[REC_IN]);
}

/* Registry entries saying "a recorded process is at this TCP port", made at listen and
 * connect.  They stay for the whole session: removing one at close would race with the
 * peer's decision (a client that sends and closes at once, a server that accepts and stops
 * listening) and make the same run log bytes or not by chance.  The residual risk is an
 * outside process reusing both ports of a recorded connection, or the port of a recorded
 * listener, during the recording (README.md). */
static void reg_chan(struct rec_chan *c, uint8_t kind, int port, int server_port)
{
	c->reg = kind;
	c->local_port = (uint16_t)port;
	if (kind == REC_REG_TCP) {
		/* No entry (the process dropped its privileges: vsftpd's session parent listens
		 * for passive data connections as its ftp user): no client can take this listener
		 * for a recorded one, so every connection it accepts is an outside one (log_accept) */
		if (rec_registry_add("tcp", (unsigned long)port, -1) != 0)
			c->reg = REC_REG_FAILED;
	} else {
		c->peer_port = (uint16_t)server_port;
		/* A connection the server cannot find (no entry could be made: privileges
		 * dropped) is an outside one to the server: to this end too, so that both sides
		 * log what they receive (README.md, "Bytes"). */
		if (rec_registry_add("conn", (unsigned long)port, server_port) != 0)
			c->external = 1;
	}
}

/* The descriptor goes away (close, or dup2 over it).  Logs CLOSE when it was the process's
 * last descriptor of its channel.  Called with the guard held. */
static void fd_release(int fd, uint32_t call, void *ra)
{
	struct rec_chan *c;
	struct trace_event ev;
	int32_t slot;

	if (fd < 0 || fd >= REC_FD_MAX)
		return;
	slot = rec.fd[fd];
	rec.fd[fd] = REC_FD_UNKNOWN;
	if (slot <= 0)
		return;
	c = &rec.chan[slot - 1];
	if (c->nfds > 1) {
		c->nfds--;
		return;
	}
	rec_event_init(&ev, TRACE_EV_CLOSE, call, fd);
	ev.channel = c->id;
	rec_log(&ev, ra);
	memset(c, 0, sizeof(*c));
}

void rec_fd_forget(int fd)
{
	fd_release(fd, TRACE_CALL_CLOSE, NULL);
}

static void fd_fresh(int fd, void *ra);

/* In a process with threads, a descriptor number that a call making no channel took (what 1:
 * an open) or freed (2: a close), logged under the fd-order lock held across that call
 * (REC_FD_ORDER), so that replay hands numbers out in the recorded order: python's
 * http.server opens each file it serves in the request's thread while the main thread
 * accepts, and the two took each other's numbers in replay (schemas/trace-format.md, kind
 * fdnum). */
void rec_fdnum(uint32_t call, int fd, long result, int what, void *ra)
{
	struct trace_event ev;

	/* (a thread made inside libc, which the recorder did not see start, is not ordered:
	 * its events would count as the main thread's) */
	if (rec_thread == REC_NO_THREAD || !rec_enter())
		return;
	rec_event_init(&ev, TRACE_EV_FDNUM, call, fd);
	ev.result = result;
	ev.naux = 1;
	ev.aux[0] = what;
	rec_log(&ev, ra);
	rec_leave();
}

/* fd was just opened on a regular file (files.c saw it with its own fstat): what classify()
 * would make of it at first use, without a second fstat there (nginx opens its served file
 * at every request).  A stale mapping of the number (a close we missed) goes first, as
 * for any descriptor made anew.  Called with the guard held. */
void rec_fd_regular(int fd)
{
	if (fd < 0 || fd >= REC_FD_MAX)
		return;
	fd_fresh(fd, NULL);
	rec.fd[fd] = REC_FD_IGNORED;
}

void rec_fd_closed_raw(int fd, void *ra)
{
	fd_release(fd, TRACE_CALL_SYSCALL, ra);
}

void rec_fd_range_closed_raw(unsigned int first, unsigned int last, void *ra)
{
	for (unsigned int fd = first; fd <= last && fd < REC_FD_MAX; fd++)
		if (rec.fd[fd] != REC_FD_UNKNOWN)
			fd_release((int)fd, TRACE_CALL_SYSCALL, ra);
}

/* --- endpoints and who is recorded -------------------------------------------------------- */

static uint64_t fd_inode(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

static int addr_port(const uint8_t *sa, uint32_t len)
{
	const struct sockaddr *s = (const struct sockaddr *)(const void *)sa;

	if (len >= sizeof(struct sockaddr_in) && s->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)(const void *)sa)->sin_port);
	if (len >= sizeof(struct sockaddr_in6) && s->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)(const void *)sa)->sin6_port);
	return 0;
}

/* The peer is on this host: loopback, or the same address as our end. */
static int addr_local(const struct trace_endpoint *ep)
{
	const struct sockaddr *p = (const struct sockaddr *)(const void *)ep->peer;

	if (ep->peer_len >= sizeof(struct sockaddr_in) && p->sa_family == AF_INET) {
		const struct sockaddr_in *pi = (const void *)ep->peer, *li = (const void *)ep->local;

		if ((ntohl(pi->sin_addr.s_addr) >> 24) == 127)
			return 1;
		return ep->local_len >= sizeof(*li) && li->sin_family == AF_INET &&
		       li->sin_addr.s_addr == pi->sin_addr.s_addr;
	}
	if (ep->peer_len >= sizeof(struct sockaddr_in6) && p->sa_family == AF_INET6) {
		const struct sockaddr_in6 *pi = (const void *)ep->peer, *li = (const void *)ep->local;

		if (IN6_IS_ADDR_LOOPBACK(&pi->sin6_addr) || IN6_IS_ADDR_V4MAPPED(&pi->sin6_addr))
			return IN6_IS_ADDR_LOOPBACK(&pi->sin6_addr) ||
			       pi->sin6_addr.s6_addr[12] == 127;
		return ep->local_len >= sizeof(*li) && li->sin6_family == AF_INET6 &&
		       memcmp(&li->sin6_addr, &pi->sin6_addr, sizeof(pi->sin6_addr)) == 0;
	}
	return 0;
}

/* The inode of the other end of a connected Unix stream socket, from the kernel's sock_diag
 * interface (what `ss -x` shows): with it the analyzer matches connect and accept ends
 * exactly, even when one client connects twice.  Known at accept (the connecting end's
 * inode); at connect the server's end has no inode until it is accepted.  0 when unknown
 * (no peer yet, no unix_diag).  Raw system calls: the recorder's own I/O is not the
 * program's. */
static uint64_t unix_peer_inode(uint64_t ino)
{
	struct {
		struct nlmsghdr nlh;
		struct unix_diag_req r;
	} req;
	union {
		struct nlmsghdr nlh;
		char buf[1024];
	} resp;
	struct sockaddr_nl nl;
	struct nlmsghdr *h = &resp.nlh;
	uint64_t peer = 0;
	long n;
	int fd;

	if (!ino || ino > UINT32_MAX)
		return 0;
	fd = (int)syscall(SYS_socket, AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return 0;
	memset(&req, 0, sizeof(req));
	req.nlh.nlmsg_len = sizeof(req);
	req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nlh.nlmsg_flags = NLM_F_REQUEST;
	req.r.sdiag_family = AF_UNIX;
	req.r.udiag_states = ~0u;
	req.r.udiag_ino = (uint32_t)ino;
	req.r.udiag_show = UDIAG_SHOW_PEER;
	req.r.udiag_cookie[0] = req.r.udiag_cookie[1] = ~0u; /* no cookie: look up by inode */
	memset(&nl, 0, sizeof(nl));
	nl.nl_family = AF_NETLINK;
	if (syscall(SYS_sendto, fd, &req, sizeof(req), 0, &nl, sizeof(nl)) == (long)sizeof(req) &&
	    (n = syscall(SYS_recvfrom, fd, &resp, sizeof(resp), 0, NULL, NULL)) > 0 &&
	    NLMSG_OK(h, (unsigned long)n) && h->nlmsg_type == SOCK_DIAG_BY_FAMILY) {
		struct unix_diag_msg *m = NLMSG_DATA(h);
		struct rtattr *a = (struct rtattr *)(void *)(m + 1);
		long len = (long)h->nlmsg_len - (long)NLMSG_LENGTH(sizeof(*m));

		for (; len > 0 && RTA_OK(a, (unsigned long)len); a = RTA_NEXT(a, len))
			if (a->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(a) >= sizeof(uint32_t))
				peer = *(uint32_t *)RTA_DATA(a);
	}
	syscall(SYS_close, fd);
	return peer;
}

static void fill_endpoint(int fd, struct rec_chan *c, struct trace_endpoint *ep,
                          const struct sockaddr *peer_hint, socklen_t hint_len)
{
	socklen_t len;

	memset(ep, 0, sizeof(*ep));
	ep->type = c->type;
	ep->dir = c->dir;
	ep->inode = fd_inode(fd);
	if (c->type == TRACE_CHAN_PIPE)
		return;
	len = sizeof(ep->local);
	if (getsockname(fd, (struct sockaddr *)(void *)ep->local, &len) == 0)
		ep->local_len = len > sizeof(ep->local) ? sizeof(ep->local) : len;
	len = sizeof(ep->peer);
	if (getpeername(fd, (struct sockaddr *)(void *)ep->peer, &len) == 0) {
		ep->peer_len = len > sizeof(ep->peer) ? sizeof(ep->peer) : len;
	} else if (peer_hint && hint_len > 0) {
		ep->peer_len = hint_len > sizeof(ep->peer) ? sizeof(ep->peer) : hint_len;
		memcpy(ep->peer, peer_hint, ep->peer_len);
	}
	if (c->type == TRACE_CHAN_UNIX || c->type == TRACE_CHAN_SOCKETPAIR) {
		struct ucred cred;

		len = sizeof(cred);
		if (IP_REAL(getsockopt)(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.pid > 0)
			ep->peer_pid = cred.pid;
	}
	if (c->type == TRACE_CHAN_UNIX && ep->peer_len)
		ep->peer_inode = unix_peer_inode(ep->inode);
}

/* Decide whether the bytes this end receives come from a recorded process.  `accepted`:
 * the end came from accept (the client registers its port only after its connect returns,
 * so an accept may not see it yet: undecided until a receive shows the client acted after
 * registering, rec_chan_in_external). */
static void decide_peer(struct rec_chan *c, const struct trace_endpoint *ep, int accepted)
{
	c->external = 1;
	c->undecided = 0;
	switch (c->type) {
	case TRACE_CHAN_SOCKETPAIR:
	case TRACE_CHAN_PIPE:
		c->external = 0; /* made here: both ends are in recorded processes */
		break;
	case TRACE_CHAN_UNIX:
		if (ep->peer_pid > 0 && rec_registry_has("pid", (unsigned long)ep->peer_pid, -1))
			c->external = 0;
		break;
	case TRACE_CHAN_TCP:
		if (!ep->peer_len || !addr_local(ep))
			break;
		c->peer_port = (uint16_t)addr_port(ep->peer, ep->peer_len);
		c->local_port = (uint16_t)addr_port(ep->local, ep->local_len);
		if (!accepted) {
			if (rec_registry_has("tcp", c->peer_port, -1))
				c->external = 0;
		} else if (rec_registry_has("conn", c->peer_port, c->local_port)) {
			c->external = 0;
		} else {
			c->undecided = 1;
		}
		break;
	default:
		break;
	}
}

/* Is this receive on c (result r, errno e, `asked` bytes) external input?  An end left
 * undecided at its accept is decided by the first receive whose result the client caused
 * after its connect returned, by which time its recorder had registered the connection:
 * bytes, the end of the stream (to a read that asked for bytes), a reset.  A receive that
 * finds nothing yet (EAGAIN, EINTR, a read of 0 bytes) decides nothing and is logged as a
 * receive from a recorded peer: it moves no byte, and replays from the trace whatever the
 * end turns out to be.  Logged as input, it made the replay take the peer for an outside
 * one and give the process a stand-in socket without the bytes that followed. */
int rec_chan_in_external(struct rec_chan *c, long r, int e, size_t asked)
{
	if (__builtin_expect(c->undecided, 0)) {
		if (r < 0 ? e != ECONNRESET : r == 0 && asked == 0)
			return 0;
		c->undecided = 0;
		c->external = !rec_registry_has("conn", c->peer_port, c->local_port);
	}
	return c->external;
}

/* Log a channel-defining event carrying the endpoint. */
static void log_endpoint(struct trace_event *ev, const struct trace_endpoint *ep, void *ra)
{
	uint8_t buf[TRACE_ENDPOINT_MAX];
	int n = trace_endpoint_encode(ep, buf, sizeof(buf));

	if (n > 0) {
		ev->data = buf;
		ev->data_len = (uint32_t)n;
	}
	rec_log(ev, ra);
}

/* First use of a descriptor the recorder did not see created.  Returns its channel or NULL
 * (ignored, or random).  Called with the guard held. */
static struct rec_chan *classify(int fd)
{
	struct trace_endpoint ep;
	struct trace_event ev;
	struct rec_chan *c;
	struct stat st;
	int kind;

	if (rec_sandbox_bar(REC_SB_NOCHAN)) /* a seccomp filter forbids fstat... (guard.c) */
		return NULL;
	if (fstat(fd, &st) != 0)
		return NULL; /* EBADF: the call failed anyway; try again next time */
	if (__builtin_expect(rec_files_ndeferred != 0, 0))
		rec_files_use(fd, &st); /* an open's note waited for this (files.c) */
	kind = ip_fd_kind(st.st_mode, st.st_rdev);
	if (kind == IP_FD_SOCKET) {
		int domain = 0, type = 0;
		socklen_t len = sizeof(int);

		IP_REAL(getsockopt)(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len);
		len = sizeof(int);
		IP_REAL(getsockopt)(fd, SOL_SOCKET, SO_TYPE, &type, &len);
		c = rec_chan_new(ip_sock_chan_type(domain, type));
		if (!c)
			goto ignore;
		c->unix_dgram = domain == AF_UNIX && (type & 0xf) == SOCK_DGRAM;
		c->dgram_known = 1;
		rec_fd_bind(fd, c);
		fill_endpoint(fd, c, &ep, NULL, 0);
		decide_peer(c, &ep, 0);
		rec_event_init(&ev, TRACE_EV_SOCKET, TRACE_CALL_NONE, fd);
		ev.channel = c->id;
		ev.naux = 2; /* as socket() logs them: the analyzer tells Unix datagrams by them */
		ev.aux[0] = domain;
		ev.aux[1] = type;
		log_endpoint(&ev, &ep, NULL);
		return c;
	}
	if (kind == IP_FD_RANDOM) {
		rec.fd[fd] = REC_FD_RANDOM;
		return NULL;
	}
	if (kind == IP_FD_PIPE || kind == IP_FD_CHAR) {
		c = rec_chan_new(kind == IP_FD_PIPE ? TRACE_CHAN_PIPE : TRACE_CHAN_OTHER);
		if (!c)
			goto ignore;
		if (kind == IP_FD_PIPE) {
			int fl = (int)syscall(SYS_fcntl, fd, F_GETFL);

			c->dir = (fl & O_ACCMODE) == O_WRONLY ? 2 : (fl & O_ACCMODE) == O_RDONLY ? 1 : 0;
		}
		/* A pipe or terminal we did not see made: its other end is outside the session
		 * (the shell, `encore record` itself) or unknown: record the bytes. */
		c->external = 1;
		rec_fd_bind(fd, c);
		memset(&ep, 0, sizeof(ep));
		ep.type = c->type;
		ep.dir = c->dir;
		ep.inode = (uint64_t)st.st_ino;
		rec_event_init(&ev, TRACE_EV_PIPE, TRACE_CALL_NONE, fd);
		ev.channel = c->id;
		ev.naux = 1;
		ev.aux[0] = c->id;
		log_endpoint(&ev, &ep, NULL);
		return c;
	}
ignore:
	rec.fd[fd] = REC_FD_IGNORED;
	return NULL;
}

/* A file of the kernel's live state (/proc, /sys) just opened for reading (files.c): its
 * content differs between record and replay by nature, so it is made an end of a channel
 * from outside the session, as a terminal met at first use is: a PIPE event with no call
 * now, then its reads are INPUT events with the bytes (README.md, "Kernel-state files").
 * Called with the guard held. */
void rec_chan_kernel_file(int fd, uint64_t ino, void *ra)
{
	struct trace_endpoint ep;
	struct trace_event ev;
	struct rec_chan *c;

	if (fd < 0 || fd >= REC_FD_MAX)
		return;
	fd_fresh(fd, ra);
	if (!(c = rec_chan_new(TRACE_CHAN_OTHER)))
		return; /* table full: left to classify() at first use (a file: passed through) */
	c->external = 1;
	rec_fd_bind(fd, c);
	memset(&ep, 0, sizeof(ep));
	ep.type = c->type;
	ep.dir = c->dir;
	ep.inode = ino;
	rec_event_init(&ev, TRACE_EV_PIPE, TRACE_CALL_NONE, fd);
	ev.channel = c->id;
	ev.naux = 1;
	ev.aux[0] = c->id;
	log_endpoint(&ev, &ep, ra);
}

/* A descriptor received with SCM_RIGHTS (ancillary.c): it becomes a channel end of this
 * process now, described in *ep, the peer decided as for a descriptor met at first use, but
 * with what a passed end may be: an accepted TCP connection whose client registered (or will
 * register, undecided until its first receive as after accept), a connection to a recorded
 * listener, a Unix socket or socketpair end whose peer (SO_PEERCRED) is recorded.  Pipes and
 * terminals: external (their other end may be anywhere: the bytes are recorded).  *what gets
 * enum trace_pass_what.  Returns the channel, or NULL for a descriptor that is none (file,
 * epoll...).  Called with the guard held. */
struct rec_chan *rec_chan_adopt(int fd, struct trace_endpoint *ep, int *what, void *ra)
{
	struct rec_chan *c;
	struct stat st;
	int kind;

	*what = TRACE_PASS_OTHER;
	memset(ep, 0, sizeof(*ep));
	if (fd < 0 || fd >= REC_FD_MAX)
		return NULL; /* beyond the table: not recorded (README.md, "Limits") */
	fd_fresh(fd, ra);
	if (fstat(fd, &st) != 0)
		return NULL;
	kind = ip_fd_kind(st.st_mode, st.st_rdev);
	if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
		*what = TRACE_PASS_FILE;
	if (kind == IP_FD_RANDOM || kind == IP_FD_NULL || S_ISCHR(st.st_mode))
		*what = TRACE_PASS_CHAR;
	if (kind == IP_FD_SOCKET) {
		int domain = 0, type = 0, acc = 0;
		socklen_t len = sizeof(int);

		IP_REAL(getsockopt)(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len);
		len = sizeof(int);
		IP_REAL(getsockopt)(fd, SOL_SOCKET, SO_TYPE, &type, &len);
		len = sizeof(int);
		IP_REAL(getsockopt)(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len);
		*what = acc ? TRACE_PASS_LISTENER : TRACE_PASS_SOCKET;
		if (!(c = rec_chan_new(ip_sock_chan_type(domain, type))))
			goto ignore;
		rec_fd_bind(fd, c);
		fill_endpoint(fd, c, ep, NULL, 0);
		if (c->type == TRACE_CHAN_TCP && ep->peer_len && addr_local(ep)) {
			c->external = 1;
			c->peer_port = (uint16_t)addr_port(ep->peer, ep->peer_len);
			c->local_port = (uint16_t)addr_port(ep->local, ep->local_len);
			if (rec_registry_has("conn", c->peer_port, c->local_port) ||
			    rec_registry_has("tcp", c->peer_port, -1))
				c->external = 0;
			else
				c->undecided = 1;
		} else if (c->type == TRACE_CHAN_SOCKETPAIR) {
			c->external = !(ep->peer_pid > 0 &&
			                rec_registry_has("pid", (unsigned long)ep->peer_pid, -1));
		} else {
			decide_peer(c, ep, 0);
		}
		return c;
	}
	if (kind == IP_FD_RANDOM) {
		rec.fd[fd] = REC_FD_RANDOM;
		return NULL;
	}
	if (kind == IP_FD_PIPE || kind == IP_FD_CHAR) {
		if (kind == IP_FD_PIPE)
			*what = TRACE_PASS_PIPE;
		if (!(c = rec_chan_new(kind == IP_FD_PIPE ? TRACE_CHAN_PIPE : TRACE_CHAN_OTHER)))
			goto ignore;
		if (kind == IP_FD_PIPE) {
			int fl = (int)syscall(SYS_fcntl, fd, F_GETFL);

			c->dir = (fl & O_ACCMODE) == O_WRONLY ? 2 : (fl & O_ACCMODE) == O_RDONLY ? 1 : 0;
		}
		c->external = 1;
		rec_fd_bind(fd, c);
		ep->type = c->type;
		ep->dir = c->dir;
		ep->inode = (uint64_t)st.st_ino;
		return c;
	}
ignore:
	rec.fd[fd] = REC_FD_IGNORED;
	return NULL;
}

struct rec_chan *rec_fd_chan(int fd)
{
	int32_t v;

	if (fd < 0 || fd >= REC_FD_MAX)
		return NULL;
	v = rec.fd[fd];
	if (v > 0)
		return &rec.chan[v - 1];
	if (v == REC_FD_UNKNOWN)
		return classify(fd);
	return NULL;
}

/* A descriptor number is being reused for a new object: forget the old one silently if a
 * close was missed (fclose of an fdopen'd socket inside libc, for example). */
static void fd_fresh(int fd, void *ra)
{
	if (__builtin_expect(rec_files_ndeferred != 0, 0))
		rec_files_fresh(fd); /* an open's note waiting for the number is stale (files.c) */
	if (fd >= 0 && fd < REC_FD_MAX && rec.fd[fd] != REC_FD_UNKNOWN)
		fd_release(fd, TRACE_CALL_CLOSE, ra);
}

/* --- channel interposers ------------------------------------------------------------------ */

#define RA() __builtin_return_address(0)

REC_EXPORT int socket(int domain, int type, int protocol)
{
	REC_FD_ORDER;
	int r = IP_REAL(socket)(domain, type, protocol), e = errno;
	struct trace_endpoint ep;
	struct trace_event ev;
	struct rec_chan *c = NULL;

	if (!rec_enter())
		return r;
	rec_event_init(&ev, TRACE_EV_SOCKET, TRACE_CALL_SOCKET, r);
	ev.result = r;
	ev.err = r < 0 ? e : 0;
	ev.naux = 2;
	ev.aux[0] = domain;
	ev.aux[1] = type;
	if (r >= 0) {
		fd_fresh(r, RA());
		c = rec_chan_new(ip_sock_chan_type(domain, type));
	}
	if (c) {
		c->unix_dgram = domain == AF_UNIX && (type & 0xf) == SOCK_DGRAM;
		c->dgram_known = 1;
		rec_fd_bind(r, c);
		memset(&ep, 0, sizeof(ep));
		ep.type = c->type;
		ep.inode = fd_inode(r);
		c->external = c->type == TRACE_CHAN_UDP || c->type == TRACE_CHAN_OTHER;
		ev.channel = c->id;
		log_endpoint(&ev, &ep, RA());
	} else {
		rec_log(&ev, RA());
	}
	rec_leave();
	errno = e;
	return r;
}

static void log_pair(int r, int e, const int fds[2], uint8_t type, uint32_t call, void *ra)
{
	struct trace_endpoint ep;
	struct trace_event ev;
	struct rec_chan *c0 = NULL, *c1 = NULL;

	rec_event_init(&ev, TRACE_EV_PIPE, call, r == 0 ? fds[0] : -1);
	ev.result = r;
	ev.err = r < 0 ? e : 0;
	if (r == 0) {
		fd_fresh(fds[0], ra);
		fd_fresh(fds[1], ra);
		c0 = rec_chan_new(type);
		c1 = rec_chan_new(type);
	}
	if (c0 && c1) {
		rec_fd_bind(fds[0], c0);
		rec_fd_bind(fds[1], c1);
		memset(&ep, 0, sizeof(ep));
		ep.type = type;
		ep.inode = fd_inode(fds[0]);
		if (type == TRACE_CHAN_SOCKETPAIR) {
			ep.peer_inode = fd_inode(fds[1]);
			ep.peer_pid = (int64_t)syscall(SYS_getpid);
		} else {
			c0->dir = 1;
			c1->dir = 2;
		}
		ev.channel = c0->id;
		ev.naux = 2;
		ev.aux[0] = c0->id;
		ev.aux[1] = c1->id;
		log_endpoint(&ev, &ep, ra);
	} else {
		rec_log(&ev, ra);
	}
}

REC_EXPORT int socketpair(int domain, int type, int protocol, int sv[2])
{
	REC_FD_ORDER;
	int r = IP_REAL(socketpair)(domain, type, protocol, sv), e = errno;

	if (!rec_enter())
		return r;
	log_pair(r, e, sv,
	         (type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)) == SOCK_STREAM ? TRACE_CHAN_SOCKETPAIR :
	                                                                  TRACE_CHAN_OTHER,
	         TRACE_CALL_SOCKETPAIR, RA());
	rec_leave();
	errno = e;
	return r;
}

/* A pipe made by the recorder itself (libunwind opens one to validate addresses) must not
 * take the low numbers the program expects to get: move both ends high. */
static void move_high(int fds[2])
{
	int i;

	for (i = 0; i < 2; i++) {
		int hi = ip_dup_high(fds[i], (rec.min_fd > 0 ? rec.min_fd : 1000) + 8);

		if (hi >= 0) {
			syscall(SYS_close, fds[i]);
			fds[i] = hi;
		}
	}
}

REC_EXPORT int pipe(int fds[2])
{
	REC_FD_ORDER;
	int r, e;

	if (rec_busy() && !rec_internal)
		return IP_REAL(pipe)(fds); /* the program's fork handlers, inside our fork: its own numbers */
	if (rec_busy()) {
		int own_;

		if (!rec_fd_order_own(&own_)) {
			errno = EMFILE; /* ours (libunwind's), not the program's: see rec.h */
			return -1;
		}
		r = IP_REAL(pipe)(fds);
		if (r == 0)
			move_high(fds);
		rec_fd_order_end(&own_);
		return r;
	}
	r = IP_REAL(pipe)(fds);
	e = errno;

	if (!rec_enter())
		return r;
	log_pair(r, e, fds, TRACE_CHAN_PIPE, TRACE_CALL_PIPE, RA());
	rec_leave();
	errno = e;
	return r;
}

REC_EXPORT int pipe2(int fds[2], int flags)
{
	REC_FD_ORDER;
	int r, e;

	if (rec_busy() && !rec_internal)
		return IP_REAL(pipe2)(fds, flags); /* the program's fork handlers, inside our fork: its own numbers */
	if (rec_busy()) {
		int own_;

		if (!rec_fd_order_own(&own_)) {
			errno = EMFILE; /* ours (libunwind's), not the program's: see rec.h */
			return -1;
		}
		r = IP_REAL(pipe2)(fds, flags);
		if (r == 0)
			move_high(fds);
		rec_fd_order_end(&own_);
		return r;
	}
	r = IP_REAL(pipe2)(fds, flags);
	e = errno;

	if (!rec_enter())
		return r;
	log_pair(r, e, fds, TRACE_CHAN_PIPE, TRACE_CALL_PIPE2, RA());
	rec_leave();
	errno = e;
	return r;
}

/* bind, listen, connect: an event on an existing channel, with the endpoint as it is now. */
static void log_sock_op(int fd, int r, int e, uint32_t kind, uint32_t call,
                        const struct sockaddr *hint, socklen_t hint_len, void *ra)
{
	struct trace_endpoint ep;
	struct trace_event ev;
	struct rec_chan *c = rec_fd_chan(fd);

	rec_event_init(&ev, kind, call, fd);
	ev.result = r;
	ev.err = r < 0 ? e : 0;
	if (!c) {
		rec_log(&ev, ra);
		return;
	}
	ev.channel = c->id;
	fill_endpoint(fd, c, &ep, hint, hint_len);
	if (kind == TRACE_EV_CONNECT) {
		decide_peer(c, &ep, 0);
		/* registered only towards a recorded listener: a server that made no tcp entry
		 * (a socket it did not listen on itself, privileges dropped before listen) takes
		 * its connections for outside ones, as its clients do */
		if (c->type == TRACE_CHAN_TCP && !c->external && addr_port(ep.local, ep.local_len) &&
		    !c->reg)
			reg_chan(c, REC_REG_CONN, addr_port(ep.local, ep.local_len),
			         addr_port(ep.peer, ep.peer_len));
	}
	if (kind == TRACE_EV_LISTEN && c->type == TRACE_CHAN_TCP &&
	    addr_port(ep.local, ep.local_len) && !c->reg)
		reg_chan(c, REC_REG_TCP, addr_port(ep.local, ep.local_len), 0);
	log_endpoint(&ev, &ep, ra);
}

REC_EXPORT int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	int r = IP_REAL(bind)(fd, addr, len), e = errno;

	if (!rec_enter())
		return r;
	log_sock_op(fd, r, e, TRACE_EV_BIND, TRACE_CALL_BIND, NULL, 0, RA());
	rec_leave();
	errno = e;
	return r;
}

REC_EXPORT int listen(int fd, int backlog)
{
	int r;
	int e;

	/* Register the port before the socket accepts connections, so that a recorded client
	 * connecting right after can see that its peer is recorded (bound sockets only; an
	 * unbound socket's port is known after listen, registered below). */
	if (rec_enter()) {
		struct rec_chan *c = rec_fd_chan(fd);

		if (c && c->type == TRACE_CHAN_TCP) {
			struct trace_endpoint ep;

			fill_endpoint(fd, c, &ep, NULL, 0);
			if (addr_port(ep.local, ep.local_len) && !c->reg)
				reg_chan(c, REC_REG_TCP, addr_port(ep.local, ep.local_len), 0);
		}
		rec_leave();
	}
	r = IP_REAL(listen)(fd, backlog);
	e = errno;
	if (!rec_enter())
		return r;
	log_sock_op(fd, r, e, TRACE_EV_LISTEN, TRACE_CALL_LISTEN, NULL, 0, RA());
	rec_leave();
	errno = e;
	return r;
}

/* With threads a connect is a send for the ordering (REC_DATA_ORDER): the connection it
 * queues may be accepted by another thread of this process before this thread logs the
 * connect, and an accept logged first would wait in replay for a connect that comes after
 * it (accept below settles the sends in flight). */
static int connects_made; /* (an accept settles only in a process that connects) */

REC_EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	REC_DATA_ORDER(fd, REC_OUT);
	int r, e;

	if (__builtin_expect(rec.threads, 0) && !connects_made)
		__atomic_store_n(&connects_made, 1, __ATOMIC_SEQ_CST);
	r = IP_REAL(connect)(fd, addr, len);
	e = errno;

	if (!rec_enter())
		return r;
	log_sock_op(fd, r, e, TRACE_EV_CONNECT, TRACE_CALL_CONNECT, addr, len, RA());
	rec_leave();
	errno = e;
	return r;
}

/* Any other option read is the kernel's state of the socket, which a replay's socket need not
 * share: TCP_INFO's round trip time and congestion window (iperf3 prints them), SO_PEERCRED's
 * peer pid, the buffer sizes the machine's settings give.  It is logged as a value (an INPUT
 * event without channel, as the machine's values in values.c): result, errno, aux[0] = level,
 * aux[1] = optname, aux[2] = fd, data = the bytes the kernel filled in (up to *optlen as it
 * returned; schemas/trace-format.md, "Machine values"); replayer/lc_chan.c gives them back.
 * Not a hot path: a server asks once per connection at most. */
#define SOCKOPT_DATA_MAX 4096
static void log_sockopt(int fd, int level, int optname, int r, int e, const void *optval,
                        const socklen_t *optlen, void *ra)
{
	struct trace_event ev;

	rec_event_init(&ev, TRACE_EV_INPUT, TRACE_CALL_GETSOCKOPT, -1);
	ev.result = r;
	ev.err = r < 0 ? e : 0;
	ev.naux = 3;
	ev.aux[0] = level;
	ev.aux[1] = optname;
	ev.aux[2] = fd;
	if (r == 0 && optval && optlen && *optlen > 0) {
		ev.data = optval;
		ev.data_len = *optlen < SOCKOPT_DATA_MAX ? (uint32_t)*optlen : SOCKOPT_DATA_MAX;
	}
	rec_log(&ev, ra);
}

/* getsockopt(SO_ERROR) is how a non-blocking connect learns its outcome: on a channel it is
 * logged as a CONNECT event of call getsockopt with aux[0] = SO_ERROR and aux[1] = the value
 * read, so that replay returns it and knows, at the connect, whether that attempt failed
 * (recorder/README.md).  Other options: log_sockopt. */
REC_EXPORT int getsockopt(int fd, int level, int optname, void *optval, socklen_t *optlen)
{
	int r = IP_REAL(getsockopt)(fd, level, optname, optval, optlen), e = errno, v = 0;
	struct trace_event ev;
	struct rec_chan *c;

	/* (the recorder's own reads, under rec_enter already, are not the program's) */
	if (!rec.w || rec_busy() || !rec_enter())
		return r;
	if (level != SOL_SOCKET || optname != SO_ERROR) {
		log_sockopt(fd, level, optname, r, e, optval, optlen, RA());
	} else if ((c = rec_fd_chan(fd))) {
		if (r == 0 && optval && optlen && *optlen >= sizeof(int))
			memcpy(&v, optval, sizeof(int));
		rec_event_init(&ev, TRACE_EV_CONNECT, TRACE_CALL_GETSOCKOPT, fd);
		ev.channel = c->id;
		ev.result = r;
		ev.err = r < 0 ? e : 0;
		ev.naux = 2;
		ev.aux[0] = SO_ERROR;
		ev.aux[1] = v;
		rec_log(&ev, RA());
	}
	rec_leave();
	errno = e;
	return r;
}

/* Logged under the fd-order lock (rec.h), taken once the real accept returned: it cannot be
 * held across a call that blocks, but a close another thread made of the number the kernel
 * then gave us is logged whole (its real call and its event under that lock) before
 * fd_fresh looks at the number, never as a close of this thread's. */
static void log_accept(int fd, int r, int e, uint32_t call, void *ra)
{
	struct trace_endpoint ep;
	struct trace_event ev;
	struct rec_chan *lc = rec_fd_chan(fd), *c = NULL;

	rec_event_init(&ev, TRACE_EV_ACCEPT, call, r);
	ev.result = r;
	ev.err = r < 0 ? e : 0;
	ev.naux = 1;
	ev.aux[0] = lc ? lc->id : 0;
	if (r >= 0) {
		fd_fresh(r, ra);
		c = rec_chan_new(lc ? lc->type : TRACE_CHAN_OTHER);
	}
	if (!c) {
		rec_log(&ev, ra);
		return;
	}
	rec_fd_bind(r, c);
	ev.channel = c->id;
	fill_endpoint(r, c, &ep, NULL, 0);
	decide_peer(c, &ep, 1);
	if (lc && lc->reg == REC_REG_FAILED && c->type == TRACE_CHAN_TCP) {
		/* its clients took it for an outside server (reg_chan): an outside client to us,
		 * said in the event, as a process that never receives on it (it hands the
		 * connection to another) has no INPUT event to tell its replay so */
		c->external = 1;
		c->undecided = 0;
		ev.naux = 2;
		ev.aux[1] = TRACE_ACCEPT_OUTSIDE;
	}
	log_endpoint(&ev, &ep, ra);
}

REC_EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	int r = IP_REAL(accept)(fd, addr, len), e = errno;

	if (__builtin_expect(rec.threads, 0) && r >= 0 &&
	    __atomic_load_n(&connects_made, __ATOMIC_SEQ_CST))
		rec_sends_settle(); /* a connect of ours in flight is logged first (connect) */
	REC_FD_ORDER; /* after the blocking call (see log_accept) */

	errno = e;
	if (!rec_enter())
		return r;
	log_accept(fd, r, e, TRACE_CALL_ACCEPT, RA());
	rec_leave();
	errno = e;
	return r;
}

/* No event (interpose/calls.def): the replay's controller answers a reset connection's. */
REC_EXPORT int getpeername(int fd, struct sockaddr *addr, socklen_t *len)
{
	return IP_REAL(getpeername)(fd, addr, len);
}

REC_EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	int r = IP_REAL(accept4)(fd, addr, len, flags), e = errno;

	if (__builtin_expect(rec.threads, 0) && r >= 0 &&
	    __atomic_load_n(&connects_made, __ATOMIC_SEQ_CST))
		rec_sends_settle(); /* a connect of ours in flight is logged first (connect) */
	REC_FD_ORDER; /* after the blocking call (see log_accept) */

	errno = e;
	if (!rec_enter())
		return r;
	log_accept(fd, r, e, TRACE_CALL_ACCEPT4, RA());
	rec_leave();
	errno = e;
	return r;
}

/* A shutdown is a send for the ordering of threads (REC_DATA_ORDER): the end of stream it
 * sends may make the peer act at once (python's http.server shuts a connection down from
 * its request thread, ab reads the end and connects again, the main thread's poll sees it),
 * and logged after that poll result the replay waited for the connection before the
 * shutdown that brings it. */
REC_EXPORT int shutdown(int fd, int how)
{
	/* (never waiting: a thread shuts a connection down to wake another blocked sending) */
	REC_DATA_ORDER_TRY(fd, how == SHUT_RD ? REC_IN : REC_OUT);
	int r = IP_REAL(shutdown)(fd, how), e = errno;
	struct trace_event ev;
	struct rec_chan *c;

	if (!rec_enter())
		return r;
	c = rec_fd_chan(fd);
	rec_event_init(&ev, TRACE_EV_SHUTDOWN, TRACE_CALL_SHUTDOWN, fd);
	ev.channel = c ? c->id : 0;
	ev.result = r;
	ev.err = r < 0 ? e : 0;
	ev.naux = 1;
	ev.aux[0] = how;
	rec_log(&ev, RA());
	rec_leave();
	errno = e;
	return r;
}

REC_EXPORT int close(int fd)
{
	int r, e;

	/* Programs that close every descriptor must not close the trace: pretend it worked,
	 * as the kernel would have said for an open descriptor. */
	if (rec_own_fd(fd))
		return 0;
	/* before the fd-order lock: the note may take the loader's lock (files.c, after_note),
	 * which a thread opening a file from a dl_iterate_phdr callback holds while it waits
	 * for the fd-order lock */
	if (__builtin_expect(rec_files_ndeferred != 0, 0))
		rec_files_closing(fd); /* an open's note waits for it (files.c) */
	REC_FD_ORDER;
	r = IP_REAL(close)(fd);
	e = errno;
	rec_evfd_forget(fd);
	if (__builtin_expect(rec.threads, 0) && (r == 0 || e != EBADF) && fd >= 0 &&
	    fd < REC_FD_MAX && rec.fd[fd] <= 0 && !rec_busy())
		rec_fdnum(TRACE_CALL_CLOSE, fd, r, 2, RA()); /* no channel's: its number freed */
	if (!rec_enter())
		return r;
	/* Even a close that fails with EINTR or EIO releases the descriptor on Linux. */
	if (r == 0 || e != EBADF)
		fd_release(fd, TRACE_CALL_CLOSE, RA());
	rec_leave();
	errno = e;
	return r;
}

/* close_range and closefrom: close around the trace descriptor, then forget the range. */
REC_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	int r, e;
	unsigned int fd;

	if (__builtin_expect(rec_files_ndeferred != 0, 0))
		rec_files_closing(-1); /* open's notes waiting (files.c) */
	r = ip_close_range_except(first, last, flags, rec.w ? trace_writer_fd(rec.w) : -1);
	e = errno;

	if (r != 0 || (flags & CLOSE_RANGE_CLOEXEC) || !rec_enter())
		return r;
	for (fd = first; fd <= last && fd < REC_FD_MAX; fd++)
		if (rec.fd[fd] != REC_FD_UNKNOWN)
			fd_release((int)fd, TRACE_CALL_CLOSE, RA());
	rec_leave();
	errno = e;
	return r;
}

REC_EXPORT void closefrom(int lowfd)
{
	int e = errno;

	if (lowfd < 0)
		lowfd = 0;
	close_range((unsigned)lowfd, ~0u, 0);
	errno = e;
}

REC_EXPORT int fclose(FILE *f)
{
	int fd = f ? fileno(f) : -1, r, e;

	if (f)
		rec_stdio_close(f, RA());
	int early, rec_fd_held_ __attribute__((cleanup(rec_fd_order_end))) = 0;

	if (fd >= 0 && __builtin_expect(rec_files_ndeferred != 0, 0))
		rec_files_closing(fd); /* an fdopen of a descriptor whose note waits (files.c) */
	/* The number is free once the real call returns: another thread's open may take it, so
	 * the event must be logged under the fd-order lock taken before the call, as close's.
	 * Not for a stream whose flush may block (a pipe, a socket, not classified yet): the
	 * lock after the call, as before (a number taken meanwhile replays out of order). */
	early = __builtin_expect(rec.threads, 0) && fd >= 0 && fd < REC_FD_MAX && rec.fd[fd] < 0;
	if (early)
		rec_fd_held_ = rec_fd_order_begin();
	r = IP_REAL(fclose)(f);
	e = errno;
	if (!early)
		rec_fd_held_ = rec_fd_order_begin();
	if (__builtin_expect(rec.threads, 0) && fd >= 0 && fd < REC_FD_MAX && rec.fd[fd] <= 0 &&
	    !rec_busy())
		rec_fdnum(TRACE_CALL_CLOSE, fd, r, 2, RA()); /* (the descriptor is closed anyway) */
	if (fd < 0 || !rec_enter())
		return r;
	fd_release(fd, TRACE_CALL_CLOSE, RA());
	rec_leave();
	errno = e;
	return r;
}

/* dup family: the new descriptor shares the channel; an old channel on fd2 loses one. */
static void log_dup(int oldfd, int r, int e, uint32_t call, void *ra)
{
	struct trace_event ev;
	struct rec_chan *c;

	if (r < 0 || r == oldfd)
		return;
	if (__builtin_expect(rec_files_ndeferred != 0, 0))
		rec_files_fresh(r); /* an open's note waiting for the number is stale (files.c) */
	c = rec_fd_chan(oldfd);
	fd_release(r, call, ra);
	if (!c) {
		if (oldfd >= 0 && oldfd < REC_FD_MAX && r < REC_FD_MAX && rec.fd[oldfd] < 0)
			rec.fd[r] = rec.fd[oldfd];
		return;
	}
	rec_fd_bind(r, c);
	rec_event_init(&ev, TRACE_EV_DUP, call, oldfd);
	ev.channel = c->id;
	ev.result = r;
	ev.err = r < 0 ? e : 0;
	ev.naux = 1;
	ev.aux[0] = r;
	rec_log(&ev, ra);
}


static void own_fd_guard(int fd2)
{
	if (rec_own_fd(fd2) && rec_enter()) {
		rec_own_fd_lost(fd2);
		rec_leave();
	}
}



static int fcntl_common(int (*real)(int, int, ...), int fd, int cmd, void *arg, void *ra)
{
	int r = real(fd, cmd, arg), e = errno;

	if (cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC)
		return r;
	if (!rec_enter())
		return r;
	log_dup(fd, r, e, TRACE_CALL_FCNTL, ra);
	rec_leave();
	errno = e;
	return r;
}



/* --- data --------------------------------------------------------------------------------- */

/* Scratch space to gather scattered input bytes (readv, recvmsg) into one value; grown with
 * mmap, never malloc. */
static uint8_t *scratch;
static size_t scratch_cap;

static uint8_t *scratch_get(size_t n)
{
	if (n > scratch_cap) {
		size_t cap = (n + 65535) & ~(size_t)65535;
		void *p = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return NULL;
		if (scratch)
			munmap(scratch, scratch_cap);
		scratch = p;
		scratch_cap = cap;
	}
	return scratch;
}

/* The bytes a call moved: one buffer, or the first `n` bytes of an iovec; for a receive with
 * a source address (recvfrom, recvmsg), the address the kernel wrote (`addr`, `addrlen` the
 * room given, `addrlen_out` where the kernel wrote the real length), and for recvmsg its
 * msghdr (result flags, ancillary data). */
struct bytes {
	const void *buf;
	const struct iovec *iov;
	int iovcnt;
	const void *addr;
	socklen_t addrlen;
	const socklen_t *addrlen_out;
	const struct msghdr *msg;
};

static size_t bytes_avail(const struct bytes *b, size_t n, size_t asked)
{
	size_t total = 0;
	int i;

	if (b->buf)
		return n < asked ? n : asked;
	for (i = 0; i < b->iovcnt; i++)
		total += b->iov[i].iov_len;
	return n < total ? n : total;
}

static const uint8_t *bytes_flat(const struct bytes *b, size_t n)
{
	uint8_t *out;
	size_t done = 0;
	int i;

	if (b->buf)
		return b->buf;
	if (b->iovcnt == 1)
		return b->iov[0].iov_base;
	if (!(out = scratch_get(n)))
		return NULL;
	for (i = 0; i < b->iovcnt && done < n; i++) {
		size_t k = b->iov[i].iov_len < n - done ? b->iov[i].iov_len : n - done;

		memcpy(out + done, b->iov[i].iov_base, k);
		done += k;
	}
	return out;
}

/* What external input carries besides its bytes, appended to them in the event's data
 * (schemas/trace-format.md, "Event kinds", input): the source address the kernel wrote and
 * the ancillary data, their lengths in aux[0] and aux[1].  Returns the data, or NULL
 * (no room: the bytes alone, as before). */
static const uint8_t *input_data(const struct bytes *b, size_t n, struct trace_event *ev)
{
	size_t alen = 0, clen = 0, done = 0;
	uint8_t *out;
	int i;

	if (b->addr && b->addrlen_out) {
		alen = *b->addrlen_out;
		if (alen > b->addrlen)
			alen = b->addrlen; /* the kernel copied only what fit */
	}
	if (b->msg && b->msg->msg_control)
		clen = b->msg->msg_controllen;
	if (alen == 0 && clen == 0)
		return n ? bytes_flat(b, n) : NULL;
	if (!(out = scratch_get(n + alen + clen)))
		return NULL;
	if (b->buf) {
		memcpy(out, b->buf, n);
	} else {
		for (i = 0; i < b->iovcnt && done < n; i++) {
			size_t k = b->iov[i].iov_len < n - done ? b->iov[i].iov_len : n - done;

			memcpy(out + done, b->iov[i].iov_base, k);
			done += k;
		}
	}
	memcpy(out + n, b->addr, alen);
	if (clen)
		memcpy(out + n + alen, b->msg->msg_control, clen);
	ev->naux = 2;
	ev->aux[0] = (int64_t)alen;
	ev->aux[1] = (int64_t)clen;
	ev->data_len = (uint32_t)(n + alen + clen);
	return out;
}

static uint32_t msg_flags(int flags, int e)
{
	uint32_t f = 0;

	if (flags & MSG_PEEK)
		f |= TRACE_FL_PEEK;
	if (flags & MSG_OOB)
		f |= TRACE_FL_OOB;
	if ((flags & MSG_DONTWAIT) || e == EAGAIN)
		f |= TRACE_FL_NONBLOCK;
	return f;
}

/* The running content hash: trace_hash() values (CRC-32C, which the replayer recomputes),
 * computed here with the SSE4.2 instruction without trace_hash's call chain and CPU test,
 * and on three interleaved streams for longer buffers.  The crc32 instruction has a latency
 * of 3 cycles and a throughput of 1: one stream hashes 1 KiB in ~108 ns on this machine,
 * three streams whose registers are then combined ~49 ns.  Combining: the CRC register is
 * linear, so crc(c, A|B|C) = shift(crc(c, A), 2L) ^ shift(crc(0, B), L) ^ crc(0, C) for
 * blocks of L bytes, where shift(x, L) is x run over L zero bytes: a linear map, applied
 * through a table per byte of x (crc_shift, filled at the first long buffer by running the
 * instruction over zeros, so its values are right by construction).  16 KiB of tables, no
 * allocation; racing fillers write the same values. */
#if defined(__x86_64__)
static int have_crc_insn = -1;
static const size_t crc_block[2] = { 256, 64 };
static uint32_t crc_shift[2][2][4][256]; /* [block size][L or 2L zero bytes][byte of x][x] */
static int crc_shift_ready;

__attribute__((target("sse4.2"))) static void crc_shift_init(void)
{
	int b, t, k, v;

	for (b = 0; b < 2; b++)
		for (t = 0; t < 2; t++)
			for (k = 0; k < 4; k++)
				for (v = 0; v < 256; v++) {
					uint64_t x = (uint32_t)v << (8 * k);
					size_t n;

					for (n = 0; n < crc_block[b] * (size_t)(t + 1); n += 8)
						x = __builtin_ia32_crc32di(x, 0);
					crc_shift[b][t][k][v] = (uint32_t)x;
				}
	__atomic_store_n(&crc_shift_ready, 1, __ATOMIC_RELEASE);
}

static inline uint32_t crc_shift_by(const uint32_t (*tab)[256], uint32_t x)
{
	return tab[0][x & 255] ^ tab[1][(x >> 8) & 255] ^ tab[2][(x >> 16) & 255] ^ tab[3][x >> 24];
}

/* The last n < 8 bytes: four, two, one at a time (the instruction takes the bytes of a word
 * in memory order, so any split gives the same value). */
__attribute__((target("sse4.2"), always_inline)) static inline uint32_t
crc_tail(uint32_t c, const uint8_t *p, size_t n)
{
	if (n & 4) {
		uint32_t w;

		memcpy(&w, p, 4);
		c = __builtin_ia32_crc32si(c, w);
		p += 4;
	}
	if (n & 2) {
		uint16_t w;

		memcpy(&w, p, 2);
		c = __builtin_ia32_crc32hi(c, w);
		p += 2;
	}
	if (n & 1)
		c = __builtin_ia32_crc32qi(c, *p);
	return c;
}

/* Three blocks of L bytes at p, the first continuing register c. */
__attribute__((target("sse4.2"), always_inline)) static inline uint64_t
crc_3way(uint64_t c, const uint8_t *p, size_t L, const uint32_t (*tab)[4][256])
{
	uint64_t c1 = 0, c2 = 0, w0, w1, w2;
	size_t i;

	/* unrolled whole (L is a constant here): no loop counter between the loads */
#pragma GCC unroll 32
	for (i = 0; i < L; i += 8) {
		memcpy(&w0, p + i, 8);
		memcpy(&w1, p + L + i, 8);
		memcpy(&w2, p + 2 * L + i, 8);
		c = __builtin_ia32_crc32di(c, w0);
		c1 = __builtin_ia32_crc32di(c1, w1);
		c2 = __builtin_ia32_crc32di(c2, w2);
	}
	return crc_shift_by(tab[1], (uint32_t)c) ^ crc_shift_by(tab[0], (uint32_t)c1) ^ (uint32_t)c2;
}

/* trace_hash(h, p, n) for n >= 16, for a CPU with the crc32 instruction.  Apart from the
 * short case below, whose prologue would otherwise save every register the long loops use. */
__attribute__((target("sse4.2"), noinline)) static uint32_t hash_long(uint32_t h,
                                                                     const uint8_t *p, size_t n)
{
	uint64_t c = ~h;

	/* (no alignment first: the loads are unaligned ones, and a byte loop to the next 8
	 * cost more than they do) */
	if (n >= 3 * 64 && !__atomic_load_n(&crc_shift_ready, __ATOMIC_ACQUIRE))
		crc_shift_init();
	for (; n >= 3 * 256; p += 3 * 256, n -= 3 * 256)
		c = crc_3way(c, p, 256, crc_shift[0]);
	for (; n >= 3 * 64; p += 3 * 64, n -= 3 * 64)
		c = crc_3way(c, p, 64, crc_shift[1]);
	for (; n >= 8; p += 8, n -= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		c = __builtin_ia32_crc32di(c, w);
	}
	return ~crc_tail((uint32_t)c, p, n);
}

__attribute__((target("sse4.2"), always_inline)) static inline uint32_t hash_hw(uint32_t h,
                                                                                const uint8_t *p,
                                                                                size_t n)
{
	uint32_t c = ~h;

	if (n >= 16)
		return hash_long(h, p, n);
	if (n & 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		c = (uint32_t)__builtin_ia32_crc32di(c, w);
		p += 8;
	}
	return ~crc_tail(c, p, n & 7);
}

/* hash_bytes with the instruction, for an iovec (out of line: the one buffer's case below
 * then saves no register). */
__attribute__((target("sse4.2"), noinline)) static uint32_t hash_iov_hw(uint32_t h,
                                                                        const struct bytes *b,
                                                                        size_t n)
{
	int i;

	for (i = 0; i < b->iovcnt && n; i++) {
		size_t k = b->iov[i].iov_len < n ? b->iov[i].iov_len : n;

		h = hash_hw(h, b->iov[i].iov_base, k);
		n -= k;
	}
	return h;
}

/* hash_bytes with the instruction: one call per send or receive, the short case (a few bytes:
 * a reply of redis) in it. */
__attribute__((target("sse4.2"), noinline)) static uint32_t hash_bytes_hw(uint32_t h,
                                                                          const struct bytes *b,
                                                                          size_t n)
{
	if (b->buf)
		return hash_hw(h, b->buf, n);
	return hash_iov_hw(h, b, n);
}
#endif

/* hash_bytes without it. */
__attribute__((noinline)) static uint32_t hash_bytes_sw(uint32_t h, const struct bytes *b,
                                                        size_t n)
{
	int i;

	if (b->buf)
		return trace_hash(h, b->buf, n);
	for (i = 0; i < b->iovcnt && n; i++) {
		size_t k = b->iov[i].iov_len < n ? b->iov[i].iov_len : n;

		h = trace_hash(h, b->iov[i].iov_base, k);
		n -= k;
	}
	return h;
}

/* The hash of the first n bytes the call moved (one buffer or an iovec). */
static inline uint32_t hash_bytes(uint32_t h, const struct bytes *b, size_t n)
{
#if defined(__x86_64__)
	if (__builtin_expect(have_crc_insn < 0, 0)) {
		__builtin_cpu_init();
		have_crc_insn = __builtin_cpu_supports("sse4.2") ? 1 : 0;
	}
	if (__builtin_expect(have_crc_insn, 1))
		return hash_bytes_hw(h, b, n);
#endif
	return hash_bytes_sw(h, b, n);
}

/* A datagram sent on a UDP or Unix datagram socket: what the analyzer needs to find the
 * receive that took it (schemas/trace-format.md, "Datagrams"): aux[0] = the datagram's own
 * hash (trace_hash of its bytes alone), aux[1] = bytes of destination address (sendto's,
 * sendmsg's msg_name; none on a connected socket, whose CONNECT event names the peer),
 * aux[2] = bytes of local address, given once per UDP socket, at the first send after it
 * has a port (a first sendto binds it implicitly: one getsockname then, none afterwards;
 * a Unix socket's path is its BIND's).  Both addresses follow each other in the data,
 * written into `out` (room for two). */
static void dgram_out(int fd, struct rec_chan *c, const struct bytes *b, size_t n,
                      struct trace_event *ev, uint8_t *out)
{
	size_t dl = 0, ll = 0;

	if (b->addr && b->addrlen >= sizeof(sa_family_t)) {
		dl = b->addrlen < sizeof(struct sockaddr_un) ? b->addrlen : sizeof(struct sockaddr_un);
		memcpy(out, b->addr, dl);
	}
	if (!c->local_port && !c->unix_dgram) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int port;

		if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0 &&
		    (port = addr_port((const uint8_t *)&ss, len)) > 0) {
			c->local_port = (uint16_t)port;
			ll = len < sizeof(struct sockaddr_in6) ? len : sizeof(struct sockaddr_in6);
			memcpy(out + dl, &ss, ll);
		}
	}
	ev->naux = 3;
	ev->aux[0] = hash_bytes(0, b, n);
	ev->aux[1] = (int64_t)dl;
	ev->aux[2] = (int64_t)ll;
	ev->data = dl + ll ? out : NULL;
	ev->data_len = (uint32_t)(dl + ll);
}

/* A UDP or Unix datagram socket (c is of type UDP or other).  A Unix socket that came
 * through exec (its channel rebuilt from ENCORE_RECORD, which does not say) is looked at
 * once, at its first send. */
static int is_dgram(int fd, struct rec_chan *c)
{
	if (c->type == TRACE_CHAN_UDP)
		return 1;
	if (!c->dgram_known) {
		int dom = 0, type = 0;
		socklen_t l = sizeof(int);

		c->dgram_known = 1;
		if (syscall(SYS_getsockopt, fd, SOL_SOCKET, SO_DOMAIN, &dom, &l) == 0 &&
		    dom == AF_UNIX) {
			l = sizeof(int);
			c->unix_dgram = syscall(SYS_getsockopt, fd, SOL_SOCKET, SO_TYPE, &type, &l) == 0 &&
			                type == SOCK_DGRAM;
		}
	}
	return c->unix_dgram;
}

/* rec_log (core.c) for log_data's event, inlined there, through the writer's path for sends
 * and receives (trace_writer_data: the same bytes, fewer tests). */
static inline __attribute__((always_inline)) void log_data_event(struct trace_event *ev,
                                                                 void *ra)
{
	int *ep = &errno, e = *ep; /* the program's: a failed write of ours must not show through */

	if (!rec.w)
		return;
	if (rec.depth && ra)
		ev->site = rec_site(ra);
	ev->thread = __builtin_expect(rec_thread != REC_NO_THREAD, 1) ? rec_thread :
	                                                               rec_thread_foreign();
	rec_own_say(ev->thread);
	if (trace_writer_data(rec.w, ev) == TRACE_EIO) {
		trace_writer_abandon(rec.w);
		rec.w = NULL;
	}
	*ep = e;
	if (__builtin_expect(rec_sig_npend != 0, 0))
		rec_sig_after_event(ev); /* deferred signal handlers run after the event */
}

/* Log one call that moved bytes.  dir REC_OUT or REC_IN; r and e are the real call's
 * result and errno; `asked` the bytes requested.
 *
 * This runs on every send and receive, so the event is filled field by field (every field
 * the writer reads; aux stays unused with naux 0) rather than cleared with memset first,
 * and the common case (a known channel between recorded processes) takes no other call
 * than the writer's.  Timestamps: one data event in 16 (rec_event_init says why). */
static void log_data(int fd, int dir, ssize_t r, int e, size_t asked, int flags,
                     const struct bytes *b, uint32_t call, void *ra, uint32_t share,
                     uint64_t soff)
{
	struct trace_event ev;
	struct rec_chan *c;
	size_t n;
	uint8_t dgram_addrs[2 * sizeof(struct sockaddr_un)];
	int32_t v = rec.fd[fd]; /* the caller checked 0 <= fd < REC_FD_MAX */
	int random = 0;

	if (__builtin_expect(v > 0, 1)) {
		c = &rec.chan[v - 1];
	} else {
		/* Classifies a new descriptor, which may turn out to be /dev/urandom. */
		c = rec_fd_chan(fd);
		if (!c)
			random = rec.fd[fd] == REC_FD_RANDOM;
		if (!c && !(random && dir == REC_IN))
			return;
	}
	ev.index = 0;
	ev.kind = dir == REC_OUT ? TRACE_EV_SEND : TRACE_EV_RECV;
	ev.call = call;
	ev.fd = fd;
	ev.channel = 0;
	ev.site = 0;
	ev.result = r;
	ev.err = r < 0 ? e : 0;
	ev.len = asked;
	ev.offset = 0;
	ev.time_ns = (rec_lockline.data_events++ & 15) == 0 ? rec_now_ns() : 0;
	ev.hash = 0;
	ev.has_hash = 0;
	ev.naux = 0;
	ev.data = NULL;
	ev.data_len = 0;
	ev.flags = __builtin_expect((flags & (MSG_PEEK | MSG_OOB | MSG_DONTWAIT)) == 0 &&
	                                    (r >= 0 || e != EAGAIN),
	                            1)
	                   ? 0
	                   : msg_flags(flags, r < 0 ? e : 0);
	n = r > 0 ? bytes_avail(b, (size_t)r, asked) : 0;
	if (__builtin_expect(random, 0)) {
		ev.kind = TRACE_EV_RANDOM;
		if (n && (ev.data = bytes_flat(b, n)))
			ev.data_len = (uint32_t)n;
		rec_log(&ev, ra);
		return;
	}
	ev.channel = c->id;
	if (__builtin_expect(b->msg != NULL, 0) && r >= 0) {
		/* recvmsg's result flags: a datagram or its ancillary data cut to the room. */
		if (b->msg->msg_flags & MSG_TRUNC)
			ev.flags |= TRACE_FL_TRUNC;
		if (b->msg->msg_flags & MSG_CTRUNC)
			ev.flags |= TRACE_FL_CTRUNC;
	}
	if (dir == REC_IN && rec_chan_in_external(c, r, e, asked)) {
		ev.kind = TRACE_EV_INPUT;
		if (__builtin_expect(b->addr != NULL || b->msg != NULL, 0) && r >= 0)
			ev.data = input_data(b, n, &ev);
		else if (n && (ev.data = bytes_flat(b, n)))
			ev.data_len = (uint32_t)n;
		if (!ev.data)
			ev.data_len = 0;
	} else if (__builtin_expect(b->msg != NULL, 0) && dir == REC_IN && r >= 0 &&
	           b->msg->msg_control && b->msg->msg_controllen) {
		/* Ancillary data from a recorded peer (descriptors, credentials): what the program
		 * got, kept as input's is but without the bytes (ancillary.c, replayer/README.md). */
		if (!(ev.data = input_data(b, 0, &ev)))
			ev.data_len = 0;
	}
	if (__builtin_expect(c->type >= TRACE_CHAN_UDP, 0) && dir == REC_OUT && r >= 0 &&
	    is_dgram(fd, c))
		dgram_out(fd, c, b, n, &ev, dgram_addrs);
	if (n && !(flags & MSG_PEEK)) {
		c->bytes[dir] += n;
		/* Input's bytes are in the trace, and replay gives them back from there: a hash of
		 * them would check the trace against itself, so it covers the bytes a replay makes
		 * again (sent, and received from recorded peers) only (replayer/lc_chan.c). */
		if (ev.kind != TRACE_EV_INPUT) {
			c->hash[dir] = hash_bytes(c->hash[dir], b, n);
			if (++c->since[dir] >= rec.hash_every) {
				c->since[dir] = 0;
				ev.has_hash = 1;
				ev.hash = c->hash[dir];
			}
		}
	}
	if (__builtin_expect(share != 0, 0) && ev.kind != TRACE_EV_INPUT)
		rec_share_aux(share, dir, soff, &ev);
	log_data_event(&ev, ra);
}

/* Only evaluated when the real call succeeded, so the iovec was readable. */
static size_t iov_len(const struct iovec *iov, int cnt)
{
	size_t t = 0;
	int i;

	for (i = 0; iov && i < cnt; i++)
		t += iov[i].iov_len;
	return t;
}

/* The common shape of every data interposer: call, then log if the descriptor might be a
 * channel.  The cheap test keeps regular-file I/O at one load and one compare. */
#define DATA_BODY(fd, dir, asked, flags, bytes_init, call, realcall) \
	DATA_BODY_ANC(fd, dir, asked, flags, call, realcall, (const struct msghdr *)NULL, bytes_init)

/* The same, for sendmsg and recvmsg: descriptors passed with SCM_RIGHTS (msghdr m) are
 * classified before the send is logged and logged after it (ancillary.c). */
#define DATA_BODY_ANC(fd, dir, asked, flags, call, realcall, m, ...) \
	REC_DATA_CALL; /* a fatal signal from here on waits for the event (rec.h) */ \
	if (__builtin_expect(rec.threads, 0) && rec_is_evfd(fd)) { \
		/* threads waking each other: an eventfd's reads and writes are ordered (sync.c) */ \
		ssize_t r_ev_; \
		int e_ev_, held_ev_ = ((dir) == REC_OUT || rec_evfd[fd] == 2) && rec_evfd_enter(); \
		r_ev_ = realcall; \
		e_ev_ = errno; \
		if (!held_ev_ && (dir) == REC_IN) \
			held_ev_ = rec_evfd_enter(); /* a blocking read: after it */ \
		if (held_ev_) { \
			rec_evfd_event(fd, dir, (long)r_ev_, e_ev_); \
			rec_leave(); \
		} \
		errno = e_ev_; \
		return r_ev_; \
	} \
	REC_DATA_ORDER(fd, dir); \
	/* a pipe end other processes hold: the shared offset moves with the call (share.c) */ \
	uint32_t share_ = fd >= 0 && fd < REC_FD_MAX && rec.fd[fd] > 0 \
	                          ? rec.chan[rec.fd[fd] - 1].share : 0; \
	if (__builtin_expect(share_ != 0, 0) && (rec.w == NULL || rec_busy())) \
		share_ = 0; \
	/* (a peek moves no byte: it takes no turn, and says where the stream is) */ \
	int peek_ = __builtin_expect(share_ != 0, 0) && ((flags) & MSG_PEEK); \
	const uint32_t share_at_call_ = share_; \
	if (__builtin_expect(share_ != 0, 0) && !peek_ && \
	    !rec_share_lock_for(share_, dir, fd, (flags), \
	                        rec.chan[rec.fd[fd] - 1].type != TRACE_CHAN_PIPE)) \
		share_ = 0; \
	ssize_t r = realcall; \
	int e = errno; \
	uint64_t soff_ = __builtin_expect(share_ != 0, 0) \
	                         ? (peek_ ? rec_share_off(share_, dir) \
	                                  : rec_share_unlock(share_, dir, (long)r)) : 0; \
	/* (another thread forked during the call, sharing the end: its bytes still count) */ \
	if (__builtin_expect(rec.threads, 0) && share_at_call_ == 0 && r > 0 && fd >= 0 && \
	    fd < REC_FD_MAX && rec.fd[fd] > 0 && rec.chan[rec.fd[fd] - 1].share && \
	    rec.w != NULL && !rec_busy() && !((flags) & MSG_PEEK)) \
		rec_share_account(rec.chan[rec.fd[fd] - 1].share, dir, (long)r); \
	REC_DATA_ORDER_AFTER(fd, dir, r, e); \
	/* a failed call (EINTR, EPIPE) that a fatal signal ends: the program never gets its \
	 * result and no byte moved, so the death alone is logged (REC_DATA_CALL), as before */ \
	if (__builtin_expect(r < 0, 0) && rec_in_data == 1 && \
	    __atomic_load_n(&rec_fatal_pending, __ATOMIC_RELAXED) != 0) { \
		errno = e; \
		return r; \
	} \
	if (__builtin_expect(rec.w != NULL, 1) && fd >= 0 && fd < REC_FD_MAX && \
	    rec.fd[fd] != REC_FD_IGNORED && rec_enter()) { \
		struct bytes b = __VA_ARGS__; \
		int anc_ = rec_anc_present(m, r); \
		if (__builtin_expect(anc_, 0) && dir == REC_OUT) \
			rec_anc_classify(m); \
		log_data(fd, dir, r, e, asked, flags, &b, call, RA(), share_, soff_); \
		if (__builtin_expect(anc_, 0)) \
			rec_anc_log(fd, dir, m, RA()); \
		rec_leave(); \
		errno = e; \
	} \
	return r

#define BUF(p) { .buf = (p), .iov = NULL, .iovcnt = 0, .addr = NULL, .addrlen = 0, \
	                .addrlen_out = NULL, .msg = NULL }
#define IOV(v, c) { .buf = NULL, .iov = (v), .iovcnt = (c), .addr = NULL, .addrlen = 0, \
	                  .addrlen_out = NULL, .msg = NULL }
/* sendto, sendmsg: the destination address (for datagrams, dgram_out). */
#define BUF_TO(p, ad, al) { .buf = (p), .iov = NULL, .iovcnt = 0, .addr = (ad), \
	                      .addrlen = (ad) ? (al) : 0, .addrlen_out = NULL, .msg = NULL }
#define MSG_TO(m) { .buf = NULL, .iov = msg_iov(m), .iovcnt = msg_iovcnt(m), \
	            .addr = (m) && (m)->msg_name ? (m)->msg_name : NULL, \
	            .addrlen = (m) && (m)->msg_name ? (m)->msg_namelen : 0, .addrlen_out = NULL, \
	            .msg = NULL }
/* recvfrom: the room for the address is read before the call (the kernel then writes the
 * address's real length there, which may be more than it copied). */
#define BUF_FROM(p, ad, al, room) { .buf = (p), .iov = NULL, .iovcnt = 0, \
	                              .addr = (ad) && (al) ? (ad) : NULL, .addrlen = (room), \
	                              .addrlen_out = (ad) ? (al) : NULL, .msg = NULL }
#define MSG_IN(m, room) { .buf = NULL, .iov = msg_iov(m), .iovcnt = msg_iovcnt(m), \
	                    .addr = (m) && (m)->msg_name ? (m)->msg_name : NULL, .addrlen = (room), \
	                    .addrlen_out = (m) ? &(m)->msg_namelen : NULL, .msg = (m) }

/* A NULL msghdr makes the real call fail with EFAULT; logging must not crash on it. */
static const struct iovec *msg_iov(const struct msghdr *m)
{
	return m ? m->msg_iov : NULL;
}

static int msg_iovcnt(const struct msghdr *m)
{
	return m && m->msg_iov ? (int)m->msg_iovlen : 0;
}

static size_t msg_len(const struct msghdr *m)
{
	return iov_len(msg_iov(m), msg_iovcnt(m));
}

/* The data shapes' handlers (interpose/calls.def): the wrappers generated from the rows of
 * these shapes (rec_wrappers.h, by interpose/gen_wrappers.py) expand them here, next to the
 * helpers they use.  `nm` and `wh` (the row's name) are the replayer's concern. */
#define REC_SHAPE_BYTES_OUT(nm, wh, call, fd, b, cnt, fl, realcall) \
	DATA_BODY(fd, REC_OUT, cnt, fl, BUF(b), call, realcall)
#define REC_SHAPE_BYTES_OUT_TO(nm, wh, call, fd, b, cnt, fl, ad, al, realcall) \
	DATA_BODY(fd, REC_OUT, cnt, fl, BUF_TO(b, ad, al), call, realcall)
#define REC_SHAPE_MSG_OUT(nm, wh, call, fd, m, fl, realcall) \
	DATA_BODY_ANC(fd, REC_OUT, r >= 0 ? msg_len(m) : 0, fl, call, realcall, m, MSG_TO(m))
#define REC_SHAPE_IOV_OUT(nm, wh, call, fd, v, vc, realcall) \
	DATA_BODY(fd, REC_OUT, r >= 0 ? iov_len(v, vc) : 0, 0, IOV(v, vc), call, realcall)
#define REC_SHAPE_BYTES_IN(nm, wh, call, fd, b, cnt, fl, realcall) \
	DATA_BODY(fd, REC_IN, cnt, fl, BUF(b), call, realcall)
#define REC_SHAPE_BYTES_IN_FROM(nm, wh, call, fd, b, cnt, fl, ad, al, realcall) \
	socklen_t room_ = (ad) && (al) ? *(al) : 0; \
	DATA_BODY(fd, REC_IN, cnt, fl, BUF_FROM(b, ad, al, room_), call, realcall)
#define REC_SHAPE_MSG_IN(nm, wh, call, fd, m, fl, realcall) \
	socklen_t room_ = (m) && (m)->msg_name ? (m)->msg_namelen : 0; \
	DATA_BODY_ANC(fd, REC_IN, r >= 0 ? msg_len(m) : 0, fl, call, realcall, m, MSG_IN(m, room_))
#define REC_SHAPE_IOV_IN(nm, wh, call, fd, v, vc, realcall) \
	DATA_BODY(fd, REC_IN, r >= 0 ? iov_len(v, vc) : 0, 0, IOV(v, vc), call, realcall)

/* The DUP shape's handler: dup, dup2 and dup3 are generated too.  NOFD2: dup, whose new
 * descriptor cannot be the writer's. */
#define REC_SHAPE_DUP(nm, wh, call, FD, FD2, NOFD2, realcall) \
	REC_FD_ORDER; \
	int r_, e_; \
	if (!(NOFD2)) { \
		own_fd_guard(FD2); \
		if (__builtin_expect(rec_files_ndeferred != 0, 0)) \
			rec_files_closing(FD2); /* it may be closed (files.c) */ \
	} \
	r_ = realcall; \
	e_ = errno; \
	rec_evfd_forget(r_); /* a copy of an eventfd is not ordered (recorder/README.md) */ \
	if (!rec_enter()) \
		return r_; \
	log_dup(FD, r_, e_, call, RA()); \
	rec_leave(); \
	errno = e_; \
	return r_

/* The FCNTL shape's handler: fcntl and fcntl64 are generated too (the wrapper reads the
 * third argument, ARG), REAL the real function. */
#define REC_SHAPE_FCNTL(nm, wh, call, FD, CMD, ARG, REAL) \
	return fcntl_common(REAL, FD, CMD, ARG, RA())

#include "rec_wrappers.h"
