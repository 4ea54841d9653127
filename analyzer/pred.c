/*
 * pred.c: predicates (schemas/predicates.md, predicate.h) evaluated on recorded states.
 *
 * A simple predicate is evaluated once per state of its process, walking the events in order
 * and keeping the counters its terms read (events, sent, received, bytes, marks...), which
 * gives the bitset the Inf algorithms in inf.c take.  var.SYMBOL needs the live program's
 * memory, so only the replayer can evaluate it.
 */
#include <stdlib.h>
#include <string.h>

#include "ana_internal.h"

struct evalctx {
	const struct ana_session *s;
	size_t p;
	uint64_t k;               /* the state: events executed */
	int64_t sent, received, bytes_sent, bytes_received;
	int64_t *sent_to, *received_from; /* per process */
	int64_t *marks;           /* per interned key */
	int exited;
	const char *var;          /* first var.SYMBOL met, for the message */
	const char *unknown_proc; /* sent(PROC) naming no process */
};

static int term_proc(const struct evalctx *c, const char *name)
{
	return name ? ana_proc_find(c->s, name) : -1;
}

static int term_value(void *ctxp, const struct trace_pred_term *t, int64_t *value)
{
	struct evalctx *c = ctxp;
	const struct ana_ev *e = c->k ? ana__ev(c->s, c->p, c->k) : NULL;
	int q;

	switch (t->kind) {
	case TRACE_TERM_EVENTS:
		*value = (int64_t)c->k;
		return 0;
	case TRACE_TERM_SENT:
		*value = c->sent;
		return 0;
	case TRACE_TERM_RECEIVED:
		*value = c->received;
		return 0;
	case TRACE_TERM_BYTES_SENT:
		*value = c->bytes_sent;
		return 0;
	case TRACE_TERM_BYTES_RECEIVED:
		*value = c->bytes_received;
		return 0;
	case TRACE_TERM_SENT_TO:
	case TRACE_TERM_RECEIVED_FROM:
		q = term_proc(c, t->arg);
		if (q < 0) {
			c->unknown_proc = t->arg ? t->arg : "";
			return TRACE_ENOENT;
		}
		*value = t->kind == TRACE_TERM_SENT_TO ? c->sent_to[q] : c->received_from[q];
		return 0;
	case TRACE_TERM_MARK: {
		int key = t->arg ? ana__find_key(c->s, t->arg) : -1;

		*value = key >= 0 ? c->marks[key] : 0;
		return 0;
	}
	case TRACE_TERM_VAR:
		c->var = t->arg ? t->arg : "";
		return TRACE_EINVAL;
	case TRACE_TERM_IN: {
		const struct ana_stackrec *st = e ? ana__stack(c->s, c->p, e->site) : NULL;

		*value = 0;
		for (uint32_t i = 0; st && t->arg && i < st->nframes; i++)
			if (strcmp(st->fn[i], t->arg) == 0)
				*value = 1;
		return 0;
	}
	case TRACE_TERM_LAST:
		*value = e && e->kind == t->ev_kind;
		return 0;
	case TRACE_TERM_EXITED:
		*value = c->exited;
		return 0;
	default:
		return TRACE_EINVAL;
	}
}

/* Account for event k (already the current state's last event). */
static void step(struct evalctx *c, const struct ana_ev *e)
{
	const struct ana_session *s = c->s;
	int64_t n = e->result > 0 ? e->result : 0;

	switch (e->kind) {
	case TRACE_EV_SEND:
		if (!n)
			break;
		c->sent++;
		c->bytes_sent += n;
		if (e->end != ANA_NONE && s->ends[e->end].peer != ANA_NONE) {
			/* the process holding the other end: the one reading it, else the one using
			 * it at all, else the one that made it */
			const struct ana_end *o = &s->ends[s->ends[e->end].peer];
			uint32_t r = o->reader != ANA_NONE ? o->reader
			             : o->writer != ANA_NONE ? o->writer : o->proc;

			c->sent_to[r]++;
		}
		break;
	case TRACE_EV_RECV:
		if (!n)
			break;
		c->received++;
		c->bytes_received += n;
		if (e->src_proc != ANA_NONE)
			c->received_from[e->src_proc]++;
		break;
	case TRACE_EV_INPUT:
		/* a receive from a peer outside the session (logged with its bytes) is a receive
		 * too; reads of clocks or random bytes have no channel */
		if (n && e->end != ANA_NONE) {
			c->received++;
			c->bytes_received += n;
		}
		break;
	case TRACE_EV_MARK:
		c->marks[e->chan] = e->result;
		break;
	case TRACE_EV_EXIT:
		c->exited = 1;
		break;
	case TRACE_EV_SIGNAL:
		/* a fatal signal ends the process as exit does */
		if (e->fatal)
			c->exited = 1;
		break;
	default:
		break;
	}
}

int ana_sp_bits(const struct ana_session *s, const struct trace_pred_sp *sp, size_t *proc,
                uint64_t **bitsp, struct trace_diag *diag)
{
	struct evalctx c;
	const char *name;
	uint64_t *bits = NULL;
	int p, rc = 0;

	if (!s || !sp || !proc || !bitsp || !s->finished)
		return TRACE_EINVAL;
	*bitsp = NULL;
	name = trace_pred_sp_proc(sp);
	p = name ? ana_proc_find(s, name) : TRACE_ENOENT;
	if (p < 0) {
		ana__diag(diag, TRACE_ENOENT,
		          "the predicate names process '%s', which is not in this session "
		          "(`encore analyze DIR` lists the processes)", name ? name : "");
		return TRACE_ENOENT;
	}
	memset(&c, 0, sizeof(c));
	c.s = s;
	c.p = (size_t)p;
	c.sent_to = calloc(s->nprocs ? s->nprocs : 1, sizeof(int64_t));
	c.received_from = calloc(s->nprocs ? s->nprocs : 1, sizeof(int64_t));
	c.marks = calloc(s->nkeys ? s->nkeys : 1, sizeof(int64_t));
	bits = calloc(ana_bits_words(s, (size_t)p), sizeof(uint64_t));
	if (!c.sent_to || !c.received_from || !c.marks || !bits) {
		rc = TRACE_ENOMEM;
		ana__diag(diag, rc, "out of memory evaluating the predicate");
		goto out;
	}
	for (uint64_t k = 0; k <= s->procs[p].n; k++) {
		int truth = 0;

		c.k = k;
		if (k)
			step(&c, ana__ev(s, (size_t)p, k));
		rc = trace_pred_sp_eval(sp, term_value, &c, &truth);
		if (rc < 0) {
			if (c.var)
				ana__diag(diag, TRACE_EINVAL,
				          "var.%s reads the program's memory: only `encore replay DIR "
				          "--stop` can evaluate it", c.var);
			else if (c.unknown_proc)
				ana__diag(diag, TRACE_ENOENT,
				          "sent()/received() name process '%s', which is not in this "
				          "session", c.unknown_proc);
			else
				ana__diag(diag, rc, "cannot evaluate the predicate on %s: %s",
				          s->procs[p].name, trace_strerror(rc));
			goto out;
		}
		if (truth)
			bits[k >> 6] |= 1ull << (k & 63);
	}
	*proc = (size_t)p;
	*bitsp = bits;
	bits = NULL;
	rc = 0;
out:
	free(bits);
	free(c.sent_to);
	free(c.received_from);
	free(c.marks);
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * Whole predicates
 */
struct spcache {
	const struct trace_pred_sp **sp;
	struct ana_sp *val;
	uint64_t **owned;
	size_t n, cap;
};

static void spcache_free(struct spcache *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->owned[i]);
	free(c->sp);
	free(c->val);
	free(c->owned);
}

static int spcache_get(const struct ana_session *s, struct spcache *c,
                       const struct trace_pred_sp *sp, struct ana_sp *out,
                       struct trace_diag *diag)
{
	size_t proc;
	uint64_t *bits;
	int rc;

	for (size_t i = 0; i < c->n; i++) {
		if (c->sp[i] == sp) {
			*out = c->val[i];
			return 0;
		}
	}
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 8;
		const struct trace_pred_sp **a = realloc(c->sp, nc * sizeof(*a));

		if (!a)
			return TRACE_ENOMEM;
		c->sp = a;
		struct ana_sp *b = realloc(c->val, nc * sizeof(*b));

		if (!b)
			return TRACE_ENOMEM;
		c->val = b;
		uint64_t **o = realloc(c->owned, nc * sizeof(*o));

		if (!o)
			return TRACE_ENOMEM;
		c->owned = o;
		c->cap = nc;
	}
	if ((rc = ana_sp_bits(s, sp, &proc, &bits, diag)))
		return rc;
	c->sp[c->n] = sp;
	c->owned[c->n] = bits;
	c->val[c->n].proc = proc;
	c->val[c->n].bits = bits;
	*out = c->val[c->n++];
	return 0;
}

struct treectx {
	const struct trace_pred_sp *const *sps;
	size_t nsp;
	const uint8_t *truth;
};

static int tree_sp_truth(void *ctx, const struct trace_pred_sp *sp)
{
	struct treectx *t = ctx;

	for (size_t i = 0; i < t->nsp; i++)
		if (t->sps[i] == sp)
			return t->truth[i];
	return TRACE_EINVAL;
}

struct genctx {
	const struct trace_pred *p;
	struct treectx tree;
};

static int general_eval(void *ctx, const uint8_t *truth)
{
	struct genctx *g = ctx;

	g->tree.truth = truth;
	return trace_pred_eval_tree(g->p, tree_sp_truth, &g->tree);
}

/* The first var.SYMBOL the predicate names, for the message saying why we cannot. */
static const char *var_symbol(const struct trace_pred *p)
{
	const struct trace_pred_sp *const *all;
	size_t n = trace_pred_all_sps(p, &all);

	for (size_t i = 0; i < n; i++) {
		const struct trace_pred_term *const *terms;
		size_t nt = trace_pred_sp_terms(all[i], &terms);

		for (size_t j = 0; j < nt; j++)
			if (terms[j]->kind == TRACE_TERM_VAR && terms[j]->arg)
				return terms[j]->arg;
	}
	return "SYMBOL";
}

int ana_inf(const struct ana_session *s, const struct trace_pred *p, struct ana_cuts *out,
            struct trace_diag *diag)
{
	struct spcache cache = {0};
	struct ana_dp *dps = NULL;
	struct ana_cp *cps = NULL;
	struct ana_sp *sps = NULL;
	size_t ndp = 0, ncpt = 0, nspt = 0;
	enum trace_pred_shape shape;
	int rc = 0;

	if (!s || !p || !out || !s->finished)
		return TRACE_EINVAL;
	memset(out, 0, sizeof(*out));
	out->nprocs = s->nprocs;
	if (diag)
		memset(diag, 0, sizeof(*diag));
	if (trace_pred_uses_var(p)) {
		const char *sym = var_symbol(p);

		ana__diag(diag, TRACE_EINVAL,
		          "var.%s reads the program's memory: only `encore replay DIR --stop` can "
		          "evaluate this predicate", sym);
		return TRACE_EINVAL;
	}
	shape = trace_pred_shape(p);
	if (shape == TRACE_PRED_GENERAL) {
		const struct trace_pred_sp *const *all;
		size_t n = trace_pred_all_sps(p, &all);
		struct genctx g;

		if (n > 63) {
			ana__diag(diag, TRACE_EINVAL, "the predicate has %zu simple predicates; a "
			          "general (&& over ||) one may have at most 63", n);
			return TRACE_EINVAL;
		}
		sps = calloc(n ? n : 1, sizeof(*sps));
		if (!sps)
			return TRACE_ENOMEM;
		for (size_t i = 0; i < n; i++)
			if ((rc = spcache_get(s, &cache, all[i], &sps[i], diag)))
				goto out;
		g.p = p;
		g.tree.sps = all;
		g.tree.nsp = n;
		g.tree.truth = NULL;
		rc = ana_inf_general(s, sps, n, general_eval, &g, 0, out);
		goto out;
	}
	/* normal form: DPs of CPs of SPs */
	ndp = trace_pred_ndp(p);
	for (size_t d = 0; d < ndp; d++) {
		size_t ncp = trace_pred_ncp(p, d);

		ncpt += ncp;
		for (size_t c = 0; c < ncp; c++)
			nspt += trace_pred_nsp(p, d, c);
	}
	dps = calloc(ndp ? ndp : 1, sizeof(*dps));
	cps = calloc(ncpt ? ncpt : 1, sizeof(*cps));
	sps = calloc(nspt ? nspt : 1, sizeof(*sps));
	if (!dps || !cps || !sps) {
		rc = TRACE_ENOMEM;
		goto out;
	}
	{
		size_t ci = 0, si = 0;

		for (size_t d = 0; d < ndp; d++) {
			size_t ncp = trace_pred_ncp(p, d);

			dps[d].cps = &cps[ci];
			dps[d].ncp = ncp;
			for (size_t c = 0; c < ncp; c++, ci++) {
				size_t nsp = trace_pred_nsp(p, d, c);

				cps[ci].sps = &sps[si];
				cps[ci].nsp = nsp;
				for (size_t k = 0; k < nsp; k++, si++) {
					const struct trace_pred_sp *sp = trace_pred_get_sp(p, d, c, k);

					if (!sp) {
						rc = TRACE_EINVAL;
						goto out;
					}
					if ((rc = spcache_get(s, &cache, sp, &sps[si], diag)))
						goto out;
				}
			}
		}
	}
	if (ndp == 1)
		rc = ana_inf_dp(s, &dps[0], out);
	else
		rc = ana_inf_lp(s, dps, ndp, 0, out);
out:
	if (rc == TRACE_ENOMEM && diag && !diag->msg[0])
		ana__diag(diag, rc, "out of memory computing Inf(P)");
	spcache_free(&cache);
	free(dps);
	free(cps);
	free(sps);
	if (rc < 0)
		ana_cuts_free(out);
	return rc;
}

/* in(f): whether some stack of some process holds f. */
static int function_seen(const struct ana_session *s, const char *f)
{
	for (size_t p = 0; p < s->nprocs; p++)
		for (size_t i = 0; i < s->procs[p].nstacks; i++) {
			const struct ana_stackrec *st = &s->procs[p].stacks[i];

			for (uint32_t k = 0; k < st->nframes; k++)
				if (st->fn[k] && strcmp(st->fn[k], f) == 0)
					return 1;
		}
	return 0;
}

size_t ana_pred_unknown_names(const struct ana_session *s, const struct trace_pred *p,
                              char *buf, size_t cap)
{
	const struct trace_pred_sp *const *sps;
	size_t nsp = trace_pred_all_sps(p, &sps), n = 0, pos = 0;

	if (cap)
		buf[0] = '\0';
	for (size_t i = 0; i < nsp; i++) {
		const struct trace_pred_term *const *t;
		size_t nt = trace_pred_sp_terms(sps[i], &t);

		for (size_t j = 0; j < nt; j++) {
			int unknown = 0;

			if (!t[j]->arg)
				continue;
			if (t[j]->kind == TRACE_TERM_MARK)
				unknown = ana__find_key(s, t[j]->arg) < 0;
			else if (t[j]->kind == TRACE_TERM_IN)
				unknown = !function_seen(s, t[j]->arg);
			if (!unknown)
				continue;
			n++;
			if (cap && pos < cap)
				pos += (size_t)snprintf(buf + pos, cap - pos,
				                        t[j]->kind == TRACE_TERM_MARK ? "%smark.%s" : "%sin(%s)",
				                        pos ? ", " : "", t[j]->arg);
		}
	}
	return n;
}
