/*
 * vclock.c: happened-before as a walk and as vector clocks, for the writers that need every
 * event placed at once (space-time diagrams, Lamport ranks, ShiViz's vector clocks).
 *
 * Both follow exactly the edges ana_hb follows (ana_event_deps: the fork of a first event, a
 * receive's send, an accept's connect, an end of file's releases, the receive that made room
 * for a send, the send a readiness result saw) plus program order.  The clocks are Fidge's
 * and Mattern's: entry q of an event's clock is the last event of q that happened before it
 * or is it.  They cost nprocs entries per event, which is why ana_hb keeps reachability
 * columns instead (README.md, "Memory and speed"); the clocks are for sessions a person
 * looks at.
 */
#include <stdlib.h>
#include <string.h>

#include "ana_internal.h"

/* Runs BODY with (dq_, dj_) set to each in-edge of (p, k) beyond program order: the edges
 * ana_event_deps lists, read from the model directly. */
#define ANA_FOR_DEPS(s, p, k, e, BODY)                                                     \
	do {                                                                               \
		const struct ana_proc *pr_ = &(s)->procs[p];                               \
		uint32_t dq_;                                                              \
		uint64_t dj_;                                                              \
                                                                                           \
		if ((k) == 1 && pr_->fparent != ANA_NONE) {                                \
			dq_ = pr_->fparent;                                                \
			dj_ = pr_->fidx;                                                   \
			BODY                                                               \
		}                                                                          \
		if (ana__in_edge(e)) {                                                     \
			dq_ = (e)->src_proc;                                               \
			dj_ = (e)->src_idx;                                                \
			BODY                                                               \
		}                                                                          \
		if ((e)->xin) {                                                            \
			size_t nx_;                                                        \
			const struct ana_xedge *x_ = ana__xedges((s)->xin, (s)->nxin,      \
			                                         (uint32_t)(p), (k), &nx_); \
                                                                                           \
			for (size_t i_ = 0; i_ < nx_; i_++) {                              \
				if (x_[i_].oproc == ANA_NONE)                              \
					continue;                                          \
				dq_ = x_[i_].oproc;                                        \
				dj_ = x_[i_].oidx;                                         \
				BODY                                                       \
			}                                                                  \
		}                                                                          \
	} while (0)

/* 1 when every in-edge of (p, k) comes from an event already visited (done[q] >= j). */
static int ready(const struct ana_session *s, const uint64_t *done, size_t p, uint64_t k)
{
	const struct ana_ev *e = ana__ev(s, p, k);
	int ok = 1;

	ANA_FOR_DEPS(s, p, k, e, {
		if (done[dq_] < dj_)
			ok = 0;
	});
	return ok;
}

int ana_sweep(const struct ana_session *s, int (*fn)(void *ctx, size_t p, uint64_t k),
              void *ctx)
{
	uint64_t *done, count = 0;
	int progress, rc = 0;

	if (!s || !s->finished || !fn)
		return TRACE_EINVAL;
	if (!(done = calloc(s->nprocs ? s->nprocs : 1, sizeof(*done))))
		return TRACE_ENOMEM;
	/* Each pass runs every process, in number order, as far as its in-edges allow; a pass
	 * that moves nobody while events remain means a cycle (ana_finish refuses those). */
	do {
		progress = 0;
		for (size_t p = 0; p < s->nprocs && !rc; p++) {
			while (done[p] < s->procs[p].n && ready(s, done, p, done[p] + 1)) {
				if ((rc = fn(ctx, p, done[p] + 1)))
					break;
				done[p]++;
				count++;
				progress = 1;
			}
		}
	} while (!rc && progress && count < s->total);
	free(done);
	if (rc)
		return rc;
	return count == s->total ? 0 : TRACE_ECORRUPT;
}

struct ana_vclocks {
	size_t nprocs;
	uint32_t *first;         /* per process: the node of its event 1 (ana_hbg numbering) */
	uint32_t *vc;            /* node * nprocs: the clock of the node */
};

/* The model as an ana_hbg: every event a node. */
struct model_graph {
	const struct ana_session *s;
	const uint32_t *first;
};

static uint32_t mg_index(const void *ctx, uint32_t k, uint32_t p)
{
	const struct model_graph *m = ctx;

	return k - m->first[p] + 1;
}

static uint32_t mg_nsrcs(const void *ctx, uint32_t k, uint32_t p)
{
	const struct model_graph *m = ctx;
	const struct ana_session *s = m->s;
	uint64_t j = k - m->first[p] + 1;
	const struct ana_ev *e = ana__ev(s, p, j);
	uint32_t n = (j == 1 && s->procs[p].fparent != ANA_NONE) + ana__in_edge(e);

	if (e->xin) {
		size_t nx;

		ana__xedges(s->xin, s->nxin, p, j, &nx);
		n += (uint32_t)nx;
	}
	return n;
}

static int mg_src(const void *ctx, uint32_t k, uint32_t p, uint32_t i,
                  struct ana_hbg_src *out)
{
	const struct model_graph *m = ctx;
	const struct ana_session *s = m->s;
	uint64_t j = k - m->first[p] + 1;
	const struct ana_ev *e = ana__ev(s, p, j);
	uint32_t n = 0;

	out->proc = ANA_NONE;
	ANA_FOR_DEPS(s, p, j, e, {
		if (n++ == i) {
			out->proc = dq_;
			out->index = (uint32_t)dj_;
		}
	});
	if (out->proc == ANA_NONE)
		return 0; /* an end-of-file edge given way to break a cycle */
	out->node = m->first[out->proc] + out->index - 1;
	return 1;
}

void ana_vclocks_free(struct ana_vclocks *v)
{
	if (!v)
		return;
	free(v->first);
	free(v->vc);
	free(v);
}

int ana_vclocks_new(const struct ana_session *s, struct ana_vclocks **out)
{
	struct ana_vclocks *v;
	struct model_graph m;
	struct ana_hbg g;
	uint32_t *topo = NULL;
	size_t np;
	int rc = TRACE_ENOMEM;

	if (!s || !s->finished || !out)
		return TRACE_EINVAL;
	*out = NULL;
	np = s->nprocs;
	if (s->total >= UINT32_MAX - 1 ||
	    (np && (s->total + 1) > SIZE_MAX / sizeof(uint32_t) / np))
		return TRACE_ENOMEM;
	if (!(v = calloc(1, sizeof(*v))))
		return TRACE_ENOMEM;
	v->nprocs = np;
	v->first = malloc((np + 1) * sizeof(*v->first));
	v->vc = malloc((s->total + 1) * (np ? np : 1) * sizeof(*v->vc));
	topo = malloc((s->total ? s->total : 1) * sizeof(*topo));
	if (!v->first || !v->vc || !topo)
		goto out;
	v->first[0] = 1;
	for (size_t p = 0; p < np; p++)
		v->first[p + 1] = v->first[p] + (uint32_t)s->procs[p].n;
	m.s = s;
	m.first = v->first;
	g.nprocs = np;
	g.nnodes = s->total;
	g.first = v->first;
	g.ctx = &m;
	g.index = mg_index;
	g.nsrcs = mg_nsrcs;
	g.src = mg_src;
	if ((rc = ana_hbg_order(&g, topo)))
		goto out;
	ana_hbg_vclocks32(&g, topo, v->vc);
out:
	free(topo);
	if (rc)
		ana_vclocks_free(v);
	else
		*out = v;
	return rc;
}

const uint32_t *ana_vclock(const struct ana_vclocks *v, size_t p, uint64_t k)
{
	return v->vc + (v->first[p] + k - 1) * v->nprocs;
}
