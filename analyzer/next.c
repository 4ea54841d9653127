/*
 * next.c: the next global state where a predicate holds, from a given consistent cut on
 * (for `encore debug`'s continue, cli/cmd_debug.c).
 *
 * Inf(P) (Manabe & Imase section 3) is the least consistent cut where P holds.  A debugger
 * that has already halted at a cut C wants the least one at or after C, or, to go on, strictly
 * after it.  For a conjunctive P the consistent cuts satisfying it are closed under meet, and
 * so are those above C: masking each simple predicate's states below its process's floor
 * (C[p], or C[p] + 1 strictly) and joining Inf of the masked predicate with C gives the least
 * such cut (the join of two consistent cuts is consistent, and P names only processes whose
 * state the mask already kept at or above their floor).  A disjunctive P takes the smallest
 * of its conjuncts' cuts (fewest events).  "Strictly after" means that every process P names
 * has moved past its state in C, so that a predicate that still holds is found again only
 * after its processes moved on (schemas/json.md and docs/man/encore-debug.1.scd say so).
 * ana_term_at gives one term's value at one state, for `trace C print E` (Manabe & Imase
 * section 4), counted as the predicate evaluator (pred.c) counts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ana.h"
#include "ana_internal.h"

/* Clear the states of bits[] below floor (states 0..floor-1). */
static void mask_below(uint64_t *bits, uint64_t floor, size_t words)
{
	for (uint64_t k = 0; k < floor && k / 64 < words; k++)
		bits[k / 64] &= ~((uint64_t)1 << (k % 64));
}

/* One CP of the normal form: 1 and cut[] when it holds at or above the floors, 0 when not. */
static int next_cp(const struct ana_session *s, const struct trace_pred *p, size_t c,
                   const uint64_t *cur, int strict, uint64_t *cut, struct trace_diag *diag)
{
	size_t nsp = trace_pred_nsp(p, 0, c), n = ana_nprocs(s);
	struct ana_sp *sps = calloc(nsp ? nsp : 1, sizeof(*sps));
	uint64_t **owned = calloc(nsp ? nsp : 1, sizeof(*owned));
	struct ana_cp cp;
	int rc = 0;

	if (!sps || !owned) {
		rc = TRACE_ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < nsp; k++) {
		size_t proc;

		if ((rc = ana_sp_bits(s, trace_pred_get_sp(p, 0, c, k), &proc, &owned[k], diag)))
			goto out;
		mask_below(owned[k], cur[proc] + (strict ? 1 : 0), ana_bits_words(s, proc));
		sps[k].proc = proc;
		sps[k].bits = owned[k];
	}
	cp.sps = sps;
	cp.nsp = nsp;
	if ((rc = ana_inf_cp(s, &cp, cut)) == 1)
		for (size_t q = 0; q < n; q++)
			if (cut[q] < cur[q])
				cut[q] = cur[q];
out:
	for (size_t k = 0; owned && k < nsp; k++)
		free(owned[k]);
	free(owned);
	free(sps);
	return rc;
}

static uint64_t total(const uint64_t *cut, size_t n)
{
	uint64_t t = 0;

	for (size_t q = 0; q < n; q++)
		t += cut[q];
	return t;
}

int ana_inf_next(const struct ana_session *s, const struct trace_pred *p, const uint64_t *cur,
                 int strict, uint64_t *cut, struct trace_diag *diag)
{
	enum trace_pred_shape shape;
	size_t n, ncp;
	uint64_t *tmp;
	int found = 0, rc = 0;

	if (!s || !p || !cur || !cut)
		return TRACE_EINVAL;
	if (diag)
		memset(diag, 0, sizeof(*diag));
	shape = trace_pred_shape(p);
	if (shape != TRACE_PRED_CONJUNCTIVE && shape != TRACE_PRED_DISJUNCTIVE) {
		if (diag) {
			diag->code = TRACE_EINVAL;
			snprintf(diag->msg, sizeof(diag->msg), "the next state after a halt is computed "
			         "for conjunctive and disjunctive predicates only (this one is %s)",
			         shape == TRACE_PRED_LINKED ? "linked" : "general");
		}
		return TRACE_EINVAL;
	}
	if (trace_pred_uses_var(p)) {
		if (diag) {
			diag->code = TRACE_EINVAL;
			snprintf(diag->msg, sizeof(diag->msg), "var. terms read the program's memory: "
			         "only the online protocol (encore replay --stop) evaluates them");
		}
		return TRACE_EINVAL;
	}
	n = ana_nprocs(s);
	if (!ana_consistent(s, cur))
		return TRACE_EINVAL;
	if (!(tmp = calloc(n ? n : 1, sizeof(*tmp))))
		return TRACE_ENOMEM;
	ncp = trace_pred_ncp(p, 0);
	for (size_t c = 0; c < ncp; c++) {
		if ((rc = next_cp(s, p, c, cur, strict, tmp, diag)) < 0)
			break;
		if (rc == 1 && (!found || total(tmp, n) < total(cut, n))) {
			memcpy(cut, tmp, n * sizeof(*cut));
			found = 1;
		}
	}
	free(tmp);
	return rc < 0 ? rc : found;
}

int ana_term_at(const struct ana_session *s, size_t p, uint64_t k,
                const struct trace_pred_term *t, int64_t *value)
{
	int64_t v = 0;
	int q = -1, key = -1;

	if (!s || !t || !value || p >= s->nprocs || k > ana_nevents(s, p))
		return TRACE_EINVAL;
	if (t->kind == TRACE_TERM_SENT_TO || t->kind == TRACE_TERM_RECEIVED_FROM) {
		if ((q = t->arg ? ana_proc_find(s, t->arg) : TRACE_ENOENT) < 0)
			return TRACE_ENOENT;
	}
	if (t->kind == TRACE_TERM_MARK && t->arg)
		key = ana__find_key(s, t->arg);
	switch (t->kind) {
	case TRACE_TERM_EVENTS:
		*value = (int64_t)k;
		return 0;
	case TRACE_TERM_LAST:
		*value = k && ana__ev(s, p, k)->kind == t->ev_kind;
		return 0;
	case TRACE_TERM_VAR:
	case TRACE_TERM_IN:
		return TRACE_EINVAL;
	default:
		break;
	}
	for (uint64_t i = 1; i <= k; i++) {
		const struct ana_ev *e = ana__ev(s, p, i);
		int64_t n = e->result > 0 ? e->result : 0;
		int moved = n && (e->kind == TRACE_EV_SEND || e->kind == TRACE_EV_RECV ||
		                  (e->kind == TRACE_EV_INPUT && e->end != ANA_NONE));
		int in = e->kind != TRACE_EV_SEND;

		switch (t->kind) {
		case TRACE_TERM_SENT: v += moved && !in; break;
		case TRACE_TERM_RECEIVED: v += moved && in; break;
		case TRACE_TERM_BYTES_SENT: v += moved && !in ? n : 0; break;
		case TRACE_TERM_BYTES_RECEIVED: v += moved && in ? n : 0; break;
		case TRACE_TERM_RECEIVED_FROM:
			v += moved && e->kind == TRACE_EV_RECV && e->src_proc == (uint32_t)q;
			break;
		case TRACE_TERM_SENT_TO:
			if (moved && !in && e->end != ANA_NONE && s->ends[e->end].peer != ANA_NONE) {
				const struct ana_end *o = &s->ends[s->ends[e->end].peer];
				uint32_t r = o->reader != ANA_NONE ? o->reader
				             : o->writer != ANA_NONE ? o->writer : o->proc;

				v += r == (uint32_t)q;
			}
			break;
		case TRACE_TERM_MARK:
			if (e->kind == TRACE_EV_MARK && key >= 0 && e->chan == (uint32_t)key)
				v = e->result;
			break;
		case TRACE_TERM_EXITED:
			v |= e->kind == TRACE_EV_EXIT || (e->kind == TRACE_EV_SIGNAL && e->fatal);
			break;
		default:
			return TRACE_EINVAL;
		}
	}
	*value = v;
	return 0;
}
