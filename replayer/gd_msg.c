/*
 * gd_msg.c: the global debugger's side of the control connections: new LCs joining (only our
 * own user's), and each message an LC sends (proto.h): HELLO (its slot, target or floor and
 * simple predicate in CONFIG; a child started inside libc gets its name), REQ, EXEC,
 * CONNECTED, ACCEPTED, HOLD, HALTED, DIVERGED, DONE, TRACED (a trace point of `encore
 * debug`).  Accept returns the recorded peer: an LC asks whether the connection it accepted
 * comes from the process that connected in the recording (the analyzer's connect -> accept
 * edge) and keeps it for later when not; when another process accepted it when recorded (a
 * listening socket shared across fork: prefork servers), the GD holds it until that
 * process's accept asks for it (replayer/README.md, accept).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gd_internal.h"

void rep__accept_peers(struct rep *r)
{
	for (;;) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		int fd = accept4(r->lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0)
			return;
		/* Only our own user's processes may join: the session is ours (0700), the socket
		 * 0600, and this closes the rest. */
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != getuid() ||
		    r->npending >= sizeof(r->pending) / sizeof(r->pending[0])) {
			close(fd);
			continue;
		}
		r->pending[r->npending++] = fd;
	}
}

/* A connection's peer: its SO_PEERCRED pid (Unix) or its TCP port. */
static void held_peer(int fd, long *pid, int *port)
{
	struct sockaddr_storage ss;
	struct ucred cred;
	socklen_t sl = sizeof(ss), cl = sizeof(cred);

	*pid = 0;
	*port = 0;
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) != 0)
		return;
	if (ss.ss_family == AF_INET)
		*port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	else if (ss.ss_family == AF_INET6)
		*port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	else if (ss.ss_family == AF_UNIX && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0)
		*pid = cred.pid;
}

/* rep_proto_recv that also takes a descriptor passed with the message (*fd, -1 for none):
 * HOLD carries one; the kernel would close it on a read without room for it. */
static long recv_msg(int fd, struct rep_msg *m, int *pfd)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} u;
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
	                     .msg_controllen = sizeof(u.b) };
	size_t hdr = offsetof(struct rep_msg, text);
	long n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

	*pfd = -1;
	if (n < 0)
		return -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(int)))
			memcpy(pfd, CMSG_DATA(c), sizeof(int));
	if (n < (long)hdr) {
		if (*pfd >= 0)
			close(*pfd);
		errno = EPIPE; /* the peer closed (0), or a packet shorter than a header */
		return -1;
	}
	m->text[n > (long)hdr ? (size_t)(n - (long)hdr) - 1 : 0] = '\0';
	m->text[REP_TEXT_MAX - 1] = '\0';
	return n;
}

/* The client of accept event k of the server: the process whose connect it took (the
 * analyzer's connect -> accept edge), else the sender of the first bytes the server received
 * on the accepted channel (from the analyzer's matching); NULL when unknown. */
struct gd_proc *rep__expected_client(struct rep *r, struct gd_proc *srv, uint64_t k)
{
	struct ana_event acc, ev;

	if (srv->ana < 0 || ana_event_get(r->ana, (size_t)srv->ana, k, &acc) != 0 || !acc.channel)
		return NULL;
	if (acc.src_proc != ANA_NO_PROC) /* the analyzer's connect -> accept edge */
		return rep__by_name(r, ana_proc_name(r->ana, acc.src_proc));
	for (uint64_t i = k + 1; i <= srv->nevents; i++) {
		if (ana_event_get(r->ana, (size_t)srv->ana, i, &ev) != 0)
			break;
		if (ev.channel != acc.channel)
			continue;
		if (ev.kind == TRACE_EV_CLOSE)
			break;
		if (ev.kind == TRACE_EV_RECV && ev.src_proc != ANA_NO_PROC)
			return rep__by_name(r, ana_proc_name(r->ana, ev.src_proc));
	}
	return NULL;
}

/* 1 when a TCP socket of process pid (its network namespace's /proc/PID/net/tcp and tcp6)
 * has local port `port` and is connecting or established (a socket closing, in FIN_WAIT or
 * CLOSE_WAIT, is not the client still waiting for its server). */
static int port_open(long pid, int port)
{
	static const char *const files[] = { "tcp", "tcp6" };
	char path[64], line[512];
	unsigned int lport, st;

	for (size_t f = 0; f < 2; f++) {
		FILE *fp;

		snprintf(path, sizeof(path), "/proc/%ld/net/%s", pid, files[f]);
		if (!(fp = fopen(path, "re")))
			continue;
		while (fgets(line, sizeof(line), fp))
			if (sscanf(line, " %*u: %*[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x", &lport, &st) == 2 &&
			    (int)lport == port && (st == 0x01 || st == 0x02)) {
				fclose(fp);
				return 1;
			}
		fclose(fp);
	}
	return 0;
}

/* A connection with no peer address (pid and port 0): TCP reset by its peer before the
 * accept, so getpeername fails; in the replay, the reset of a client that connected, sent
 * and reset at once may come before the server's accept where it came after when recorded.
 * It is the expected client's unless that client's own connection is still open (its
 * reported ports): then it is a later accept's, kept for it (the answer 0), not taken for
 * the expected one (whose bytes the server then found reset). */
static int gone_peer_answer(struct rep *r, struct gd_proc *srv, uint64_t k,
                            const struct gd_proc *c)
{
	struct ana_event acc;

	if (c->pid <= 0)
		return 1;
	/* the very connect the analyzer ties to this accept, when the client reported it: only
	 * that connection tells (a client with others open, ab -c 4, kept it waiting for ever) */
	if (srv->ana >= 0 && ana_event_get(r->ana, (size_t)srv->ana, k, &acc) == 0 &&
	    acc.src_index)
		for (size_t i = 0; i < c->nports; i++)
			if (c->port_ev[i] == acc.src_index)
				return !port_open(c->pid, c->ports[i]);
	for (size_t i = 0; i < c->nports; i++)
		if (port_open(c->pid, c->ports[i]))
			return 0;
	return 1;
}

/* A connection of the expected client c, from its connect event ev (0: unknown): 1 when that
 * is the connect the analyzer ties to accept event k (or a later connect call on the same
 * channel: a non-blocking connect called again reports its port again), else 0 (another
 * accept's: kept for it).  A client with several connections at once (ab -c 4 against
 * nginx's two workers) had any of its connections taken for the one this accept made when
 * recorded: the worker then waited for bytes that came on another, and the replay stalled. */
static int same_connect(struct rep *r, struct gd_proc *srv, uint64_t k, struct gd_proc *c,
                        uint64_t ev)
{
	struct ana_event acc, a, b;

	if (!ev || srv->ana < 0 || ana_event_get(r->ana, (size_t)srv->ana, k, &acc) != 0 ||
	    acc.src_proc == ANA_NO_PROC || !acc.src_index || acc.src_index == ev)
		return 1;
	if (c->ana < 0 || ana_event_get(r->ana, (size_t)c->ana, acc.src_index, &a) != 0 ||
	    ana_event_get(r->ana, (size_t)c->ana, ev, &b) != 0)
		return 1; /* (cannot tell: as before, the process decides) */
	return a.channel && a.channel == b.channel;
}

/* 1: the recorded peer; 0: another process (keep it for later); -1: cannot tell yet. */
static int accept_answer(struct rep *r, struct gd_proc *srv, uint64_t k, long pid, int port)
{
	struct gd_proc *c = rep__expected_client(r, srv, k);

	if (!c)
		return 1;
	if (!pid && !port)
		return gone_peer_answer(r, srv, k, c);
	if (pid)
		return c->pid == pid;
	if (port) {
		for (size_t i = 0; i < c->nports; i++)
			if (c->ports[i] == port)
				return same_connect(r, srv, k, c, c->port_ev[i]);
		for (size_t p = 0; p < r->nprocs; p++)
			for (size_t i = 0; i < r->procs[p].nports; i++)
				if (r->procs[p].ports[i] == port)
					return 0;
		return -1;
	}
	return 1;
}

/* The process whose connection this is in the replay (its pid, or a port it reported). */
static struct gd_proc *peer_proc(struct rep *r, long pid, int port)
{
	for (size_t p = 0; p < r->nprocs; p++) {
		if (pid && r->procs[p].pid == pid)
			return &r->procs[p];
		for (size_t i = 0; port && i < r->procs[p].nports; i++)
			if (r->procs[p].ports[i] == port)
				return &r->procs[p];
	}
	return NULL;
}

/* 1 when a process other than srv accepted a connection of c's when recorded: a listening
 * socket shared across fork, whose connection srv took from the queue in the replay.  The
 * accepts of the whole session are read once. */
static int accepted_elsewhere(struct rep *r, const struct gd_proc *srv, const struct gd_proc *c)
{
	struct ana_event ev;

	for (size_t p = 0; !r->acc_scanned && p < r->nprocs; p++) {
		struct gd_proc *q = &r->procs[p];

		for (uint64_t i = 1; q->ana >= 0 && i <= q->nevents; i++) {
			struct gd_proc *cl;

			if (ana_event_get(r->ana, (size_t)q->ana, i, &ev) != 0 ||
			    ev.kind != TRACE_EV_ACCEPT || ev.src_proc == ANA_NO_PROC ||
			    !(cl = rep__by_name(r, ana_proc_name(r->ana, ev.src_proc))))
				continue;
			if (!cl->acc_by[0])
				cl->acc_by[0] = q;
			else if (cl->acc_by[0] != q && !cl->acc_by[1])
				cl->acc_by[1] = q;
		}
	}
	r->acc_scanned = 1;
	return c && ((c->acc_by[0] && c->acc_by[0] != srv) || (c->acc_by[1] && c->acc_by[1] != srv));
}

/* A message with a descriptor attached. */
static int send_fd(int conn, uint32_t type, uint32_t flags, int fd)
{
	struct rep_msg m;
	size_t hdr = offsetof(struct rep_msg, text);
	struct iovec iov = { .iov_base = &m, .iov_len = hdr + 1 };
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
	                     .msg_controllen = sizeof(u.b) };

	memset(&m, 0, hdr + 1);
	memset(&u, 0, sizeof(u));
	m.type = type;
	m.flags = flags;
	CMSG_FIRSTHDR(&mh)->cmsg_level = SOL_SOCKET;
	CMSG_FIRSTHDR(&mh)->cmsg_type = SCM_RIGHTS;
	CMSG_FIRSTHDR(&mh)->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(CMSG_FIRSTHDR(&mh)), &fd, sizeof(int));
	return sendmsg(conn, &mh, MSG_NOSIGNAL) < 0 ? -1 : 0;
}

/* Give every held connection whose process waits for it at its accept (proto.h, HOLD). */
static void give_held(struct rep *r)
{
	for (size_t h = 0; h < r->nheld;) {
		struct gd_held *c = &r->held[h];
		int given = 0;

		for (size_t p = 0; p < r->nprocs && !given; p++) {
			struct gd_proc *q = &r->procs[p];

			if (!q->acc_wait || q->conn < 0 ||
			    accept_answer(r, q, q->acc_wait, c->pid, c->port) != 1)
				continue;
			send_fd(q->conn, REP_MSG_GO, 1, c->fd);
			q->acc_wait = 0;
			given = 1;
		}
		if (!given) {
			h++;
			continue;
		}
		close(c->fd);
		r->held[h] = r->held[--r->nheld];
	}
}

/* The answer to ACCEPTED: GO (the recorded peer), STOP (a later accept's: keep it) or STOP
 * with a = 1 (another process accepted it when recorded: hand it over). */
static void accept_reply(struct rep *r, struct gd_proc *srv, uint64_t k, int a, long pid, int port)
{
	if (srv->conn < 0)
		return;
	if (a != 0) {
		if (srv->acc_wait == k)
			srv->acc_wait = 0;
		rep_proto_send(srv->conn, REP_MSG_GO, 0, 0, 0, NULL);
		return;
	}
	rep_proto_send(srv->conn, REP_MSG_STOP,
	               accepted_elsewhere(r, srv, peer_proc(r, pid, port)), 0, 0, NULL);
}

static void on_accepted(struct rep *r, struct gd_proc *srv, uint64_t k, long pid, int port)
{
	int a = accept_answer(r, srv, k, pid, port);

	if (a < 0 && r->naccepts < sizeof(r->accepts) / sizeof(r->accepts[0])) {
		r->accepts[r->naccepts++] = (struct gd_accept){ srv, k, port };
		return;
	}
	accept_reply(r, srv, k, a, pid, port);
}

/* REP_MSG_SHAREFILE: the staging file DIR/.encore-replay/pipe.KEY.DIR (replayer/lc_chan.c),
 * opened for a process that may no longer (it changed user: exim's deliveries), made with its
 * header's room when it is new (made here, nobody writes into it before that). */
static void on_sharefile(struct rep *r, struct gd_proc *p, const struct rep_msg *m)
{
	static const char *const ext[] = { "out", "in", "sem" };
	char name[96];
	int fd = -1;

	if (r->cdir >= 0 && m->b >= 0 && m->b <= 2) {
		snprintf(name, sizeof(name), "pipe.%lld.%s", (long long)m->a, ext[m->b]);
		fd = openat(r->cdir, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd >= 0 && ftruncate(fd, REP_SHARE_HDR) != 0) {
			close(fd);
			unlinkat(r->cdir, name, 0);
			fd = -1;
		} else if (fd < 0 && errno == EEXIST) {
			fd = openat(r->cdir, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
		}
	}
	if (fd >= 0) {
		send_fd(p->conn, REP_MSG_GO, 0, fd);
		close(fd);
	} else {
		rep_proto_send(p->conn, REP_MSG_STOP, 0, 0, 0, NULL);
	}
}

/* HOLD: flags 1, a connection for another process (fd); flags 0, does the GD hold the
 * connection of accept event k?  (proto.h) */
static void on_hold(struct rep *r, struct gd_proc *p, const struct rep_msg *m, int *fd)
{
	if (m->flags & 1) {
		long pid;
		int port;

		if (*fd < 0 || r->nheld == sizeof(r->held) / sizeof(r->held[0]))
			return; /* (its process stalls, and the stall report says at which accept) */
		held_peer(*fd, &pid, &port);
		r->held[r->nheld++] = (struct gd_held){ *fd, pid, port };
		*fd = -1;
		give_held(r);
		return;
	}
	for (size_t h = 0; h < r->nheld; h++) {
		struct gd_held *c = &r->held[h];

		if (accept_answer(r, p, (uint64_t)m->a, c->pid, c->port) != 1)
			continue;
		send_fd(p->conn, REP_MSG_GO, 0, c->fd);
		close(c->fd);
		r->held[h] = r->held[--r->nheld];
		p->acc_wait = 0;
		return;
	}
	p->acc_wait = (uint64_t)m->a;
	rep_proto_send(p->conn, REP_MSG_STOP, 0, 0, 0, NULL);
}

/* REP_MSG_DGRAM: matched datagrams are receives of the model with their send as source
 * (analyzer/dgram.c). */
static int dgram_recorded(struct rep *r, struct gd_proc *p, uint64_t k)
{
	struct ana_event ev;

	return p->ana >= 0 && ana_event_get(r->ana, (size_t)p->ana, k, &ev) == 0 &&
	       ev.kind == TRACE_EV_RECV && ev.src_proc != ANA_NO_PROC;
}

/* A connect's local port, reported by its LC after every connect call that ended connected
 * (a non-blocking connect reports twice: at its EINPROGRESS and once connected).  Kept once,
 * in the latest process to report it (the kernel reuses ports: an old entry elsewhere would
 * name the wrong client), and only the latest connects' (a load generator's hundreds of
 * connections filled the list, ab's 33rd went unknown, and the server's accept waited for
 * it for ever). */
static void note_port(struct rep *r, struct gd_proc *p, int port, uint64_t ev)
{
	const size_t cap = sizeof(p->ports) / sizeof(p->ports[0]);

	for (size_t q = 0; q < r->nprocs; q++) {
		struct gd_proc *o = &r->procs[q];

		for (size_t i = 0; i < o->nports; i++)
			if (o->ports[i] == port) {
				memmove(&o->ports[i], &o->ports[i + 1], (o->nports - i - 1) * sizeof(int));
				memmove(&o->port_ev[i], &o->port_ev[i + 1],
				        (o->nports - i - 1) * sizeof(uint64_t));
				o->nports--;
				break;
			}
	}
	if (p->nports == cap) {
		memmove(&p->ports[0], &p->ports[1], (cap - 1) * sizeof(int));
		memmove(&p->port_ev[0], &p->port_ev[1], (cap - 1) * sizeof(uint64_t));
		p->nports--;
	}
	p->port_ev[p->nports] = ev;
	p->ports[p->nports++] = port;
}

static void on_connected(struct rep *r, struct gd_proc *p, int port, uint64_t ev)
{
	if (port)
		note_port(r, p, port, ev);
	for (size_t i = 0; i < r->naccepts;) {
		struct gd_accept *a = &r->accepts[i];
		int ans = accept_answer(r, a->server, a->k, 0, a->port);

		if (ans < 0) {
			i++;
			continue;
		}
		accept_reply(r, a->server, a->k, ans, 0, a->port);
		r->accepts[i] = r->accepts[--r->naccepts];
	}
	give_held(r); /* a held connection's peer may be known now */
}

/* What the old image of p sent before its exec and the GD has not read yet (a warning): its
 * process's messages still, read before its connection goes among the pending ones, which
 * have no process.  A divergence is left there (it ends the replay from there). */
static void drain_old_image(struct rep *r, struct gd_proc *p)
{
	struct rep_msg m;
	struct gd_proc *q = p;
	int fd = p->conn, outcome = -1;

	while (p->conn == fd && recv(fd, &m, sizeof(m), MSG_PEEK | MSG_DONTWAIT) >=
	                        (long)offsetof(struct rep_msg, text) &&
	       m.type != REP_MSG_DIVERGED && m.type != REP_MSG_HELLO &&
	       rep__handle(r, fd, &q, &outcome) == 0)
		;
}

/* HELLO: a new image (a root, a forked child, after exec) binds its connection to its
 * process, and gets CONFIG: its slot, its target (offline) or floor (online), its simple
 * predicate and the channels of its peers.  0, or 1 when fd stays pending. */
static int on_hello(struct rep *r, int fd, struct rep_msg *m, struct gd_proc **pp)
{
	struct gd_proc *p;
	char text[2100];

	if (m->flags & 1) {
		/* a child of m->text started inside libc: the K-th is PARENT.sK */
		struct gd_proc *par = rep__by_name(r, m->text);
		char name[TRACE_NAME_MAX + 16];
		uint32_t k = par ? ++par->spawns : 1;

		snprintf(name, sizeof(name), "%.100s.s%u", m->text, k);
		rep_proto_send(fd, REP_MSG_NAME, 0, 0, 0, name);
		snprintf(m->text, sizeof(m->text), "%s", name);
	}
	p = rep__by_name(r, m->text);
	if (p && p->conn >= 0 && p->pid == (long)m->a &&
	    r->npending < sizeof(r->pending) / sizeof(r->pending[0])) {
		/* the same process after exec: its new image's LC replaces the old one, whose
		 * connection is closed when its end arrives */
		drain_old_image(r, p);
		if (p->conn >= 0)
			r->pending[r->npending++] = p->conn;
		p->conn = -1;
	}
	if (!p || p->conn >= 0) {
		/* A process the recording does not have: it will report its divergence. */
		rep_proto_send(fd, REP_MSG_CONFIG, REP_SLOTS_MAX - 1, (int64_t)REP_NO_TARGET, 0, NULL);
		return 1;
	}
	*pp = p;
	p->conn = fd;
	p->pid = (long)m->a;
	if (r->board)
		r->board[p - r->procs].pid = (int32_t)m->a; /* before CONFIG: for translation */
	p->started = 1;
	p->execing = 0;
	p->gone = 0;
	/* (a record separator alone: no predicate, but keep the counters from the start) */
	snprintf(text, sizeof(text), "%s%s%s", p->sp_text,
	         p->peers[0] || p->lp_named || r->opt.live_terms ? "\x1e" : "", p->peers);
	rep__send_traces(r, p, fd);
	if (r->mode == GD_OFFLINE)
		rep_proto_send(fd, REP_MSG_CONFIG, p - r->procs, (int64_t)p->target, 0, text);
	else
		rep_proto_send(fd, REP_MSG_CONFIG, p - r->procs, (int64_t)rep__start_floor(r, p),
		               REP_CF_ONLINE, text);
	return 0;
}

/* HALTED: where, why, its backtrace and the values of its predicate's terms. */
static void on_halted_msg(struct rep *r, struct gd_proc *p, struct rep_msg *m)
{
	char *sep = strchr(m->text, '\x1e');

	p->halted = 1;
	p->index = (uint64_t)m->a;
	p->reason = (uint32_t)m->b;
	free(p->backtrace);
	free(p->terms);
	p->terms = strdup(sep ? sep + 1 : "");
	if (sep)
		*sep = '\0';
	p->backtrace = strdup(m->text);
	p->bt_resolved = 0;
	if (r->mode != GD_OFFLINE)
		rep__on_halted(r, p);
}

/* DONE: the process ends (its state index, whether its predicate holds at the end, whether
 * it runs on free until killed, as when recorded). */
static void on_done(struct rep *r, struct gd_proc *p, const struct rep_msg *m)
{
	p->done = 1;
	p->index = (uint64_t)m->a;
	p->sp_at_end = (m->flags & 1) != 0;
	p->free_running = (m->flags & 2) != 0;
	if (r->mode == GD_MARKERS && p->sp_at_end && !r->fired)
		r->fired = p;
	if (r->mode == GD_MARKERS)
		rep__release_markers(r, p);
}

/* One message from a connection; returns 0, or -1 when the connection ended. */
int rep__handle(struct rep *r, int fd, struct gd_proc **pp, int *outcome)
{
	struct rep_msg m;
	struct gd_proc *p = *pp;
	int pfd;
	long n = recv_msg(fd, &m, &pfd);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n < 0) {
		if (p && p->conn == fd) {
			p->gone = !p->execing;
			p->conn = -1;
			p->acc_wait = 0;
		}
		close(fd);
		rep__note_change(r);
		return -1;
	}
	rep__note_change(r);
	if (p && m.type != REP_MSG_EXEC && m.type != REP_MSG_HELLO && p->conn == fd)
		p->execing = 0; /* the exec failed: the same image goes on */
	if (pfd >= 0 && (m.type != REP_MSG_HOLD || !p)) {
		close(pfd); /* only HOLD carries a descriptor */
		pfd = -1;
	}
	if (m.type == REP_MSG_HELLO) {
		on_hello(r, fd, &m, pp);
		return 0;
	}
	if (m.type == REP_MSG_DIVERGED) {
		if (m.flags & REP_DIVERGED_PRED) {
			snprintf(r->message, sizeof(r->message), "the halting predicate: %s", m.text);
			*outcome = REP_BAD_PREDICATE;
			return 0;
		}
		snprintf(r->message, sizeof(r->message), "divergence: %s", m.text);
		*outcome = REP_DIVERGED;
		return 0;
	}
	if (!p)
		return 0;
	switch (m.type) {
	case REP_MSG_WARN: {
		size_t wl = strlen(r->warnings);

		if (wl + strlen(p->name) + strlen(m.text) + 5 < sizeof(r->warnings))
			snprintf(r->warnings + wl, sizeof(r->warnings) - wl, "%s%s: %s", wl ? "; " : "",
			         p->name, m.text);
		break;
	}
	case REP_MSG_REQ:
		rep__on_request(r, p, (uint64_t)m.a);
		break;
	case REP_MSG_EXEC:
		p->execing = 1;
		break;
	case REP_MSG_CONNECTED:
		on_connected(r, p, (int)m.a, (uint64_t)m.b);
		break;
	case REP_MSG_ACCEPTED:
		on_accepted(r, p, (uint64_t)m.a, (long)m.b, (int)m.flags);
		break;
	case REP_MSG_HOLD:
		on_hold(r, p, &m, &pfd);
		if (pfd >= 0)
			close(pfd);
		break;
	case REP_MSG_SHAREFILE:
		on_sharefile(r, p, &m);
		break;
	case REP_MSG_DGRAM:
		rep_proto_send(p->conn, dgram_recorded(r, p, (uint64_t)m.a) ? REP_MSG_GO : REP_MSG_STOP,
		               0, 0, 0, NULL);
		break;
	case REP_MSG_HALTED:
		on_halted_msg(r, p, &m);
		break;
	case REP_MSG_DONE:
		on_done(r, p, &m);
		break;
	case REP_MSG_TRACED:
		rep__on_traced(r, p, &m);
		break;
	}
	return 0;
}

const char *rep_warnings(const struct rep *r)
{
	return r->warnings[0] ? r->warnings : NULL;
}
