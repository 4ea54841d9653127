/*
 * inf.c: consistent-cut closures and Inf(P) on precomputed simple-predicate truth.
 *
 * Everything here is built on one loop, the offline twin of Manabe & Imase's Appendix B
 * (program HaltAtBreakpoint): a process moves forward only while its SP is false or while a
 * receive inside the cut needs a message it has not sent yet.  Offline we know every
 * message's send, so the "control message asking S for message n" becomes "pull S's cut up
 * to that send" and the local controllers' termination becomes an empty work list.  Each
 * process's events are scanned once, so the cost is linear in the events below the result.
 */
#include <stdlib.h>
#include <string.h>

#include "ana_internal.h"

size_t ana_bits_words(const struct ana_session *s, size_t p)
{
	return (size_t)((ana_nevents(s, p) + 1 + 63) / 64);
}

/* The first set bit >= k among bits 0..n, or UINT64_MAX. */
static uint64_t next_bit(const uint64_t *bits, uint64_t n, uint64_t k)
{
	uint64_t w, word;

	if (k > n)
		return UINT64_MAX;
	w = k >> 6;
	word = bits[w] & (~0ull << (k & 63));
	for (;;) {
		if (word) {
			uint64_t b = (w << 6) + (uint64_t)__builtin_ctzll(word);

			return b <= n ? b : UINT64_MAX;
		}
		if (++w > (n >> 6))
			return UINT64_MAX;
		word = bits[w];
	}
}

/*
 * The least consistent cut >= cut[] in which every process p with bits[p] != NULL sits at a
 * state where bits[p] holds (Manabe & Imase Appendix B: a predicate process runs on to its
 * next state satisfying SP; a passive one only as far as a requested send).  The caller has already put
 * predicate processes on satisfying states.  Returns 1, or 0 when some predicate process has
 * no satisfying state left (P never holds above the start).
 */
/* Make process q include its event `need` (a send or fork some included event depends on).
 * A predicate process goes on to its next satisfying state; returns 0 when there is none. */
static inline int pull(const struct ana_session *s, uint64_t *cut, const uint64_t *const *bits,
                       uint32_t *work, size_t *nw, uint8_t *queued, uint32_t q, uint64_t need)
{
	if (cut[q] >= need)
		return 1;
	if (bits && bits[q]) {
		need = next_bit(bits[q], s->procs[q].n, need);
		if (need == UINT64_MAX)
			return 0;
	}
	cut[q] = need;
	if (!queued[q]) {
		queued[q] = 1;
		work[(*nw)++] = q;
	}
	return 1;
}

/* close_up's step: an event beyond the cut depends on (r, idx), so r must stop before it. */
static inline void push_back(uint64_t *cut, uint32_t *work, size_t *nw, uint8_t *queued,
                             uint32_t r, uint64_t idx)
{
	if (cut[r] < idx)
		return;
	cut[r] = idx - 1;
	if (!queued[r]) {
		queued[r] = 1;
		work[(*nw)++] = r;
	}
}

/* The linked-predicate trigger's step: (r, idx) happened after the trigger. */
static inline void push_first(uint64_t *first, uint32_t *work, size_t *nw, uint8_t *queued,
                              uint32_t r, uint64_t idx)
{
	if (idx >= first[r])
		return;
	first[r] = idx;
	if (!queued[r]) {
		queued[r] = 1;
		work[(*nw)++] = r;
	}
}

static int closure(const struct ana_session *s, uint64_t *cut, const uint64_t *const *bits,
                   uint64_t *scanned, uint32_t *work, uint8_t *queued)
{
	size_t np = s->nprocs, nw = 0, p;

	for (p = 0; p < np; p++) {
		scanned[p] = 0;
		queued[p] = cut[p] > 0;
		if (queued[p])
			work[nw++] = (uint32_t)p;
	}
	while (nw) {
		uint32_t x = work[--nw];
		const struct ana_ev *ev = s->procs[x].ev;

		queued[x] = 0;
		/* the child exists only once its parent forked it */
		if (scanned[x] == 0 && cut[x] >= 1 && s->procs[x].fparent != ANA_NONE &&
		    !pull(s, cut, bits, work, &nw, queued, s->procs[x].fparent, s->procs[x].fidx))
			return 0;
		for (uint64_t k = scanned[x] + 1; k <= cut[x]; k++) {
			const struct ana_ev *e = &ev[k - 1];

			if (ana__in_edge(e) &&
			    !pull(s, cut, bits, work, &nw, queued, e->src_proc, e->src_idx))
				return 0;
			if (e->xin) {
				size_t n;
				const struct ana_xedge *r = ana__xedges(s->xin, s->nxin, x, k, &n);

				for (size_t i = 0; i < n; i++)
					if (r[i].oproc != ANA_NONE &&
					    !pull(s, cut, bits, work, &nw, queued, r[i].oproc, r[i].oidx))
						return 0;
			}
		}
		if (cut[x] > scanned[x])
			scanned[x] = cut[x];
	}
	return 1;
}

struct scratch {
	uint64_t *scanned;
	uint32_t *work;
	uint8_t *queued;
};

static int scratch_init(struct scratch *w, size_t np)
{
	w->scanned = malloc((np ? np : 1) * sizeof(uint64_t));
	w->work = malloc((np ? np : 1) * sizeof(uint32_t));
	w->queued = malloc(np ? np : 1);
	if (!w->scanned || !w->work || !w->queued) {
		free(w->scanned);
		free(w->work);
		free(w->queued);
		return TRACE_ENOMEM;
	}
	return 0;
}

static void scratch_free(struct scratch *w)
{
	free(w->scanned);
	free(w->work);
	free(w->queued);
}

int ana_close_down(const struct ana_session *s, uint64_t *cut)
{
	struct scratch w;

	if (!s || !cut || !s->finished)
		return TRACE_EINVAL;
	for (size_t p = 0; p < s->nprocs; p++)
		if (cut[p] > s->procs[p].n)
			return TRACE_EINVAL;
	if (scratch_init(&w, s->nprocs))
		return TRACE_ENOMEM;
	closure(s, cut, NULL, w.scanned, w.work, w.queued);
	scratch_free(&w);
	return 0;
}

/* The dual: lower processes until no send outside the cut feeds a receive inside it.  A
 * send's src_* fields hold its first dependent receive (match.c), a fork's the child's first
 * event; excluding the send excludes that event and, by program order, every later one. */
int ana_close_up(const struct ana_session *s, uint64_t *cut)
{
	size_t np, nw = 0, p;
	uint64_t *top;
	uint32_t *work;
	uint8_t *queued;

	if (!s || !cut || !s->finished)
		return TRACE_EINVAL;
	np = s->nprocs;
	for (p = 0; p < np; p++)
		if (cut[p] > s->procs[p].n)
			return TRACE_EINVAL;
	top = malloc((np ? np : 1) * sizeof(*top));
	work = malloc((np ? np : 1) * sizeof(*work));
	queued = malloc(np ? np : 1);
	if (!top || !work || !queued) {
		free(top);
		free(work);
		free(queued);
		return TRACE_ENOMEM;
	}
	for (p = 0; p < np; p++) {
		top[p] = s->procs[p].n;
		queued[p] = cut[p] < top[p];
		if (queued[p])
			work[nw++] = (uint32_t)p;
	}
	while (nw) {
		uint32_t x = work[--nw];
		const struct ana_ev *ev = s->procs[x].ev;

		queued[x] = 0;
		for (uint64_t k = cut[x] + 1; k <= top[x]; k++) {
			const struct ana_ev *e = &ev[k - 1];

			if (ana__out_edge(e))
				push_back(cut, work, &nw, queued, e->src_proc, e->src_idx);
			if (e->xout) {
				size_t n;
				const struct ana_xedge *r = ana__xedges(s->xout, s->nxout, x, k, &n);

				for (size_t i = 0; i < n; i++)
					if (r[i].oproc != ANA_NONE)
						push_back(cut, work, &nw, queued, r[i].oproc, r[i].oidx);
			}
		}
		if (cut[x] < top[x])
			top[x] = cut[x];
	}
	free(top);
	free(work);
	free(queued);
	return 0;
}

int ana_consistent(const struct ana_session *s, const uint64_t *cut)
{
	if (!s || !cut || !s->finished)
		return TRACE_EINVAL;
	for (size_t p = 0; p < s->nprocs; p++) {
		if (cut[p] > s->procs[p].n)
			return TRACE_EINVAL;
		if (cut[p] >= 1 && s->procs[p].fparent != ANA_NONE &&
		    cut[s->procs[p].fparent] < s->procs[p].fidx)
			return 0;
		for (uint64_t k = 1; k <= cut[p]; k++) {
			const struct ana_ev *e = ana__ev(s, p, k);

			if (ana__in_edge(e) && cut[e->src_proc] < e->src_idx)
				return 0;
			if (e->xin) {
				size_t n;
				const struct ana_xedge *r = ana__xedges(s->xin, s->nxin, (uint32_t)p, k, &n);

				for (size_t i = 0; i < n; i++)
					if (r[i].oproc != ANA_NONE && cut[r[i].oproc] < r[i].oidx)
						return 0;
			}
		}
	}
	return 1;
}

void ana_cuts_free(struct ana_cuts *c)
{
	if (!c)
		return;
	free(c->cuts);
	c->cuts = NULL;
	c->ncuts = 0;
}

/* ---------------------------------------------------------------------------------------
 * Conjunctive predicates
 */

/* Per-process combined truth of a CP: the SPs naming one process are and-ed (a CP has at most
 * one SP per process in normal form, but the bitset API does not require it). */
struct cpbits {
	const uint64_t **bits;   /* np entries, NULL for passive processes */
	uint64_t **owned;        /* and-ed copies to free */
};

static void cpbits_free(struct cpbits *cb, size_t np)
{
	if (cb->owned)
		for (size_t p = 0; p < np; p++)
			free(cb->owned[p]);
	free(cb->owned);
	free(cb->bits);
}

static int cpbits_init(const struct ana_session *s, const struct ana_cp *cp, struct cpbits *cb)
{
	size_t np = s->nprocs;

	cb->bits = calloc(np ? np : 1, sizeof(*cb->bits));
	cb->owned = calloc(np ? np : 1, sizeof(*cb->owned));
	if (!cb->bits || !cb->owned) {
		cpbits_free(cb, np);
		return TRACE_ENOMEM;
	}
	for (size_t i = 0; i < cp->nsp; i++) {
		size_t p = cp->sps[i].proc;

		if (p >= np || !cp->sps[i].bits) {
			cpbits_free(cb, np);
			return TRACE_EINVAL;
		}
		if (!cb->bits[p]) {
			cb->bits[p] = cp->sps[i].bits;
			continue;
		}
		if (!cb->owned[p]) {
			size_t nw = ana_bits_words(s, p);

			cb->owned[p] = malloc(nw * sizeof(uint64_t));
			if (!cb->owned[p]) {
				cpbits_free(cb, np);
				return TRACE_ENOMEM;
			}
			memcpy(cb->owned[p], cb->bits[p], nw * sizeof(uint64_t));
			cb->bits[p] = cb->owned[p];
		}
		for (size_t w = 0; w < ana_bits_words(s, p); w++)
			cb->owned[p][w] &= cp->sps[i].bits[w];
	}
	return 0;
}

/*
 * Inf of a CP above a start: the least consistent cut C >= base with C[p] >= lb[p] and SP_p
 * true at C[p] for every predicate process p (lb may be NULL).  The set of such cuts is
 * closed under min (Manabe & Imase Lemma 1 and the proof of Lemma 2), so the least one is
 * unique; the closure reaches it because it never moves a process past a state every solution must
 * include.  Returns 1 found, 0 none.
 */
static int inf_from(const struct ana_session *s, const struct cpbits *cb, const uint64_t *base,
                    const uint64_t *lb, uint64_t *cut, struct scratch *w)
{
	for (size_t p = 0; p < s->nprocs; p++) {
		uint64_t start = base ? base[p] : 0;

		if (lb && lb[p] > start)
			start = lb[p];
		if (cb->bits[p]) {
			start = next_bit(cb->bits[p], s->procs[p].n, start);
			if (start == UINT64_MAX)
				return 0;
		} else if (start > s->procs[p].n) {
			return 0;
		}
		cut[p] = start;
	}
	return closure(s, cut, cb->bits, w->scanned, w->work, w->queued);
}

int ana_inf_cp(const struct ana_session *s, const struct ana_cp *cp, uint64_t *cut)
{
	struct cpbits cb;
	struct scratch w;
	int rc;

	if (!s || !cp || !cut || !s->finished)
		return TRACE_EINVAL;
	if ((rc = cpbits_init(s, cp, &cb)))
		return rc;
	if ((rc = scratch_init(&w, s->nprocs))) {
		cpbits_free(&cb, s->nprocs);
		return rc;
	}
	rc = inf_from(s, &cb, NULL, NULL, cut, &w);
	scratch_free(&w);
	cpbits_free(&cb, s->nprocs);
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * Sets of cuts: keep the minimal ones.
 */
static int leq(const uint64_t *a, const uint64_t *b, size_t np)
{
	for (size_t p = 0; p < np; p++)
		if (a[p] > b[p])
			return 0;
	return 1;
}

static int cuts_push(struct ana_cuts *c, const uint64_t *cut, size_t *cap)
{
	if (c->ncuts == *cap) {
		size_t ncap = *cap ? *cap * 2 : 4;
		uint64_t *n = realloc(c->cuts, ncap * c->nprocs * sizeof(uint64_t));

		if (!n)
			return TRACE_ENOMEM;
		c->cuts = n;
		*cap = ncap;
	}
	memcpy(c->cuts + c->ncuts * c->nprocs, cut, c->nprocs * sizeof(uint64_t));
	c->ncuts++;
	return 0;
}

/* Drop duplicates and every cut above another one; keeps first-seen order. */
static void cuts_minimize(struct ana_cuts *c)
{
	size_t np = c->nprocs, out = 0;

	for (size_t i = 0; i < c->ncuts; i++) {
		const uint64_t *a = c->cuts + i * np;
		int keep = 1;

		for (size_t j = 0; j < c->ncuts && keep; j++) {
			const uint64_t *b = c->cuts + j * np;

			if (j == i || !leq(b, a, np))
				continue;
			/* b <= a: a goes unless they are equal and a is the first copy */
			if (!leq(a, b, np) || j < i)
				keep = 0;
		}
		if (keep) {
			if (out != i)
				memmove(c->cuts + out * np, a, np * sizeof(uint64_t));
			out++;
		}
	}
	c->ncuts = out;
}

/* Inf of a DP: G(CP1 || CP2 ...) is the union of the G(CP_i), so its minimal elements are the
 * minimal ones among the Inf(CP_i) (Manabe & Imase section 3.3 shows why this cannot be
 * done online). */
int ana_inf_dp(const struct ana_session *s, const struct ana_dp *dp, struct ana_cuts *out)
{
	uint64_t *cut;
	size_t cap = 0;
	int rc = 0;

	if (!s || !dp || !out || !s->finished)
		return TRACE_EINVAL;
	memset(out, 0, sizeof(*out));
	out->nprocs = s->nprocs;
	cut = malloc((s->nprocs ? s->nprocs : 1) * sizeof(*cut));
	if (!cut)
		return TRACE_ENOMEM;
	for (size_t i = 0; i < dp->ncp; i++) {
		rc = ana_inf_cp(s, &dp->cps[i], cut);
		if (rc < 0)
			break;
		if (rc == 1 && (rc = cuts_push(out, cut, &cap)))
			break;
		rc = 0;
	}
	free(cut);
	if (rc < 0) {
		ana_cuts_free(out);
		return rc;
	}
	cuts_minimize(out);
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * Linked predicates (Miller & Choi 3.4): DP1 -> DP2 -> ... -> DPm holds when DP1 holds at
 * some state, then DP2 at a state whose event happened after the event that made DP1 true,
 * and so on.  Offline we follow every choice of disjunct, each as early as possible (taking a
 * later state for one step can only make the following steps later), and report the minimal
 * cuts at which the last DP holds.
 *
 * "After" is happened-before between events: an SP holding at state k of process q is after
 * a trigger (p, j) when (p, j) -> (q, k), or q == p and k > j.  State 0 has no event; a DP
 * holding there is taken to hold from the start, before every event of the other processes.
 */

/* First event of each process that the event (p, j) happened before (or j+1 on p itself):
 * the forward closure along message edges.  first[] = UINT64_MAX where none. */
static void forward(const struct ana_session *s, size_t p0, uint64_t j, uint64_t *first,
                    uint64_t *done, uint32_t *work, uint8_t *queued)
{
	size_t np = s->nprocs, nw = 0;

	for (size_t p = 0; p < np; p++) {
		first[p] = UINT64_MAX;
		done[p] = s->procs[p].n + 1;
		queued[p] = 0;
	}
	if (j == 0) {
		/* the start of p0: before everything */
		for (size_t p = 0; p < np; p++)
			first[p] = p == p0 ? 1 : 0;
		return;
	}
	/* scan from the trigger itself (it may be a send), then make p0's bound strict */
	first[p0] = j;
	work[nw++] = (uint32_t)p0;
	queued[p0] = 1;
	while (nw) {
		uint32_t x = work[--nw];

		queued[x] = 0;
		for (uint64_t k = first[x]; k < done[x]; k++) {
			const struct ana_ev *e = ana__ev(s, x, k);

			if (ana__out_edge(e))
				push_first(first, work, &nw, queued, e->src_proc, e->src_idx);
			if (e->xout) {
				size_t n;
				const struct ana_xedge *r = ana__xedges(s->xout, s->nxout, x, k, &n);

				for (size_t i = 0; i < n; i++)
					if (r[i].oproc != ANA_NONE)
						push_first(first, work, &nw, queued, r[i].oproc, r[i].oidx);
			}
		}
		if (first[x] < done[x])
			done[x] = first[x];
	}
	first[p0] = j + 1;
}

struct chainstate {
	uint64_t *cut;           /* np */
	uint32_t *tproc;         /* trigger events: the SP processes of the CP that held */
	uint64_t *tidx;
	size_t ntrig;
};

static void chain_free(struct chainstate *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].cut);
		free(v[i].tproc);
		free(v[i].tidx);
	}
	free(v);
}

static int same_chain(const struct chainstate *a, const struct chainstate *b, size_t np)
{
	if (a->ntrig != b->ntrig || memcmp(a->cut, b->cut, np * sizeof(uint64_t)))
		return 0;
	for (size_t i = 0; i < a->ntrig; i++)
		if (a->tproc[i] != b->tproc[i] || a->tidx[i] != b->tidx[i])
			return 0;
	return 1;
}

int ana_inf_lp(const struct ana_session *s, const struct ana_dp *dps, size_t ndp, size_t bound,
               struct ana_cuts *out)
{
	size_t np, ncur = 0, nnext = 0, capnext = 0, cap = 0;
	struct chainstate *cur = NULL, *next = NULL;
	uint64_t *lb = NULL, *first = NULL, *done = NULL, *cut = NULL;
	struct scratch w = {0};
	int rc = 0;

	if (!s || !dps || !ndp || !out || !s->finished)
		return TRACE_EINVAL;
	if (!bound)
		bound = 4096;
	np = s->nprocs;
	memset(out, 0, sizeof(*out));
	out->nprocs = np;
	lb = malloc((np ? np : 1) * sizeof(*lb));
	first = malloc((np ? np : 1) * sizeof(*first));
	done = malloc((np ? np : 1) * sizeof(*done));
	cut = malloc((np ? np : 1) * sizeof(*cut));
	if (!lb || !first || !done || !cut || scratch_init(&w, np)) {
		rc = TRACE_ENOMEM;
		goto out;
	}
	/* The chain before DP1: one empty state at the bottom cut with no trigger. */
	cur = calloc(1, sizeof(*cur));
	if (!cur || !(cur->cut = calloc(np ? np : 1, sizeof(uint64_t)))) {
		rc = TRACE_ENOMEM;
		goto out;
	}
	ncur = 1;
	for (size_t d = 0; d < ndp; d++) {
		for (size_t c = 0; c < ncur; c++) {
			for (size_t i = 0; i < dps[d].ncp; i++) {
				const struct ana_cp *cp = &dps[d].cps[i];
				struct cpbits cb;
				struct chainstate *ns;
				int found, dup = 0;

				/* lower bounds: every SP state after every trigger of the previous DP */
				for (size_t p = 0; p < np; p++)
					lb[p] = 0;
				for (size_t t = 0; t < cur[c].ntrig; t++) {
					forward(s, cur[c].tproc[t], cur[c].tidx[t], first, done, w.work, w.queued);
					for (size_t k = 0; k < cp->nsp; k++) {
						size_t q = cp->sps[k].proc;

						if (q < np && first[q] > lb[q])
							lb[q] = first[q];
					}
				}
				if ((rc = cpbits_init(s, cp, &cb)))
					goto out;
				found = inf_from(s, &cb, cur[c].cut, lb, cut, &w);
				cpbits_free(&cb, np);
				if (!found)
					continue;
				if (nnext >= bound) {
					out->bound_hit = 1;
					continue;
				}
				if (nnext == capnext) {
					size_t ncap = capnext ? capnext * 2 : 8;
					struct chainstate *nv = realloc(next, ncap * sizeof(*nv));

					if (!nv) {
						rc = TRACE_ENOMEM;
						goto out;
					}
					next = nv;
					capnext = ncap;
				}
				ns = &next[nnext];
				memset(ns, 0, sizeof(*ns));
				ns->cut = malloc(np * sizeof(uint64_t));
				ns->tproc = malloc((cp->nsp ? cp->nsp : 1) * sizeof(uint32_t));
				ns->tidx = malloc((cp->nsp ? cp->nsp : 1) * sizeof(uint64_t));
				if (!ns->cut || !ns->tproc || !ns->tidx) {
					nnext++;
					rc = TRACE_ENOMEM;
					goto out;
				}
				memcpy(ns->cut, cut, np * sizeof(uint64_t));
				for (size_t k = 0; k < cp->nsp; k++) {
					size_t q = cp->sps[k].proc, t;

					for (t = 0; t < ns->ntrig && ns->tproc[t] != q; t++)
						;
					if (t == ns->ntrig) {
						ns->tproc[ns->ntrig] = (uint32_t)q;
						ns->tidx[ns->ntrig++] = cut[q];
					}
				}
				for (size_t o = 0; o < nnext && !dup; o++)
					dup = same_chain(&next[o], ns, np);
				nnext++;
				if (dup) {
					nnext--;
					free(ns->cut);
					free(ns->tproc);
					free(ns->tidx);
				}
			}
		}
		chain_free(cur, ncur);
		cur = next;
		ncur = nnext;
		next = NULL;
		nnext = capnext = 0;
		if (!ncur)
			break;
	}
	for (size_t c = 0; c < ncur; c++)
		if ((rc = cuts_push(out, cur[c].cut, &cap)))
			goto out;
	cuts_minimize(out);
out:
	chain_free(cur, ncur);
	chain_free(next, nnext);
	free(lb);
	free(first);
	free(done);
	free(cut);
	scratch_free(&w);
	if (rc < 0)
		ana_cuts_free(out);
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * General predicates (&& over ||): computing Inf is NP-hard (Manabe & Imase section 6).
 * P is monotone
 * in its SPs, so G(P) is the union of G(CP_S) over the minimal sets S of SPs that make P true;
 * we search those sets smallest first (skipping supersets of sets already found), at most
 * `bound` of them, and take the minimal cuts among the Inf(CP_S).
 */
int ana_inf_general(const struct ana_session *s, const struct ana_sp *sps, size_t nsp,
                    int (*eval)(void *ctx, const uint8_t *truth), void *ctx, size_t bound,
                    struct ana_cuts *out)
{
	uint64_t *minimal = NULL, *cut = NULL;
	size_t nmin = 0, capmin = 0, cap = 0, examined = 0;
	uint8_t *truth = NULL;
	struct ana_sp *sub = NULL;
	int rc = 0;

	if (!s || !eval || !out || !s->finished || nsp > 63)
		return TRACE_EINVAL;
	if (!bound)
		bound = (size_t)1 << 20;
	memset(out, 0, sizeof(*out));
	out->nprocs = s->nprocs;
	truth = calloc(nsp ? nsp : 1, 1);
	sub = calloc(nsp ? nsp : 1, sizeof(*sub));
	cut = malloc((s->nprocs ? s->nprocs : 1) * sizeof(*cut));
	if (!truth || !sub || !cut) {
		rc = TRACE_ENOMEM;
		goto out;
	}
	for (size_t k = 1; k <= nsp && !out->bound_hit; k++) {
		/* Gosper's hack: every k-subset of nsp bits in increasing order */
		uint64_t m = (k == 64) ? ~0ull : ((1ull << k) - 1);
		uint64_t limit = nsp == 64 ? 0 : (1ull << nsp);

		while (m < limit || (nsp == 64 && m)) {
			int skip = 0, t;

			for (size_t i = 0; i < nmin && !skip; i++)
				skip = (minimal[i] & m) == minimal[i];
			if (!skip) {
				if (++examined > bound) {
					out->bound_hit = 1;
					break;
				}
				for (size_t i = 0; i < nsp; i++)
					truth[i] = (uint8_t)((m >> i) & 1);
				t = eval(ctx, truth);
				if (t < 0) {
					rc = t;
					goto out;
				}
				if (t) {
					if (nmin == capmin) {
						size_t nc = capmin ? capmin * 2 : 8;
						uint64_t *nm = realloc(minimal, nc * sizeof(*nm));

						if (!nm) {
							rc = TRACE_ENOMEM;
							goto out;
						}
						minimal = nm;
						capmin = nc;
					}
					minimal[nmin++] = m;
				}
			}
			{
				uint64_t c = m & -m, r = m + c;

				if (!r)
					break;
				m = (((r ^ m) >> 2) / c) | r;
			}
		}
	}
	for (size_t i = 0; i < nmin; i++) {
		struct ana_cp cp;
		size_t n = 0;

		for (size_t j = 0; j < nsp; j++)
			if ((minimal[i] >> j) & 1)
				sub[n++] = sps[j];
		cp.sps = sub;
		cp.nsp = n;
		rc = ana_inf_cp(s, &cp, cut);
		if (rc < 0)
			goto out;
		if (rc == 1 && (rc = cuts_push(out, cut, &cap)))
			goto out;
		rc = 0;
	}
	cuts_minimize(out);
out:
	free(minimal);
	free(truth);
	free(sub);
	free(cut);
	if (rc < 0)
		ana_cuts_free(out);
	return rc;
}
