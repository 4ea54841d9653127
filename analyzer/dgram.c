/*
 * dgram.c: datagram matching (analyzer/README.md, "Datagrams").
 *
 * A UDP or Unix datagram socket has no peer end: each datagram goes where its send says.
 * The recorder logs a datagram send with its own content hash and its destination (and, once
 * per UDP socket, the local address it left from), and a receive of one as INPUT with its
 * bytes and the source address the kernel gave (schemas/trace-format.md, "Datagrams").  A
 * receive is the send whose sender's local address is the receive's source, whose
 * destination is the receiver's local address, on the same host (or between explicit, equal
 * addresses), and whose hash is the hash of the received bytes: the first such send not
 * taken yet, in the sender's order.  So a datagram lost in the recording (sent, never
 * received) is skipped, and datagrams received in another order than sent are matched by
 * content, not position.  A receive cut short by a small buffer (it filled it; no hash to
 * compare) takes the first send of its flow not taken yet that is longer (with MSG_TRUNC, as
 * long as the result says); one with no source address (recv on a socket not connected, a
 * Unix sender without a name) the first send to its address with its content from its host.
 * A receive matched so becomes a receive of the model (kind RECV, its send as source); one
 * with no recorded send stays external input.  The sends to each socket are kept for the
 * message races (hb.c).
 *
 * Limits: identical datagrams of one flow of which some were lost are told apart by order
 * only (the receive takes the earliest); UDP between hosts is matched only where the sender
 * bound an explicit address; a datagram sent to several sockets (broadcast) is linked to one
 * receive.
 *
 * What is matched or linked here is the analyzer's model: a change to it bumps
 * ANA_MODEL_VERSION (ana.h), so that SQL caches made before are rebuilt.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "ana_internal.h"

static void addr_from(struct ana_dgaddr *a, const uint8_t *sa, size_t len)
{
	sa_family_t fam;

	memset(a, 0, sizeof(*a));
	if (len < sizeof(fam))
		return;
	memcpy(&fam, sa, sizeof(fam));
	if (fam == AF_INET && len >= sizeof(struct sockaddr_in)) {
		struct sockaddr_in in;

		memcpy(&in, sa, sizeof(in));
		a->fam = AF_INET;
		a->port = ntohs(in.sin_port);
		memcpy(a->ip, &in.sin_addr, 4);
	} else if (fam == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
		struct sockaddr_in6 in6;

		memcpy(&in6, sa, sizeof(in6));
		a->port = ntohs(in6.sin6_port);
		if (memcmp(in6.sin6_addr.s6_addr, mapped, 12) == 0) {
			/* an IPv4 peer of an IPv6 socket: the same address as IPv4 */
			a->fam = AF_INET;
			memcpy(a->ip, in6.sin6_addr.s6_addr + 12, 4);
		} else {
			a->fam = AF_INET6;
			memcpy(a->ip, in6.sin6_addr.s6_addr, 16);
		}
	} else if (fam == AF_UNIX && len > offsetof(struct sockaddr_un, sun_path)) {
		/* a path (up to its NUL) or an abstract name (all its bytes); FNV-1a */
		const uint8_t *n = sa + offsetof(struct sockaddr_un, sun_path);
		size_t nl = len - offsetof(struct sockaddr_un, sun_path);
		uint64_t h = 0xcbf29ce484222325ull;

		if (n[0])
			nl = strnlen((const char *)n, nl);
		for (size_t i = 0; i < nl; i++)
			h = (h ^ n[i]) * 0x100000001b3ull;
		a->fam = AF_UNIX;
		a->port = (uint16_t)(h >> 48);
		memcpy(a->ip, &h, sizeof(h));
	}
}

static int addr_any(const struct ana_dgaddr *a)
{
	static const uint8_t zero[16];

	return memcmp(a->ip, zero, a->fam == AF_INET ? 4 : 16) == 0;
}

static int addr_loopback(const struct ana_dgaddr *a)
{
	static const uint8_t one6[16] = { [15] = 1 };

	if (a->fam == AF_UNIX)
		return 1; /* a name on this host only */
	return a->fam == AF_INET ? a->ip[0] == 127 : memcmp(a->ip, one6, 16) == 0;
}

/* Two addresses that may name the same socket address: same port, and the same IP unless
 * one of them is a wildcard (a socket bound to any address). */
static int addr_fits(const struct ana_dgaddr *a, const struct ana_dgaddr *b)
{
	if (!a->fam || !b->fam || a->port != b->port)
		return 0;
	if (a->fam != AF_UNIX && b->fam != AF_UNIX && (addr_any(a) || addr_any(b)))
		return 1;
	return a->fam == b->fam && memcmp(a->ip, b->ip, a->fam == AF_INET ? 4 : 16) == 0;
}

/* A UDP or Unix datagram socket. */
static int is_dgram(const struct ana_session *s, uint32_t end)
{
	return end != ANA_NONE && (s->ends[end].unix_dgram ||
	                           (s->ends[end].has_ep && s->ends[end].ep.type == TRACE_CHAN_UDP));
}

int ana__dgram_note(struct ana_session *s, uint32_t p, const struct trace_event *ev,
                    uint32_t end)
{
	struct ana_dgram *d;
	size_t n;

	if (end == ANA_NONE || ev->result < 0)
		return 0;
	if (ev->kind == TRACE_EV_SOCKET) {
		/* socket(domain, type): aux[0] and aux[1] */
		if (ev->naux >= 2 && ev->aux[0] == AF_UNIX && (ev->aux[1] & 0xf) == SOCK_DGRAM)
			s->ends[end].unix_dgram = 1;
		return 0;
	}
	if (ev->kind == TRACE_EV_SEND) {
		if (ev->naux < 3 || ev->aux[1] < 0 || ev->aux[2] < 0 ||
		    (uint64_t)ev->aux[1] + (uint64_t)ev->aux[2] > ev->data_len)
			return 0;
	} else if (ev->kind == TRACE_EV_INPUT) {
		/* the type is known unless the end was inherited (checked again at matching) */
		if ((s->ends[end].has_ep || s->ends[end].unix_dgram) && !is_dgram(s, end))
			return 0;
	} else {
		return 0;
	}
	if (s->ndgrams == s->capdgrams) {
		size_t nc = s->capdgrams ? s->capdgrams * 2 : 64;
		struct ana_dgram *nd = realloc(s->dgrams, nc * sizeof(*nd));

		if (!nd)
			return TRACE_ENOMEM;
		s->dgrams = nd;
		s->capdgrams = nc;
	}
	d = &s->dgrams[s->ndgrams++];
	memset(d, 0, sizeof(*d));
	d->proc = p;
	d->idx = (uint32_t)s->procs[p].n + 1;
	d->end = end;
	d->len = (uint64_t)ev->result;
	d->peek = (ev->flags & TRACE_FL_PEEK) != 0;
	if (ev->kind == TRACE_EV_SEND) {
		d->send = 1;
		d->hash = (uint32_t)ev->aux[0];
		if (ev->data) {
			addr_from(&d->a, ev->data, (size_t)ev->aux[1]);
			addr_from(&d->b, ev->data + ev->aux[1], (size_t)ev->aux[2]);
		}
		return 0;
	}
	/* INPUT: the bytes, then aux[0] bytes of source address, aux[1] of ancillary data */
	n = ev->data_len;
	if (ev->naux >= 2 && ev->aux[0] >= 0 && ev->aux[1] >= 0 &&
	    (uint64_t)ev->aux[0] + (uint64_t)ev->aux[1] <= ev->data_len) {
		n = ev->data_len - (size_t)ev->aux[0] - (size_t)ev->aux[1];
		if (ev->data)
			addr_from(&d->a, ev->data + n, (size_t)ev->aux[0]);
		if (ev->data && !d->a.fam && ev->aux[0] >= (int64_t)sizeof(sa_family_t)) {
			sa_family_t fam;

			memcpy(&fam, ev->data + n, sizeof(fam));
			d->anon = fam == AF_UNIX;
		}
	}
	d->bytes = n;
	d->whole = (uint64_t)ev->result == n && !(ev->flags & TRACE_FL_TRUNC);
	d->filled = ev->len == n;
	d->hash = trace_hash(0, ev->data, n);
	return 0;
}

/* A send's flow key, for sorting: destination port, source port, hash. */
struct dkey {
	uint16_t dport, sport;
	uint32_t hash;
	uint32_t row;
};

static int cmp_dkey(const void *a, const void *b)
{
	const struct dkey *x = a, *y = b;

	if (x->dport != y->dport)
		return x->dport < y->dport ? -1 : 1;
	if (x->sport != y->sport)
		return x->sport < y->sport ? -1 : 1;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row; /* rows are in (process, event) order */
}

/* The first key at or after (dport, sport, hash); with `nohash`, the first of the flow. */
static size_t lower(const struct dkey *v, size_t n, uint16_t dport, uint16_t sport,
                    uint32_t hash, int nohash)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct dkey *k = &v[mid];
		int less = k->dport != dport   ? k->dport < dport
		           : k->sport != sport ? k->sport < sport
		                               : !nohash && k->hash < hash;

		if (less)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The local address of each datagram end (by root end): its BIND or CONNECT endpoint, else
 * the one a send logged (the port an implicit bind chose). */
static const struct ana_dgaddr *end_local(const struct ana_session *s, struct ana_dgaddr *loc,
                                          uint32_t end)
{
	if (!loc[end].fam && s->ends[end].ep.local_len)
		addr_from(&loc[end], s->ends[end].ep.local, s->ends[end].ep.local_len);
	return &loc[end];
}

/* Whether send row `sd` (from local address `from`) may be what receive row `rv` (at local
 * address `at`) got from `src`. */
static int fits(const struct ana_session *s, const struct ana_dgram *sd,
                const struct ana_dgaddr *from, const struct ana_dgaddr *to,
                const struct ana_dgram *rv, const struct ana_dgaddr *src,
                const struct ana_dgaddr *at)
{
	if (!addr_fits(from, src) || !addr_fits(to, at))
		return 0;
	if (strcmp(s->procs[sd->proc].host_id, s->procs[rv->proc].host_id) == 0)
		return 1;
	/* other hosts: only an explicit, routable source address names the sender */
	return !addr_any(from) && !addr_loopback(from) && !addr_loopback(src);
}

/* Receive rv took send sd (row `row`): the model's edge. */
static void dg_link(struct ana_session *s, const struct ana_dgram *rv, const struct ana_dgram *sd,
                 uint32_t row, uint8_t *taken)
{
	struct ana_ev *e = &s->procs[rv->proc].ev[rv->idx - 1];
	struct ana_ev *se = &s->procs[sd->proc].ev[sd->idx - 1];

	if (!rv->peek) /* a peek leaves the datagram for the next receive */
		taken[row] = 1;
	s->ends[rv->end].dgram_linked = s->ends[sd->end].dgram_linked = 1;
	if (s->ends[rv->end].reader == ANA_NONE) /* match.c counted streams' receives only */
		s->ends[rv->end].reader = rv->proc;
	e->kind = TRACE_EV_RECV;
	e->external = 0;
	e->src_proc = sd->proc;
	e->src_idx = sd->idx;
	if (se->src_proc == ANA_NONE) {
		se->src_proc = rv->proc;
		se->src_idx = rv->idx;
	}
}

static int cmp_dest(const void *a, const void *b)
{
	const struct ana_dgdest *x = a, *y = b;

	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int cmp_u32pair(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b;

	return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* s->dgdest: each send (bydst, nd of them, sorted by destination port) with each datagram
 * socket whose local address its destination names. */
static int dests(struct ana_session *s, const struct ana_dgaddr *loc, const struct dkey *bydst,
                 size_t nd)
{
	uint32_t (*ends)[2] = NULL; /* (port, end) of the datagram sockets with an address */
	size_t ne = 0, cap = 0;
	int rc = 0;

	free(s->dgdest);
	s->dgdest = NULL;
	s->ndgdest = 0;
	if (!(ends = malloc((s->nends ? s->nends : 1) * sizeof(*ends))))
		return TRACE_ENOMEM;
	for (size_t i = 0; i < s->nends; i++)
		if (s->ends[i].uf == i && loc[i].fam && is_dgram(s, (uint32_t)i)) {
			ends[ne][0] = loc[i].port;
			ends[ne++][1] = (uint32_t)i;
		}
	qsort(ends, ne, sizeof(*ends), cmp_u32pair);
	for (size_t j = 0; j < nd; j++) {
		const struct ana_dgram *sd = &s->dgrams[bydst[j].row];
		struct ana_dgaddr to = sd->a;
		size_t lo = 0, hi = ne;

		if (!to.fam)
			addr_from(&to, s->ends[sd->end].ep.peer, s->ends[sd->end].ep.peer_len);
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (ends[mid][0] < bydst[j].dport)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < ne && ends[lo][0] == bydst[j].dport; lo++) {
			uint32_t e = ends[lo][1];

			if (e == sd->end || !addr_fits(&to, &loc[e]) ||
			    strcmp(s->procs[sd->proc].host_id, s->procs[s->ends[e].proc].host_id) != 0)
				continue;
			if (s->ndgdest == cap) {
				size_t nc = cap ? cap * 2 : 64;
				struct ana_dgdest *nv = realloc(s->dgdest, nc * sizeof(*nv));

				if (!nv) {
					rc = TRACE_ENOMEM;
					goto out;
				}
				s->dgdest = nv;
				cap = nc;
			}
			s->dgdest[s->ndgdest].end = e;
			s->dgdest[s->ndgdest].proc = sd->proc;
			s->dgdest[s->ndgdest++].idx = sd->idx;
		}
	}
	qsort(s->dgdest, s->ndgdest, sizeof(*s->dgdest), cmp_dest);
out:
	free(ends);
	return rc;
}

const struct ana_dgdest *ana__dgram_dests(const struct ana_session *s, uint32_t end,
                                          size_t *count)
{
	size_t lo = 0, hi = s->ndgdest, first;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->dgdest[mid].end < end)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	while (lo < s->ndgdest && s->dgdest[lo].end == end)
		lo++;
	*count = lo - first;
	return s->dgdest + first;
}

int ana__dgram_match(struct ana_session *s)
{
	struct ana_dgaddr *loc = NULL;
	struct dkey *keys = NULL, *bydst = NULL;
	uint8_t *taken = NULL;
	size_t nk = 0, nd = 0;
	int rc = 0;

	if (!s->ndgrams)
		return 0;
	loc = calloc(s->nends ? s->nends : 1, sizeof(*loc));
	keys = malloc(s->ndgrams * sizeof(*keys));
	bydst = malloc(s->ndgrams * sizeof(*bydst));
	taken = calloc(s->ndgrams, 1);
	if (!loc || !keys || !bydst || !taken) {
		rc = TRACE_ENOMEM;
		goto out;
	}
	/* ends are union-find roots by now (match.c assigned them): resolve each row's */
	for (size_t i = 0; i < s->ndgrams; i++) {
		struct ana_dgram *d = &s->dgrams[i];

		d->end = s->procs[d->proc].ev[d->idx - 1].end;
		if (!is_dgram(s, d->end))
			d->end = ANA_NONE;
		else if (d->send && d->b.fam && !loc[d->end].fam && !s->ends[d->end].ep.local_len)
			loc[d->end] = d->b;
	}
	for (size_t i = 0; i < s->ndgrams; i++) {
		const struct ana_dgram *d = &s->dgrams[i];
		struct ana_dgaddr to = d->a;

		if (!d->send || d->end == ANA_NONE)
			continue;
		if (!to.fam && s->ends[d->end].ep.peer_len) /* a connected socket */
			addr_from(&to, s->ends[d->end].ep.peer, s->ends[d->end].ep.peer_len);
		if (!to.fam)
			continue;
		/* by destination alone, for receives that do not say their source (and the
		 * sends of Unix sockets without a name) */
		bydst[nd].dport = to.port;
		bydst[nd].sport = 0;
		bydst[nd].hash = d->hash;
		bydst[nd++].row = (uint32_t)i;
		if (!end_local(s, loc, d->end)->fam)
			continue;
		keys[nk].dport = to.port;
		keys[nk].sport = loc[d->end].port;
		keys[nk].hash = d->hash;
		keys[nk++].row = (uint32_t)i;
	}
	qsort(keys, nk, sizeof(*keys), cmp_dkey);
	qsort(bydst, nd, sizeof(*bydst), cmp_dkey);
	for (size_t i = 0; i < s->ndgrams; i++) {
		const struct ana_dgram *rv = &s->dgrams[i];
		const struct ana_dgaddr *at;
		struct ana_dgaddr src = rv->a;
		size_t j, pick = SIZE_MAX;

		if (rv->send || rv->end == ANA_NONE)
			continue;
		if (!src.fam && s->ends[rv->end].ep.peer_len)
			addr_from(&src, s->ends[rv->end].ep.peer, s->ends[rv->end].ep.peer_len);
		at = end_local(s, loc, rv->end);
		if (!at->fam)
			continue;
		if (!src.fam) {
			/* recv or read on a socket not connected, or a Unix sender without a name
			 * (then only such senders): no source to compare, so by destination and
			 * content alone, whole datagrams only */
			for (j = lower(bydst, nd, at->port, 0, rv->hash, 0);
			     rv->whole && j < nd && bydst[j].dport == at->port && bydst[j].hash == rv->hash;
			     j++) {
				const struct ana_dgram *sd = &s->dgrams[bydst[j].row];
				struct ana_dgaddr to = sd->a;

				if (!to.fam)
					addr_from(&to, s->ends[sd->end].ep.peer, s->ends[sd->end].ep.peer_len);
				if (!taken[bydst[j].row] && sd->len == rv->len && addr_fits(&to, at) &&
				    (!rv->anon || !loc[sd->end].fam) &&
				    strcmp(s->procs[sd->proc].host_id, s->procs[rv->proc].host_id) == 0) {
					pick = j;
					break;
				}
			}
			if (pick != SIZE_MAX)
				dg_link(s, rv, &s->dgrams[bydst[pick].row], bydst[pick].row, taken);
			continue;
		}
		/* by content: the first send of the flow with this hash not taken yet */
		if (rv->whole)
			for (j = lower(keys, nk, at->port, src.port, rv->hash, 0);
			     j < nk && keys[j].dport == at->port && keys[j].sport == src.port &&
			     keys[j].hash == rv->hash; j++) {
				const struct ana_dgram *sd = &s->dgrams[keys[j].row];
				struct ana_dgaddr to = sd->a;

				if (!to.fam)
					addr_from(&to, s->ends[sd->end].ep.peer, s->ends[sd->end].ep.peer_len);
				if (!taken[keys[j].row] && sd->len == rv->len &&
				    fits(s, sd, &loc[sd->end], &to, rv, &src, at)) {
					pick = j; /* rows of one hash are in sender order */
					break;
				}
			}
		/* cut short (no hash to compare): the first longer send of the flow not taken */
		if (pick == SIZE_MAX)
			for (j = lower(keys, nk, at->port, src.port, 0, 1);
			     j < nk && keys[j].dport == at->port && keys[j].sport == src.port; j++) {
				const struct ana_dgram *sd = &s->dgrams[keys[j].row];
				struct ana_dgaddr to = sd->a;
				int len_ok = rv->whole ? rv->filled && sd->len > rv->len
				                       : sd->len == rv->len && rv->bytes <= sd->len;

				if (!to.fam)
					addr_from(&to, s->ends[sd->end].ep.peer, s->ends[sd->end].ep.peer_len);
				if (!taken[keys[j].row] && len_ok &&
				    fits(s, sd, &loc[sd->end], &to, rv, &src, at) &&
				    (pick == SIZE_MAX || keys[j].row < keys[pick].row))
					pick = j;
			}
		if (pick != SIZE_MAX)
			dg_link(s, rv, &s->dgrams[keys[pick].row], keys[pick].row, taken);
	}
	rc = dests(s, loc, bydst, nd);
out:
	free(loc);
	free(keys);
	free(bydst);
	free(taken);
	return rc;
}
