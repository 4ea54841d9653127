/*
 * edges.c: the edges of happened-before that are not messages (match.c links those), added
 * by ana_finish once channel ends are matched:
 *
 *   - fork: the parent's fork event -> the child's first event;
 *   - connection: a connect -> the accept that took it;
 *   - end of file: every writer's last release of a stream -> the receive that read its end;
 *   - bounded buffer: the receive that made room in a full pipe -> the write that needed it;
 *   - readiness: the send of the bytes a poll or select found waiting -> that result;
 *   - wait: a child's end (its exit, fatal signal or last event) -> the wait that reaped it,
 *     and -> the parent's SIGCHLD handler run that the end caused (si_pid names the child);
 *   - signal: a kill of a recorded process -> the run of the target's handler it caused;
 *   - semaphore: a process-shared semaphore's acquisition -> the next one (its ticket + 1),
 *     and a release -> the acquisition that came next (ORDER events, recorder/share.c).
 *
 * Fork and connection edges use the events' one src slot (ana__in_edge / ana__out_edge).  An
 * end of file may wait for several processes (every holder of the writing end must have let
 * go of it), so its edges live in the session's xin / xout tables.  Timestamps are never used:
 * each edge is an order the kernel itself imposes, visible in what both sides logged.  The last
 * two kinds may be many per event or land on an event whose slot is taken: they live in the
 * session's xin / xout tables.
 *
 * What is matched or linked here is the analyzer's model: a change to it bumps
 * ANA_MODEL_VERSION (ana.h), so that SQL caches made before are rebuilt.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "ana_internal.h"

/* A child's first event happened after its parent's fork event. */
void ana__link_forks(struct ana_session *s)
{
	for (size_t c = 0; c < s->nprocs; c++) {
		struct ana_proc *ch = &s->procs[c];
		struct ana_ev *fe;
		int p;

		ch->fparent = ANA_NONE;
		if (!ch->parent[0] || !ch->fork_index || !ch->n)
			continue;
		p = ana_proc_find(s, ch->parent);
		if (p < 0 || (size_t)p == c)
			continue; /* a parent outside the session orders nothing we know */
		if (ch->fork_index > s->procs[p].n) {
			ana__warn(s, "%s says it was forked at event %llu of %s, which has %llu events: "
			          "the fork is not ordered", ch->name, (unsigned long long)ch->fork_index,
			          ch->parent, (unsigned long long)s->procs[p].n);
			continue;
		}
		fe = &s->procs[p].ev[ch->fork_index - 1];
		if (fe->kind == TRACE_EV_NONE) { /* a placeholder (load.c) */
			ana__warn(s, "%s was forked at event %llu of %s, which the disk budget dropped: "
			          "the fork is not ordered", ch->name,
			          (unsigned long long)ch->fork_index, ch->parent);
			continue;
		}
		if (fe->kind != TRACE_EV_FORK || fe->src_proc != ANA_NONE) {
			ana__warn(s, "%s says it was forked at event %llu of %s, which is not a fork "
			          "(or forked another child): the fork is not ordered", ch->name,
			          (unsigned long long)ch->fork_index, ch->parent);
			continue;
		}
		fe->src_proc = (uint32_t)c;
		fe->src_idx = 1;
		ch->fparent = (uint32_t)p;
		ch->fidx = ch->fork_index;
	}
}

/* An accept happened after the connect of its peer: the kernel queues a connection only once
 * the client's connect has sent it, and a replayed server blocks in accept until the client
 * gets there.  Without this edge a consistent cut could hold a server past an accept whose
 * client has not connected (or is not even forked) at that cut, which no run can reach.
 * The first CONNECT event logged on the client's end object is the one that started the
 * connection (a non-blocking connect logs EINPROGRESS first, then maybe EALREADY/EISCONN).
 * Ends are union-find roots after matching, so a socket connected by one process and handed
 * to a child is still one end. */
int ana__link_connections(struct ana_session *s)
{
	uint32_t *cproc, *cidx;
	size_t p;

	if (!s->nends)
		return 0;
	cproc = malloc(s->nends * sizeof(*cproc));
	cidx = malloc(s->nends * sizeof(*cidx));
	if (!cproc || !cidx) {
		free(cproc);
		free(cidx);
		return TRACE_ENOMEM;
	}
	for (size_t i = 0; i < s->nends; i++)
		cproc[i] = ANA_NONE;
	for (p = 0; p < s->nprocs; p++) {
		struct ana_proc *pr = &s->procs[p];

		for (uint64_t k = 0; k < pr->n; k++) {
			struct ana_ev *e = &pr->ev[k];

			if (e->kind != TRACE_EV_CONNECT && e->kind != TRACE_EV_ACCEPT)
				continue;
			e->src_proc = ANA_NONE;
			e->src_idx = 0;
			if (e->kind == TRACE_EV_CONNECT && e->end != ANA_NONE &&
			    cproc[e->end] == ANA_NONE) {
				cproc[e->end] = (uint32_t)p;
				cidx[e->end] = (uint32_t)(k + 1);
			}
		}
	}
	for (p = 0; p < s->nprocs; p++) {
		struct ana_proc *pr = &s->procs[p];

		for (uint64_t k = 0; k < pr->n; k++) {
			struct ana_ev *e = &pr->ev[k], *ce;
			uint32_t peer;

			if (e->kind != TRACE_EV_ACCEPT || e->result < 0 || e->end == ANA_NONE)
				continue;
			peer = s->ends[e->end].peer;
			if (peer == ANA_NONE || cproc[peer] == ANA_NONE)
				continue; /* the client is not recorded, or connected before recording */
			ce = &s->procs[cproc[peer]].ev[cidx[peer] - 1];
			if (ce->src_proc != ANA_NONE)
				continue; /* one connection, one accept: a second claim is not ordered */
			if (cproc[peer] == p && cidx[peer] > k + 1)
				continue; /* program order says otherwise: leave it unordered */
			e->src_proc = cproc[peer];
			e->src_idx = cidx[peer];
			ce->src_proc = (uint32_t)p;
			ce->src_idx = (uint32_t)(k + 1);
		}
	}
	free(cproc);
	free(cidx);
	return 0;
}


/* ---------------------------------------------------------------------------------------
 * End of file
 */

const struct ana_xedge *ana__xedges(const struct ana_xedge *table, size_t n, uint32_t p,
                                    uint64_t k, size_t *count)
{
	uint64_t key = (uint64_t)p << 32 | k;
	size_t lo = 0, hi = n, m;

	while (lo < hi) {
		m = lo + (hi - lo) / 2;
		if (table[m].key < key)
			lo = m + 1;
		else
			hi = m;
	}
	for (m = lo; m < n && table[m].key == key; m++)
		;
	*count = m - lo;
	return table + lo;
}

static int cmp_xedge(const void *a, const void *b)
{
	const struct ana_xedge *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->oproc != y->oproc)
		return x->oproc < y->oproc ? -1 : 1;
	return x->oidx < y->oidx ? -1 : x->oidx > y->oidx;
}

static int push_xedge(struct ana_xedge **v, size_t *n, size_t *cap, uint32_t p, uint64_t k,
                      uint32_t q, uint64_t j)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct ana_xedge *nv = realloc(*v, nc * sizeof(*nv));

		if (!nv)
			return TRACE_ENOMEM;
		*v = nv;
		*cap = nc;
	}
	(*v)[*n].key = (uint64_t)p << 32 | k;
	(*v)[*n].oproc = q;
	(*v)[*n].oidx = (uint32_t)j;
	(*n)++;
	return 0;
}

/* A receive that returned 0 (end of file) on an end whose peer is recorded happened after
 * the writing end was let go of for good: the first shutdown(SHUT_WR or SHUT_RDWR) of it if
 * any holder made one (the kernel sends the end of stream then, whoever still holds it),
 * otherwise the release by every process that held it, forked children included: its CLOSE
 * (logged when its last descriptor of the channel goes), else its exit or fatal signal, else
 * its last recorded event (a process killed outright lets go when it dies).  Only the first
 * end of file of each reader on each end gets edges; later ones follow in program order. */
static int link_eofs(struct ana_session *s, size_t *xcap, size_t *ocap)
{
	size_t ne = s->nends, np = s->nprocs;
	uint32_t *root = NULL, *hstart = NULL, *hlist = NULL, *seen = NULL;
	uint32_t *closeidx = NULL, *shutp = NULL, *shutk = NULL;
	uint64_t *gone = NULL;
	int rc = TRACE_ENOMEM;

	if (!ne)
		return 0;
	root = malloc(ne * sizeof(*root));
	hstart = calloc(ne + 1, sizeof(*hstart));
	hlist = malloc(ne * sizeof(*hlist));
	seen = calloc(ne, sizeof(*seen));
	closeidx = calloc(ne, sizeof(*closeidx));
	shutp = malloc(ne * sizeof(*shutp));
	shutk = malloc(ne * sizeof(*shutk));
	gone = calloc(np ? np : 1, sizeof(*gone));
	if (!root || !hstart || !hlist || !seen || !closeidx || !shutp || !shutk || !gone)
		goto out;

	/* the holders of each end object: its (process, id) records, grouped by root */
	for (size_t i = 0; i < ne; i++) {
		uint32_t r = (uint32_t)i;

		while (s->ends[r].uf != r)
			r = s->ends[r].uf;
		root[i] = r;
		hstart[r + 1]++;
		shutp[i] = ANA_NONE;
	}
	for (size_t i = 0; i < ne; i++)
		hstart[i + 1] += hstart[i];
	{
		uint32_t *fill = seen; /* zero, borrowed as fill counters */

		for (size_t i = 0; i < ne; i++)
			hlist[hstart[root[i]] + fill[root[i]]++] = (uint32_t)i;
		memset(seen, 0, ne * sizeof(*seen));
	}

	/* each record's CLOSE, each root's first shutdown of writing, each process's end */
	for (size_t p = 0; p < np; p++) {
		const struct ana_proc *pr = &s->procs[p];

		gone[p] = pr->n;
		for (uint64_t k = 1; k <= pr->n; k++) {
			const struct ana_ev *e = &pr->ev[k - 1];

			if (e->kind == TRACE_EV_CLOSE && e->chan) {
				uint32_t rec = ana__end_lookup(s, (uint32_t)p, e->chan);

				if (rec != ANA_NONE)
					closeidx[rec] = (uint32_t)k;
			} else if (e->kind == TRACE_EV_SHUTDOWN && e->shut_wr && e->end != ANA_NONE &&
			           shutp[e->end] == ANA_NONE) {
				shutp[e->end] = (uint32_t)p;
				shutk[e->end] = (uint32_t)k;
			} else if ((e->kind == TRACE_EV_EXIT || (e->kind == TRACE_EV_SIGNAL && e->fatal)) &&
			           gone[p] == pr->n) {
				gone[p] = k;
			}
		}
	}

	for (size_t p = 0; p < np; p++) {
		struct ana_proc *pr = &s->procs[p];

		for (uint64_t k = 1; k <= pr->n; k++) {
			struct ana_ev *e = &pr->ev[k - 1];
			uint32_t w;

			if (!e->eof || e->end == ANA_NONE || seen[e->end] == p + 1)
				continue;
			seen[e->end] = (uint32_t)p + 1;
			w = s->ends[e->end].peer;
			if (w == ANA_NONE)
				continue; /* an unrecorded writer: its end of file is external input */
			w = root[w];
			if (shutp[w] != ANA_NONE) {
				if (shutp[w] != p &&
				    ((rc = push_xedge(&s->xin, &s->nxin, xcap, (uint32_t)p, k, shutp[w],
				                      shutk[w])) ||
				     (rc = push_xedge(&s->xout, &s->nxout, ocap, shutp[w], shutk[w],
				                      (uint32_t)p, k))))
					goto out;
				continue;
			}
			for (uint32_t h = hstart[w]; h < hstart[w + 1]; h++) {
				uint32_t rec = hlist[h], q = s->ends[rec].proc;
				uint64_t j = closeidx[rec] ? closeidx[rec] : gone[q];

				if (q == p || !j)
					continue;
				if ((rc = push_xedge(&s->xin, &s->nxin, xcap, (uint32_t)p, k, q, j)) ||
				    (rc = push_xedge(&s->xout, &s->nxout, ocap, q, j, (uint32_t)p, k)))
					goto out;
			}
		}
	}
	rc = 0;
out:
	free(root);
	free(hstart);
	free(hlist);
	free(seen);
	free(closeidx);
	free(shutp);
	free(shutk);
	free(gone);
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * Wait
 */

/* A wait that reaped a child that ended happened after the child's end: the kernel reports
 * an exit only once the child made it.  The child is the process this one forked (its parent
 * is this logical process) with the pid the wait returned, the latest forked before the wait
 * (pids are reused); its end is its exit or fatal signal, else its last recorded event (killed
 * outright, SIGKILL leaves no event: the wait saw it dead after that).  A child with no events
 * (not recorded) orders nothing.  A run of the parent's SIGCHLD handler for a child that
 * ended (si_code CLD_EXITED, CLD_KILLED, CLD_DUMPED; si_pid the child) follows its end the
 * same way: the kernel sends that SIGCHLD only then, and replay runs the handler only once
 * the child has ended there too (replayer/lc_pids.c, lc_pid_wait_ended), so a cut holding
 * the run must hold the end (a halted memcached session's shell, whose handler ran for the
 * `$(printf)` child before it read the child's output, waited for ever: that child was cut
 * before its exit). */
/* A child killed outright (no exit or fatal signal in its trace) by a recorded process's
 * SIGKILL: the wait that reaped it came after that kill too, not only after the child's
 * last event (a cut holding nginx's master past the wait for a worker the shell killed held
 * the shell before its kill: the halt waited for ever).  The first SIGKILL of the child's pid
 * from another process of the session; none: nothing more. */
static int link_kill_wait(struct ana_session *s, size_t *xcap, size_t *ocap, size_t child,
                          size_t p, uint64_t k)
{
	int rc;

	for (size_t q = 0; q < s->nprocs; q++) {
		const struct ana_proc *pq = &s->procs[q];

		if (q == child || q == p)
			continue;
		for (uint64_t i = 1; i <= pq->n; i++) {
			const struct ana_ev *f = &pq->ev[i - 1];

			if (f->kind != TRACE_EV_KILL || f->result != s->procs[child].pid ||
			    f->offset != SIGKILL)
				continue;
			if ((rc = push_xedge(&s->xin, &s->nxin, xcap, (uint32_t)p, k, (uint32_t)q, i)))
				return rc;
			return push_xedge(&s->xout, &s->nxout, ocap, (uint32_t)q, i, (uint32_t)p, k);
		}
	}
	return 0;
}

static int link_waits(struct ana_session *s, size_t *xcap, size_t *ocap)
{
	int rc;

	for (size_t p = 0; p < s->nprocs; p++) {
		struct ana_proc *pr = &s->procs[p];

		for (uint64_t k = 1; k <= pr->n; k++) {
			const struct ana_ev *e = &pr->ev[k - 1];
			size_t best = SIZE_MAX;
			uint64_t j;

			if ((e->kind != TRACE_EV_WAIT && e->kind != TRACE_EV_HANDLER) || !e->ended)
				continue;
			for (size_t c = 0; c < s->nprocs; c++) {
				const struct ana_proc *ch = &s->procs[c];

				if (c == p || ch->pid != e->result || !ch->n || !ch->parent ||
				    strcmp(ch->parent, pr->name) != 0 || ch->fork_index >= k)
					continue;
				if (best == SIZE_MAX || ch->fork_index > s->procs[best].fork_index)
					best = c;
			}
			if (best == SIZE_MAX)
				continue;
			j = s->procs[best].n;
			for (uint64_t i = 1; i <= s->procs[best].n; i++) {
				const struct ana_ev *f = &s->procs[best].ev[i - 1];

				if (f->kind == TRACE_EV_EXIT || (f->kind == TRACE_EV_SIGNAL && f->fatal)) {
					j = i;
					break;
				}
			}
			if ((rc = push_xedge(&s->xin, &s->nxin, xcap, (uint32_t)p, k, (uint32_t)best,
			                     j)) ||
			    (rc = push_xedge(&s->xout, &s->nxout, ocap, (uint32_t)best, j, (uint32_t)p,
			                     k)))
				return rc;
			if (j == s->procs[best].n && (rc = link_kill_wait(s, xcap, ocap, best, p, k)))
				return rc;
		}
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * Signals
 */

/* A handler run of a signal a recorded process sent happened after the sending call: the
 * n-th run in q of q's handler of signal s whose si_pid is process P's pid follows the n-th
 * kill (tgkill, sigqueue) of P that reached q's pid with s.  Standard signals pending twice
 * merge into one run: the n-th run then follows a later kill than the n-th, so the edge from
 * the n-th is still an order that held.  Signals to groups (kill(0), kill(-pgid)) and from
 * outside the session order nothing. */
static int link_signals(struct ana_session *s, size_t *xcap, size_t *ocap)
{
	uint64_t *cur = NULL; /* per sender process and signal: the last kill matched */
	int rc = 0;

	for (size_t q = 0; q < s->nprocs && !rc; q++) {
		const struct ana_proc *pq = &s->procs[q];
		int any = 0;

		for (uint64_t h = 1; h <= pq->n && !any; h++)
			any = pq->ev[h - 1].kind == TRACE_EV_HANDLER && pq->ev[h - 1].result > 0;
		if (!any || pq->pid <= 0)
			continue;
		if (!cur && !(cur = malloc(s->nprocs * 65 * sizeof(*cur))))
			return TRACE_ENOMEM;
		memset(cur, 0, s->nprocs * 65 * sizeof(*cur));
		for (uint64_t h = 1; h <= pq->n && !rc; h++) {
			const struct ana_ev *e = &pq->ev[h - 1];
			uint64_t sig = e->offset;

			if (e->kind != TRACE_EV_HANDLER || e->result <= 0 || sig == 0 || sig > 64)
				continue;
			for (size_t p = 0; p < s->nprocs; p++) {
				const struct ana_proc *pp = &s->procs[p];
				uint64_t *c = &cur[p * 65 + sig];
				uint64_t k;

				if (p == q || pp->pid != e->result)
					continue;
				for (k = *c + 1; k <= pp->n; k++) {
					const struct ana_ev *f = &pp->ev[k - 1];

					if (f->kind == TRACE_EV_KILL && f->result == pq->pid && f->offset == sig)
						break;
				}
				if (k > pp->n)
					continue;
				*c = k;
				if (!(rc = push_xedge(&s->xin, &s->nxin, xcap, (uint32_t)q, h, (uint32_t)p, k)))
					rc = push_xedge(&s->xout, &s->nxout, ocap, (uint32_t)p, k, (uint32_t)q, h);
				break; /* one sender per run */
			}
		}
	}
	free(cur);
	return rc;
}

/* Process-shared semaphores: every acquisition took a ticket from one counter per semaphore,
 * so ticket t + 1 was taken after ticket t; a release logged the tickets taken before it, T,
 * so the acquisition with ticket T came after it (a lock's holder let go before the next one
 * took it).  Replay gives the semaphore in ticket order (replayer/README.md), so a cut must
 * hold these too. */
struct orderref {
	int64_t key;
	uint64_t ticket;
	uint32_t proc, idx;
	int post;
};

static int cmp_orderref(const void *a, const void *b)
{
	const struct orderref *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->ticket != y->ticket)
		return x->ticket < y->ticket ? -1 : 1;
	if (x->post != y->post)
		return x->post > y->post ? -1 : 1; /* releases of T before acquisition T */
	return x->proc < y->proc ? -1 : x->proc > y->proc ? 1 : (x->idx > y->idx) - (x->idx < y->idx);
}

static int link_order(struct ana_session *s, size_t *xcap, size_t *ocap)
{
	struct orderref *v = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	for (size_t p = 0; p < s->nprocs; p++)
		for (uint64_t k = 1; k <= s->procs[p].n; k++) {
			const struct ana_ev *e = &s->procs[p].ev[k - 1];

			if (e->kind != TRACE_EV_ORDER || !e->chan)
				continue;
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 64;
				struct orderref *nv = realloc(v, nc * sizeof(*nv));

				if (!nv) {
					free(v);
					return TRACE_ENOMEM;
				}
				v = nv;
				cap = nc;
			}
			v[n].key = e->result;
			v[n].ticket = e->offset;
			v[n].proc = (uint32_t)p;
			v[n].idx = (uint32_t)k;
			v[n].post = e->chan == 2;
			n++;
		}
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_orderref);
	for (size_t i = 0; i < n && !rc; i++) {
		const struct orderref *a = &v[i], *b = NULL;

		/* the acquisition this one (or this release) comes before: ticket + 1 after an
		 * acquisition, the same ticket after a release */
		for (size_t j = i + 1; j < n && v[j].key == a->key; j++) {
			if (v[j].post)
				continue;
			if (v[j].ticket == a->ticket + (a->post ? 0 : 1))
				b = &v[j];
			break;
		}
		if (!b || (b->proc == a->proc && b->idx > a->idx))
			continue; /* none, or program order says it already */
		if (!(rc = push_xedge(&s->xin, &s->nxin, xcap, b->proc, b->idx, a->proc, a->idx)))
			rc = push_xedge(&s->xout, &s->nxout, ocap, a->proc, a->idx, b->proc, b->idx);
	}
	free(v);
	return rc;
}

/* Connections several processes held (shared at their birth, recorder/share.c): replay makes
 * the holders take turns in the order of the shared offsets (replayer/README.md), a receive
 * at OFF after the receives of the bytes before OFF, a send likewise; a cut must hold that
 * order, or a halt leaves one holder waiting for another's turn that never comes.  Pipes
 * replay through staging files without turns: no edges for them. */
struct turnref {
	uint32_t end, kind, proc, idx;
	uint64_t offset;
};

static int cmp_turnref(const void *a, const void *b)
{
	const struct turnref *x = a, *y = b;

	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return (x->proc > y->proc) - (x->proc < y->proc);
}

static int link_turns(struct ana_session *s, size_t *xcap, size_t *ocap)
{
	struct turnref *v = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	for (size_t p = 0; p < s->nprocs; p++)
		for (uint64_t k = 1; k <= s->procs[p].n; k++) {
			const struct ana_ev *e = &s->procs[p].ev[k - 1];
			const struct ana_end *en;

			if ((e->kind != TRACE_EV_RECV && e->kind != TRACE_EV_SEND) ||
			    !(e->flags & TRACE_FL_SHARED) || (e->flags & TRACE_FL_PEEK) ||
			    e->result <= 0 || e->end == ANA_NONE)
				continue;
			en = &s->ends[e->end];
			if (!en->has_ep ||
			    (en->ep.type != TRACE_CHAN_TCP && en->ep.type != TRACE_CHAN_UNIX))
				continue;
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 64;
				struct turnref *nv = realloc(v, nc * sizeof(*nv));

				if (!nv) {
					free(v);
					return TRACE_ENOMEM;
				}
				v = nv;
				cap = nc;
			}
			v[n].end = e->end;
			v[n].kind = e->kind;
			v[n].proc = (uint32_t)p;
			v[n].idx = (uint32_t)k;
			v[n].offset = e->offset;
			n++;
		}
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_turnref);
	/* each after the one before it in the stream, when another process made that one */
	for (size_t i = 1; i < n && !rc; i++) {
		const struct turnref *a = &v[i - 1], *b = &v[i];

		if (a->end != b->end || a->kind != b->kind || a->proc == b->proc)
			continue;
		if (!(rc = push_xedge(&s->xin, &s->nxin, xcap, b->proc, b->idx, a->proc, a->idx)))
			rc = push_xedge(&s->xout, &s->nxout, ocap, a->proc, a->idx, b->proc, b->idx);
	}
	free(v);
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * Bounded buffers
 */

/* Bytes a channel direction into end r can hold in flight; 0 when unknown or too large to
 * matter.  A pipe holds at most 16 pages (Linux's default pipe size, 64 KiB; a program that
 * enlarges it with F_SETPIPE_SZ makes these edges later than the truth: Inf(P) is then a real
 * consistent state, just not the least).  Socket buffers grow with the traffic (TCP
 * autotuning to megabytes): no bound is assumed for them. */
static uint64_t capacity_of(const struct ana_session *s, uint32_t r)
{
	const struct ana_end *e = &s->ends[r];

	if (e->capacity)
		return e->capacity;
	if (e->has_ep && e->ep.type == TRACE_CHAN_PIPE)
		return 65536;
	return 0;
}

struct rref {
	uint64_t end;        /* offset + bytes consumed */
	uint32_t idx;
};

/* A write into a full pipe blocks until the reader makes room: a send of bytes [o, o+l) into
 * a direction that holds C bytes returned only once the reader had consumed o + l - C bytes,
 * so the receive that consumed byte o + l - C - 1 happened before it (the edge runs against the
 * message direction).  Without it Inf(P) can hold a writer past its last write while the
 * reader is at its start, with more than C bytes in between: no run gets there, and replay
 * stalls.  One edge per (writer, receive): later sends of the writer follow in program order. */
static int link_capacity(struct ana_session *s, size_t *xcap, size_t *ocap)
{
	struct rref *rv = NULL;
	size_t rcap = 0;
	int rc = 0;

	for (uint32_t r = 0; r < s->nends; r++) {
		const struct ana_end *re = &s->ends[r];
		const struct ana_proc *pr;
		uint64_t cap, nr = 0;
		uint32_t w, lastw = ANA_NONE, lastr = 0;

		if (re->uf != r || re->peer == ANA_NONE || re->reader == ANA_NONE ||
		    (re->ambiguous & 2) || !(cap = capacity_of(s, r)))
			continue;
		w = re->peer;
		if (s->ends[w].ambiguous & 4 || !s->ends[w].nsends)
			continue;
		/* the reader's consuming receives on r, in program order = offset order */
		pr = &s->procs[re->reader];
		for (uint64_t k = 1; k <= pr->n; k++) {
			const struct ana_ev *e = &pr->ev[k - 1];

			if (e->kind != TRACE_EV_RECV || e->end != r || e->result <= 0 ||
			    (e->flags & TRACE_FL_PEEK))
				continue;
			if (nr == rcap) {
				size_t nc = rcap ? rcap * 2 : 256;
				struct rref *nv = realloc(rv, nc * sizeof(*nv));

				if (!nv) {
					rc = TRACE_ENOMEM;
					goto out;
				}
				rv = nv;
				rcap = nc;
			}
			rv[nr].end = e->offset + (uint64_t)e->result;
			rv[nr++].idx = (uint32_t)k;
		}
		for (uint64_t i = 0; i < s->ends[w].nsends; i++) {
			const struct ana_sendref *sr = &s->sendrefs[s->ends[w].firstsend + i];
			uint64_t need = sr->offset + sr->len, lo = 0, hi = nr;

			if (need <= cap)
				continue;
			need -= cap; /* bytes [0, need) consumed: the receive holding byte need - 1 */
			while (lo < hi) {
				uint64_t m = lo + (hi - lo) / 2;

				if (rv[m].end < need)
					lo = m + 1;
				else
					hi = m;
			}
			if (lo == nr)
				continue; /* never consumed that far: a cut-short trace, or a bigger pipe */
			if (sr->proc == re->reader)
				continue;
			if (lastw == sr->proc && lastr == rv[lo].idx)
				continue;
			lastw = sr->proc;
			lastr = rv[lo].idx;
			if ((rc = push_xedge(&s->xin, &s->nxin, xcap, sr->proc, sr->idx, re->reader,
			                     rv[lo].idx)) ||
			    (rc = push_xedge(&s->xout, &s->nxout, ocap, re->reader, rv[lo].idx, sr->proc,
			                     sr->idx)))
				goto out;
		}
	}
out:
	free(rv);
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * Readiness
 */

static int cmp_readyref(const void *a, const void *b)
{
	const struct ana_readyref *x = a, *y = b;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* A readiness result that found channel c readable saw bytes waiting (or the end of the
 * stream): the first receive of that process on c after it starts at the first byte not yet
 * consumed, so the send holding that byte (or, for an end of file, the writers' releases)
 * happened before the result.  Without the edge a cut could hold a process past a poll that
 * said "readable" while the sender had not sent yet: replay would wait there for data that
 * never comes.  xin/xout hold the sorted edges so far (nsorted rows); new rows go after. */
static int link_ready(struct ana_session *s, size_t nin_sorted, size_t *xcap, size_t *ocap)
{
	uint32_t *next = NULL;
	size_t i, j;
	int rc = 0;

	if (!s->nready || !s->nends)
		return 0;
	qsort(s->readyrefs, s->nready, sizeof(*s->readyrefs), cmp_readyref);
	if (!(next = calloc(s->nends, sizeof(*next))))
		return TRACE_ENOMEM;
	for (i = 0; i < s->nready; i = j) {
		uint32_t p = s->readyrefs[i].proc;
		const struct ana_proc *pr = &s->procs[p];
		uint64_t k = pr->n;

		for (j = i; j < s->nready && s->readyrefs[j].proc == p; j++)
			;
		/* backwards: next[end] = the first receive on end after the point reached */
		for (size_t x = j; x-- > i;) {
			const struct ana_readyref *rr = &s->readyrefs[x];
			uint32_t end, r, w, q;
			const struct ana_ev *e;

			for (; k > rr->idx; k--) {
				const struct ana_ev *f = &pr->ev[k - 1];

				if (f->kind == TRACE_EV_RECV && f->end != ANA_NONE &&
				    (f->result > 0 || f->eof))
					next[f->end] = (uint32_t)k;
			}
			end = ana__end_lookup(s, p, rr->chan);
			if (end == ANA_NONE)
				continue;
			while (s->ends[end].uf != end)
				end = s->ends[end].uf;
			if (!(r = next[end]))
				continue;
			e = &pr->ev[r - 1];
			w = s->ends[end].peer;
			if (e->eof) {
				size_t n, at;

				/* rows by position: pushing may move the table */
				at = (size_t)(ana__xedges(s->xin, nin_sorted, p, r, &n) - s->xin);
				for (size_t m = at; m < at + n; m++) {
					uint32_t oq = s->xin[m].oproc, oi = s->xin[m].oidx;

					if (oq != p &&
					    ((rc = push_xedge(&s->xin, &s->nxin, xcap, p, rr->idx, oq, oi)) ||
					     (rc = push_xedge(&s->xout, &s->nxout, ocap, oq, oi, p, rr->idx))))
						goto out;
				}
				continue;
			}
			if (w == ANA_NONE && e->src_proc != ANA_NONE) {
				/* a datagram socket (dgram.c): the datagram that receive took was the
				 * first in the queue, there already */
				q = e->src_proc;
				if (q != p &&
				    ((rc = push_xedge(&s->xin, &s->nxin, xcap, p, rr->idx, q, e->src_idx)) ||
				     (rc = push_xedge(&s->xout, &s->nxout, ocap, q, e->src_idx, p, rr->idx))))
					goto out;
				continue;
			}
			if (w == ANA_NONE || (s->ends[w].ambiguous & 4))
				continue;
			{
				int64_t sx = ana__find_send(s->sendrefs + s->ends[w].firstsend,
				                            s->ends[w].nsends, e->offset);
				const struct ana_sendref *sr;

				if (sx < 0)
					continue;
				sr = &s->sendrefs[s->ends[w].firstsend + (uint64_t)sx];
				q = sr->proc;
				if (q == p)
					continue;
				if ((rc = push_xedge(&s->xin, &s->nxin, xcap, p, rr->idx, q, sr->idx)) ||
				    (rc = push_xedge(&s->xout, &s->nxout, ocap, q, sr->idx, p, rr->idx)))
					goto out;
			}
		}
		/* reset what this process set */
		for (uint64_t m = 1; m <= pr->n; m++) {
			const struct ana_ev *f = &pr->ev[m - 1];

			if (f->kind == TRACE_EV_RECV && f->end != ANA_NONE)
				next[f->end] = 0;
		}
	}
out:
	free(next);
	return rc;
}

/* Sorted, and each edge once: two descriptors of one channel in a readiness result, or a
 * process holding a stream through two records, give the same edge twice. */
static void sort_unique(struct ana_xedge *v, size_t *n)
{
	size_t m = 0;

	if (!*n)
		return;
	qsort(v, *n, sizeof(*v), cmp_xedge);
	for (size_t i = 0; i < *n; i++)
		if (!m || cmp_xedge(&v[m - 1], &v[i]) != 0)
			v[m++] = v[i];
	*n = m;
}

int ana__link_streams(struct ana_session *s)
{
	size_t xcap = 0, ocap = 0;
	int rc;

	free(s->xin);
	free(s->xout);
	s->xin = s->xout = NULL;
	s->nxin = s->nxout = 0;
	if ((rc = link_eofs(s, &xcap, &ocap)) || (rc = link_capacity(s, &xcap, &ocap)) ||
	    (rc = link_waits(s, &xcap, &ocap)) || (rc = link_signals(s, &xcap, &ocap)) ||
	    (rc = link_order(s, &xcap, &ocap)) || (rc = link_turns(s, &xcap, &ocap)))
		return rc;
	if (s->nxin)
		qsort(s->xin, s->nxin, sizeof(*s->xin), cmp_xedge);
	if ((rc = link_ready(s, s->nxin, &xcap, &ocap)))
		return rc;
	sort_unique(s->xin, &s->nxin);
	sort_unique(s->xout, &s->nxout);
	for (size_t i = 0; i < s->nxin; i++)
		s->procs[s->xin[i].key >> 32].ev[(uint32_t)s->xin[i].key - 1].xin = 1;
	for (size_t i = 0; i < s->nxout; i++)
		s->procs[s->xout[i].key >> 32].ev[(uint32_t)s->xout[i].key - 1].xout = 1;
	return 0;
}
