/*
 * lc_ancillary.c: descriptor passing in replay, the twin of recorder/ancillary.c.
 *
 * The real descriptors travel.  A sendmsg that passed descriptors when recorded sends the
 * program's SCM_RIGHTS now with its bytes (the descriptors are at the recorded numbers, the
 * LC enforces them), and consumes the PASS events that follow its send event, checking that
 * it passes the recorded descriptors.  SCM_CREDENTIALS are not sent: the program fills them
 * with the pids it sees, the recorded ones, which the kernel would refuse; the receiver gets
 * the recorded credentials from its trace anyway.
 *
 * A recvmsg that received descriptors when recorded reads with room for them (the real
 * call, lc_chan.c's recv_exact), checks it got the recorded number, and puts each at the
 * number the program saw when recorded (dup3 when the kernel chose another; those numbers
 * are in the ancillary data the program reads).  Extra descriptors (the recorded call's
 * buffer was too small: MSG_CTRUNC) are closed, as the kernel closed them then.  The program
 * then gets the recorded ancillary data, credentials included (their pid is the recorded
 * one, the pid the replayed processes see).  Descriptors passed by a process outside the
 * session cannot come: each gets a stand-in at its recorded number, a TCP connection over
 * loopback whose other end is closed for a TCP socket, one end of a socketpair for another
 * socket (its traffic is the trace's input, sends go nowhere), /dev/null for anything else (replayer/README.md, "Descriptor passing").
 */
#undef _FILE_OFFSET_BITS
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lc.h"

#define ANC_CTL_MAX 4096 /* more than SCM_MAX_FD (253) descriptors' worth */
#define ANC_FD_MAX 256

static struct { /* not thread-local: the static TLS room of a dlopen is small */
	/* send */
	int out_pending;
	size_t out_len;
	union {
		struct cmsghdr h;
		uint8_t b[ANC_CTL_MAX];
	} out;
	/* receive */
	int in_armed, in_cloexec, nreal;
	int real[ANC_FD_MAX];
	union {
		struct cmsghdr h;
		uint8_t b[ANC_CTL_MAX];
	} in;
} anc;

/* The event k after the next one (0: the next), or NULL. */
static const struct lc_ev *ahead(uint64_t k)
{
	return lc.pos + k < lc.nev ? &lc.ev[lc.pos + k - lc.base] : NULL;
}

static int is_pass(const struct lc_ev *ev, int dir)
{
	return ev && ev->kind == TRACE_EV_PASS && ev->naux > 0 && ev->aux[0] == dir;
}

/* --- send ------------------------------------------------------------------------------ */

int lc_anc_out_pre(const struct msghdr *m)
{
	struct msghdr mm;
	size_t len = 0;

	if (!m || !m->msg_control || !m->msg_controllen || !lc_on())
		return 0;
	mm = *m;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mm); c; c = CMSG_NXTHDR(&mm, c)) {
		size_t nfd, i;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		/* the recorder classified them before a send that succeeded: their first-use
		 * events come now (only those: a descriptor met otherwise stays unknown here) */
		for (i = 0; i < nfd; i++) {
			const struct lc_ev *nx = lc_peek();
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (fd >= 0 && fd < LC_FD_MAX && lc_fd[fd] == LC_FD_UNKNOWN && nx &&
			    nx->fd == fd && nx->call == TRACE_CALL_NONE &&
			    (nx->kind == TRACE_EV_SOCKET || nx->kind == TRACE_EV_PIPE))
				(void)lc_fd_class(fd);
		}
		if (len + CMSG_SPACE(nfd * sizeof(int)) <= sizeof(anc.out.b)) {
			memcpy(anc.out.b + len, c, c->cmsg_len);
			len += CMSG_SPACE(nfd * sizeof(int));
		}
	}
	anc.out_len = len;
	anc.out_pending = 1;
	return 1;
}

void lc_anc_send_ctl(struct msghdr *m)
{
	if (anc.out_pending && anc.out_len) {
		m->msg_control = anc.out.b;
		m->msg_controllen = anc.out_len;
	}
}

void lc_anc_out_clear(void)
{
	anc.out_pending = 0;
	anc.out_len = 0;
}

void lc_anc_out_done(const struct msghdr *m)
{
	struct msghdr mm = *m;
	struct cmsghdr *c = CMSG_FIRSTHDR(&mm);
	size_t i = 0;

	lc_anc_out_clear();
	/* (the next event read as it is: a handler run there is due at the next call's entry,
	 * not inside this sendmsg, which lc_peek would run it in) */
	while (is_pass(lc.pos < lc.nev ? &lc.ev[lc.pos - lc.base] : NULL, TRACE_PASS_OUT)) {
		const struct lc_ev *ev = lc_expect(TRACE_EV_PASS, -1, "sendmsg");
		int fd = -1;

		/* the next descriptor of the program's SCM_RIGHTS messages */
		for (; c; c = CMSG_NXTHDR(&mm, c), i = 0)
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
			    c->cmsg_len >= CMSG_LEN(0) && i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int)) {
				memcpy(&fd, CMSG_DATA(c) + i++ * sizeof(int), sizeof(int));
				break;
			}
		if (fd != ev->fd)
			lc_diverge("sendmsg passed descriptor %d, the recorded one was %d (channel %u)",
			           fd, ev->fd, ev->channel);
		lc_commit();
	}
}

/* --- receive --------------------------------------------------------------------------- */

/* A received descriptor's PASS event at ahead(k), or the CLOSE the recorder logs first when
 * it still knew the number (a close it missed, recorder/chan.c's fd_fresh) followed by it:
 * the number of events it takes (1 or 2), 0 when there is none there. */
static int pass_in_at(uint64_t k)
{
	const struct lc_ev *e = ahead(k), *n;

	if (is_pass(e, TRACE_PASS_IN))
		return 1;
	if (e && e->kind == TRACE_EV_CLOSE && (n = ahead(k + 1)) && is_pass(n, TRACE_PASS_IN) &&
	    n->fd == e->fd)
		return 2;
	return 0;
}

int lc_anc_follows(void)
{
	return pass_in_at(1) != 0;
}

void lc_anc_in_arm(int flags)
{
	anc.nreal = 0;
	anc.in_armed = lc_anc_follows();
	anc.in_cloexec = (flags & MSG_CMSG_CLOEXEC) != 0;
}

int lc_anc_armed(void)
{
	return anc.in_armed;
}

void lc_anc_recv_ctl(struct msghdr *m)
{
	if (anc.in_armed) {
		m->msg_control = anc.in.b;
		m->msg_controllen = sizeof(anc.in.b);
	}
}

void lc_anc_recv_got(struct msghdr *m)
{
	if (!anc.in_armed || !m->msg_control)
		return;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		size_t nfd;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < nfd; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (anc.nreal < ANC_FD_MAX)
				anc.real[anc.nreal++] = fd;
			else
				syscall(SYS_close, fd);
		}
	}
}

/* The recorded ancillary data of a receive from a recorded peer (recorder/chan.c: after
 * the source address, aux[0] and aux[1] their lengths), as input_extra gives input's. */
void lc_anc_control(const struct lc_ev *ev, struct msghdr *msg)
{
	size_t room = msg->msg_control ? msg->msg_controllen : 0, alen, clen;

	msg->msg_controllen = 0;
	if (ev->naux < 2 || ev->aux[0] < 0 || ev->aux[1] <= 0 ||
	    (uint64_t)ev->aux[0] + (uint64_t)ev->aux[1] > ev->data_len)
		return;
	alen = (size_t)ev->aux[0];
	clen = (size_t)ev->aux[1];
	if (clen <= room) {
		memcpy(msg->msg_control, lc.data + ev->data_off + ev->data_len - clen, clen);
		msg->msg_controllen = clen;
	}
	(void)alen;
}

int lc_stand_in(int domain)
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	int l, c = -1, s = -1, sv[2];

	if (domain != AF_INET && domain != AF_INET6) {
		if (syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
			return -1;
		syscall(SYS_close, sv[1]);
		return sv[0];
	}
	/* TCP over loopback, so that TCP's socket options work on it (nginx sets TCP_NODELAY
	 * on a connection it keeps alive, and closes it when that fails), at an address of its
	 * own (lc_is_stand_in) */
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(LC_STAND_IN_ADDR);
	if ((l = (int)syscall(SYS_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	if (syscall(SYS_bind, l, &a, sizeof(a)) == 0 && syscall(SYS_listen, l, 1) == 0 &&
	    syscall(SYS_getsockname, l, &a, &al) == 0 &&
	    (c = (int)syscall(SYS_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0 &&
	    syscall(SYS_connect, c, &a, sizeof(a)) == 0)
		s = (int)syscall(SYS_accept4, l, NULL, NULL, SOCK_CLOEXEC);
	syscall(SYS_close, l);
	if (c >= 0)
		syscall(SYS_close, c);
	return s;
}

/* A TCP stand-in is bound to an address of its own: a process that gets one passed from
 * another recorded process (vsftpd's session parent accepts the passive data connection of
 * a client it took for an outside one, and hands it to the process that sends the file)
 * must send nothing on it either: its peer is gone, and the bytes went to the outside
 * client when recorded.  The Unix stand-in is not told apart. */
int lc_is_stand_in(int fd)
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a);

	return syscall(SYS_getsockname, fd, &a, &al) == 0 && al >= sizeof(a) &&
	       a.sin_family == AF_INET && a.sin_addr.s_addr == htonl(LC_STAND_IN_ADDR);
}

/* A stand-in for a descriptor passed by a process outside the session. */
static int stand_in(const struct lc_ev *ev)
{
	int what = ev->naux > 2 ? (int)ev->aux[2] : TRACE_PASS_OTHER, fd = -1;

	if (what == TRACE_PASS_SOCKET || what == TRACE_PASS_LISTENER) {
		struct trace_endpoint ep;

		memset(&ep, 0, sizeof(ep));
		if (ev->data_len)
			trace_endpoint_decode(lc.data + ev->data_off, ev->data_len, &ep);
		fd = lc_stand_in(ep.type == TRACE_CHAN_TCP ? AF_INET : AF_UNIX);
	}
	if (fd < 0)
		fd = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC);
	return fd;
}

/* Put descriptor `fd` at number `to` (closing fd), close-on-exec as the kernel gave it. */
static void place(int fd, int to)
{
	if (fd == to)
		return;
	lc_own_fd_move(to);
	if (syscall(SYS_dup3, fd, to, anc.in_cloexec ? O_CLOEXEC : 0) < 0)
		lc_diverge("recvmsg: cannot put a received descriptor at its recorded number %d: %s",
		           to, strerror(errno));
	syscall(SYS_close, fd);
}

void lc_anc_in_done(void)
{
	const struct lc_ev *rev = lc.pos > lc.base ? &lc.ev[lc.pos - 1 - lc.base] : NULL;
	int input = rev && rev->kind == TRACE_EV_INPUT, n = 0, i, w;
	uint64_t k = 0, at[ANC_FD_MAX]; /* where each PASS event is, from the next event on */

	while (n < ANC_FD_MAX && (w = pass_in_at(k))) {
		at[n++] = k + (uint64_t)w - 1;
		k += (uint64_t)w;
	}
	if (!n) {
		for (i = 0; i < anc.nreal; i++)
			syscall(SYS_close, anc.real[i]);
		anc.nreal = anc.in_armed = 0;
		return;
	}
	/* input whose datagram came from a recorded sender (lc_chan.c's dgram_take) brought
	 * the real descriptors: they are used as a receive from a recorded peer's are */
	if (input && anc.nreal >= n)
		input = 0;
	if (!input && anc.nreal < n)
		lc_diverge("recvmsg on channel %u received %d descriptors, %d were recorded",
		           rev ? rev->channel : 0, anc.nreal, n);
	if (input) {
		for (i = 0; i < anc.nreal; i++)
			syscall(SYS_close, anc.real[i]);
		anc.nreal = 0;
		for (i = 0; i < n; i++)
			anc.real[anc.nreal++] = stand_in(ahead(at[i]));
	}
	/* the kernel closed the descriptors beyond the recorded call's room (MSG_CTRUNC) */
	for (i = n; i < anc.nreal; i++)
		syscall(SYS_close, anc.real[i]);
	/* out of the way of each other first, then at the recorded numbers */
	for (i = 0; i < n && i < anc.nreal; i++) {
		const struct lc_ev *p = ahead(at[i]);

		if (anc.real[i] >= 0 && anc.real[i] != p->fd) {
			int hi = (int)syscall(SYS_fcntl, anc.real[i], F_DUPFD_CLOEXEC, 1024);

			if (hi >= 0) {
				syscall(SYS_close, anc.real[i]);
				anc.real[i] = hi;
			}
		}
	}
	for (i = 0; i < n && i < anc.nreal; i++) {
		const struct lc_ev *p = ahead(at[i]);

		if (anc.real[i] < 0)
			continue;
		place(anc.real[i], p->fd);
		if (input) /* made close-on-exec: as the program asked (MSG_CMSG_CLOEXEC) */
			syscall(SYS_fcntl, p->fd, F_SETFD, anc.in_cloexec ? FD_CLOEXEC : 0);
	}
	anc.nreal = anc.in_armed = 0;
	/* the PASS events: each descriptor is its recorded channel end from now on */
	for (i = 0; i < n; i++) {
		const struct lc_ev *ev;

		if (pass_in_at(0) == 2) {
			lc_expect(TRACE_EV_CLOSE, -1, "recvmsg"); /* the number's old channel */
			lc_commit();
		}
		ev = lc_expect(TRACE_EV_PASS, -1, "recvmsg");

		/* not a channel: judged at first use, as the recorder judged it (/dev/urandom) */
		if (ev->fd >= 0 && ev->fd < LC_FD_MAX)
			lc_fd[ev->fd] = ev->channel ? (int32_t)ev->channel : LC_FD_UNKNOWN;
		if (ev->channel && ev->channel < LC_CHAN_MAX &&
		    (input || (ev->fd >= 0 && lc_is_stand_in(ev->fd))))
			lc_chan[ev->channel].external = 2; /* a stand-in: nothing goes out */
		lc_commit();
	}
}
