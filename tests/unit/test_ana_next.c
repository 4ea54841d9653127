/*
 * test_ana_next.c: ana_inf_next (the next consistent cut at or after a given one where a
 * predicate holds, analyzer/next.c) and ana_term_at against a brute-force twin on seeded
 * random executions: three processes exchanging one-byte messages and setting mark x.  The
 * twin knows every message edge from the simulation itself, enumerates every cut, and takes
 * the least one above the given cut (every named process strictly above it, for strict)
 * where the predicate holds, evaluated from the marks it set.
 */
#include "unit.h"

#include "ana.h"

#define NP 3
#define MAXE 7

struct exec {
	struct ana_session *s;
	int n[NP];
	int src_p[NP][MAXE + 1], src_k[NP][MAXE + 1]; /* a receive's send; -1 otherwise */
	int mark[NP][MAXE + 1];                      /* mark.x in state k */
	int sent[NP][MAXE + 1], recvd[NP][MAXE + 1], sent_to1[NP][MAXE + 1];
};

/* A random real execution: events are simulated in a global order. */
static void gen(struct exec *x, struct unit_rng *rng)
{
	int ch[NP][NP], qk[NP][NP][MAXE * NP], qh[NP][NP] = {{0}}, qt[NP][NP] = {{0}};

	memset(x, 0, sizeof(*x));
	ck_assert_int_eq(ana_new(&x->s), 0);
	for (int p = 0; p < NP; p++) {
		char name[8];

		snprintf(name, sizeof(name), "P%d", p);
		ck_assert_int_eq(ana_add_process(x->s, name, NULL, 0), p);
	}
	for (int a = 0; a < NP; a++)
		for (int b = 0; b < NP; b++)
			ch[a][b] = a == b ? -1 : ana_add_channel(x->s, a, b);
	for (int step = 0; step < NP * MAXE * 3; step++) {
		int p = (int)unit_rng_below(rng, NP), k = x->n[p] + 1, what = (int)unit_rng_below(rng, 3);
		int q = (int)unit_rng_below(rng, NP);

		if (k > MAXE)
			continue;
		x->src_p[p][k] = -1;
		x->mark[p][k] = x->mark[p][k - 1];
		x->sent[p][k] = x->sent[p][k - 1];
		x->recvd[p][k] = x->recvd[p][k - 1];
		x->sent_to1[p][k] = x->sent_to1[p][k - 1];
		if (what == 0 && q != p) { /* send one byte to q */
			ck_assert_int_eq(ana_add_send(x->s, p, ch[p][q], 1), k);
			qk[p][q][qt[p][q]++] = k;
			x->sent[p][k]++;
			x->sent_to1[p][k] += q == 1;
		} else if (what == 1 && q != p && qh[q][p] < qt[q][p]) { /* receive q's oldest */
			ck_assert_int_eq(ana_add_recv(x->s, p, ch[q][p], 1), k);
			x->src_p[p][k] = q;
			x->src_k[p][k] = qk[q][p][qh[q][p]++];
			x->recvd[p][k]++;
		} else {
			x->mark[p][k] = (int)unit_rng_below(rng, 3);
			ck_assert_int_eq(ana_add_mark(x->s, p, "x", x->mark[p][k]), k);
		}
		x->n[p] = k;
	}
	ck_assert_int_eq(ana_finish(x->s, NULL), 0);
}

static int consistent(const struct exec *x, const int *cut)
{
	for (int p = 0; p < NP; p++)
		for (int k = 1; k <= cut[p]; k++)
			if (x->src_p[p][k] >= 0 && x->src_k[p][k] > cut[x->src_p[p][k]])
				return 0;
	return 1;
}

/* The least cut >= cur (named processes > cur when strict) where mark.x == want[p] for
 * every p with want[p] >= 0; 1 and out, or 0. */
static int twin_cp(const struct exec *x, const int *cur, const int *want, int strict, int *out)
{
	int c[NP], found = 0, best[NP];

	for (c[0] = 0; c[0] <= x->n[0]; c[0]++)
		for (c[1] = 0; c[1] <= x->n[1]; c[1]++)
			for (c[2] = 0; c[2] <= x->n[2]; c[2]++) {
				int ok = consistent(x, c);

				for (int p = 0; p < NP && ok; p++) {
					if (c[p] < cur[p] || (strict && want[p] >= 0 && c[p] == cur[p]))
						ok = 0;
					if (want[p] >= 0 && x->mark[p][c[p]] != want[p])
						ok = 0;
				}
				if (!ok)
					continue;
				if (!found)
					memcpy(best, c, sizeof(best));
				for (int p = 0; p < NP; p++)
					best[p] = best[p] < c[p] ? best[p] : c[p];
				found = 1;
			}
	if (found) {
		/* the set is closed under meet: its least element belongs to it */
		ck_assert_msg(consistent(x, best), "the meet of satisfying cuts is inconsistent");
		memcpy(out, best, sizeof(best));
	}
	return found;
}

START_TEST(next_against_twin)
{
	struct unit_rng rng;

	for (int seed = 0; seed < 400; seed++) {
		struct exec x;
		int cur[NP], want[2][NP], ncp, strict, wcut[NP] = {0}, tmp[NP], found = 0;
		uint64_t acur[NP], got[NP];
		char text[256], *t = text;
		struct trace_pred *pred = NULL;
		struct trace_diag d;
		int rc;

		unit_rng_seed(&rng, (uint64_t)seed + 1);
		gen(&x, &rng);
		do /* a random consistent current cut */
			for (int p = 0; p < NP; p++)
				cur[p] = (int)unit_rng_below(&rng, (uint64_t)x.n[p] + 1);
		while (!consistent(&x, cur));
		ncp = 1 + (int)unit_rng_below(&rng, 2);
		strict = (int)unit_rng_below(&rng, 2);
		for (int c = 0; c < ncp; c++) {
			for (int p = 0; p < NP; p++)
				want[c][p] = -1;
			if (ncp == 1) { /* conjunctive: two processes */
				want[c][0] = (int)unit_rng_below(&rng, 3);
				want[c][1 + (int)unit_rng_below(&rng, 2)] = (int)unit_rng_below(&rng, 3);
			} else { /* disjunctive: one process per conjunct */
				want[c][c == 0 ? 0 : 2] = (int)unit_rng_below(&rng, 3);
			}
			if (c)
				t += sprintf(t, " || ");
			for (int p = 0, first = 1; p < NP; p++)
				if (want[c][p] >= 0) {
					t += sprintf(t, "%sP%d: mark.x == %d", first ? "" : " && ", p, want[c][p]);
					first = 0;
				}
		}
		for (int c = 0; c < ncp; c++)
			if (twin_cp(&x, cur, want[c], strict, tmp)) {
				int tot = tmp[0] + tmp[1] + tmp[2];

				if (!found || tot < wcut[0] + wcut[1] + wcut[2])
					memcpy(wcut, tmp, sizeof(tmp));
				found = 1;
			}
		ck_assert_int_eq(trace_pred_parse(text, &pred, &d), 0);
		for (int p = 0; p < NP; p++)
			acur[p] = (uint64_t)cur[p];
		rc = ana_inf_next(x.s, pred, acur, strict, got, &d);
		ck_assert_msg(rc == found, "seed %d, %s from %d,%d,%d strict %d: %d, twin %d", seed,
		              text, cur[0], cur[1], cur[2], strict, rc, found);
		for (int p = 0; found && p < NP; p++)
			ck_assert_msg(got[p] == (uint64_t)wcut[p], "seed %d, %s: P%d at %llu, twin %d",
			              seed, text, p, (unsigned long long)got[p], wcut[p]);
		trace_pred_free(pred);
		ana_free(x.s);
	}
}
END_TEST

START_TEST(term_at_against_twin)
{
	struct unit_rng rng;
	struct trace_pred_term t = {0};

	for (int seed = 0; seed < 100; seed++) {
		struct exec x;

		unit_rng_seed(&rng, (uint64_t)seed + 1000);
		gen(&x, &rng);
		for (int p = 0; p < NP; p++)
			for (int k = 0; k <= x.n[p]; k++) {
				int64_t v;

				t.kind = TRACE_TERM_MARK;
				t.arg = "x";
				ck_assert_int_eq(ana_term_at(x.s, (size_t)p, (uint64_t)k, &t, &v), 0);
				ck_assert_int_eq(v, x.mark[p][k]);
				t.kind = TRACE_TERM_SENT;
				ck_assert_int_eq(ana_term_at(x.s, (size_t)p, (uint64_t)k, &t, &v), 0);
				ck_assert_int_eq(v, x.sent[p][k]);
				t.kind = TRACE_TERM_RECEIVED;
				ck_assert_int_eq(ana_term_at(x.s, (size_t)p, (uint64_t)k, &t, &v), 0);
				ck_assert_int_eq(v, x.recvd[p][k]);
				t.kind = TRACE_TERM_EVENTS;
				ck_assert_int_eq(ana_term_at(x.s, (size_t)p, (uint64_t)k, &t, &v), 0);
				ck_assert_int_eq(v, k);
				t.kind = TRACE_TERM_SENT_TO;
				t.arg = "P1";
				ck_assert_int_eq(ana_term_at(x.s, (size_t)p, (uint64_t)k, &t, &v), 0);
				ck_assert_int_eq(v, x.sent_to1[p][k]);
			}
		t.kind = TRACE_TERM_SENT_TO;
		t.arg = "nobody";
		{
			int64_t v;

			ck_assert_int_eq(ana_term_at(x.s, 0, 0, &t, &v), TRACE_ENOENT);
			ck_assert_int_eq(ana_term_at(x.s, 0, (uint64_t)x.n[0] + 1, &t, &v), TRACE_EINVAL);
		}
		ana_free(x.s);
	}
}
END_TEST

START_TEST(next_refuses_linked)
{
	struct exec x;
	struct unit_rng rng;
	struct trace_pred *pred = NULL;
	struct trace_diag d;
	uint64_t cur[NP] = {0}, cut[NP];

	unit_rng_seed(&rng, 7);
	gen(&x, &rng);
	ck_assert_int_eq(trace_pred_parse("P0: mark.x == 1 -> P1: mark.x == 2", &pred, &d), 0);
	ck_assert_int_eq(ana_inf_next(x.s, pred, cur, 0, cut, &d), TRACE_EINVAL);
	ck_assert_ptr_nonnull(strstr(d.msg, "linked"));
	trace_pred_free(pred);
	ana_free(x.s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ana_next");
	TCase *tc = tcase_create("next");

	tcase_add_test(tc, next_against_twin);
	tcase_add_test(tc, term_at_against_twin);
	tcase_add_test(tc, next_refuses_linked);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(suite)
