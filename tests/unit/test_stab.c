/*
 * test_stab.c: the DCFG, PRE/POST sets and recognition points (schemas/stability.md; Spezialetti
 * & Gupta): hand-built graphs of the paper's shapes (an RPC, the fixed and fuzzy barriers of
 * section 3.2.6, a pipeline with no valid point), the set equations against a brute-force
 * enumeration of chains on random graphs, the parsing of `==`, the monotonicity of LOCAL
 * conditions, and a session built in memory checked at its Inf cut.
 */
#include "unit.h"

#include "stab.h"
#include "ana_internal.h"
#include "dcfg_internal.h"

/* ---------------------------------------------------------------------------------------
 * Helpers.
 */
static int node(struct ana_dcfg *g, int proc, uint32_t kind, const char *key)
{
	int n = ana_dcfg_add_node(g, proc, kind, key, key);

	ck_assert_int_ge(n, 0);
	return n;
}

/* start -> nodes[0] -> ... -> nodes[n-1] -> stop, nothing between */
static void chain(struct ana_dcfg *g, int proc, const int *nodes, size_t n)
{
	int prev = ana_dcfg_start(g, proc);

	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(ana_dcfg_add_flow(g, prev, nodes[i], NULL), 0);
		prev = nodes[i];
	}
	ck_assert_int_eq(ana_dcfg_add_flow(g, prev, ana_dcfg_stop(g, proc), NULL), 0);
}

static void solve(struct ana_dcfg *g)
{
	struct trace_diag d;

	memset(&d, 0, sizeof(d));
	ck_assert_msg(ana_dcfg_solve(g, &d) == 0, "solve: %s", d.msg);
}

static struct ana_se *se_parse(const char *text)
{
	struct ana_se *se = NULL;
	struct trace_diag d;

	memset(&d, 0, sizeof(d));
	ck_assert_msg(ana_se_parse(text, &se, &d) == 0, "parse %s: %s", text, d.msg);
	return se;
}

static void points(struct ana_dcfg *g, const char *text, struct ana_recogs *out)
{
	struct ana_se *se = se_parse(text);
	struct trace_diag d;

	memset(&d, 0, sizeof(d));
	ck_assert_msg(ana_stable_points(g, se, 0, out, &d) == 0, "points: %s", d.msg);
	ck_assert_int_eq(out->bound_hit, 0);
	ana_se_free(se);
}

/* index of the point (proc, node) in pts, or -1 */
static int point_at(const struct ana_recogs *pts, int proc, int n)
{
	for (size_t i = 0; i < pts->n; i++)
		if (pts->v[i].proc == (size_t)proc && pts->v[i].node == (size_t)n)
			return (int)i;
	return -1;
}

/* ---------------------------------------------------------------------------------------
 * RPC (Fig. 1b): the caller C sends a request and blocks for the reply; the server V
 * receives, then replies.  V is a valid recognition point just after its receive, and C's
 * component is dependent monotonic.
 */
struct rpc {
	struct ana_dcfg *g;
	int c, v, scall, rrep, rreq, sresp;
};

static void rpc_build(struct rpc *r)
{
	int cn[2], vn[2];

	ck_assert_int_eq(ana_dcfg_new(&r->g), 0);
	r->c = ana_dcfg_add_proc(r->g, "C");
	r->v = ana_dcfg_add_proc(r->g, "V");
	ck_assert_int_ge(r->c, 0);
	ck_assert_int_ge(r->v, 0);
	r->scall = node(r->g, r->c, ANA_NODE_SEND, "call");
	r->rrep = node(r->g, r->c, ANA_NODE_RECV, "reply");
	r->rreq = node(r->g, r->v, ANA_NODE_RECV, "request");
	r->sresp = node(r->g, r->v, ANA_NODE_SEND, "respond");
	cn[0] = r->scall;
	cn[1] = r->rrep;
	vn[0] = r->rreq;
	vn[1] = r->sresp;
	chain(r->g, r->c, cn, 2);
	chain(r->g, r->v, vn, 2);
	ck_assert_int_eq(ana_dcfg_add_msg(r->g, r->scall, r->rreq), 0);
	ck_assert_int_eq(ana_dcfg_add_msg(r->g, r->sresp, r->rrep), 0);
}

START_TEST(rpc_sets)
{
	struct rpc r;

	rpc_build(&r);
	solve(r.g);
	/* PRE (3.2.1) */
	ck_assert_int_eq(ana_dcfg_in(r.g, ANA_SET_PRE, r.rreq, r.scall), 1);
	ck_assert_int_eq(ana_dcfg_in(r.g, ANA_SET_PRE, r.sresp, r.scall), 1);
	ck_assert_int_eq(ana_dcfg_in(r.g, ANA_SET_PRE, r.sresp, r.sresp), 1);
	/* C's own send is excluded at its receive */
	ck_assert_int_eq(ana_dcfg_in(r.g, ANA_SET_PRE, r.rrep, r.scall), 0);
	ck_assert_int_eq(ana_dcfg_in(r.g, ANA_SET_PRE, r.rrep, r.sresp), 1);
	/* POST1: executing S_call guarantees R_req, and V's reply after it */
	ck_assert_int_eq(ana_dcfg_in(r.g, ANA_SET_POST1, r.rreq, r.scall), 1);
	ck_assert_int_eq(ana_dcfg_in(r.g, ANA_SET_POST1, r.sresp, r.scall), 1);
	ck_assert_int_eq(ana_dcfg_in(r.g, ANA_SET_POST1, r.rrep, r.sresp), 1);
	ck_assert_int_eq(ana_dcfg_in(r.g, ANA_SET_POST1, r.rrep, r.scall), 0);
	/* POST2: R_rep executing implies S_resp before, and S_call before that */
	ck_assert_int_eq(ana_dcfg_in(r.g, ANA_SET_POST2, r.sresp, r.rrep), 1);
	ck_assert_int_eq(ana_dcfg_in(r.g, ANA_SET_POST2, r.scall, r.rreq), 1);
	ck_assert_int_eq(ana_dcfg_in(r.g, ANA_SET_POST2, r.scall, r.rrep), 0); /* same process */
	ck_assert_int_eq(ana_dcfg_in(r.g, ANA_SET_POST2, r.rreq, r.rrep), 1);
	/* Dom / PDom / Reach */
	ck_assert_int_eq(ana_dcfg_in(r.g, ANA_SET_DOM, r.rrep, r.scall), 1);
	ck_assert_int_eq(ana_dcfg_in(r.g, ANA_SET_PDOM, r.scall, r.rrep), 1);
	ck_assert_int_eq(ana_dcfg_in(r.g, ANA_SET_REACH, r.scall, r.rrep), 1);
	ck_assert_int_eq(ana_dcfg_in(r.g, ANA_SET_REACH, r.rrep, r.scall), 0);
	ana_dcfg_free(r.g);
}
END_TEST

START_TEST(rpc_dependent_monotonic)
{
	struct ana_recogs pts;
	struct rpc r;
	int i;

	rpc_build(&r);
	solve(r.g);
	points(r.g, "C: sent == received + 1 == V: received == 1", &pts);
	ck_assert_uint_eq(pts.n, 1);
	i = point_at(&pts, r.v, r.rreq);
	ck_assert_int_eq(i, 0);
	ck_assert_uint_eq(pts.v[0].cls, ANA_SE_DEPENDENT);
	/* C: pre S_call -> R_req, post S_resp -> R_rep */
	ck_assert_uint_eq(pts.v[0].w[0].cls, ANA_SE_DEPENDENT);
	ck_assert_uint_eq(pts.v[0].w[0].pre_send, (size_t)r.scall);
	ck_assert_uint_eq(pts.v[0].w[0].pre_recv, (size_t)r.rreq);
	ck_assert_uint_eq(pts.v[0].w[0].post_send, (size_t)r.sresp);
	ck_assert_uint_eq(pts.v[0].w[0].post_recv, (size_t)r.rrep);
	ck_assert_int_eq(pts.v[0].w[0].post1, 1);
	ck_assert_int_eq(pts.v[0].w[0].pdom_p, 1);
	ck_assert_uint_eq(pts.v[0].w[1].cls, ANA_SE_LOCAL);
	ana_recogs_free(&pts);
	ana_dcfg_free(r.g);
}
END_TEST

/* A second server may also answer C's receive: C is no longer guaranteed to wait for V. */
START_TEST(rpc_reply_not_unique)
{
	struct ana_recogs pts;
	struct rpc r;
	int x, sx;

	rpc_build(&r);
	x = ana_dcfg_add_proc(r.g, "X");
	sx = node(r.g, x, ANA_NODE_SEND, "other");
	chain(r.g, x, &sx, 1);
	ck_assert_int_eq(ana_dcfg_add_msg(r.g, sx, r.rrep), 0);
	solve(r.g);
	ck_assert_int_eq(ana_dcfg_in(r.g, ANA_SET_POST2, r.sresp, r.rrep), 0);
	points(r.g, "C: sent == received + 1 == V: received == 1", &pts);
	ck_assert_uint_eq(pts.n, 0);
	ana_recogs_free(&pts);
	/* the same for bytes from outside the session */
	ana_dcfg_free(r.g);
	rpc_build(&r);
	ck_assert_int_eq(ana_dcfg_set_flags(r.g, r.rrep, ANA_NODE_F_EXTERNAL), 0);
	solve(r.g);
	points(r.g, "C: sent == received + 1 == V: received == 1", &pts);
	ck_assert_uint_eq(pts.n, 0);
	ana_recogs_free(&pts);
	ana_dcfg_free(r.g);
}
END_TEST

/* A server loop (V: start -> R_req -> S_resp -> R_req ... -> stop): just after S_resp the
 * next iteration's S_resp is reachable, but the reply that releases C already went: the
 * post-recognition send must not run between the pre-recognition receive and p. */
START_TEST(rpc_loop_after_reply_invalid)
{
	struct ana_recogs pts;
	struct rpc r;

	rpc_build(&r);
	ck_assert_int_eq(ana_dcfg_add_flow(r.g, r.sresp, r.rreq, NULL), 0);
	ck_assert_int_eq(ana_dcfg_add_flow(r.g, r.rrep, r.scall, NULL), 0);
	solve(r.g);
	points(r.g, "C: sent == received + 1 == V: received == 1", &pts);
	ck_assert_int_ge(point_at(&pts, r.v, r.rreq), 0);
	ck_assert_int_eq(point_at(&pts, r.v, r.sresp), -1);
	ck_assert_uint_eq(pts.n, 1);
	ana_recogs_free(&pts);
	ana_dcfg_free(r.g);
}
END_TEST

/* An RPC chain C -> A -> B: B can recognise C's waiting state, through interactions of two
 * hops each way (pre: C's call reaches B through A; post: B's answer releases C through A,
 * found by POST2's propagation over A's dominators). */
START_TEST(rpc_chain_two_hops)
{
	struct ana_recogs pts;
	struct ana_dcfg *g;
	int c, a, b, scall, rrep, rreq, sfwd, rback, sresp, rfwd, sback;

	ck_assert_int_eq(ana_dcfg_new(&g), 0);
	c = ana_dcfg_add_proc(g, "C");
	a = ana_dcfg_add_proc(g, "A");
	b = ana_dcfg_add_proc(g, "B");
	scall = node(g, c, ANA_NODE_SEND, "call");
	rrep = node(g, c, ANA_NODE_RECV, "reply");
	rreq = node(g, a, ANA_NODE_RECV, "request");
	sfwd = node(g, a, ANA_NODE_SEND, "forward");
	rback = node(g, a, ANA_NODE_RECV, "back");
	sresp = node(g, a, ANA_NODE_SEND, "respond");
	rfwd = node(g, b, ANA_NODE_RECV, "serve");
	sback = node(g, b, ANA_NODE_SEND, "answer");
	{
		int cn[2] = {scall, rrep}, an[4] = {rreq, sfwd, rback, sresp}, bn[2] = {rfwd, sback};

		chain(g, c, cn, 2);
		chain(g, a, an, 4);
		chain(g, b, bn, 2);
	}
	ck_assert_int_eq(ana_dcfg_add_msg(g, scall, rreq), 0);
	ck_assert_int_eq(ana_dcfg_add_msg(g, sfwd, rfwd), 0);
	ck_assert_int_eq(ana_dcfg_add_msg(g, sback, rback), 0);
	ck_assert_int_eq(ana_dcfg_add_msg(g, sresp, rrep), 0);
	solve(g);
	ck_assert_int_eq(ana_dcfg_in(g, ANA_SET_PRE, rfwd, scall), 1);
	ck_assert_int_eq(ana_dcfg_in(g, ANA_SET_POST2, sback, rrep), 1);
	ck_assert_int_eq(ana_dcfg_in(g, ANA_SET_POST1, rrep, sback), 1);
	ck_assert_int_eq(ana_dcfg_in(g, ANA_SET_POST1, rfwd, scall), 1);
	points(g, "C: sent == received + 1 == B: received == 1", &pts);
	ck_assert_uint_eq(pts.n, 1);
	ck_assert_int_eq(point_at(&pts, b, rfwd), 0);
	ck_assert_uint_eq(pts.v[0].cls, ANA_SE_DEPENDENT);
	ck_assert_uint_eq(pts.v[0].w[0].pre_send, (size_t)scall);
	ck_assert_uint_eq(pts.v[0].w[0].pre_recv, (size_t)rfwd);
	ck_assert_uint_eq(pts.v[0].w[0].post_send, (size_t)sback);
	ck_assert_uint_eq(pts.v[0].w[0].post_recv, (size_t)rrep);
	ana_recogs_free(&pts);
	/* A, in the middle, can recognise C together with its own state */
	points(g, "C: sent == received + 1 == A: received == 1", &pts);
	ck_assert_int_ge(point_at(&pts, a, rreq), 0);
	ana_recogs_free(&pts);
	ana_dcfg_free(g);
}
END_TEST

/* ---------------------------------------------------------------------------------------
 * The barrier process of section 3.2.6 (Fig. 4): P_i: start -> S_i -> R_i -> stop;
 * BAR: start -> R_1 .. R_4 -> S_1 .. S_4 -> stop.  Fuzzy: P_i computes between S_i and R_i
 * (here: it sets a mark).
 */
struct barrier {
	struct ana_dcfg *g;
	int bar, p[4], s[4], r[4], bs[4], br[4];
};

static void barrier_build(struct barrier *b, int fuzzy)
{
	int bn[8];

	ck_assert_int_eq(ana_dcfg_new(&b->g), 0);
	b->bar = ana_dcfg_add_proc(b->g, "bar");
	for (int i = 0; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "p%d", i + 1);
		b->p[i] = ana_dcfg_add_proc(b->g, name);
		b->s[i] = node(b->g, b->p[i], ANA_NODE_SEND, "checkin");
		b->r[i] = node(b->g, b->p[i], ANA_NODE_RECV, "wait");
		snprintf(name, sizeof(name), "in%d", i + 1);
		b->br[i] = node(b->g, b->bar, ANA_NODE_RECV, name);
		snprintf(name, sizeof(name), "out%d", i + 1);
		b->bs[i] = node(b->g, b->bar, ANA_NODE_SEND, name);
		bn[i] = b->br[i];
		bn[4 + i] = b->bs[i];
	}
	for (int i = 0; i < 4; i++) {
		static const char *const work[] = {"work"};
		struct ana_between bt = {1ull << TRACE_EV_MARK, work, 1};

		ck_assert_int_eq(ana_dcfg_add_flow(b->g, ana_dcfg_start(b->g, b->p[i]), b->s[i],
		                                   NULL), 0);
		ck_assert_int_eq(ana_dcfg_add_flow(b->g, b->s[i], b->r[i], fuzzy ? &bt : NULL), 0);
		ck_assert_int_eq(ana_dcfg_add_flow(b->g, b->r[i], ana_dcfg_stop(b->g, b->p[i]),
		                                   NULL), 0);
		ck_assert_int_eq(ana_dcfg_add_msg(b->g, b->s[i], b->br[i]), 0);
		ck_assert_int_eq(ana_dcfg_add_msg(b->g, b->bs[i], b->r[i]), 0);
	}
	chain(b->g, b->bar, bn, 8);
	solve(b->g);
}

#define WAITING "sent == 1 and received == 0"

START_TEST(barrier_fixed)
{
	struct ana_recogs pts;
	struct barrier b;

	barrier_build(&b, 0);
	/* two processes: from the moment both checked in until the first is let out */
	points(b.g, "p1: " WAITING " == p2: " WAITING, &pts);
	ck_assert_uint_eq(pts.n, 3);
	ck_assert_int_ge(point_at(&pts, b.bar, b.br[1]), 0);
	ck_assert_int_ge(point_at(&pts, b.bar, b.br[2]), 0);
	ck_assert_int_ge(point_at(&pts, b.bar, b.br[3]), 0);
	for (size_t i = 0; i < pts.n; i++) {
		ck_assert_uint_eq(pts.v[i].cls, ANA_SE_DEPENDENT);
		ck_assert_uint_eq(pts.v[i].w[0].pre_send, (size_t)b.s[0]);
		ck_assert_uint_eq(pts.v[i].w[0].pre_recv, (size_t)b.br[0]);
		ck_assert_uint_eq(pts.v[i].w[0].post_send, (size_t)b.bs[0]);
		ck_assert_uint_eq(pts.v[i].w[0].post_recv, (size_t)b.r[0]);
		ck_assert_uint_eq(pts.v[i].w[1].post_send, (size_t)b.bs[1]);
	}
	ana_recogs_free(&pts);
	/* the last two: after both checked in, while neither has been let out */
	points(b.g, "p3: " WAITING " == p4: " WAITING, &pts);
	ck_assert_uint_eq(pts.n, 3);
	ck_assert_int_ge(point_at(&pts, b.bar, b.br[3]), 0);
	ck_assert_int_ge(point_at(&pts, b.bar, b.bs[0]), 0);
	ck_assert_int_ge(point_at(&pts, b.bar, b.bs[1]), 0);
	ana_recogs_free(&pts);
	/* all four: only at full synchronisation */
	points(b.g, "p1: " WAITING " == p2: " WAITING " == p3: " WAITING " == p4: " WAITING, &pts);
	ck_assert_uint_eq(pts.n, 1);
	ck_assert_int_eq(point_at(&pts, b.bar, b.br[3]), 0);
	ck_assert_uint_eq(pts.v[0].cls, ANA_SE_DEPENDENT);
	ana_recogs_free(&pts);
	ana_dcfg_free(b.g);
}
END_TEST

START_TEST(barrier_fuzzy)
{
	struct ana_recogs pts;
	struct barrier b;

	barrier_build(&b, 1);
	/* the computation between S and R sets a mark: counters are untouched */
	points(b.g, "p1: " WAITING " == p2: " WAITING, &pts);
	ck_assert_uint_eq(pts.n, 3);
	ck_assert_int_ge(point_at(&pts, b.bar, b.br[1]), 0);
	for (size_t i = 0; i < pts.n; i++) {
		ck_assert_uint_eq(pts.v[i].cls, ANA_SE_GENERALIZED);
		ck_assert_uint_eq(pts.v[i].w[0].cls, ANA_SE_GENERALIZED);
	}
	ana_recogs_free(&pts);
	/* ... but a local event reading that mark (or every event) is not stable */
	points(b.g, "p1: mark.work == 0 == p2: " WAITING, &pts);
	ck_assert_uint_eq(pts.n, 0);
	ana_recogs_free(&pts);
	{
		struct ana_se *se = se_parse("p1: mark.work == 0 == p2: " WAITING);

		ck_assert_int_eq(ana_stable_hint(b.g, se, 0), ANA_HINT_CHANGES);
		ck_assert_int_eq(ana_stable_hint(b.g, se, 1), ANA_HINT_NONE);
		ana_se_free(se);
	}
	points(b.g, "p1: events == 1 == p2: " WAITING, &pts);
	ck_assert_uint_eq(pts.n, 0);
	ana_recogs_free(&pts);
	/* a mark of another key does not matter */
	points(b.g, "p1: mark.other == 0 == p2: " WAITING, &pts);
	ck_assert_uint_eq(pts.n, 3);
	ana_recogs_free(&pts);
	ana_dcfg_free(b.g);
}
END_TEST

/* ---------------------------------------------------------------------------------------
 * A pipeline A -> B -> C: nobody ever waits for anybody downstream, so no post-recognition
 * interaction exists and no point is valid unless the events are monotonic.
 */
START_TEST(pipeline_no_valid_point)
{
	struct ana_recogs pts;
	struct ana_dcfg *g;
	int a, b, c, sa, rb, sb, rc;

	ck_assert_int_eq(ana_dcfg_new(&g), 0);
	a = ana_dcfg_add_proc(g, "A");
	b = ana_dcfg_add_proc(g, "B");
	c = ana_dcfg_add_proc(g, "C");
	sa = node(g, a, ANA_NODE_SEND, "produce");
	rb = node(g, b, ANA_NODE_RECV, "in");
	sb = node(g, b, ANA_NODE_SEND, "out");
	rc = node(g, c, ANA_NODE_RECV, "consume");
	chain(g, a, &sa, 1);
	{
		int bn[2] = {rb, sb};

		chain(g, b, bn, 2);
	}
	chain(g, c, &rc, 1);
	ck_assert_int_eq(ana_dcfg_add_msg(g, sa, rb), 0);
	ck_assert_int_eq(ana_dcfg_add_msg(g, sb, rc), 0);
	solve(g);
	ck_assert_int_eq(ana_dcfg_in(g, ANA_SET_PRE, rc, sa), 1);
	points(g, "A: sent == 1 == B: received == 1", &pts);
	ck_assert_uint_eq(pts.n, 0);
	ana_recogs_free(&pts);
	{
		struct ana_se *se = se_parse("A: sent == 1 == C: received == 1 == B: received >= 1");

		ck_assert_int_eq(ana_stable_hint(g, se, 0), ANA_HINT_NO_WAIT);
		ck_assert_int_eq(ana_stable_hint(g, se, 1), ANA_HINT_NO_PRE);  /* C never sends */
		ck_assert_int_eq(ana_stable_hint(g, se, 2), ANA_HINT_NONE);    /* monotonic */
		ana_se_free(se);
	}
	points(g, "A: sent == 1 == B: received == 1 == C: received == 0", &pts);
	ck_assert_uint_eq(pts.n, 0);
	ana_recogs_free(&pts);
	/* monotonic events need only the pre-recognition interactions (Fig. 1a) */
	points(g, "A: sent >= 1 == B: received >= 1", &pts);
	ck_assert_int_ge(point_at(&pts, c, rc), 0);
	ck_assert_int_ge(point_at(&pts, b, rb), 0);
	ck_assert_uint_eq(pts.v[point_at(&pts, c, rc)].cls, ANA_SE_MONOTONIC);
	ck_assert_uint_eq(pts.v[point_at(&pts, c, rc)].w[0].pre_send, (size_t)sa);
	ck_assert_uint_eq(pts.v[point_at(&pts, c, rc)].w[0].post_send, ANA_NO_NODE);
	ana_recogs_free(&pts);
	ana_dcfg_free(g);
}
END_TEST

/* ---------------------------------------------------------------------------------------
 * Text and monotonicity.
 */
START_TEST(se_split)
{
	static const struct {
		const char *text;
		size_t n; /* 0: must fail */
	} cases[] = {
		{"a: sent == 1 == b: received == 2", 2},
		{"a: mark.x == 2 == b: exited", 2},
		{"a: (sent == received) == b: exited", 2},
		{"a:sent==1 == b:received==1 == c: exited", 3},
		{"a: sent == received", 0},                /* one part only */
		{"a: sent ==b: exited", 0},                /* no space after ==: a comparison */
		{"a: sent == 1 == a: received == 1", 0},   /* same process twice */
		{"a: sent == 1 && c: exited == b: exited", 0}, /* a part must be one SP */
		{"a: sent == 1 == b: in(ns::f)", 2},
		{"a: sent == 1 == b: (received == 1)", 2},
		{"a: sent == 1 ==", 0},
		{"a: sent == 1 == 2: exited", 2},          /* process names may start with a digit */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct ana_se *se = NULL;
		struct trace_diag d;
		int rc;

		memset(&d, 0, sizeof(d));
		rc = ana_se_parse(cases[i].text, &se, &d);
		if (!cases[i].n) {
			ck_assert_msg(rc < 0, "%s: parsed", cases[i].text);
			ck_assert_msg(d.msg[0], "%s: no message", cases[i].text);
			continue;
		}
		ck_assert_msg(rc == 0, "%s: %s", cases[i].text, d.msg);
		ck_assert_uint_eq(ana_se_ncomp(se), cases[i].n);
		ana_se_free(se);
	}
}
END_TEST

START_TEST(se_monotonic)
{
	static const struct {
		const char *local;
		int mono;
	} cases[] = {
		{"sent >= 3", 1},
		{"sent > 0", 1},
		{"3 <= received(b)", 1},
		{"sent", 1},                  /* sent != 0 */
		{"exited", 1},
		{"not exited", 0},
		{"sent >= 1 and bytes_received > 10", 1},
		{"sent >= 1 or exited", 1},
		{"sent + received >= 2", 1},
		{"sent - received >= 1", 0},
		{"sent == 3", 0},
		{"sent <= 3", 0},
		{"not sent <= 3", 1},         /* sent > 3 */
		{"mark.x >= 1", 0},
		{"var.v >= 1", 0},
		{"in(f)", 0},
		{"last(send)", 0},
		{"events >= 5 and not (received == 0)", 1},
		{"-sent <= -2", 1},
		{"sent == 0", 0},
		{"1 == 1", 1},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char text[256];
		struct ana_se *se;

		snprintf(text, sizeof(text), "a: %s == b: exited", cases[i].local);
		se = se_parse(text);
		ck_assert_msg(ana_se_monotonic(se, 0) == cases[i].mono, "%s: expected %d",
		              cases[i].local, cases[i].mono);
		ck_assert_int_eq(ana_se_monotonic(se, 1), 1);
		ana_se_free(se);
	}
}
END_TEST

/* ---------------------------------------------------------------------------------------
 * The equations against a brute-force enumeration of chains (random DCFGs, seeded).
 */
#define BN 40

struct bf {
	int nn, nprocs;
	int proc[BN], kind[BN], flags[BN];
	int start[4], stop[4];
	uint8_t flow[BN][BN];   /* intraprocess edge */
	uint8_t msg[BN][BN];    /* send -> recv */
	uint8_t reach[BN][BN];
	uint8_t dom[BN][BN], pdom[BN][BN];    /* [n][m]: m in Dom(n) */
	uint8_t pre[BN][BN], post1[BN][BN], post2[BN][BN];
};

static int reach_avoid(const struct bf *b, int from, int to, int avoid)
{
	uint8_t seen[BN] = {0};
	int stack[BN], top = 0;

	stack[top++] = from;
	seen[from] = 1;
	while (top) {
		int x = stack[--top];

		for (int y = 0; y < b->nn; y++) {
			if (!b->flow[x][y] || y == avoid)
				continue;
			if (y == to)
				return 1;
			if (seen[y])
				continue;
			seen[y] = 1;
			stack[top++] = y;
		}
	}
	return 0;
}

static int nout(const struct bf *b, int s)
{
	int k = 0;

	for (int r = 0; r < b->nn; r++)
		k += b->msg[s][r];
	return k;
}

static int nin(const struct bf *b, int r)
{
	int k = 0;

	for (int s = 0; s < b->nn; s++)
		k += b->msg[s][r];
	return k;
}

/* Definition 3.1 by chains S' -> R1 ~> S2 -> R2 ... ; `exact` also asks that no process
 * is visited twice (the paper's definition; the equations drop that, over-approximating). */
static void bf_pre(struct bf *b, uint8_t out[BN][BN], int origin, int s, uint64_t recvs,
                   uint64_t procs, int exact)
{
	for (int r = 0; r < b->nn; r++) {
		if (!b->msg[s][r] || b->proc[r] == b->proc[origin] || (recvs >> r & 1))
			continue;
		if (exact && (procs >> b->proc[r] & 1))
			continue;
		out[r][origin] = 1;
		for (int s2 = 0; s2 < b->nn; s2++)
			if (b->kind[s2] == ANA_NODE_SEND && b->reach[r][s2]) {
				out[s2][origin] = 1;
				bf_pre(b, out, origin, s2, recvs | 1ull << r, procs | 1ull << b->proc[r], exact);
			}
	}
}

/* POST1 by chains S' ->uniq R1, S2 postdominating R1, S2 ->uniq R2 ... */
static void bf_post1(struct bf *b, int origin, int s, uint64_t seen)
{
	for (int r = 0; r < b->nn; r++) {
		if (!b->msg[s][r] || nout(b, s) != 1 || (b->flags[s] & ANA_NODE_F_UNRECEIVED) ||
		    b->proc[r] == b->proc[origin] || (seen >> r & 1))
			continue;
		b->post1[r][origin] = 1;
		for (int s2 = 0; s2 < b->nn; s2++)
			if (b->kind[s2] == ANA_NODE_SEND && b->proc[s2] == b->proc[r] && b->pdom[r][s2]) {
				b->post1[s2][origin] = 1;
				bf_post1(b, origin, s2, seen | 1ull << r);
			}
	}
}

/* POST2 by chains R' <-uniq S1, R2 dominating S1, R2 <-uniq S2 ... */
static void bf_post2(struct bf *b, int origin, int r, uint64_t seen)
{
	for (int s = 0; s < b->nn; s++) {
		if (!b->msg[s][r] || nin(b, r) != 1 || (b->flags[r] & ANA_NODE_F_EXTERNAL) ||
		    b->proc[s] == b->proc[origin] || (seen >> s & 1))
			continue;
		b->post2[s][origin] = 1;
		for (int r2 = 0; r2 < b->nn; r2++)
			if (b->kind[r2] == ANA_NODE_RECV && b->proc[r2] == b->proc[s] && b->dom[s][r2]) {
				b->post2[r2][origin] = 1;
				bf_post2(b, origin, r2, seen | 1ull << s);
			}
	}
}

static void bf_solve(struct bf *b)
{
	for (int a = 0; a < b->nn; a++)
		for (int c = 0; c < b->nn; c++)
			b->reach[a][c] = reach_avoid(b, a, c, -1);
	for (int n = 0; n < b->nn; n++) {
		int st = b->start[b->proc[n]], sp = b->stop[b->proc[n]];

		for (int m = 0; m < b->nn; m++) {
			if (b->proc[m] != b->proc[n])
				continue;
			if (m == n) {
				b->dom[n][m] = b->pdom[n][m] = 1;
				continue;
			}
			/* on every path from start to n (none: nothing is guaranteed) */
			/* Dom(start) = {start}, PDom(stop) = {stop} */
			if (n != st && b->reach[st][n])
				b->dom[n][m] = m == st || !reach_avoid(b, st, n, m);
			if (n != sp && b->reach[n][sp])
				b->pdom[n][m] = m == sp || !reach_avoid(b, n, sp, m);
		}
	}
	for (int s = 0; s < b->nn; s++) {
		if (b->kind[s] == ANA_NODE_SEND) {
			b->pre[s][s] = 1;
			bf_pre(b, b->pre, s, s, 0, 1ull << b->proc[s], 0);
			b->post1[s][s] = 1;
			bf_post1(b, s, s, 0);
		}
		if (b->kind[s] == ANA_NODE_RECV) {
			b->post2[s][s] = 1;
			bf_post2(b, s, s, 0);
		}
	}
}

/* A random DCFG of 2-4 processes.  With `motifs`, also up to two request/reply pairs
 * (a: send then receive; b: receive then send), so that post-recognition interactions
 * occur; the random edges added on top may or may not spoil them. */
static void random_dcfg(struct unit_rng *rng, struct bf *b, struct ana_dcfg *g, int motifs)
{
	int kinds[4][12], nk[4] = {0}, pos[4][12], mot[2][2] = {{-1, -1}, {-1, -1}}, nmot = 0;

	memset(b, 0, sizeof(*b));
	b->nprocs = 2 + (int)unit_rng_below(rng, 3);
	for (int p = 0; p < b->nprocs; p++)
		for (int i = 1 + (int)unit_rng_below(rng, motifs ? 3 : 4); i > 0; i--)
			kinds[p][nk[p]++] = unit_rng_below(rng, 2) ? ANA_NODE_SEND : ANA_NODE_RECV;
	for (int m = motifs ? 1 + (int)unit_rng_below(rng, 2) : 0; m > 0; m--) {
		int a = (int)unit_rng_below(rng, (uint64_t)b->nprocs);
		int c = (a + 1 + (int)unit_rng_below(rng, (uint64_t)b->nprocs - 1)) % b->nprocs;

		mot[nmot][0] = a * 16 + nk[a];
		mot[nmot][1] = c * 16 + nk[c];
		nmot++;
		kinds[a][nk[a]++] = ANA_NODE_SEND;
		kinds[a][nk[a]++] = ANA_NODE_RECV;
		kinds[c][nk[c]++] = ANA_NODE_RECV;
		kinds[c][nk[c]++] = ANA_NODE_SEND;
	}
	for (int p = 0; p < b->nprocs; p++) {
		char name[16];
		int id, k = nk[p], first, prev;

		snprintf(name, sizeof(name), "q%d", p);
		id = ana_dcfg_add_proc(g, name);
		ck_assert_int_eq(id, p);
		b->start[p] = ana_dcfg_start(g, p);
		b->stop[p] = ana_dcfg_stop(g, p);
		ck_assert_int_eq(b->start[p], b->nn);
		b->proc[b->nn] = p;
		b->kind[b->nn++] = ANA_NODE_START;
		b->proc[b->nn] = p;
		b->kind[b->nn++] = ANA_NODE_STOP;
		first = b->nn;
		for (int i = 0; i < k; i++) {
			char key[16];

			snprintf(key, sizeof(key), "n%d", i);
			ck_assert_int_eq(ana_dcfg_add_node(g, p, (uint32_t)kinds[p][i], key, key), b->nn);
			pos[p][i] = b->nn;
			b->proc[b->nn] = p;
			b->kind[b->nn++] = kinds[p][i];
		}
		/* a path through every node, plus random edges */
		prev = b->start[p];
		for (int n = first; n < b->nn; n++) {
			ck_assert_int_eq(ana_dcfg_add_flow(g, prev, n, NULL), 0);
			b->flow[prev][n] = 1;
			prev = n;
		}
		ck_assert_int_eq(ana_dcfg_add_flow(g, prev, b->stop[p], NULL), 0);
		b->flow[prev][b->stop[p]] = 1;
		for (int e = (int)unit_rng_below(rng, (uint64_t)k + 2); e > 0; e--) {
			int x = first - 2 + (int)unit_rng_below(rng, (uint64_t)k + 2);
			int y = first - 2 + (int)unit_rng_below(rng, (uint64_t)k + 2);

			if (b->kind[x] == ANA_NODE_STOP || b->kind[y] == ANA_NODE_START)
				continue;
			ck_assert_int_eq(ana_dcfg_add_flow(g, x, y, NULL), 0);
			b->flow[x][y] = 1;
		}
	}
	for (int m = 0; m < nmot; m++) {
		int a = mot[m][0] / 16, ia = mot[m][0] % 16, c = mot[m][1] / 16, ic = mot[m][1] % 16;
		int sa = pos[a][ia], ra = pos[a][ia + 1], rc = pos[c][ic], sc = pos[c][ic + 1];

		ck_assert_int_eq(ana_dcfg_add_msg(g, sa, rc), 0);
		ck_assert_int_eq(ana_dcfg_add_msg(g, sc, ra), 0);
		b->msg[sa][rc] = b->msg[sc][ra] = 1;
	}
	for (int s = 0; s < b->nn; s++) {
		if (b->kind[s] != ANA_NODE_SEND)
			continue;
		for (int e = (int)unit_rng_below(rng, motifs ? 2 : 3); e > 0; e--) {
			int r = (int)unit_rng_below(rng, (uint64_t)b->nn);

			if (b->kind[r] != ANA_NODE_RECV || b->proc[r] == b->proc[s])
				continue;
			ck_assert_int_eq(ana_dcfg_add_msg(g, s, r), 0);
			b->msg[s][r] = 1;
		}
		if (unit_rng_below(rng, 8) == 0) {
			ana_dcfg_set_flags(g, s, ANA_NODE_F_UNRECEIVED);
			b->flags[s] |= ANA_NODE_F_UNRECEIVED;
		}
	}
	for (int r = 0; r < b->nn; r++)
		if (b->kind[r] == ANA_NODE_RECV && unit_rng_below(rng, 8) == 0) {
			ana_dcfg_set_flags(g, r, ANA_NODE_F_EXTERNAL);
			b->flags[r] |= ANA_NODE_F_EXTERNAL;
		}
}

START_TEST(random_sets_against_chains)
{
	struct unit_rng rng;
	uint64_t seed = unit_seed() + (uint64_t)_i * 7919u;
	static struct bf b;
	static uint8_t exact[BN][BN];

	unit_rng_seed(&rng, seed);
	for (int trial = 0; trial < 200; trial++) {
		struct ana_dcfg *g;

		ck_assert_int_eq(ana_dcfg_new(&g), 0);
		random_dcfg(&rng, &b, g, trial % 2);
		solve(g);
		bf_solve(&b);
		memset(exact, 0, sizeof(exact));
		for (int s = 0; s < b.nn; s++)
			if (b.kind[s] == ANA_NODE_SEND) {
				exact[s][s] = 1;
				bf_pre(&b, exact, s, s, 0, 1ull << b.proc[s], 1);
			}
		for (int n = 0; n < b.nn; n++)
			for (int m = 0; m < b.nn; m++) {
#define SAME(set, arr)                                                                        \
	ck_assert_msg(ana_dcfg_in(g, set, (size_t)n, (size_t)m) == b.arr[n][m],                     \
	              "seed %llu trial %d: %s(%d) contains %d: equations %d, chains %d",            \
	              (unsigned long long)seed, trial, #arr, n, m,                                  \
	              ana_dcfg_in(g, set, (size_t)n, (size_t)m), b.arr[n][m])
				SAME(ANA_SET_REACH, reach);
				SAME(ANA_SET_DOM, dom);
				SAME(ANA_SET_PDOM, pdom);
				SAME(ANA_SET_PRE, pre);
				SAME(ANA_SET_POST1, post1);
				SAME(ANA_SET_POST2, post2);
#undef SAME
				/* the equations over-approximate Definition 3.1 */
				if (exact[n][m])
					ck_assert_msg(b.pre[n][m], "seed %llu trial %d: PRE(%d) lacks %d",
					              (unsigned long long)seed, trial, n, m);
			}
		ana_dcfg_free(g);
	}
}
END_TEST

/* Every point the search reports satisfies the conditions of 3.2.4, re-checked here from
 * the brute-force sets, on random graphs and random two-part events. */
START_TEST(random_points_satisfy_conditions)
{
	struct unit_rng rng;
	uint64_t seed = unit_seed() + 104729u + (uint64_t)_i;
	static struct bf b;
	size_t total = 0, npost = 0;

	unit_rng_seed(&rng, seed);
	for (int trial = 0; trial < 300; trial++) {
		struct ana_recogs pts;
		struct ana_dcfg *g;
		char text[128];
		int p1 = 0, p2 = 1;

		ck_assert_int_eq(ana_dcfg_new(&g), 0);
		random_dcfg(&rng, &b, g, 1);
		solve(g);
		bf_solve(&b);
		/* every other event has a monotonic first part (pre-recognition only) */
		snprintf(text, sizeof(text), "q%d: sent %s %d == q%d: received == 1", p1,
		         trial % 2 ? ">=" : "==", (int)unit_rng_below(&rng, 2) + trial % 2, p2);
		points(g, text, &pts);
		for (size_t i = 0; i < pts.n; i++) {
			int n = (int)pts.v[i].node, P = (int)pts.v[i].proc;

			total++;
			for (int c = 0; c < 2; c++) {
				const struct ana_se_witness *w = &pts.v[i].w[c];
				int q = c ? p2 : p1;

				if (q == P) {
					ck_assert_uint_eq(w->cls, ANA_SE_LOCAL);
					continue;
				}
				/* (i): S_i in PRE(R_i^P), R_i^P on a path from start to p */
				ck_assert_int_eq(b.proc[w->pre_send], q);
				ck_assert_int_eq(b.proc[w->pre_recv], P);
				ck_assert(b.pre[w->pre_recv][w->pre_send]);
				ck_assert((int)w->pre_recv == n || b.reach[w->pre_recv][n]);
				ck_assert(b.reach[b.start[P]][w->pre_recv]);
				if (w->cls == ANA_SE_MONOTONIC) {
					ck_assert_int_eq(c, 0);
					ck_assert(trial % 2);
					ck_assert_uint_eq(w->post_send, ANA_NO_NODE);
					continue;
				}
				npost++;
				/* (ii): S_i^P after p; R_i after S_i on every path, and waiting for S_i^P */
				ck_assert(w->cls == ANA_SE_DEPENDENT || w->cls == ANA_SE_GENERALIZED);
				ck_assert_int_eq(b.proc[w->post_send], P);
				ck_assert_int_eq(b.proc[w->post_recv], q);
				ck_assert(b.reach[n][w->post_send]);
				ck_assert(b.pdom[w->pre_send][w->post_recv]);
				ck_assert(b.post2[w->post_send][w->post_recv]);
				ck_assert(b.post1[w->post_recv][w->post_send] ||
				          ((int)w->post_send != n && b.pdom[n][w->post_send]));
				ck_assert_int_eq(w->post1, b.post1[w->post_recv][w->post_send]);
			}
		}
		ana_recogs_free(&pts);
		ana_dcfg_free(g);
	}
	/* the generator must produce valid points of both kinds, or this checks nothing */
	ck_assert_msg(total > 0 && npost > 0, "seed %llu: %zu valid points, %zu with post-"
	              "recognition interactions in 300 graphs", (unsigned long long)seed, total, npost);
}
END_TEST

/* ---------------------------------------------------------------------------------------
 * From a session (built in memory): call sites, merging, and the run at the Inf cut.
 */
static void set_site(struct ana_session *s, int p, int64_t k, uint32_t site)
{
	ck_assert_int_ge(k, 1);
	/* the builder has no site argument for send/recv: set it as the loader would */
	s->procs[p].ev[k - 1].site = site;
}

static struct ana_session *rpc_session(int rounds, int logger)
{
	static const char *const fc[] = {"call", "main"}, *const fr[] = {"reply", "main"},
	                         *const fq[] = {"serve", "main"}, *const fs[] = {"respond", "main"},
	                         *const fl[] = {"note", "main"}, *const fg[] = {"log", "main"};
	struct ana_session *s;
	struct trace_diag d;
	int c, v, l = -1, req, rep, lg = -1;

	ck_assert_int_eq(ana_new(&s), 0);
	c = ana_add_process(s, "C", NULL, 0);
	v = ana_add_process(s, "V", NULL, 0);
	if (logger)
		l = ana_add_process(s, "L", NULL, 0);
	req = ana_add_channel(s, c, v);
	rep = ana_add_channel(s, v, c);
	if (logger)
		lg = ana_add_channel(s, c, l);
	ck_assert_int_eq(ana_add_stack(s, c, 1, fc, 2), 0);
	ck_assert_int_eq(ana_add_stack(s, c, 2, fr, 2), 0);
	ck_assert_int_eq(ana_add_stack(s, v, 3, fq, 2), 0);
	ck_assert_int_eq(ana_add_stack(s, v, 4, fs, 2), 0);
	if (logger) {
		ck_assert_int_eq(ana_add_stack(s, c, 5, fl, 2), 0);
		ck_assert_int_eq(ana_add_stack(s, l, 6, fg, 2), 0);
	}
	for (int i = 0; i < rounds; i++) {
		set_site(s, c, ana_add_send(s, c, req, 8), 1);
		set_site(s, v, ana_add_recv(s, v, req, 8), 3);
		set_site(s, v, ana_add_send(s, v, rep, 8), 4);
		set_site(s, c, ana_add_recv(s, c, rep, 8), 2);
		if (logger) {
			set_site(s, c, ana_add_send(s, c, lg, 4), 5);
			set_site(s, l, ana_add_recv(s, l, lg, 4), 6);
		}
	}
	memset(&d, 0, sizeof(d));
	ck_assert_msg(ana_finish(s, &d) == 0, "finish: %s", d.msg);
	return s;
}

START_TEST(session_rpc_run)
{
	struct ana_session *s = rpc_session(3, 1);
	struct ana_stable_run run;
	struct ana_recogs pts;
	struct ana_dcfg *g;
	struct ana_se *se;
	struct trace_diag d;
	int rreq;

	ck_assert_int_eq(ana_dcfg_new(&g), 0);
	memset(&d, 0, sizeof(d));
	ck_assert_msg(ana_dcfg_add_session(g, s, NULL, &d) == 0, "%s", d.msg);
	solve(g);
	ck_assert_uint_eq(ana_dcfg_nprocs(g), 3);
	ck_assert_uint_eq(ana_dcfg_nnodes(g), 6 + 6);
	ck_assert_uint_eq(ana_dcfg_nmsgs(g), 3);
	rreq = ana_dcfg_find(g, 1, ANA_NODE_RECV, "serve < main");
	ck_assert_int_ge(rreq, 0);

	se = se_parse("C: sent(V) == received(V) + 1 == V: received == 2");
	memset(&d, 0, sizeof(d));
	ck_assert_int_eq(ana_stable_points(g, se, 0, &pts, &d), 0);
	ck_assert_uint_eq(pts.n, 1);
	ck_assert_uint_eq(pts.v[0].node, (size_t)rreq);
	ck_assert_uint_eq(pts.v[0].cls, ANA_SE_DEPENDENT);
	memset(&d, 0, sizeof(d));
	ck_assert_msg(ana_stable_run(s, g, se, &pts, &run, &d) == 0, "%s", d.msg);
	ck_assert_int_eq(run.holds, 1);
	/* C: send, recv, note, send (state 4: sent(V) 2, received(V) 1); V: recv, send, recv */
	ck_assert_uint_eq(run.cut[0], 4);
	ck_assert_uint_eq(run.cut[1], 3);
	ck_assert_int_eq(run.recognized, 1);
	ck_assert_uint_eq(run.proc, 1);
	ck_assert_uint_eq(run.event, 3);
	/* C is blocked for V's second reply: its state 4 is all a breakpoint can show */
	ck_assert_uint_eq(run.comp[0].lo, 4);
	ck_assert_uint_eq(run.comp[0].hi, 4);
	ck_assert_int_eq(run.comp[0].stable, 1);
	ck_assert_uint_eq(run.comp[1].lo, 3);
	ck_assert_uint_eq(run.comp[1].hi, 3);
	ck_assert_int_eq(run.comp[1].stable, 1);
	ana_stable_run_free(&run);
	ana_recogs_free(&pts);
	ana_se_free(se);

	/* the logger is a pipeline sink: no point, and the run shows it changing */
	se = se_parse("L: received == 1 == V: received == 2");
	ck_assert_int_eq(ana_stable_points(g, se, 0, &pts, &d), 0);
	ck_assert_uint_eq(pts.n, 0);
	ck_assert_int_eq(ana_stable_run(s, g, se, &pts, &run, &d), 0);
	ck_assert_int_eq(run.holds, 1);
	ck_assert_int_eq(run.recognized, 0);
	ck_assert_int_eq(run.comp[0].stable, 0);
	ck_assert_int_eq(run.comp[1].stable, 0);
	ck_assert_uint_eq(run.comp[0].true_through, 1);
	ana_stable_run_free(&run);
	ana_recogs_free(&pts);
	ana_se_free(se);

	/* a process that is not recorded is named in the error */
	se = se_parse("C: sent == 1 == Z: received == 1");
	memset(&d, 0, sizeof(d));
	ck_assert_int_eq(ana_stable_points(g, se, 0, &pts, &d), TRACE_ENOENT);
	ck_assert_ptr_nonnull(strstr(d.msg, "Z"));
	ana_se_free(se);
	ana_dcfg_free(g);
	ana_free(s);
}
END_TEST

/* Two recordings merge into one DCFG: same processes, same sites, edges once. */
START_TEST(session_merge)
{
	struct ana_session *a = rpc_session(1, 0), *b = rpc_session(4, 1);
	struct ana_dcfg *g;
	struct ana_node nd;
	struct trace_diag d;
	int n;

	ck_assert_int_eq(ana_dcfg_new(&g), 0);
	memset(&d, 0, sizeof(d));
	ck_assert_int_eq(ana_dcfg_add_session(g, a, NULL, &d), 0);
	ck_assert_uint_eq(ana_dcfg_nnodes(g), 4 + 4);
	ck_assert_int_eq(ana_dcfg_add_session(g, b, NULL, &d), 0);
	ck_assert_uint_eq(ana_dcfg_nprocs(g), 3);
	ck_assert_uint_eq(ana_dcfg_nnodes(g), 6 + 6);
	ck_assert_uint_eq(ana_dcfg_nmsgs(g), 3);
	n = ana_dcfg_find(g, 0, ANA_NODE_SEND, "call < main");
	ck_assert_int_ge(n, 0);
	ck_assert_int_eq(ana_dcfg_node(g, (size_t)n, &nd), 0);
	ck_assert_uint_eq(nd.seen, 5);
	ck_assert_str_eq(nd.function, "call");
	solve(g);
	/* in the first recording C stopped after one reply; in the second it logs: the note
	 * is not on every path from the reply to C's end */
	ck_assert_int_eq(ana_dcfg_in(g, ANA_SET_PDOM, (size_t)ana_dcfg_find(g, 0, ANA_NODE_RECV,
	                 "reply < main"), (size_t)ana_dcfg_find(g, 0, ANA_NODE_SEND,
	                 "note < main")), 0);
	/* the run check wants the session added last */
	{
		struct ana_se *se = se_parse("C: sent == 1 == V: received == 1");
		struct ana_stable_run run;

		ck_assert_int_eq(ana_stable_run(a, g, se, NULL, &run, &d), TRACE_EINVAL);
		ck_assert_int_eq(ana_stable_run(b, g, se, NULL, &run, &d), 0);
		ana_stable_run_free(&run);
		ana_se_free(se);
	}
	ana_dcfg_free(g);
	ana_free(a);
	ana_free(b);
}
END_TEST

/* One client calling two servers through the same helper (same call sites): its reply
 * receive has an in-edge from each server, so neither server's reply is the only one that
 * can release it; split by peer, the client's sites become one node per server and the RPC
 * shape reappears. */
static struct ana_session *two_servers(void)
{
	static const char *const fc[] = {"call", "main"}, *const fr[] = {"reply", "main"},
	                         *const fq[] = {"serve", "main"}, *const fs[] = {"respond", "main"};
	struct ana_session *s;
	struct trace_diag d;
	int c, v[2], req[2], rep[2];

	ck_assert_int_eq(ana_new(&s), 0);
	c = ana_add_process(s, "C", NULL, 0);
	v[0] = ana_add_process(s, "V1", NULL, 0);
	v[1] = ana_add_process(s, "V2", NULL, 0);
	ck_assert_int_eq(ana_add_stack(s, c, 1, fc, 2), 0);
	ck_assert_int_eq(ana_add_stack(s, c, 2, fr, 2), 0);
	for (int i = 0; i < 2; i++) {
		req[i] = ana_add_channel(s, c, v[i]);
		rep[i] = ana_add_channel(s, v[i], c);
		ck_assert_int_eq(ana_add_stack(s, v[i], 3, fq, 2), 0);
		ck_assert_int_eq(ana_add_stack(s, v[i], 4, fs, 2), 0);
	}
	for (int i = 0; i < 2; i++) {
		set_site(s, c, ana_add_send(s, c, req[i], 8), 1);
		set_site(s, v[i], ana_add_recv(s, v[i], req[i], 8), 3);
		set_site(s, v[i], ana_add_send(s, v[i], rep[i], 8), 4);
		set_site(s, c, ana_add_recv(s, c, rep[i], 8), 2);
	}
	memset(&d, 0, sizeof(d));
	ck_assert_msg(ana_finish(s, &d) == 0, "finish: %s", d.msg);
	return s;
}

START_TEST(session_split_by_peer)
{
	struct ana_session *s = two_servers();
	struct ana_stable_run run;
	struct ana_recogs pts;
	struct ana_dcfg *g;
	struct ana_se *se = se_parse("C: sent == received + 1 == V1: received == 1");
	struct trace_diag d;
	int rreq1;

	memset(&d, 0, sizeof(d));
	/* by site alone */
	ck_assert_int_eq(ana_dcfg_new(&g), 0);
	ck_assert_int_eq(ana_dcfg_add_session(g, s, NULL, &d), 0);
	solve(g);
	ck_assert_uint_eq(ana_dcfg_nnodes(g), 6 + 6);
	ck_assert_int_eq(ana_stable_points(g, se, 0, &pts, &d), 0);
	ck_assert_uint_eq(pts.n, 0);
	ana_recogs_free(&pts);
	ana_dcfg_free(g);
	/* by site and peer */
	ck_assert_int_eq(ana_dcfg_new(&g), 0);
	ck_assert_int_eq(ana_dcfg_split_by_peer(g, 1), 0);
	ck_assert_int_eq(ana_dcfg_add_session(g, s, NULL, &d), 0);
	ck_assert_int_eq(ana_dcfg_split_by_peer(g, 0), TRACE_EINVAL); /* too late */
	solve(g);
	ck_assert_uint_eq(ana_dcfg_nnodes(g), 6 + 4 + 4);
	ck_assert_int_ge(ana_dcfg_find(g, 0, ANA_NODE_SEND, "call < main -> V2"), 0);
	ck_assert_int_ge(ana_dcfg_find(g, 0, ANA_NODE_RECV, "reply < main <- V1"), 0);
	rreq1 = ana_dcfg_find(g, 1, ANA_NODE_RECV, "serve < main <- C");
	ck_assert_int_ge(rreq1, 0);
	ck_assert_int_eq(ana_stable_points(g, se, 0, &pts, &d), 0);
	ck_assert_uint_eq(pts.n, 1);
	ck_assert_uint_eq(pts.v[0].node, (size_t)rreq1);
	ck_assert_uint_eq(pts.v[0].cls, ANA_SE_DEPENDENT);
	ck_assert_int_eq(ana_stable_run(s, g, se, &pts, &run, &d), 0);
	ck_assert_int_eq(run.recognized, 1);
	ck_assert_uint_eq(run.proc, 1);
	ck_assert_uint_eq(run.event, 1);
	ck_assert_int_eq(run.comp[0].stable, 1);
	ck_assert_uint_eq(run.comp[0].lo, 1);
	ck_assert_uint_eq(run.comp[0].hi, 1);
	ana_stable_run_free(&run);
	ana_recogs_free(&pts);
	ana_dcfg_free(g);
	ana_se_free(se);
	ana_free(s);
}
END_TEST

/* An event loop: the participant P receives every message (PREPARE, DECISION) at one site,
 * so that receive has in-edges from both of the coordinator's sends and waits for neither
 * in particular; split by context, "the receive after the vote" is fed by DECISION only. */
START_TEST(session_split_by_context)
{
	static const char *const f[][2] = {{"prepare", "main"}, {"vote_in", "main"},
	                                   {"decide", "main"}, {"ack_in", "main"},
	                                   {"loop_recv", "main"}, {"vote", "main"},
	                                   {"ack", "main"}};
	struct ana_session *s;
	struct ana_stable_run run;
	struct ana_recogs pts;
	struct ana_dcfg *g;
	struct ana_se *se = se_parse("P: sent == 1 == C: received == 1");
	struct trace_diag d;
	int c, p, c2p, p2c, after_vote;

	memset(&d, 0, sizeof(d));
	ck_assert_int_eq(ana_new(&s), 0);
	c = ana_add_process(s, "C", NULL, 0);
	p = ana_add_process(s, "P", NULL, 0);
	c2p = ana_add_channel(s, c, p);
	p2c = ana_add_channel(s, p, c);
	for (uint32_t i = 0; i < 4; i++)
		ck_assert_int_eq(ana_add_stack(s, c, i + 1, f[i], 2), 0);
	for (uint32_t i = 4; i < 7; i++)
		ck_assert_int_eq(ana_add_stack(s, p, i + 1, f[i], 2), 0);
	set_site(s, c, ana_add_send(s, c, c2p, 8), 1);  /* PREPARE */
	set_site(s, p, ana_add_recv(s, p, c2p, 8), 5);
	set_site(s, p, ana_add_send(s, p, p2c, 8), 6);  /* vote */
	set_site(s, c, ana_add_recv(s, c, p2c, 8), 2);
	set_site(s, c, ana_add_send(s, c, c2p, 8), 3);  /* DECISION */
	set_site(s, p, ana_add_recv(s, p, c2p, 8), 5);
	set_site(s, p, ana_add_send(s, p, p2c, 8), 7);  /* ack */
	set_site(s, c, ana_add_recv(s, c, p2c, 8), 4);
	ck_assert_msg(ana_finish(s, &d) == 0, "finish: %s", d.msg);

	ck_assert_int_eq(ana_dcfg_new(&g), 0);
	ck_assert_int_eq(ana_dcfg_add_session(g, s, NULL, &d), 0);
	solve(g);
	/* P itself can recognise (C waits for P's ack after deciding), C cannot */
	ck_assert_int_eq(ana_stable_points(g, se, 0, &pts, &d), 0);
	for (size_t i = 0; i < pts.n; i++)
		ck_assert_uint_eq(pts.v[i].proc, 1);
	ana_recogs_free(&pts);
	ana_dcfg_free(g);

	ck_assert_int_eq(ana_dcfg_new(&g), 0);
	ck_assert_int_eq(ana_dcfg_split_by_context(g, 1), 0);
	ck_assert_int_eq(ana_dcfg_add_session(g, s, NULL, &d), 0);
	solve(g);
	/* P: recv after start, vote, recv after vote, ack: one node more than by site */
	ck_assert_uint_eq(ana_dcfg_nnodes(g), 4 + 4 + 4);
	after_vote = ana_dcfg_find(g, 1, ANA_NODE_RECV, "loop_recv < main | after vote < main");
	ck_assert_int_ge(after_vote, 0);
	ck_assert_int_ge(ana_dcfg_find(g, 1, ANA_NODE_RECV, "loop_recv < main | after start"), 0);
	ck_assert_int_ge(ana_dcfg_find(g, 0, ANA_NODE_RECV, "vote_in < main | after prepare < main"),
	                 0);
	ck_assert_int_eq(ana_stable_points(g, se, 0, &pts, &d), 0);
	ck_assert_uint_ge(pts.n, 1);
	ck_assert_uint_eq(pts.v[0].proc, 0);
	ck_assert_uint_eq(pts.v[0].cls, ANA_SE_DEPENDENT);
	ck_assert_uint_eq(pts.v[0].w[0].post_recv, (size_t)after_vote);
	ck_assert_int_eq(ana_stable_run(s, g, se, &pts, &run, &d), 0);
	ck_assert_int_eq(run.recognized, 1);
	ck_assert_uint_eq(run.event, 2);
	ck_assert_uint_eq(run.comp[0].lo, 2);
	ck_assert_uint_eq(run.comp[0].hi, 2);
	ck_assert_int_eq(run.comp[0].stable, 1);
	ana_stable_run_free(&run);
	ana_recogs_free(&pts);
	ana_dcfg_free(g);
	ana_se_free(se);
	ana_free(s);
}
END_TEST

/* Random sessions (seeded) through ana_dcfg_add_session: every send or receive event is a
 * node of its process, of its kind and call site; two consecutive ones are joined by an
 * edge; the send a receive read is in the receive's PRE; every event is counted once; with
 * the context split every node names the site before it. */
START_TEST(random_sessions_build)
{
	static const char *const fn[][2] = {{"s1", "main"}, {"s2", "main"}, {"s3", "main"},
	                                    {"r1", "main"}, {"r2", "main"}, {"r3", "main"}};
	struct unit_rng rng;
	uint64_t seed = unit_seed() + 31337u + (uint64_t)_i;

	unit_rng_seed(&rng, seed);
	for (int trial = 0; trial < 60; trial++) {
		struct ana_session *s;
		struct ana_dcfg *g;
		struct trace_diag d;
		int np = 2 + (int)unit_rng_below(&rng, 3), ch[4][4];
		uint64_t pending[4][4], nodeevents = 0, seen = 0;
		int ctx = trial % 3 == 1, peer = trial % 3 == 2;

		memset(&d, 0, sizeof(d));
		memset(pending, 0, sizeof(pending));
		ck_assert_int_eq(ana_new(&s), 0);
		for (int p = 0; p < np; p++) {
			char name[16];

			snprintf(name, sizeof(name), "w%d", p);
			ck_assert_int_eq(ana_add_process(s, name, NULL, 0), p);
			for (uint32_t i = 0; i < 6; i++)
				ck_assert_int_eq(ana_add_stack(s, p, i + 1, fn[i], 2), 0);
		}
		for (int a = 0; a < np; a++)
			for (int b = 0; b < np; b++)
				ch[a][b] = a == b ? -1 : ana_add_channel(s, a, b);
		for (int step = 0; step < 40; step++) {
			int p = (int)unit_rng_below(&rng, (uint64_t)np);
			int q = (int)unit_rng_below(&rng, (uint64_t)np);

			if (p == q)
				continue;
			if (unit_rng_below(&rng, 2) || !pending[q][p]) {
				uint64_t len = 1 + unit_rng_below(&rng, 8);

				set_site(s, p, ana_add_send(s, p, ch[p][q], len),
				         1 + (uint32_t)unit_rng_below(&rng, 3));
				pending[p][q] += len;
			} else {
				uint64_t len = 1 + unit_rng_below(&rng, pending[q][p]);

				set_site(s, p, ana_add_recv(s, p, ch[q][p], len),
				         4 + (uint32_t)unit_rng_below(&rng, 3));
				pending[q][p] -= len;
			}
			if (unit_rng_below(&rng, 5) == 0)
				ck_assert_int_ge(ana_add_mark(s, p, "m", step), 1);
		}
		ck_assert_msg(ana_finish(s, &d) == 0, "finish: %s", d.msg);
		ck_assert_int_eq(ana_dcfg_new(&g), 0);
		ck_assert_int_eq(ana_dcfg_split_by_context(g, ctx), 0);
		ck_assert_int_eq(ana_dcfg_split_by_peer(g, peer), 0);
		ck_assert_int_eq(ana_dcfg_add_session(g, s, NULL, &d), 0);
		solve(g);
		for (int p = 0; p < np; p++) {
			uint32_t prev = (uint32_t)ana_dcfg_start(g, p);

			for (uint64_t k = 1; k <= ana_nevents(s, (size_t)p); k++) {
				struct ana_event ev;
				struct ana_node nd;
				uint32_t n = ana__dcfg_event_node(g, s, (size_t)p, k);
				char want[32];

				ck_assert_int_eq(ana_event_get(s, (size_t)p, k, &ev), 0);
				if (ev.kind != TRACE_EV_SEND && ev.kind != TRACE_EV_RECV) {
					ck_assert_uint_eq(n, UINT32_MAX);
					continue;
				}
				nodeevents++;
				ck_assert_msg(n != UINT32_MAX, "seed %llu: event %d:%llu has no node",
				              (unsigned long long)seed, p, (unsigned long long)k);
				ck_assert_int_eq(ana_dcfg_node(g, n, &nd), 0);
				ck_assert_uint_eq(nd.proc, (size_t)p);
				ck_assert_uint_eq(nd.kind, ev.kind == TRACE_EV_SEND ? ANA_NODE_SEND
				                                                   : ANA_NODE_RECV);
				snprintf(want, sizeof(want), "%s < main", fn[ev.site - 1][0]);
				ck_assert_msg(strncmp(nd.key, want, strlen(want)) == 0, "key %s, site %s",
				              nd.key, want);
				ck_assert_int_eq(strstr(nd.key, " | after ") != NULL, ctx);
				ck_assert_int_eq(strstr(nd.key, ev.kind == TRACE_EV_SEND ? " -> " : " <- ") !=
				                 NULL, peer);
				ck_assert_int_eq(ana_dcfg_in(g, ANA_SET_REACH, prev, n), 1);
				if (ev.kind == TRACE_EV_RECV) {
					uint32_t sn;

					ck_assert_uint_ne(ev.src_proc, ANA_NO_PROC);
					sn = ana__dcfg_event_node(g, s, ev.src_proc, ev.src_index);
					ck_assert_uint_ne(sn, UINT32_MAX);
					ck_assert_int_eq(ana_dcfg_in(g, ANA_SET_PRE, n, sn), 1);
				}
				prev = n;
			}
			ck_assert_int_eq(ana_dcfg_in(g, ANA_SET_REACH, prev, (size_t)ana_dcfg_stop(g, p)),
			                 1);
		}
		for (size_t n = 0; n < ana_dcfg_nnodes(g); n++) {
			struct ana_node nd;

			ana_dcfg_node(g, n, &nd);
			seen += nd.seen;
		}
		ck_assert_uint_eq(seen, nodeevents);
		ana_dcfg_free(g);
		ana_free(s);
	}
}
END_TEST

START_TEST(builder_rejects)
{
	struct ana_dcfg *g;
	int a, b, sa, rb;

	ck_assert_int_eq(ana_dcfg_new(&g), 0);
	a = ana_dcfg_add_proc(g, "a");
	b = ana_dcfg_add_proc(g, "b");
	ck_assert_int_eq(ana_dcfg_add_proc(g, "a"), a);
	sa = node(g, a, ANA_NODE_SEND, "s");
	rb = node(g, b, ANA_NODE_RECV, "r");
	ck_assert_int_eq(ana_dcfg_add_node(g, a, ANA_NODE_SEND, "s", "s"), sa);
	ck_assert_int_eq(ana_dcfg_add_node(g, a, ANA_NODE_START, "x", "x"), TRACE_EINVAL);
	ck_assert_int_eq(ana_dcfg_add_flow(g, sa, rb, NULL), TRACE_EINVAL);   /* across processes */
	ck_assert_int_eq(ana_dcfg_add_msg(g, rb, sa), TRACE_EINVAL);          /* recv -> send */
	ck_assert_int_eq(ana_dcfg_add_flow(g, ana_dcfg_stop(g, a), sa, NULL), TRACE_EINVAL);
	ck_assert_int_eq(ana_dcfg_in(g, ANA_SET_PRE, 0, 0), TRACE_EINVAL);    /* not solved */
	ana_dcfg_free(g);
	ana_dcfg_free(NULL);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("stab");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, rpc_sets);
	tcase_add_test(tc, rpc_dependent_monotonic);
	tcase_add_test(tc, rpc_reply_not_unique);
	tcase_add_test(tc, rpc_loop_after_reply_invalid);
	tcase_add_test(tc, rpc_chain_two_hops);
	tcase_add_test(tc, barrier_fixed);
	tcase_add_test(tc, barrier_fuzzy);
	tcase_add_test(tc, pipeline_no_valid_point);
	tcase_add_test(tc, se_split);
	tcase_add_test(tc, se_monotonic);
	tcase_add_loop_test(tc, random_sets_against_chains, 0, 4);
	tcase_add_loop_test(tc, random_points_satisfy_conditions, 0, 2);
	tcase_add_test(tc, session_rpc_run);
	tcase_add_test(tc, session_merge);
	tcase_add_test(tc, session_split_by_peer);
	tcase_add_test(tc, session_split_by_context);
	tcase_add_loop_test(tc, random_sessions_build, 0, 2);
	tcase_add_test(tc, builder_rejects);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(suite)
