/*
 * stable.c: simultaneous events (Spezialetti & Gupta, Definition 1.1 and section 3): their
 * text, the monotonicity of their components, the valid recognition points of section
 * 3.2.4 in a solved DCFG (dcfg.c), and the check of a recorded run at the Inf cut of the
 * conjunction of the components.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "ana_internal.h"
#include "dcfg_internal.h"

struct ana_se {
	size_t n;
	struct trace_pred **preds;
	char **texts;
	int *mono;
};

/* ---------------------------------------------------------------------------------------
 * Text.  `==` is not in the predicate grammar (schemas/predicates.md) and is also a LOCAL
 * comparison, so a separator is: `==` at parenthesis depth 0, white space right before and
 * right after it, and then a process name followed by `:` (not `::`).  `a: mark.x == 2`
 * and `a: (sent == received)` are comparisons; `a: sent > 1 == b: exited` is two parts.
 */
static int is_proc_char(int c)
{
	return isalnum(c) || c == '_' || c == '-' || c == '.';
}

static int separator_at(const char *t, size_t i)
{
	size_t j = i + 2;

	if (i == 0 || !isspace((unsigned char)t[i - 1]) || !isspace((unsigned char)t[j]))
		return 0;
	while (isspace((unsigned char)t[j]))
		j++;
	if (!isalnum((unsigned char)t[j]) && t[j] != '_')
		return 0;
	while (is_proc_char((unsigned char)t[j]) && !(t[j] == '-' && t[j + 1] == '>'))
		j++;
	while (isspace((unsigned char)t[j]))
		j++;
	return t[j] == ':' && t[j + 1] != ':';
}

static int mono_of(const char *local);

void ana_se_free(struct ana_se *se)
{
	if (!se)
		return;
	for (size_t i = 0; i < se->n; i++) {
		trace_pred_free(se->preds[i]);
		free(se->texts[i]);
	}
	free(se->preds);
	free(se->texts);
	free(se->mono);
	free(se);
}

static int add_part(struct ana_se *se, const char *text, size_t from, size_t to,
                    struct trace_diag *diag)
{
	char *part;

	while (from < to && isspace((unsigned char)text[from]))
		from++;
	while (to > from && isspace((unsigned char)text[to - 1]))
		to--;
	part = strndup(text + from, to - from);
	struct trace_pred *p = NULL;
	struct trace_diag d;
	char buf[1024];
	int rc;

	if (!part)
		return TRACE_ENOMEM;
	memset(&d, 0, sizeof(d));
	if ((rc = trace_pred_parse(part, &p, &d))) {
		/* the parser's message names the column within the part */
		ana__diag(diag, rc, "part %zu `%s`: %s", se->n + 1, part,
		          d.msg[0] ? d.msg : trace_strerror(rc));
		if (diag)
			diag->offset = from + d.offset;
		free(part);
		return rc;
	}
	if (trace_pred_ndp(p) != 1 || trace_pred_ncp(p, 0) != 1 || trace_pred_nsp(p, 0, 0) != 1) {
		ana__diag(diag, TRACE_EPARSE, "part %zu `%s`: each part must be "
		          "one `PROC: LOCAL` (combine conditions of one process with `and`)",
		          se->n + 1, part);
		if (diag)
			diag->offset = from;
		trace_pred_free(p);
		free(part);
		return TRACE_EPARSE;
	}
	for (size_t i = 0; i < se->n; i++)
		if (strcmp(trace_pred_sp_proc(trace_pred_get_sp(se->preds[i], 0, 0, 0)),
		           trace_pred_sp_proc(trace_pred_get_sp(p, 0, 0, 0))) == 0) {
			ana__diag(diag, TRACE_EPARSE, "parts %zu and %zu both name process %s; each "
			          "LE_i is local to its own process (combine them with `and`)", i + 1,
			          se->n + 1, trace_pred_sp_proc(trace_pred_get_sp(p, 0, 0, 0)));
			if (diag)
				diag->offset = from;
			trace_pred_free(p);
			free(part);
			return TRACE_EPARSE;
		}
	se->preds[se->n] = p;
	se->texts[se->n] = part;
	trace_pred_sp_format(trace_pred_get_sp(p, 0, 0, 0), buf, sizeof(buf));
	{
		const char *colon = strchr(buf, ':');

		se->mono[se->n] = colon ? mono_of(colon + 1) : 0;
	}
	se->n++;
	return 0;
}

int ana_se_parse(const char *text, struct ana_se **out, struct trace_diag *diag)
{
	struct ana_se *se;
	size_t len, from = 0, cap;
	int depth = 0, rc = 0;

	if (!text || !out)
		return TRACE_EINVAL;
	*out = NULL;
	len = strlen(text);
	cap = len / 2 + 2;
	if (!(se = calloc(1, sizeof(*se))) || !(se->preds = calloc(cap, sizeof(*se->preds))) ||
	    !(se->texts = calloc(cap, sizeof(*se->texts))) ||
	    !(se->mono = calloc(cap, sizeof(*se->mono)))) {
		ana_se_free(se);
		return TRACE_ENOMEM;
	}
	for (size_t i = 0; i <= len; i++) {
		if (i < len && text[i] == '(')
			depth++;
		else if (i < len && text[i] == ')')
			depth--;
		if (i == len || (depth == 0 && text[i] == '=' && text[i + 1] == '=' &&
		                 separator_at(text, i))) {
			if ((rc = add_part(se, text, from, i, diag)))
				goto out;
			from = i + 2;
			i++;
		}
	}
	if (se->n < 2) {
		ana__diag(diag, TRACE_EPARSE, "a simultaneous event needs at least two parts joined "
		          "by ` == ` before a process name, as in `a: sent == received + 1 == b: "
		          "received == 2`");
		rc = TRACE_EPARSE;
		goto out;
	}
	*out = se;
	return 0;
out:
	ana_se_free(se);
	return rc;
}

size_t ana_se_ncomp(const struct ana_se *se)
{
	return se ? se->n : 0;
}

const struct trace_pred_sp *ana_se_sp(const struct ana_se *se, size_t i)
{
	return se && i < se->n ? trace_pred_get_sp(se->preds[i], 0, 0, 0) : NULL;
}

const char *ana_se_text(const struct ana_se *se, size_t i)
{
	return se && i < se->n ? se->texts[i] : NULL;
}

int ana_se_monotonic(const struct ana_se *se, size_t i)
{
	return se && i < se->n ? se->mono[i] : 0;
}

const char *ana_se_class_name(uint32_t cls)
{
	switch (cls) {
	case ANA_SE_LOCAL: return "local";
	case ANA_SE_MONOTONIC: return "monotonic";
	case ANA_SE_DEPENDENT: return "dependent monotonic";
	case ANA_SE_GENERALIZED: return "generalized dependent monotonic";
	default: return "invalid";
	}
}

/* ---------------------------------------------------------------------------------------
 * Monotonicity (3.1: "once the event has occurred it always remains true"), read from the
 * canonical LOCAL text.  Integers carry INC (never decreases from state to state), DEC
 * (never increases) and NNEG (never negative); conditions UP (once true, true after) and
 * DOWN (once false, false after).  Counters (events, sent, received, bytes_*) are INC|NNEG,
 * `exited` is UP; marks, variables, in() and last() are neither.
 */
enum { M_INC = 1, M_DEC = 2, M_NNEG = 4, M_CONST = 8, M_UP = 16, M_DOWN = 32, M_ZERO = 64 };

struct mparse {
	const char *s;
	int err;
};

static void mskip(struct mparse *m)
{
	while (isspace((unsigned char)*m->s))
		m->s++;
}

static int mword(struct mparse *m, const char *w)
{
	size_t n = strlen(w);

	mskip(m);
	if (strncmp(m->s, w, n) == 0 && !isalnum((unsigned char)m->s[n]) && m->s[n] != '_' &&
	    m->s[n] != '.') {
		m->s += n;
		return 1;
	}
	return 0;
}

static int mor(struct mparse *m);

static int mprimary(struct mparse *m)
{
	static const char *const counters[] = {"events", "sent", "received", "bytes_sent",
	                                       "bytes_received"};
	const char *start;

	mskip(m);
	if (*m->s == '(') {
		int v;

		m->s++;
		v = mor(m);
		mskip(m);
		if (*m->s == ')')
			m->s++;
		else
			m->err = 1;
		return v;
	}
	if (isdigit((unsigned char)*m->s)) {
		long long v = strtoll(m->s, (char **)&m->s, 0);

		return M_INC | M_DEC | M_CONST | (v >= 0 ? M_NNEG : 0) | (v == 0 ? M_ZERO : 0);
	}
	start = m->s;
	while (isalnum((unsigned char)*m->s) || *m->s == '_' || *m->s == '.')
		m->s++;
	if (m->s == start) {
		m->err = 1;
		return 0;
	}
	{
		size_t n = (size_t)(m->s - start);
		int flags = 0;

		for (size_t i = 0; i < sizeof(counters) / sizeof(*counters); i++)
			if (strlen(counters[i]) == n && strncmp(start, counters[i], n) == 0)
				flags = M_INC | M_NNEG;
		if (n == 6 && strncmp(start, "exited", 6) == 0)
			flags = M_UP;
		mskip(m);
		if (*m->s == '(') { /* sent(P), received(P) keep the counter's flags; in(), last() */
			int depth = 0;

			if (!(n == 4 && strncmp(start, "sent", 4) == 0) &&
			    !(n == 8 && strncmp(start, "received", 8) == 0))
				flags = 0;
			do {
				depth += *m->s == '(';
				depth -= *m->s == ')';
				m->s++;
			} while (*m->s && depth);
		}
		return flags;
	}
}

static int munary(struct mparse *m)
{
	mskip(m);
	if (*m->s == '-' && !isdigit((unsigned char)m->s[1])) {
		int v;

		m->s++;
		v = munary(m);
		return (v & M_CONST) | (v & M_INC ? M_DEC : 0) | (v & M_DEC ? M_INC : 0) |
		       (v & M_ZERO ? M_ZERO | M_NNEG : 0);
	}
	if (*m->s == '-') { /* a negative literal */
		long long v = strtoll(m->s, (char **)&m->s, 0);

		return M_INC | M_DEC | M_CONST | (v == 0 ? M_ZERO | M_NNEG : 0);
	}
	return mprimary(m);
}

static int madd(struct mparse *m)
{
	int v = munary(m);

	for (;;) {
		int op, w;

		mskip(m);
		if (*m->s != '+' && *m->s != '-')
			return v;
		op = *m->s++;
		w = munary(m);
		if (op == '+')
			v = (v & w & (M_INC | M_DEC | M_NNEG | M_CONST)) ;
		else
			v = (v & w & M_CONST) | (v & M_INC && w & M_DEC ? M_INC : 0) |
			    (v & M_DEC && w & M_INC ? M_DEC : 0);
	}
}

static int mcmp(struct mparse *m)
{
	int a = madd(m), b, up = 0, down = 0;
	char op[3] = {0};

	mskip(m);
	if (strchr("=!<>", *m->s) && *m->s) {
		op[0] = *m->s++;
		if (*m->s == '=')
			op[1] = *m->s++;
	} else {
		return a; /* a condition (or an integer the canonical form left bare) */
	}
	b = madd(m);
	if ((a & M_CONST) && (b & M_CONST))
		return M_UP | M_DOWN;
	if (!strcmp(op, ">=") || !strcmp(op, ">")) {
		up = (a & M_INC) && (b & M_DEC);
		down = (a & M_DEC) && (b & M_INC);
	} else if (!strcmp(op, "<=") || !strcmp(op, "<")) {
		up = (a & M_DEC) && (b & M_INC);
		down = (a & M_INC) && (b & M_DEC);
	} else if (!strcmp(op, "!=")) {
		/* a non-negative counter != 0 is counter > 0 */
		up = ((a & M_INC) && (a & M_NNEG) && (b & M_ZERO)) ||
		     ((b & M_INC) && (b & M_NNEG) && (a & M_ZERO));
	} else if (!strcmp(op, "==")) {
		down = ((a & M_INC) && (a & M_NNEG) && (b & M_ZERO)) ||
		       ((b & M_INC) && (b & M_NNEG) && (a & M_ZERO));
	}
	return (up ? M_UP : 0) | (down ? M_DOWN : 0);
}

static int mnot(struct mparse *m)
{
	if (mword(m, "not")) {
		int v = mnot(m);

		return (v & M_UP ? M_DOWN : 0) | (v & M_DOWN ? M_UP : 0);
	}
	return mcmp(m);
}

static int mand(struct mparse *m)
{
	int v = mnot(m);

	while (mword(m, "and"))
		v &= mnot(m) | ~(M_UP | M_DOWN);
	return v;
}

static int mor(struct mparse *m)
{
	int v = mand(m);

	while (mword(m, "or"))
		v &= mand(m) | ~(M_UP | M_DOWN);
	return v;
}

static int mono_of(const char *local)
{
	struct mparse m = {local, 0};
	int v = mor(&m);

	mskip(&m);
	return !m.err && !*m.s && (v & M_UP) ? 1 : 0;
}

/* ---------------------------------------------------------------------------------------
 * 3.2.3, stability of a local event along the paths S_i ~> R_i of its process: the nodes
 * and edges on some path from S_i to the next R_i (StatsAlongPaths), checked against the
 * terms the LOCAL reads.
 */
static int term_changed_by_node(const struct trace_pred_term *t, uint32_t kind)
{
	switch (t->kind) {
	case TRACE_TERM_EVENTS: case TRACE_TERM_IN: case TRACE_TERM_LAST: case TRACE_TERM_VAR:
		return 1;
	case TRACE_TERM_SENT: case TRACE_TERM_SENT_TO: case TRACE_TERM_BYTES_SENT:
		return kind == ANA_NODE_SEND;
	case TRACE_TERM_RECEIVED: case TRACE_TERM_RECEIVED_FROM: case TRACE_TERM_BYTES_RECEIVED:
		return kind == ANA_NODE_RECV;
	default:
		return 0;
	}
}

static int term_changed_by_flow(const struct trace_pred_term *t, const struct dcfg_flow *f)
{
	switch (t->kind) {
	case TRACE_TERM_EVENTS: case TRACE_TERM_IN: case TRACE_TERM_LAST: case TRACE_TERM_VAR:
		return f->kinds != 0;
	case TRACE_TERM_MARK:
		for (size_t i = 0; i < f->nmarks; i++)
			if (t->arg && strcmp(t->arg, f->marks[i]) == 0)
				return 1;
		return 0;
	case TRACE_TERM_EXITED:
		return (f->kinds & ((1ull << TRACE_EV_EXIT) | (1ull << TRACE_EV_SIGNAL) |
		                    (1ull << TRACE_EV_EXEC))) != 0;
	default:
		return 0;
	}
}

/* ANA_SE_DEPENDENT when R is the only successor of S with nothing recorded between them,
 * ANA_SE_GENERALIZED when nothing on the paths S ~> R changes a term of sp, else
 * ANA_SE_INVALID.  `seen` is scratch of nnodes bytes, `stack` of nnodes entries. */
static uint32_t path_class(const struct ana_dcfg *g, uint32_t s, uint32_t r,
                           const struct trace_pred_sp *sp, uint8_t *seen, uint32_t *stack)
{
	const struct dcfg_node *ns = &g->nodes[s];
	const struct trace_pred_term *const *terms;
	size_t nt = trace_pred_sp_terms(sp, &terms), top = 0;
	uint32_t cls = ANA_SE_GENERALIZED;

	if (ns->nsucc == 1 && g->flows[ns->succ[0]].b == r && g->flows[ns->succ[0]].kinds == 0)
		return ANA_SE_DEPENDENT;
	memset(seen, 0, g->nnodes);
	stack[top++] = s;
	seen[s] = 1;
	while (top) {
		const struct dcfg_node *x = &g->nodes[stack[--top]];

		for (uint32_t i = 0; i < x->nsucc; i++) {
			const struct dcfg_flow *f = &g->flows[x->succ[i]];

			/* only edges on a path to r count */
			if (f->b != r && !dcfg_has(dcfg_set(g, g->reach, f->b), r))
				continue;
			for (size_t t = 0; t < nt; t++)
				if (term_changed_by_flow(terms[t], f))
					cls = ANA_SE_INVALID;
			if (f->b == r || seen[f->b])
				continue;
			seen[f->b] = 1;
			for (size_t t = 0; t < nt; t++)
				if (term_changed_by_node(terms[t], g->nodes[f->b].kind))
					cls = ANA_SE_INVALID;
			stack[top++] = f->b;
		}
	}
	return cls;
}

/* ---------------------------------------------------------------------------------------
 * 3.2.4, valid recognition points.
 */
void ana_recogs_free(struct ana_recogs *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].w);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

static int reach_star(const struct ana_dcfg *g, size_t a, size_t b)
{
	return a == b || dcfg_has(dcfg_set(g, g->reach, a), b);
}

/* 1 if x can run after a and at or before b on a path that does not execute a again:
 * a ~> x ~> b, with x == b allowed and a itself excluded. */
static int between(const struct ana_dcfg *g, size_t a, size_t b, size_t x, uint8_t *seen,
                   uint32_t *stack)
{
	size_t top = 0;
	int hit_x = 0;

	if (a == b)
		return 0;
	memset(seen, 0, g->nnodes);
	seen[a] = 1;
	stack[top++] = (uint32_t)a;
	/* forward from a without re-entering a: is x there? */
	while (top && !hit_x) {
		const struct dcfg_node *y = &g->nodes[stack[--top]];

		for (uint32_t i = 0; i < y->nsucc; i++) {
			uint32_t z = g->flows[y->succ[i]].b;

			if (seen[z])
				continue;
			seen[z] = 1;
			hit_x |= z == x;
			stack[top++] = z;
		}
	}
	if (!hit_x)
		return 0;
	if (x == b)
		return 1;
	/* and from x on to b, still without a */
	memset(seen, 0, g->nnodes);
	seen[a] = 1;
	seen[x] = 1;
	top = 0;
	stack[top++] = (uint32_t)x;
	while (top) {
		const struct dcfg_node *y = &g->nodes[stack[--top]];

		for (uint32_t i = 0; i < y->nsucc; i++) {
			uint32_t z = g->flows[y->succ[i]].b;

			if (z == b)
				return 1;
			if (seen[z])
				continue;
			seen[z] = 1;
			stack[top++] = z;
		}
	}
	return 0;
}

/* One way to satisfy a component at a point. */
struct option {
	struct ana_se_witness w;
	int rank;
};

struct search {
	const struct ana_dcfg *g;
	size_t ncomp;
	struct option **opts;    /* per component */
	size_t *nopts;
	size_t *pick;
	size_t steps, bound;
	int bound_hit;
};

static int comparable(const struct ana_dcfg *g, size_t a, size_t b)
{
	return reach_star(g, a, b) || reach_star(g, b, a);
}

/* PathExists (3.2.4) for both lists at once: the receives R_i^P chosen so far must lie on
 * one path from start to p, the sends S_i^P on one path from p to stop.  Since Reach is
 * transitive, a set of nodes lies on one path iff every two of them are ordered by Reach
 * (the paper's insertion into PATH succeeds exactly then). */
static int dfs(struct search *se, size_t c)
{
	if (c == se->ncomp)
		return 1;
	for (size_t k = 0; k < se->nopts[c]; k++) {
		const struct ana_se_witness *w = &se->opts[c][k].w;
		int ok = 1;

		if (++se->steps > se->bound) {
			se->bound_hit = 1;
			return 0;
		}
		for (size_t d = 0; d < c && ok; d++) {
			const struct ana_se_witness *v = &se->opts[d][se->pick[d]].w;

			if (w->pre_recv != ANA_NO_NODE && v->pre_recv != ANA_NO_NODE)
				ok = comparable(se->g, w->pre_recv, v->pre_recv);
			if (ok && w->post_send != ANA_NO_NODE && v->post_send != ANA_NO_NODE)
				ok = comparable(se->g, w->post_send, v->post_send);
		}
		if (!ok)
			continue;
		se->pick[c] = k;
		if (dfs(se, c + 1))
			return 1;
		if (se->bound_hit)
			return 0;
	}
	return 0;
}

static int cmp_option(const void *a, const void *b)
{
	const struct option *x = a, *y = b;

	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int push_option(struct option **v, size_t *n, size_t *cap, const struct option *o)
{
	for (size_t i = 0; i < *n; i++) /* one per (R_i^P, S_i^P): the best class */
		if ((*v)[i].w.pre_recv == o->w.pre_recv && (*v)[i].w.post_send == o->w.post_send) {
			if (o->rank < (*v)[i].rank)
				(*v)[i] = *o;
			return 0;
		}
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 8;
		struct option *nv = realloc(*v, nc * sizeof(*nv));

		if (!nv)
			return TRACE_ENOMEM;
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = *o;
	return 0;
}

/* Per process, its send and receive nodes; per component, the pairs (S_i, R_i) of its
 * process that can carry a post-recognition wait: R_i on every path on from S_i, and the
 * local event stable along S_i ~> R_i (3.2.3).  Both independent of the point. */
struct plist {
	uint32_t *sends, *recvs;
	size_t nsends, nrecvs;
};

struct pair {
	uint32_t s, r, cls;
};

static int build_plists(const struct ana_dcfg *g, struct plist *pl)
{
	for (size_t n = 0; n < g->nnodes; n++) {
		struct plist *l = &pl[g->nodes[n].proc];

		if (g->nodes[n].kind == ANA_NODE_SEND)
			l->nsends++;
		else if (g->nodes[n].kind == ANA_NODE_RECV)
			l->nrecvs++;
	}
	for (size_t p = 0; p < g->nprocs; p++) {
		pl[p].sends = malloc((pl[p].nsends + 1) * sizeof(uint32_t));
		pl[p].recvs = malloc((pl[p].nrecvs + 1) * sizeof(uint32_t));
		if (!pl[p].sends || !pl[p].recvs)
			return TRACE_ENOMEM;
		pl[p].nsends = pl[p].nrecvs = 0;
	}
	for (size_t n = 0; n < g->nnodes; n++) {
		struct plist *l = &pl[g->nodes[n].proc];

		if (g->nodes[n].kind == ANA_NODE_SEND)
			l->sends[l->nsends++] = (uint32_t)n;
		else if (g->nodes[n].kind == ANA_NODE_RECV)
			l->recvs[l->nrecvs++] = (uint32_t)n;
	}
	return 0;
}

static int build_pairs(const struct ana_dcfg *g, const struct plist *l,
                       const struct trace_pred_sp *sp, struct pair **out, size_t *nout,
                       uint8_t *seen, uint32_t *stack)
{
	*out = malloc((l->nsends * l->nrecvs + 1) * sizeof(**out));
	*nout = 0;
	if (!*out)
		return TRACE_ENOMEM;
	for (size_t i = 0; i < l->nsends; i++)
		for (size_t j = 0; j < l->nrecvs; j++) {
			uint32_t s = l->sends[i], r = l->recvs[j], cls;

			/* R_i reached on every path on from S_i (P_i "must block at R_i") */
			if (!dcfg_has(dcfg_set(g, g->pdom, s), r))
				continue;
			/* 3.1 condition 3 / 3.2.3: stability along S_i ~> R_i */
			cls = path_class(g, s, r, sp, seen, stack);
			if (cls == ANA_SE_INVALID)
				continue;
			(*out)[*nout].s = s;
			(*out)[*nout].r = r;
			(*out)[*nout].cls = cls;
			(*nout)++;
		}
	return 0;
}

/* The options of component c (on process q) at point n of process P: returns 0, 1 when
 * the bound was hit, or a negative code. */
static int options_for(const struct ana_dcfg *g, const struct ana_se *se, size_t c, size_t q,
                       size_t P, size_t n, const struct plist *pl, const struct pair *pairs,
                       size_t npairs, struct option **out, size_t *nout, size_t *steps,
                       size_t bound, uint8_t *seen, uint32_t *stack)
{
	const uint64_t *startreach = dcfg_set(g, g->reach, g->procs[P].start);
	const uint64_t *after = dcfg_set(g, g->reach, n);
	uint32_t stop = g->procs[P].stop;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*nout = 0;
	for (size_t i = 0; i < pl[P].nrecvs; i++) {
		uint32_t rp = pl[P].recvs[i];
		const uint64_t *pre = dcfg_set(g, g->pre, rp);

		/* (i) R_i^P on a path from start to p */
		if (!reach_star(g, rp, n) || !dcfg_has(startreach, rp))
			continue;
		if (se->mono[c]) {
			/* (i) S_i in PRE(R_i^P); monotonic: nothing more (Fig. 1a) */
			for (size_t k = 0; k < pl[q].nsends; k++) {
				struct option o;

				if (!dcfg_has(pre, pl[q].sends[k]))
					continue;
				memset(&o, 0, sizeof(o));
				o.w.cls = ANA_SE_MONOTONIC;
				o.w.pre_send = pl[q].sends[k];
				o.w.pre_recv = rp;
				o.w.post_send = o.w.post_recv = ANA_NO_NODE;
				o.rank = (rp == n ? 0 : 2) + (dcfg_has(dcfg_set(g, g->dom, n), rp) ? 0 : 1);
				if ((rc = push_option(out, nout, &cap, &o)))
					return rc;
				break;
			}
			continue;
		}
		for (size_t k = 0; k < npairs; k++) {
			uint32_t s = pairs[k].s, r = pairs[k].r;

			/* (i) S_i in PRE(R_i^P) */
			if (!dcfg_has(pre, s))
				continue;
			for (size_t m = 0; m < pl[P].nsends; m++) {
				uint32_t sp = pl[P].sends[m];
				struct option o;
				int post1, pdomp;

				if (++*steps > bound)
					return 1;
				/* (ii) S_i^P reachable from p, and on a path on to stop; R_i cannot
				 * complete before S_i^P: R_i in POST2(S_i^P) (schemas/stability.md) */
				if (!dcfg_has(after, sp) || !dcfg_has(dcfg_set(g, g->reach, sp), stop) ||
				    !dcfg_has(dcfg_set(g, g->post2, sp), r))
					continue;
				/* (ii) (S_i^P in POST(R_i) and R_i pdom S_i) or
				 *      (R_i in POST(S_i^P) and S_i^P pdom p); R_i pdom S_i holds */
				post1 = dcfg_has(dcfg_set(g, g->post1, r), sp);
				pdomp = sp != n && dcfg_has(dcfg_set(g, g->pdom, n), sp);
				if (!post1 && !pdomp)
					continue;
				/* 3.1: p "follows pre-recognition interactions ... and precedes the
				 * post-recognition interactions": S_i^P must not run between R_i^P and
				 * p, or P_i may already have been released (a loop taking S_i^P back
				 * round to p would otherwise look valid) */
				if (between(g, rp, n, sp, seen, stack))
					continue;
				memset(&o, 0, sizeof(o));
				o.w.cls = pairs[k].cls;
				o.w.pre_send = s;
				o.w.pre_recv = rp;
				o.w.post_send = sp;
				o.w.post_recv = r;
				o.w.post1 = post1;
				o.w.pdom_p = pdomp;
				o.rank = (o.w.cls == ANA_SE_DEPENDENT ? 0 : 8) + (rp == n ? 0 : 4) +
				         (dcfg_has(dcfg_set(g, g->dom, n), rp) ? 0 : 2) + (pdomp ? 0 : 1);
				if ((rc = push_option(out, nout, &cap, &o)))
					return rc;
			}
		}
	}
	if (*nout > 1)
		qsort(*out, *nout, sizeof(**out), cmp_option);
	return 0;
}

/* The point just after node n of process P, with the witnesses the search picked. */
static int push_recog(struct ana_recogs *out, size_t *capv, size_t P, size_t n,
                      const struct search *sr)
{
	struct ana_recog *rg;

	if (out->n == *capv) {
		size_t nc = *capv ? *capv * 2 : 8;
		struct ana_recog *nv = realloc(out->v, nc * sizeof(*nv));

		if (!nv)
			return TRACE_ENOMEM;
		out->v = nv;
		*capv = nc;
	}
	rg = &out->v[out->n];
	rg->proc = P;
	rg->node = n;
	rg->cls = ANA_SE_LOCAL;
	if (!(rg->w = calloc(sr->ncomp, sizeof(*rg->w))))
		return TRACE_ENOMEM;
	out->n++;
	for (size_t c = 0; c < sr->ncomp; c++) {
		rg->w[c] = sr->opts[c][sr->pick[c]].w;
		if (rg->w[c].cls > rg->cls)
			rg->cls = rg->w[c].cls;
	}
	return 0;
}

int ana_stable_points(const struct ana_dcfg *g, const struct ana_se *se, size_t bound,
                      struct ana_recogs *out, struct trace_diag *diag)
{
	struct search sr;
	size_t *cproc = NULL, capv = 0;
	uint8_t *seen = NULL;
	uint32_t *stack = NULL;
	struct plist *pl = NULL;
	struct pair **pairs = NULL;
	size_t *npairs = NULL;
	int rc = 0;

	if (!g || !se || !out)
		return TRACE_EINVAL;
	memset(out, 0, sizeof(*out));
	out->ncomp = se->n;
	if (!g->solved) {
		ana__diag(diag, TRACE_EINVAL, "the DCFG is not solved: call ana_dcfg_solve first");
		return TRACE_EINVAL;
	}
	memset(&sr, 0, sizeof(sr));
	sr.g = g;
	sr.ncomp = se->n;
	sr.bound = bound ? bound : (size_t)1 << 20;
	cproc = calloc(se->n, sizeof(*cproc));
	sr.opts = calloc(se->n, sizeof(*sr.opts));
	sr.nopts = calloc(se->n, sizeof(*sr.nopts));
	sr.pick = calloc(se->n, sizeof(*sr.pick));
	seen = malloc(g->nnodes + 1);
	stack = malloc((g->nnodes + 1) * sizeof(*stack));
	pl = calloc(g->nprocs + 1, sizeof(*pl));
	pairs = calloc(se->n, sizeof(*pairs));
	npairs = calloc(se->n, sizeof(*npairs));
	if (!cproc || !sr.opts || !sr.nopts || !sr.pick || !seen || !stack || !pl || !pairs ||
	    !npairs || build_plists(g, pl)) {
		rc = TRACE_ENOMEM;
		goto out;
	}
	for (size_t c = 0; c < se->n; c++) {
		const char *name = trace_pred_sp_proc(trace_pred_get_sp(se->preds[c], 0, 0, 0));
		int q = ana_dcfg_proc_find(g, name);

		if (q < 0) {
			ana__diag(diag, TRACE_ENOENT, "process %s of the simultaneous event is not in "
			          "the recordings: name one of the %zu recorded processes", name,
			          g->nprocs);
			rc = TRACE_ENOENT;
			goto out;
		}
		cproc[c] = (size_t)q;
		if (!se->mono[c] &&
		    (rc = build_pairs(g, &pl[q], trace_pred_get_sp(se->preds[c], 0, 0, 0), &pairs[c],
		                      &npairs[c], seen, stack)))
			goto out;
	}
	for (size_t P = 0; P < g->nprocs; P++)
		for (size_t n = 0; n < g->nnodes; n++) {
			int found;

			if (g->nodes[n].proc != P ||
			    (g->nodes[n].kind != ANA_NODE_SEND && g->nodes[n].kind != ANA_NODE_RECV))
				continue;
			for (size_t c = 0; c < se->n; c++) {
				free(sr.opts[c]);
				sr.opts[c] = NULL;
				sr.nopts[c] = 0;
			}
			for (size_t c = 0; c < se->n; c++) {
				if (cproc[c] == P) {
					if (!(sr.opts[c] = calloc(1, sizeof(**sr.opts)))) {
						rc = TRACE_ENOMEM;
						goto out;
					}
					sr.opts[c][0].w.cls = ANA_SE_LOCAL;
					sr.opts[c][0].w.pre_send = sr.opts[c][0].w.pre_recv = ANA_NO_NODE;
					sr.opts[c][0].w.post_send = sr.opts[c][0].w.post_recv = ANA_NO_NODE;
					sr.nopts[c] = 1;
					continue;
				}
				rc = options_for(g, se, c, cproc[c], P, n, pl, pairs[c], npairs[c],
				                 &sr.opts[c], &sr.nopts[c], &sr.steps, sr.bound, seen, stack);
				if (rc == 1) {
					sr.bound_hit = 1;
					rc = 0;
					goto done;
				}
				if (rc)
					goto out;
				if (!sr.nopts[c])
					break;
			}
			found = 1;
			for (size_t c = 0; c < se->n; c++)
				found &= sr.nopts[c] > 0;
			if (!found || !dfs(&sr, 0)) {
				if (sr.bound_hit)
					goto done;
				continue;
			}
			if ((rc = push_recog(out, &capv, P, n, &sr)))
				goto out;
		}
done:
	out->bound_hit = sr.bound_hit;
out:
	for (size_t c = 0; sr.opts && c < se->n; c++)
		free(sr.opts[c]);
	free(sr.opts);
	free(sr.nopts);
	free(sr.pick);
	free(cproc);
	free(seen);
	free(stack);
	for (size_t p = 0; pl && p < g->nprocs; p++) {
		free(pl[p].sends);
		free(pl[p].recvs);
	}
	free(pl);
	for (size_t c = 0; pairs && c < se->n; c++)
		free(pairs[c]);
	free(pairs);
	free(npairs);
	if (rc)
		ana_recogs_free(out);
	return rc;
}

/* Why part i can hold no point (for a user who got none): see enum ana_se_hint. */
int ana_stable_hint(const struct ana_dcfg *g, const struct ana_se *se, size_t i)
{
	const struct trace_pred_sp *sp;
	int q, any_pre = 0, any_wait = 0, any_stable = 0;
	uint8_t *seen;
	uint32_t *stack;

	if (!g || !se || i >= se->n || !g->solved)
		return TRACE_EINVAL;
	sp = trace_pred_get_sp(se->preds[i], 0, 0, 0);
	if ((q = ana_dcfg_proc_find(g, trace_pred_sp_proc(sp))) < 0)
		return q;
	/* does any send of q reach another process's receive (a pre-recognition chain)? */
	for (size_t r = 0; r < g->nnodes && !any_pre; r++)
		if (g->nodes[r].kind == ANA_NODE_RECV && g->nodes[r].proc != (uint32_t)q)
			for (size_t s2 = 0; s2 < g->nnodes && !any_pre; s2++)
				any_pre = g->nodes[s2].proc == (uint32_t)q &&
				          g->nodes[s2].kind == ANA_NODE_SEND &&
				          dcfg_has(dcfg_set(g, g->pre, r), s2);
	if (!any_pre)
		return ANA_HINT_NO_PRE;
	if (se->mono[i])
		return ANA_HINT_NONE;
	if (!(seen = malloc(g->nnodes + 1)) || !(stack = malloc((g->nnodes + 1) * sizeof(*stack)))) {
		free(seen);
		return TRACE_ENOMEM;
	}
	/* a receive of q on every path on from one of its sends, fed by one send only */
	for (size_t s2 = 0; s2 < g->nnodes; s2++) {
		if (g->nodes[s2].proc != (uint32_t)q || g->nodes[s2].kind != ANA_NODE_SEND)
			continue;
		for (size_t r = 0; r < g->nnodes; r++) {
			const struct dcfg_node *nr = &g->nodes[r];

			if (nr->proc != (uint32_t)q || nr->kind != ANA_NODE_RECV ||
			    !dcfg_has(dcfg_set(g, g->pdom, s2), r) || nr->nin != 1 ||
			    (nr->flags & ANA_NODE_F_EXTERNAL))
				continue;
			any_wait = 1;
			if (path_class(g, (uint32_t)s2, (uint32_t)r, sp, seen, stack) != ANA_SE_INVALID)
				any_stable = 1;
		}
	}
	free(seen);
	free(stack);
	if (!any_wait)
		return ANA_HINT_NO_WAIT;
	if (!any_stable)
		return ANA_HINT_CHANGES;
	return ANA_HINT_NONE;
}

/* ---------------------------------------------------------------------------------------
 * The recorded run.
 */
void ana_stable_run_free(struct ana_stable_run *r)
{
	if (!r)
		return;
	free(r->cut);
	free(r->comp);
	memset(r, 0, sizeof(*r));
}

static int all_true(const uint64_t *bits, uint64_t lo, uint64_t hi)
{
	for (uint64_t k = lo; k <= hi; k++)
		if (!ana__bit(bits, k))
			return 0;
	return 1;
}

/* The recognition in this run (3.1, "occurrence"): an execution e = (P, k) of a valid
 * point at which P's view -- P at k, every other part's process at its last event that
 * happened before e -- has every part true.  Such a view satisfies the conjunction, so
 * it lies above the Inf cut.  Per point its first such execution; of those, the one with
 * the smallest view (sum of the states), then the first point. */
static int find_recognition(struct ana_session *s, const struct ana_dcfg *g,
                            const struct ana_se *se, const struct ana_recogs *pts,
                            uint64_t *const *bits, struct ana_stable_run *out)
{
	uint64_t best = UINT64_MAX;
	int rc;

	for (size_t i = 0; pts && i < pts->n; i++) {
		int P = ana_proc_find(s, g->procs[pts->v[i].proc].name);

		if (P < 0)
			continue;
		for (uint64_t k = out->cut[P] ? out->cut[P] : 1; k <= s->procs[P].n; k++) {
			uint64_t sum = k;
			int sees = 1;

			if (ana__dcfg_event_node(g, s, (size_t)P, k) != pts->v[i].node)
				continue;
			for (size_t c = 0; c < se->n && sees; c++) {
				size_t q = out->comp[c].proc;
				uint64_t lo = 0, hi = s->procs[q].n;

				if (q == (size_t)P) {
					sees = ana__bit(bits[c], k);
					continue;
				}
				/* the last event of q that happened before (P, k): hb is monotone in
				 * q's events, so binary search */
				while (lo < hi) {
					uint64_t mid = lo + (hi - lo + 1) / 2;

					if ((rc = ana_hb(s, q, mid, (size_t)P, k)) < 0)
						return rc;
					if (rc)
						lo = mid;
					else
						hi = mid - 1;
				}
				rc = 0;
				sees = ana__bit(bits[c], lo);
				sum += lo;
			}
			if (!sees)
				continue;
			if (sum < best) {
				best = sum;
				out->recognized = 1;
				out->recog = i;
				out->proc = (size_t)P;
				out->event = k;
			}
			break;
		}
	}
	return 0;
}

/* With a recognition: the window each part must stay true in, from what P learnt of P_i
 * (the causal past of the recognition) to P_i's last state before it depends on anything
 * P did after recognising.  cdown is scratch, nprocs + 1 entries. */
static int set_windows(struct ana_session *s, const struct ana_se *se,
                       struct ana_stable_run *out, uint64_t *cdown)
{
	int rc;

	memset(cdown, 0, (s->nprocs + 1) * sizeof(*cdown));
	cdown[out->proc] = out->event;
	if ((rc = ana_close_down(s, cdown)))
		return rc;
	for (size_t c = 0; c < se->n; c++) {
		struct ana_stable_comp *sc = &out->comp[c];
		size_t q = sc->proc;
		uint64_t n = s->procs[q].n, hi = n;

		if (q == out->proc) {
			sc->lo = sc->hi = out->event;
			continue;
		}
		sc->lo = cdown[q];
		/* P halts at p; P_i runs on until its first event that depends on what P
		 * did after p */
		if (out->event < s->procs[out->proc].n)
			for (uint64_t j = sc->lo + 1; j <= n; j++) {
				if ((rc = ana_hb(s, out->proc, out->event + 1, q, j)) < 0)
					return rc;
				if (rc) {
					hi = j - 1;
					break;
				}
			}
		rc = 0;
		sc->hi = hi;
	}
	return 0;
}

int ana_stable_run(struct ana_session *s, const struct ana_dcfg *g, const struct ana_se *se,
                   const struct ana_recogs *pts, struct ana_stable_run *out,
                   struct trace_diag *diag)
{
	uint64_t **bits = NULL, *cdown = NULL;
	struct ana_sp *sps = NULL;
	struct ana_cp cp;
	int rc = 0;

	if (!s || !g || !se || !out)
		return TRACE_EINVAL;
	memset(out, 0, sizeof(*out));
	if (g->last != s) {
		ana__diag(diag, TRACE_EINVAL, "the DCFG does not map this session's events: add the "
		          "session to it last (ana_dcfg_add_session)");
		return TRACE_EINVAL;
	}
	out->nprocs = s->nprocs;
	out->ncomp = se->n;
	bits = calloc(se->n, sizeof(*bits));
	sps = calloc(se->n, sizeof(*sps));
	out->comp = calloc(se->n, sizeof(*out->comp));
	out->cut = calloc(s->nprocs + 1, sizeof(*out->cut));
	cdown = calloc(s->nprocs + 1, sizeof(*cdown));
	if (!bits || !sps || !out->comp || !out->cut || !cdown) {
		rc = TRACE_ENOMEM;
		goto out;
	}
	for (size_t c = 0; c < se->n; c++) {
		if ((rc = ana_sp_bits(s, ana_se_sp(se, c), &sps[c].proc, &bits[c], diag)))
			goto out;
		sps[c].bits = bits[c];
		out->comp[c].proc = sps[c].proc;
	}
	cp.sps = sps;
	cp.nsp = se->n;
	if ((rc = ana_inf_cp(s, &cp, out->cut)) < 0)
		goto out;
	out->holds = rc;
	rc = 0;
	if (!out->holds) {
		free(out->cut);
		out->cut = NULL;
		goto out;
	}
	for (size_t c = 0; c < se->n; c++) {
		struct ana_stable_comp *sc = &out->comp[c];
		uint64_t n = s->procs[sc->proc].n, k = out->cut[sc->proc];

		sc->state = k;
		while (k < n && ana__bit(bits[c], k + 1))
			k++;
		sc->true_through = k;
		sc->lo = sc->state;
		sc->hi = n;
	}
	if ((rc = find_recognition(s, g, se, pts, bits, out)))
		goto out;
	if (out->recognized && (rc = set_windows(s, se, out, cdown)))
		goto out;
	for (size_t c = 0; c < se->n; c++)
		out->comp[c].stable = out->comp[c].lo <= out->comp[c].hi &&
		                      all_true(bits[c], out->comp[c].lo, out->comp[c].hi);
out:
	for (size_t c = 0; bits && c < se->n; c++)
		free(bits[c]);
	free(bits);
	free(sps);
	free(cdown);
	if (rc)
		ana_stable_run_free(out);
	return rc;
}
