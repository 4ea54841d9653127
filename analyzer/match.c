/*
 * match.c: channel matching and message edges (docs/design.md, "Analyze"; analyzer/README.md).
 *
 * Each (process, local channel id) is an end record.  Records are merged across fork and
 * exec with the ids a child says it inherited (same numeric ids as in the parent), then the
 * merged ends are paired with their peers from what both sides logged, and never from
 * timestamps:
 *   - pipe(2)/socketpair(2): the two ends come from one PIPE event;
 *   - sockets with both inodes known (socketpair, Unix): this end's inode is the other's
 *     peer inode;
 *   - TCP: one side's (local, peer) address pair is the other's (peer, local); loopback
 *     addresses only match on the same host;
 *   - Unix stream sockets: the client's peer path is the server's bound path, and each side's
 *     SO_PEERCRED pid is the other's pid when known (the client's names the process that
 *     listened, the accepting one or an ancestor of it: a prefork server);
 *   - named pipes: one writer and one reader end with the same inode on one host.
 * An end with no recorded peer is external: its receives are external input.
 *
 * A receive depends on the send that produced its last byte: the reader derives byte offsets
 * per direction (continuing across fork and exec), and the send containing offset+len-1 is
 * found by binary search among the sends of the peer end.
 *
 * What is matched or linked here is the analyzer's model: a change to it bumps
 * ANA_MODEL_VERSION (ana.h), so that SQL caches made before are rebuilt.
 */
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "ana_internal.h"

static uint32_t uf_find(struct ana_session *s, uint32_t e)
{
	uint32_t r = e;

	while (s->ends[r].uf != r)
		r = s->ends[r].uf;
	while (s->ends[e].uf != r) {
		uint32_t n = s->ends[e].uf;

		s->ends[e].uf = r;
		e = n;
	}
	return r;
}

static void fill_missing(struct trace_endpoint *dst, const struct trace_endpoint *src)
{
	if (!dst->type)
		dst->type = src->type;
	if (!dst->dir)
		dst->dir = src->dir;
	if (!dst->inode)
		dst->inode = src->inode;
	if (!dst->peer_inode)
		dst->peer_inode = src->peer_inode;
	if (!dst->peer_pid)
		dst->peer_pid = src->peer_pid;
	if (!dst->local_len && src->local_len) {
		memcpy(dst->local, src->local, src->local_len);
		dst->local_len = src->local_len;
	}
	if (!dst->peer_len && src->peer_len) {
		memcpy(dst->peer, src->peer, src->peer_len);
		dst->peer_len = src->peer_len;
	}
}

/* The child's end becomes the parent's: the parent's record is the root, so the object keeps
 * what the creating process logged, completed by what the child logged. */
static void uf_union(struct ana_session *s, uint32_t child, uint32_t parent)
{
	uint32_t a = uf_find(s, child), b = uf_find(s, parent);

	if (a == b)
		return;
	s->ends[a].uf = b;
	if (s->ends[a].has_ep) {
		fill_missing(&s->ends[b].ep, &s->ends[a].ep);
		s->ends[b].has_ep = 1;
	}
	if (!s->ends[b].pipe_dir)
		s->ends[b].pipe_dir = s->ends[a].pipe_dir;
}

static void pair(struct ana_session *s, uint32_t a, uint32_t b)
{
	s->ends[a].peer = b;
	s->ends[b].peer = a;
}

static const char *host_of(const struct ana_session *s, uint32_t end)
{
	return s->procs[s->ends[end].proc].host_id;
}

static int same_host(const struct ana_session *s, uint32_t a, uint32_t b)
{
	return strcmp(host_of(s, a), host_of(s, b)) == 0;
}

/* A canonical text for a sockaddr: "4:ADDR:PORT", "6:ADDR:PORT", "u:PATH".  *loopback says
 * whether the address only means something on its own host.  Returns 0 when unknown. */
static int addr_key(const uint8_t *sa, uint32_t len, char *out, size_t cap, int *loopback)
{
	sa_family_t fam;

	*loopback = 0;
	if (len < sizeof(sa_family_t))
		return 0;
	memcpy(&fam, sa, sizeof(fam));
	if (fam == AF_INET && len >= sizeof(struct sockaddr_in)) {
		struct sockaddr_in in;

		memcpy(&in, sa, sizeof(in));
		uint32_t a = ntohl(in.sin_addr.s_addr);
		*loopback = (a >> 24) == 127;
		snprintf(out, cap, "4:%08x:%u", a, ntohs(in.sin_port));
		return 1;
	}
	if (fam == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		struct sockaddr_in6 in6;
		char *p = out;

		memcpy(&in6, sa, sizeof(in6));
		*loopback = IN6_IS_ADDR_LOOPBACK(&in6.sin6_addr) || IN6_IS_ADDR_LINKLOCAL(&in6.sin6_addr);
		p += snprintf(p, cap, "6:");
		for (int i = 0; i < 16 && (size_t)(p - out) + 3 < cap; i++)
			p += snprintf(p, cap - (size_t)(p - out), "%02x", in6.sin6_addr.s6_addr[i]);
		snprintf(p, cap - (size_t)(p - out), ":%u", ntohs(in6.sin6_port));
		return 1;
	}
	if (fam == AF_UNIX) {
		size_t n = len - offsetof(struct sockaddr_un, sun_path);
		const uint8_t *path = sa + offsetof(struct sockaddr_un, sun_path);
		size_t i;

		*loopback = 1;
		if (n == 0 || (path[0] == 0 && n == 1))
			return 0; /* unnamed */
		out[0] = 'u';
		out[1] = ':';
		for (i = 0; i < n && i + 3 < cap; i++)
			out[2 + i] = path[i] ? (char)path[i] : (i == 0 ? '@' : '\0');
		out[2 + i] = '\0';
		return out[2] != '\0';
	}
	return 0;
}

struct tcpkey {
	char key[224]; /* host (64) | local (72) | peer (72) */
	uint32_t end;
};

static int cmp_tcpkey(const void *a, const void *b)
{
	const struct tcpkey *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : (x->end < y->end ? -1 : x->end > y->end);
}

static int tcp_key(const struct ana_session *s, uint32_t e, int mirrored, char *out, size_t cap)
{
	const struct trace_endpoint *ep = &s->ends[e].ep;
	char l[72], p[72];
	int ll, pl;

	if (!addr_key(ep->local, ep->local_len, l, sizeof(l), &ll) ||
	    !addr_key(ep->peer, ep->peer_len, p, sizeof(p), &pl))
		return 0;
	/* loopback 4-tuples are only unique per host */
	snprintf(out, cap, "%s|%s|%s", (ll || pl) ? host_of(s, e) : "",
	         mirrored ? p : l, mirrored ? l : p);
	return 1;
}

static int match_tcp(struct ana_session *s, const uint32_t *roots, size_t nroots)
{
	struct tcpkey *v = calloc(nroots ? nroots : 1, sizeof(*v)), probe;
	size_t n = 0, i;

	if (!v)
		return TRACE_ENOMEM;
	for (i = 0; i < nroots; i++) {
		uint32_t e = roots[i];

		if (s->ends[e].peer != ANA_NONE || !s->ends[e].has_ep ||
		    (s->ends[e].ep.type != TRACE_CHAN_TCP && s->ends[e].ep.type != TRACE_CHAN_UNKNOWN))
			continue;
		if (tcp_key(s, e, 0, v[n].key, sizeof(v[n].key)))
			v[n++].end = e;
	}
	qsort(v, n, sizeof(*v), cmp_tcpkey);
	for (i = 0; i < n; i++) {
		uint32_t e = v[i].end;
		size_t lo = 0, hi = n;

		if (s->ends[e].peer != ANA_NONE || !tcp_key(s, e, 1, probe.key, sizeof(probe.key)))
			continue;
		/* the first entry with the mirrored key, then the first unpaired among equals:
		 * a reused port pairs in creation order */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (strcmp(v[mid].key, probe.key) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < n && strcmp(v[lo].key, probe.key) == 0; lo++) {
			uint32_t f = v[lo].end;

			if (f != e && s->ends[f].peer == ANA_NONE) {
				pair(s, e, f);
				break;
			}
		}
	}
	free(v);
	return 0;
}

static void match_inodes(struct ana_session *s, const uint32_t *roots, size_t nroots)
{
	/* Quadratic in the ends that carry both inodes; those are socketpairs and Unix sockets
	 * split across processes, few per session. */
	for (size_t i = 0; i < nroots; i++) {
		uint32_t a = roots[i];
		const struct trace_endpoint *ea = &s->ends[a].ep;

		if (s->ends[a].peer != ANA_NONE || !ea->inode || !ea->peer_inode ||
		    ea->type == TRACE_CHAN_PIPE)
			continue;
		for (size_t j = i + 1; j < nroots; j++) {
			uint32_t b = roots[j];
			const struct trace_endpoint *eb = &s->ends[b].ep;

			if (s->ends[b].peer == ANA_NONE && eb->inode == ea->peer_inode &&
			    (!eb->peer_inode || eb->peer_inode == ea->inode) && same_host(s, a, b)) {
				pair(s, a, b);
				break;
			}
		}
	}
}

static int unix_path(const struct ana_session *s, uint32_t e, int peer, char *out, size_t cap)
{
	const struct trace_endpoint *ep = &s->ends[e].ep;
	int lb;

	if (ep->type != TRACE_CHAN_UNIX)
		return 0;
	return peer ? addr_key(ep->peer, ep->peer_len, out, cap, &lb)
	            : addr_key(ep->local, ep->local_len, out, cap, &lb);
}

/* The client's SO_PEERCRED pid names the process that called listen(), not the one that
 * accepted: in a prefork server (a listening socket shared across fork) that is the accepting
 * process or one of its ancestors. */
static int listener_of(struct ana_session *s, uint32_t proc, int64_t pid)
{
	int p = (int)proc;

	for (size_t depth = 0; p >= 0 && (size_t)p < s->nprocs && depth < 64; depth++) {
		if (s->procs[p].pid == pid)
			return 1;
		if (!s->procs[p].parent || !s->procs[p].parent[0])
			break;
		p = ana_proc_find(s, s->procs[p].parent);
	}
	return 0;
}

static void match_unix(struct ana_session *s, const uint32_t *roots, size_t nroots,
                       const uint8_t *active)
{
	char cp[160], sp[160], cl[160];

	for (size_t i = 0; i < nroots; i++) {
		uint32_t c = roots[i];
		const struct trace_endpoint *ec = &s->ends[c].ep;

		/* c is a client: it names the server's path as its peer and has no name itself */
		if (s->ends[c].peer != ANA_NONE || !active[i] || !unix_path(s, c, 1, cp, sizeof(cp)) ||
		    unix_path(s, c, 0, cl, sizeof(cl)))
			continue;
		for (size_t j = 0; j < nroots; j++) {
			uint32_t v = roots[j];
			const struct trace_endpoint *ev = &s->ends[v].ep;

			if (j == i || s->ends[v].peer != ANA_NONE || !active[j] || !same_host(s, c, v) ||
			    !unix_path(s, v, 0, sp, sizeof(sp)) || strcmp(cp, sp) != 0)
				continue;
			if (ec->peer_pid && s->procs[s->ends[v].proc].pid &&
			    !listener_of(s, s->ends[v].proc, ec->peer_pid))
				continue;
			if (ev->peer_pid && s->procs[s->ends[c].proc].pid &&
			    ev->peer_pid != s->procs[s->ends[c].proc].pid)
				continue;
			pair(s, c, v);
			break;
		}
	}
}

static void match_fifos(struct ana_session *s, const uint32_t *roots, size_t nroots)
{
	for (size_t i = 0; i < nroots; i++) {
		uint32_t w = roots[i], r = ANA_NONE;
		int nr = 0, nw = 0;

		if (s->ends[w].peer != ANA_NONE || s->ends[w].ep.type != TRACE_CHAN_PIPE ||
		    s->ends[w].pipe_dir != 2 || !s->ends[w].ep.inode)
			continue;
		for (size_t j = 0; j < nroots; j++) {
			uint32_t x = roots[j];

			if (s->ends[x].ep.type != TRACE_CHAN_PIPE ||
			    s->ends[x].ep.inode != s->ends[w].ep.inode || !same_host(s, w, x))
				continue;
			if (s->ends[x].pipe_dir == 1) {
				nr++;
				r = x;
			} else if (s->ends[x].pipe_dir == 2) {
				nw++;
			}
		}
		/* several writers or readers of one pipe: their per-process offsets cannot be
		 * interleaved, so leave it unmatched rather than guess */
		if (nr == 1 && nw == 1 && s->ends[r].peer == ANA_NONE)
			pair(s, w, r);
	}
}

static int cmp_sendref(const void *a, const void *b)
{
	const struct ana_sendref *x = a, *y = b;

	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return x->proc < y->proc ? -1 : x->proc > y->proc;
}

int64_t ana__find_send(const struct ana_sendref *v, uint64_t n, uint64_t byte)
{
	uint64_t lo = 0, hi = n;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (v[mid].offset + v[mid].len <= byte)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && v[lo].offset <= byte && byte < v[lo].offset + v[lo].len)
		return (int64_t)lo;
	return -1;
}

static uint64_t moved(const struct ana_ev *e)
{
	return e->result > 0 ? (uint64_t)e->result : 0;
}

/* 6b. ends read by several processes (a pipe inherited by forked workers that all read it):
 * each reader's offsets count only its own bytes, so two readers' ranges overlap when they
 * read at the same time, and which writer's bytes each one got is not in the traces (the
 * kernel decided it, often under a lock the recorder does not see).  Such an end's receives
 * are left unlinked (ambiguous 8) rather than linked to the send at their per-process offset,
 * which would be a dependence that did not exist.  A reader that took over from another (a
 * parent that read, then forked a child that went on alone) continues the offsets: no
 * overlap, still linked.  A peek takes nothing: it overlaps no one. */
static int mark_shared_readers(struct ana_session *s)
{
	uint64_t n = 0, *cnt;
	struct ana_sendref *v;

	for (size_t p = 0; p < s->nprocs; p++)
		for (uint64_t k = 0; k < s->procs[p].n; k++) {
			const struct ana_ev *e = &s->procs[p].ev[k];

			if (e->kind == TRACE_EV_RECV && e->end != ANA_NONE && moved(e) &&
			    !(e->flags & TRACE_FL_PEEK) && (s->ends[e->end].ambiguous & 2))
				n++;
		}
	if (!n)
		return 0;
	cnt = calloc(s->nends + 1, sizeof(*cnt));
	v = malloc(n * sizeof(*v));
	if (!cnt || !v) {
		free(cnt);
		free(v);
		return TRACE_ENOMEM;
	}
	/* bucket the receives by end (counting sort), then sort each end's by offset */
	for (size_t p = 0; p < s->nprocs; p++)
		for (uint64_t k = 0; k < s->procs[p].n; k++) {
			const struct ana_ev *e = &s->procs[p].ev[k];

			if (e->kind == TRACE_EV_RECV && e->end != ANA_NONE && moved(e) &&
			    !(e->flags & TRACE_FL_PEEK) && (s->ends[e->end].ambiguous & 2))
				cnt[e->end + 1]++;
		}
	for (size_t i = 0; i < s->nends; i++)
		cnt[i + 1] += cnt[i];
	for (size_t p = 0; p < s->nprocs; p++)
		for (uint64_t k = 0; k < s->procs[p].n; k++) {
			const struct ana_ev *e = &s->procs[p].ev[k];
			struct ana_sendref *x;

			if (e->kind != TRACE_EV_RECV || e->end == ANA_NONE || !moved(e) ||
			    (e->flags & TRACE_FL_PEEK) || !(s->ends[e->end].ambiguous & 2))
				continue;
			x = &v[cnt[e->end]++];
			x->offset = e->offset;
			x->len = moved(e);
			x->proc = (uint32_t)p;
			x->idx = (uint32_t)(k + 1);
		}
	/* cnt[i] is now the end of end i's bucket, cnt[i - 1] its start */
	for (size_t i = 0; i < s->nends; i++) {
		uint64_t lo = i ? cnt[i - 1] : 0, hi = cnt[i], reach = 0;

		if (hi - lo < 2)
			continue;
		qsort(v + lo, hi - lo, sizeof(*v), cmp_sendref);
		/* one process's own ranges never overlap, so any range starting before the
		 * furthest end seen so far overlaps another process's */
		for (uint64_t j = lo; j < hi; j++) {
			if (j > lo && v[j].offset < reach) {
				s->ends[i].ambiguous |= 8;
				break;
			}
			if (v[j].offset + v[j].len > reach)
				reach = v[j].offset + v[j].len;
		}
	}
	free(cnt);
	free(v);
	return 0;
}

int ana__kept_channel(struct ana_session *s, uint32_t p, const struct trace_chan_def *d)
{
	uint32_t e, o;
	int rc;

	if ((rc = ana__end_get(s, p, d->channel, &e)))
		return rc;
	if (d->has_ep) {
		/* what the kept events say of the end came later and wins */
		fill_missing(&s->ends[e].ep, &d->ep);
		s->ends[e].has_ep = 1;
		if (d->ep.type == TRACE_CHAN_PIPE && !s->ends[e].pipe_dir)
			s->ends[e].pipe_dir = (uint8_t)d->ep.dir;
	}
	if (d->pipe_other) {
		if ((rc = ana__end_get(s, p, d->pipe_other, &o)))
			return rc;
		s->ends[e].pipe_other = o;
		s->ends[o].pipe_other = e;
	}
	return 0;
}

/* 1. fork/exec inheritance: an inherited channel id is the parent's end. */
static int link_inherited(struct ana_session *s)
{
	for (size_t p = 0; p < s->nprocs; p++) {
		struct ana_proc *pr = &s->procs[p];
		int q, rc;

		if (!pr->ninherited)
			continue;
		q = pr->parent[0] ? ana_proc_find(s, pr->parent) : -1;
		if (q < 0) {
			ana__warn(s, "%s inherited %zu channels from %s, which is not in the session: "
			          "they are external", pr->name, pr->ninherited,
			          pr->parent[0] ? pr->parent : "its parent");
			continue;
		}
		for (size_t i = 0; i < pr->ninherited; i++) {
			uint32_t c, par;

			if ((rc = ana__end_get(s, (uint32_t)p, pr->inherited[i], &c)) ||
			    (rc = ana__end_get(s, (uint32_t)q, pr->inherited[i], &par)))
				return rc;
			uf_union(s, c, par);
		}
	}
	return 0;
}

/* 1b. A socket first met open in a process whose ancestor had it (the same inode): a child
 * that libc started (system, popen, posix_spawn: its recorder did not see the fork, so its
 * channels are new ids, not inherited) reading the socketpair end or connection its parent
 * made.  The same kernel socket: the same end object, so that the parent's pairing (the
 * socketpair event, the accepted connection) covers the child's reads and writes (socat's
 * SYSTEM children, varnish's system() child: their messages were unmatched).  Sockets only:
 * a pipe's two ends share one inode. */
static int sock_type(const struct ana_end *e)
{
	return e->has_ep && e->ep.inode &&
	       (e->ep.type == TRACE_CHAN_TCP || e->ep.type == TRACE_CHAN_UNIX ||
	        e->ep.type == TRACE_CHAN_SOCKETPAIR);
}

/* A child libc started: its recorder named it PARENT.sK (recorder/README.md). */
static int libc_child(const char *name)
{
	const char *dot = strrchr(name, '.');

	if (!dot || dot[1] != 's' || !dot[2])
		return 0;
	for (const char *c = dot + 2; *c; c++)
		if (*c < '0' || *c > '9')
			return 0;
	return 1;
}

static void link_same_inode(struct ana_session *s)
{
	uint32_t *first = NULL, *byproc = NULL, *fill = NULL, n = 0;
	int any = 0;

	for (size_t p = 0; p < s->nprocs && !any; p++)
		any = libc_child(s->procs[p].name);
	if (!any)
		return;
	/* the socket ends of each process, so that a child looks only at its ancestors' */
	first = calloc(s->nprocs + 1, sizeof(*first));
	if (first)
		for (uint32_t e = 0; e < s->nends; e++)
			if (sock_type(&s->ends[e]) && s->ends[e].proc < s->nprocs) {
				first[s->ends[e].proc + 1]++;
				n++;
			}
	/* fill: per process while sorting, then per end of one process (below): room for both */
	if (first && n)
		fill = calloc((s->nprocs > n ? s->nprocs : n) + 1, sizeof(*fill));
	if (!first || !fill || !n || !(byproc = malloc(n * sizeof(*byproc)))) {
		free(first); /* (out of memory: left unlinked, as before) */
		free(fill);
		return;
	}
	for (size_t p = 0; p < s->nprocs; p++)
		first[p + 1] += first[p];
	for (uint32_t e = 0; e < s->nends; e++)
		if (sock_type(&s->ends[e]) && s->ends[e].proc < s->nprocs) {
			uint32_t p = s->ends[e].proc;

			byproc[first[p] + fill[p]++] = e;
		}
	for (size_t p = 0; p < s->nprocs; p++) {
		int q;

		if (!libc_child(s->procs[p].name) || first[p] == first[p + 1])
			continue;
		q = s->procs[p].parent[0] ? ana_proc_find(s, s->procs[p].parent) : -1;
		/* the nearest ancestor's end of each inode (a few generations at most); fill[]
		 * is reused to mark the ends linked */
		for (uint32_t i = first[p]; i < first[p + 1]; i++)
			fill[i - first[p]] = 0;
		for (int depth = 0; q >= 0 && depth < 8; depth++) {
			for (uint32_t i = first[p]; i < first[p + 1]; i++) {
				uint32_t e = byproc[i];

				for (uint32_t j = first[q]; j < first[q + 1] && !fill[i - first[p]]; j++) {
					uint32_t f = byproc[j];

					if (s->ends[f].ep.inode == s->ends[e].ep.inode && same_host(s, e, f)) {
						uf_union(s, e, f);
						fill[i - first[p]] = 1;
					}
				}
			}
			q = s->procs[q].parent[0] ? ana_proc_find(s, s->procs[q].parent) : -1;
		}
	}
	free(first);
	free(fill);
	free(byproc);
}

/* 2. pipes and socketpairs: paired by the event that made them. */
static void pair_pipes(struct ana_session *s)
{
	for (size_t i = 0; i < s->nends; i++) {
		uint32_t o = s->ends[i].pipe_other, a, b;

		if (o == ANA_NONE || o < i)
			continue;
		a = uf_find(s, (uint32_t)i);
		b = uf_find(s, o);
		if (a != b && s->ends[a].peer == ANA_NONE && s->ends[b].peer == ANA_NONE)
			pair(s, a, b);
	}
}

/* 3. the root end objects, and which of them moved bytes (active[] by root number);
 * rootactive is scratch, one byte per end. */
static size_t list_roots(struct ana_session *s, uint32_t *roots, uint8_t *active,
                         uint8_t *rootactive)
{
	size_t nroots = 0;

	for (size_t p = 0; p < s->nprocs; p++) {
		struct ana_proc *pr = &s->procs[p];

		for (uint64_t k = 0; k < pr->n; k++) {
			struct ana_ev *e = &pr->ev[k];

			if ((e->kind == TRACE_EV_SEND || e->kind == TRACE_EV_RECV) && e->end != ANA_NONE)
				rootactive[uf_find(s, e->end)] = 1;
		}
	}
	for (size_t i = 0; i < s->nends; i++) {
		if (s->ends[i].uf == i) {
			active[nroots] = rootactive[i];
			roots[nroots++] = (uint32_t)i;
		}
	}
	return nroots;
}

/* 5. every send and receive names its end object; who writes and reads each one; cnt[end]
 * counts the sends that moved bytes. */
static void assign_ends(struct ana_session *s, uint64_t *cnt)
{
	for (size_t p = 0; p < s->nprocs; p++) {
		struct ana_proc *pr = &s->procs[p];

		pr->sends = pr->recvs = 0;
		for (uint64_t k = 0; k < pr->n; k++) {
			struct ana_ev *e = &pr->ev[k];
			struct ana_end *r;

			if (e->end == ANA_NONE)
				continue;
			e->end = uf_find(s, e->end);
			if (e->kind != TRACE_EV_SEND && e->kind != TRACE_EV_RECV)
				continue;
			r = &s->ends[e->end];
			if (!moved(e))
				continue;
			if (e->kind == TRACE_EV_SEND) {
				pr->sends++;
				cnt[e->end]++;
				if (r->writer == ANA_NONE)
					r->writer = (uint32_t)p;
				else if (r->writer != p)
					r->ambiguous |= 1;
			} else {
				pr->recvs++;
				if (r->reader == ANA_NONE)
					r->reader = (uint32_t)p;
				else if (r->reader != p)
					r->ambiguous |= 2;
			}
		}
	}
}

/* 6. the sends of each end object sorted by offset.  Offsets continue across fork and
 * exec, so a parent that hands a socket to its child gives one ordered stream; writers
 * that really wrote at the same time overlap, and their messages cannot be told apart. */
static int sort_sends(struct ana_session *s, const uint64_t *cnt)
{
	free(s->sendrefs);
	s->nsendrefs = 0;
	for (size_t i = 0; i < s->nends; i++) {
		s->ends[i].firstsend = s->nsendrefs;
		s->ends[i].nsends = 0;
		s->nsendrefs += cnt[i];
	}
	s->sendrefs = malloc((s->nsendrefs ? s->nsendrefs : 1) * sizeof(*s->sendrefs));
	if (!s->sendrefs)
		return TRACE_ENOMEM;
	for (size_t p = 0; p < s->nprocs; p++) {
		struct ana_proc *pr = &s->procs[p];

		for (uint64_t k = 0; k < pr->n; k++) {
			struct ana_ev *e = &pr->ev[k];
			struct ana_end *r;
			struct ana_sendref *sr;

			if (e->kind != TRACE_EV_SEND || e->end == ANA_NONE || !moved(e))
				continue;
			r = &s->ends[e->end];
			sr = &s->sendrefs[r->firstsend + r->nsends++];
			sr->offset = e->offset;
			sr->len = moved(e);
			sr->proc = (uint32_t)p;
			sr->idx = (uint32_t)(k + 1);
			e->src_proc = ANA_NONE; /* a send's src_* is its first dependent receive */
		}
	}
	for (size_t i = 0; i < s->nends; i++) {
		struct ana_end *r = &s->ends[i];
		struct ana_sendref *v = s->sendrefs + r->firstsend;

		if (r->nsends < 2)
			continue;
		if (r->ambiguous & 1)
			qsort(v, r->nsends, sizeof(*v), cmp_sendref);
		for (uint64_t j = 1; j < r->nsends; j++)
			if (v[j].offset < v[j - 1].offset + v[j - 1].len)
				r->ambiguous |= 4;
	}
	return 0;
}

/* The process's oldest events were dropped by the disk budget: its trace begins with the
 * placeholders load.c puts in their place. */
static int proc_dropped(const struct ana_session *s, uint32_t p)
{
	return s->procs[p].n && s->procs[p].ev[0].kind == TRACE_EV_NONE;
}

/* Whether the send of `byte` on end object w fell in events the disk budget dropped: the
 * writing process's trace was cut so and its first kept send on w comes after that byte. */
static int send_dropped(const struct ana_session *s, uint32_t w, uint64_t byte)
{
	const struct ana_end *r = &s->ends[w];

	if (!proc_dropped(s, r->writer != ANA_NONE ? r->writer : r->proc))
		return 0;
	return !r->nsends || byte < s->sendrefs[r->firstsend].offset;
}

/* 7. receive k of p (0-based) to the send of its last byte.  Returns 1 when its peer is
 * recorded but no send can be named (warned[] says which ends were reported already), 2
 * when that send was dropped by the disk budget. */
static int link_receive(struct ana_session *s, size_t p, uint64_t k, uint8_t *warned)
{
	struct ana_ev *e = &s->procs[p].ev[k];
	const struct ana_sendref *sr;
	struct ana_ev *se;
	uint32_t r, w;
	int64_t j;

	e->src_proc = ANA_NONE;
	e->external = 0;
	if (!moved(e))
		return 0; /* EOF, error, EAGAIN: no bytes, no dependence */
	r = e->end;
	w = s->ends[r].peer;
	if (w == ANA_NONE && s->ends[r].peer_dropped) {
		e->lost = 1;
		return 2;
	}
	if (w == ANA_NONE) {
		e->external = 1;
		return 0;
	}
	if (s->ends[r].ambiguous & 8) {
		if (!warned[r]) {
			warned[r] = 1;
			ana__warn(s, "channel %u of %s was read by several processes at once: "
			          "which bytes each got is not recorded, its messages are not linked "
			          "and replay may hand a reader bytes another one read (README.md, "
			          "Limits)", s->ends[r].id, s->procs[s->ends[r].proc].name);
		}
		return 1;
	}
	if (s->ends[w].ambiguous & 4) {
		if (!warned[r]) {
			warned[r] = 1;
			ana__warn(s, "channel %u of %s was written by several processes at "
			          "once: its messages are not linked",
			          s->ends[r].id, s->procs[s->ends[r].proc].name);
		}
		return 1;
	}
	j = ana__find_send(s->sendrefs + s->ends[w].firstsend, s->ends[w].nsends,
	                   e->offset + moved(e) - 1);
	e->lost = 0;
	if (j < 0 && send_dropped(s, w, e->offset + moved(e) - 1)) {
		e->lost = 1;
		return 2;
	}
	if (j < 0)
		return 1;
	sr = &s->sendrefs[s->ends[w].firstsend + (uint64_t)j];
	se = &s->procs[sr->proc].ev[sr->idx - 1];
	e->src_proc = sr->proc;
	e->src_idx = sr->idx;
	if (se->src_proc == ANA_NONE) {
		se->src_proc = (uint32_t)p;
		se->src_idx = (uint32_t)(k + 1);
	}
	return 0;
}

/* --- descriptor passing ------------------------------------------------------------------
 *
 * A descriptor passed with SCM_RIGHTS is a dup across processes: the receiver's new end is
 * the sender's end (recorder/ancillary.c).  The k-th descriptor sent on one side of a channel
 * is the k-th received on the other (a stream keeps their order), so the PASS events are
 * paired in that order once the channel they travel on is matched; the receiver's end then
 * joins the sender's end object, and its offsets continue from the sender's byte counts at
 * the pass (the reader starts the new end at 0).  Until then a received end takes no part in
 * the pairing by addresses (its 4-tuple is the sender's); one whose sender is not recorded is
 * paired like any other end afterwards. */

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int k = 7; k >= 0; k--)
		v = v << 8 | p[k];
	return v;
}

int ana__pass_event(struct ana_session *s, uint32_t p, uint64_t idx, const struct trace_event *ev)
{
	const struct ana_proc *pr = &s->procs[p];
	struct ana_passref *r;
	uint32_t seq = 0;
	uint64_t k;
	size_t need = s->npass + 1;

	if (ev->naux < 2 || (ev->aux[0] != TRACE_PASS_OUT && ev->aux[0] != TRACE_PASS_IN) ||
	    ev->aux[1] <= 0 || ev->aux[1] > UINT32_MAX)
		return 0;
	if (need > s->cappass) {
		size_t nc = s->cappass ? s->cappass * 2 : 16;
		void *np = realloc(s->passrefs, nc * sizeof(*s->passrefs));

		if (!np)
			return TRACE_ENOMEM;
		s->passrefs = np;
		s->cappass = nc;
	}
	r = &s->passrefs[s->npass++];
	memset(r, 0, sizeof(*r));
	r->proc = p;
	r->idx = (uint32_t)idx;
	r->chan = ev->channel;
	r->via = (uint32_t)ev->aux[1];
	r->in = ev->aux[0] == TRACE_PASS_IN;
	/* the send or receive of the call comes just before its PASS events */
	for (k = idx - 1; k >= 1 && pr->ev[k - 1].kind == TRACE_EV_PASS; k--)
		seq++;
	r->seq = seq;
	if (k >= 1)
		r->at = pr->ev[k - 1].offset;
	if (!r->in && ev->data && ev->data_len >= 16) {
		r->sent = get_u64(ev->data);
		r->received = get_u64(ev->data + 8);
	}
	return 0;
}

/* The end object on the other side of the channel a pass travelled on, from the sender's
 * side's point of view: the sender's root for a sent one, the peer of the receiver's root for
 * a received one; ANA_NONE when not known (yet). */
static uint32_t pass_side(struct ana_session *s, const struct ana_passref *r)
{
	uint32_t e = ana__end_lookup(s, r->proc, r->via), root;

	if (e == ANA_NONE)
		return ANA_NONE;
	root = uf_find(s, e);
	if (!r->in)
		return root;
	e = s->ends[root].peer;
	return e == root ? ANA_NONE : e;
}

struct passkey {
	uint32_t side;
	uint32_t ref;
};

static const struct ana_session *passkey_s;

static int cmp_passkey(const void *a, const void *b)
{
	const struct passkey *x = a, *y = b;
	const struct ana_passref *rx = &passkey_s->passrefs[x->ref], *ry = &passkey_s->passrefs[y->ref];

	if (x->side != y->side)
		return x->side < y->side ? -1 : 1;
	if (rx->at != ry->at)
		return rx->at < ry->at ? -1 : 1;
	if (rx->proc != ry->proc)
		return rx->proc < ry->proc ? -1 : 1;
	if (rx->idx != ry->idx)
		return rx->idx < ry->idx ? -1 : 1;
	return 0;
}

/* Before pairing by addresses: every received end is set aside (its peer points to itself). */
static void pass_set_aside(struct ana_session *s, int aside)
{
	for (size_t i = 0; i < s->npass; i++) {
		const struct ana_passref *r = &s->passrefs[i];
		uint32_t e, root;

		if (!r->in || !r->chan || r->linked ||
		    (e = ana__end_lookup(s, r->proc, r->chan)) == ANA_NONE)
			continue;
		root = uf_find(s, e);
		if (aside && s->ends[root].peer == ANA_NONE)
			s->ends[root].peer = root;
		else if (!aside && s->ends[root].peer == root)
			s->ends[root].peer = ANA_NONE;
	}
}

/* Pair sent and received descriptors in order, per side of each channel; join each received
 * end to the sender's.  links[] gets (received record, sent record, ref of the sent one).
 * Returns the number of new links, or a negative code. */
static int64_t pass_link(struct ana_session *s, uint32_t (*links)[3], size_t *nlinks)
{
	struct passkey *out = malloc((s->npass ? s->npass : 1) * sizeof(*out));
	struct passkey *in = malloc((s->npass ? s->npass : 1) * sizeof(*in));
	size_t nout = 0, nin = 0, i = 0, j = 0;
	int64_t made = 0;

	if (!out || !in) {
		free(out);
		free(in);
		return TRACE_ENOMEM;
	}
	for (size_t k = 0; k < s->npass; k++) {
		struct ana_passref *r = &s->passrefs[k];
		uint32_t side = pass_side(s, r);

		if (side == ANA_NONE)
			continue;
		if (r->in) {
			in[nin].side = side;
			in[nin++].ref = (uint32_t)k;
		} else {
			out[nout].side = side;
			out[nout++].ref = (uint32_t)k;
		}
	}
	passkey_s = s;
	qsort(out, nout, sizeof(*out), cmp_passkey);
	qsort(in, nin, sizeof(*in), cmp_passkey);
	while (i < nout && j < nin) {
		struct ana_passref *ro, *ri;
		uint32_t eo, ei, ri_root;

		if (out[i].side != in[j].side) {
			if (out[i].side < in[j].side)
				i++;
			else
				j++;
			continue;
		}
		ro = &s->passrefs[out[i++].ref];
		ri = &s->passrefs[in[j++].ref];
		if (ri->linked || !ri->chan || !ro->chan)
			continue;
		eo = ana__end_lookup(s, ro->proc, ro->chan);
		ei = ana__end_lookup(s, ri->proc, ri->chan);
		if (eo == ANA_NONE || ei == ANA_NONE)
			continue;
		ri_root = uf_find(s, ei);
		if (s->ends[ri_root].peer == ri_root)
			s->ends[ri_root].peer = ANA_NONE;
		if (s->ends[ri_root].peer != ANA_NONE)
			continue; /* paired by its addresses already: leave it */
		ri->linked = ro->linked = 1;
		uf_union(s, ei, eo);
		links[*nlinks][0] = ei;
		links[*nlinks][1] = eo;
		links[(*nlinks)++][2] = (uint32_t)(ro - s->passrefs);
		made++;
	}
	free(out);
	free(in);
	return made;
}

/* Offsets of received ends continue from the sender's counts at the pass; an end inherited
 * from such an end (fork, exec) continues with it. */
static int pass_offsets(struct ana_session *s, uint32_t (*links)[3], size_t nlinks)
{
	uint64_t *base = calloc(2 * (s->nends ? s->nends : 1), sizeof(*base));
	int changed = 1, rounds = 0;

	if (!base)
		return TRACE_ENOMEM;
	while (changed && rounds++ < 64) {
		changed = 0;
		for (size_t i = 0; i < nlinks; i++) {
			const struct ana_passref *ro = &s->passrefs[links[i][2]];
			uint64_t o = base[2 * links[i][1]] + ro->sent, n = base[2 * links[i][1] + 1] + ro->received;

			if (base[2 * links[i][0]] != o || base[2 * links[i][0] + 1] != n) {
				base[2 * links[i][0]] = o;
				base[2 * links[i][0] + 1] = n;
				changed = 1;
			}
		}
		for (size_t p = 0; p < s->nprocs; p++) {
			struct ana_proc *pr = &s->procs[p];
			int q = pr->ninherited && pr->parent[0] ? ana_proc_find(s, pr->parent) : -1;

			for (size_t i = 0; q >= 0 && i < pr->ninherited; i++) {
				uint32_t c = ana__end_lookup(s, (uint32_t)p, pr->inherited[i]);
				uint32_t par = ana__end_lookup(s, (uint32_t)q, pr->inherited[i]);

				if (c == ANA_NONE || par == ANA_NONE ||
				    (base[2 * c] == base[2 * par] && base[2 * c + 1] == base[2 * par + 1]))
					continue;
				base[2 * c] = base[2 * par];
				base[2 * c + 1] = base[2 * par + 1];
				changed = 1;
			}
		}
	}
	for (size_t p = 0; p < s->nprocs; p++)
		for (uint64_t k = 0; k < s->procs[p].n; k++) {
			struct ana_ev *e = &s->procs[p].ev[k];

			if (e->end == ANA_NONE || e->end >= s->nends)
				continue;
			if (e->kind == TRACE_EV_SEND)
				e->offset += base[2 * e->end];
			else if (e->kind == TRACE_EV_RECV)
				e->offset += base[2 * e->end + 1];
		}
	free(base);
	return 0;
}

int ana__match(struct ana_session *s, struct trace_diag *diag)
{
	uint64_t *cnt = NULL;
	uint32_t *roots = NULL;
	uint8_t *active = NULL, *rootactive = NULL, *warned = NULL;
	size_t nroots;
	uint64_t unmatched = 0, lost = 0;
	uint32_t (*links)[3] = NULL;
	size_t nlinks = 0;
	int rc;

	for (size_t i = 0; i < s->npass; i++)
		s->passrefs[i].linked = 0;
	if ((rc = link_inherited(s)))
		goto out;
	link_same_inode(s);
	pair_pipes(s);
	roots = malloc((s->nends ? s->nends : 1) * sizeof(*roots));
	rootactive = calloc(s->nends ? s->nends : 1, 1);
	active = calloc(s->nends ? s->nends : 1, 1);
	cnt = calloc(s->nends ? s->nends : 1, sizeof(*cnt));
	warned = calloc(s->nends ? s->nends : 1, 1);
	if (!roots || !rootactive || !active || !cnt || !warned) {
		rc = TRACE_ENOMEM;
		goto out;
	}
	nroots = list_roots(s, roots, active, rootactive);

	/* 4. pairing by what the ends logged; ends received with SCM_RIGHTS are the sender's */
	if (s->npass)
		pass_set_aside(s, 1);
	match_inodes(s, roots, nroots);
	if ((rc = match_tcp(s, roots, nroots)))
		goto out;
	match_unix(s, roots, nroots, active);
	match_fifos(s, roots, nroots);
	if (s->npass) {
		int64_t made;

		links = malloc(s->npass * sizeof(*links));
		if (!links) {
			rc = TRACE_ENOMEM;
			goto out;
		}
		/* a descriptor passed over a channel that was itself passed: as many rounds as
		 * that nests */
		do {
			made = pass_link(s, links, &nlinks);
			if (made < 0) {
				rc = (int)made;
				goto out;
			}
		} while (made > 0);
		pass_set_aside(s, 0);
		memset(rootactive, 0, s->nends);
		nroots = list_roots(s, roots, active, rootactive);
		match_inodes(s, roots, nroots);
		if ((rc = match_tcp(s, roots, nroots)))
			goto out;
		match_unix(s, roots, nroots, active);
		match_fifos(s, roots, nroots);
		if ((rc = pass_offsets(s, links, nlinks)))
			goto out;
	}

	/* An end with no peer and no endpoint in a trace whose oldest events were dropped: the
	 * events that would have named its peer (its creation, or all its parent's use of it)
	 * went with them, so its receives are not external input but lost sends. */
	for (size_t i = 0; i < nroots; i++) {
		struct ana_end *r = &s->ends[roots[i]];

		r->peer_dropped = r->peer == ANA_NONE && !r->has_ep && !r->builder &&
		                  proc_dropped(s, r->proc);
	}
	assign_ends(s, cnt);
	if ((rc = sort_sends(s, cnt)))
		goto out;
	if ((rc = mark_shared_readers(s)))
		goto out;
	for (size_t p = 0; p < s->nprocs; p++)
		for (uint64_t k = 0; k < s->procs[p].n; k++) {
			const struct ana_ev *e = &s->procs[p].ev[k];

			if (e->kind == TRACE_EV_RECV && e->end != ANA_NONE) {
				int m = link_receive(s, p, k, warned);

				unmatched += m == 1;
				lost += m == 2;
			}
		}
	if ((rc = ana__dgram_match(s)))
		goto out;
	if (lost)
		ana__warn(s, "%llu receives got bytes whose sends the disk budget (--max-bytes) "
		          "dropped from their sender's trace: they are not linked",
		          (unsigned long long)lost);
	if (unmatched)
		ana__warn(s, "%llu receives have no recorded send covering their bytes (a trace "
		          "cut short, or a channel shared by several processes)",
		          (unsigned long long)unmatched);
	for (size_t p = 0; p < s->nprocs; p++)
		if (s->procs[p].threads)
			ana__warn(s, "%s created threads: replay follows their recorded order, "
			          "exact where they share data only through interposed calls "
			          "(README.md, Limits)", s->procs[p].name);
out:
	if (rc == TRACE_ENOMEM)
		ana__diag(diag, rc, "out of memory while matching channels");
	free(links);
	free(cnt);
	free(roots);
	free(active);
	free(rootactive);
	free(warned);
	return rc;
}
