/*
 * hb.c: happened-before on demand, and message races.
 *
 * A full vector clock per event would take nprocs counters per event (1e9 for 1e7 events and
 * 100 processes).  Instead a query about events of process c uses c's reachability column:
 * for every event, the last event of c that happened before or is it.  One column is one
 * pass over the linear extension computed by ana_finish and 4 bytes per event; the last
 * ANA_NCOLS columns are cached, so a batch of queries about a few processes (what `encore
 * sql`'s hb() and the race detector do) costs one pass each.
 */
#include <stdlib.h>
#include <string.h>

#include "ana_internal.h"

/* The column of process c: from the cache, or built in one pass over the linear extension
 * into the least recently used slot.  Returns it, or NULL when out of memory. */
static const uint32_t *column(struct ana_session *s, size_t c)
{
	size_t np = s->nprocs;
	uint64_t *pos;
	uint32_t *col;
	int slot = 0;

	for (int i = 0; i < ANA_NCOLS; i++) {
		if (s->col[i] && s->colproc[i] == c) {
			s->colused[i] = ++s->coltick;
			return s->col[i];
		}
		if (!s->col[i] || s->colused[i] < s->colused[slot])
			slot = i;
		if (!s->col[slot])
			break;
	}
	if (!s->base) {
		s->base = malloc((np ? np : 1) * sizeof(uint64_t));
		if (!s->base)
			return NULL;
		for (size_t p = 0, b = 0; p < np; p++) {
			s->base[p] = b;
			b += s->procs[p].n;
		}
	}
	if (!s->col[slot] && !(s->col[slot] = malloc((s->total ? s->total : 1) * sizeof(uint32_t))))
		return NULL;
	col = s->col[slot];
	pos = calloc(np ? np : 1, sizeof(*pos));
	if (!pos)
		return NULL;
	for (uint64_t t = 0; t < s->total; t++) {
		uint32_t q = s->topo[t];
		uint64_t j = ++pos[q];
		uint32_t v;

		if (q == c) {
			v = (uint32_t)j;
		} else {
			const struct ana_ev *e = ana__ev(s, q, j);

			v = j > 1 ? col[s->base[q] + j - 2] : 0;
			if (j == 1 && s->procs[q].fparent != ANA_NONE) {
				uint32_t w = col[s->base[s->procs[q].fparent] + s->procs[q].fidx - 1];

				if (w > v)
					v = w;
			}
			if (ana__in_edge(e)) {
				uint32_t w = col[s->base[e->src_proc] + e->src_idx - 1];

				if (w > v)
					v = w;
			}
			if (e->xin) {
				size_t n;
				const struct ana_xedge *r = ana__xedges(s->xin, s->nxin, q, j, &n);

				for (size_t i = 0; i < n; i++) {
					uint32_t w;

					if (r[i].oproc == ANA_NONE)
						continue;
					w = col[s->base[r[i].oproc] + r[i].oidx - 1];
					if (w > v)
						v = w;
				}
			}
		}
		col[s->base[q] + j - 1] = v;
	}
	free(pos);
	s->colproc[slot] = c;
	s->colused[slot] = ++s->coltick;
	return col;
}

int ana_hb(struct ana_session *s, size_t p, uint64_t i, size_t q, uint64_t j)
{
	const uint32_t *col;

	if (!s || !s->finished || p >= s->nprocs || q >= s->nprocs || i < 1 || j < 1 ||
	    i > s->procs[p].n || j > s->procs[q].n)
		return TRACE_EINVAL;
	if (p == q)
		return i < j;
	if (!(col = column(s, p)))
		return TRACE_ENOMEM;
	return col[s->base[q] + j - 1] >= i;
}

/* The send holding byte `byte` of the stream written on end object w, or -1. */
static int64_t send_at(const struct ana_session *s, uint32_t w, uint64_t byte)
{
	const struct ana_sendref *v = s->sendrefs + s->ends[w].firstsend;
	uint64_t lo = 0, hi = s->ends[w].nsends;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (v[mid].offset + v[mid].len <= byte)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < s->ends[w].nsends && v[lo].offset <= byte)
		return (int64_t)lo;
	return -1;
}

static int push_race(struct ana_race **v, size_t *n, size_t *cap, const struct ana_race *r)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		struct ana_race *nv = realloc(*v, nc * sizeof(*nv));

		if (!nv)
			return TRACE_ENOMEM;
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = *r;
	return 0;
}

/* The datagram races of receive r = (q, j) on datagram socket e->end (dgram.c): from each
 * other process that sent datagrams there, the first one q had not received before r could
 * have been taken by r instead, unless r happened before its send.  cur[] (one cursor per
 * row of s->dgdest, valid where stamp[] holds q + 1) skips the ones received already: rows
 * of one sender are in its order, and what q received before r only grows with j. */
static int dgram_rivals(struct ana_session *s, size_t q, uint64_t j, const struct ana_ev *e,
                        const uint32_t *col, size_t *cur, size_t *stamp, struct ana_race **v,
                        size_t *n, size_t *cap)
{
	size_t cnt, g, first;
	const struct ana_dgdest *d = ana__dgram_dests(s, e->end, &cnt);
	int rc;

	first = (size_t)(d - s->dgdest);
	for (g = 0; g < cnt;) {
		size_t end = g, at = first + g, c;
		uint32_t w = d[g].proc;

		while (end < cnt && d[end].proc == w)
			end++;
		if (stamp[at] != q + 1) {
			stamp[at] = q + 1;
			cur[at] = g;
		}
		for (c = cur[at]; c < end; c++) {
			const struct ana_ev *se = ana__ev(s, d[c].proc, d[c].idx);

			if (!(se->src_proc == q && se->src_idx < j))
				break;
		}
		cur[at] = c;
		if (w != e->src_proc && w != q && c < end &&
		    col[s->base[d[c].proc] + d[c].idx - 1] < j) {
			struct ana_race race;

			race.proc = q;
			race.recv = j;
			race.src_proc = e->src_proc;
			race.src_send = e->src_idx;
			race.rival_proc = d[c].proc;
			race.rival_send = d[c].idx;
			if ((rc = push_race(v, n, cap, &race)))
				return rc;
		}
		g = end;
	}
	return 0;
}

/*
 * Races (Netzer & Miller's message races, restricted to what a stream channel allows): the
 * channels of one receiver are FIFO, so the only alternative to a receive r on channel A is
 * the message that was next in line on another channel B.  It could have been received
 * instead unless r happened before its send.  A datagram socket is many channels in one: a
 * datagram another process sent there could have been received instead (dgram_rivals).
 */
int ana_races(struct ana_session *s, struct ana_race **races, size_t *nraces)
{
	struct ana_race *v = NULL;
	size_t n = 0, cap = 0;
	uint32_t *in = NULL;
	uint64_t *consumed = NULL, *birth = NULL;
	size_t *dcur = NULL, *dstamp = NULL;
	uint8_t *dproc = NULL; /* processes that received a linked datagram */
	const uint32_t *col;
	int rc = 0;

	if (!s || !races || !nraces || !s->finished)
		return TRACE_EINVAL;
	in = malloc((s->nends ? s->nends : 1) * sizeof(*in));
	consumed = malloc((s->nends ? s->nends : 1) * sizeof(*consumed));
	birth = malloc((s->nends ? s->nends : 1) * sizeof(*birth));
	dcur = malloc((s->ndgdest ? s->ndgdest : 1) * sizeof(*dcur));
	dstamp = calloc(s->ndgdest ? s->ndgdest : 1, sizeof(*dstamp));
	dproc = calloc(s->nprocs ? s->nprocs : 1, 1);
	if (!in || !consumed || !birth || !dcur || !dstamp || !dproc) {
		rc = TRACE_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < s->ndgdest; i++) {
		uint32_t r = s->ends[s->dgdest[i].end].reader;

		if (r != ANA_NONE)
			dproc[r] = 1;
	}
	for (size_t q = 0; q < s->nprocs; q++) {
		const struct ana_proc *pr = &s->procs[q];
		size_t nin = 0;

		for (size_t i = 0; i < s->nends; i++) {
			const struct ana_end *e = &s->ends[i];

			if (e->uf == i && e->reader == q && e->peer != ANA_NONE && !(e->ambiguous & 2) &&
			    !(s->ends[e->peer].ambiguous & 4)) {
				consumed[i] = 0;
				birth[i] = UINT64_MAX;
				in[nin++] = (uint32_t)i;
			}
		}
		if (nin < 2 && !dproc[q])
			continue;
		/* a channel q creates (socket, accept, pipe) or receives (SCM_RIGHTS, a pass)
		 * cannot deliver before it exists; one it inherited existed from the start */
		for (uint64_t j = 1; j <= pr->n; j++) {
			const struct ana_ev *e = ana__ev(s, q, j);

			if (e->end != ANA_NONE && e->kind != TRACE_EV_MARK && birth[e->end] == UINT64_MAX)
				birth[e->end] = (e->kind == TRACE_EV_SOCKET || e->kind == TRACE_EV_ACCEPT ||
				                 e->kind == TRACE_EV_PIPE || e->kind == TRACE_EV_PASS) ? j : 0;
		}
		if (!(col = column(s, q))) {
			rc = TRACE_ENOMEM;
			goto out;
		}
		for (uint64_t j = 1; j <= pr->n; j++) {
			const struct ana_ev *e = ana__ev(s, q, j);

			if (e->kind != TRACE_EV_RECV || e->src_proc == ANA_NONE || e->result <= 0)
				continue;
			for (size_t b = 0; b < nin; b++) {
				uint32_t r2 = in[b], w2 = s->ends[r2].peer;
				const struct ana_sendref *sr;
				int64_t k;
				struct ana_race race;

				if (r2 == e->end || birth[r2] >= j)
					continue;
				k = send_at(s, w2, consumed[r2]);
				if (k < 0)
					continue;
				sr = &s->sendrefs[s->ends[w2].firstsend + (uint64_t)k];
				if (col[s->base[sr->proc] + sr->idx - 1] >= j)
					continue; /* r happened before that send: it could not be there */
				race.proc = q;
				race.recv = j;
				race.src_proc = e->src_proc;
				race.src_send = e->src_idx;
				race.rival_proc = sr->proc;
				race.rival_send = sr->idx;
				if ((rc = push_race(&v, &n, &cap, &race)))
					goto out;
			}
			if (dproc[q] && s->ends[e->end].peer == ANA_NONE && !(e->flags & TRACE_FL_PEEK) &&
			    (rc = dgram_rivals(s, q, j, e, col, dcur, dstamp, &v, &n, &cap)))
				goto out;
			if (!(e->flags & TRACE_FL_PEEK))
				consumed[e->end] = e->offset + (uint64_t)e->result;
		}
	}
out:
	free(in);
	free(consumed);
	free(birth);
	free(dcur);
	free(dstamp);
	free(dproc);
	if (rc) {
		free(v);
		v = NULL;
		n = 0;
	}
	*races = v;
	*nraces = n;
	return rc;
}
