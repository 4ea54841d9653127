/*
 * test_predicate.c: the predicate language (schemas/predicates.md): every form parses to
 * the documented shape and normal form, canonical text round-trips, LOCAL conditions
 * evaluate as specified (checked against an independent evaluator built alongside randomly
 * generated predicates), every error names its column, and random bytes never crash it.
 */
#include <inttypes.h>

#include "trace.h"
#include "unit.h"

/* ---------------------------------------------------------------------------------------
 * Helpers.
 */
static struct trace_pred *parse_ok(const char *text)
{
	struct trace_pred *p = NULL;
	struct trace_diag d;
	int rc;

	memset(&d, 0, sizeof(d));
	rc = trace_pred_parse(text, &p, &d);
	ck_assert_msg(rc == 0, "parse of \"%s\" failed (%d): %s", text, rc, d.msg);
	ck_assert_ptr_nonnull(p);
	return p;
}

static void format_of(const struct trace_pred *p, char *buf, size_t cap)
{
	int n = trace_pred_format(p, buf, cap);

	ck_assert_int_ge(n, 0);
	ck_assert_msg((size_t)n < cap, "format needed %d bytes", n);
	ck_assert_uint_eq(strlen(buf), (size_t)n);
}

/* format(parse(text)) == want, and format(parse(that)) is the same again. */
static void check_canon(const char *text, const char *want)
{
	struct trace_pred *p = parse_ok(text), *q;
	char a[2048], b[2048];

	format_of(p, a, sizeof(a));
	ck_assert_msg(strcmp(a, want) == 0, "\"%s\" formats as \"%s\", want \"%s\"", text, a, want);
	q = parse_ok(a);
	format_of(q, b, sizeof(b));
	ck_assert_str_eq(a, b);
	ck_assert_int_eq(trace_pred_shape(p), trace_pred_shape(q));
	ck_assert_uint_eq(trace_pred_ndp(p), trace_pred_ndp(q));
	trace_pred_free(q);
	trace_pred_free(p);
}

static void sp_text(const struct trace_pred_sp *sp, char *buf, size_t cap)
{
	int n = trace_pred_sp_format(sp, buf, cap);

	ck_assert_int_ge(n, 0);
	ck_assert_uint_lt((size_t)n, cap);
}

/* A fake process state: every term's value is a hash of the term and a salt, so different
 * salts are different states.  Integers fall in [-3, 10] so comparisons go both ways. */
struct fake {
	uint64_t salt;
	int offline;   /* var.SYMBOL cannot be read: the analyzer's situation */
	size_t calls;
};

static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
	const unsigned char *s = data;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ull;
	return h;
}

static int term_is_bool(uint32_t kind)
{
	return kind == TRACE_TERM_IN || kind == TRACE_TERM_LAST || kind == TRACE_TERM_EXITED;
}

static int64_t fake_value(uint32_t kind, const char *arg, uint64_t salt)
{
	uint64_t h = fnv(0xcbf29ce484222325ull, &kind, sizeof(kind));

	h = fnv(h, &salt, sizeof(salt));
	if (arg)
		h = fnv(h, arg, strlen(arg));
	h ^= h >> 29;
	return term_is_bool(kind) ? (int64_t)((h >> 7) & 1) : (int64_t)(h % 14) - 3;
}

static int fake_term(void *ctx, const struct trace_pred_term *t, int64_t *value)
{
	struct fake *f = ctx;

	f->calls++;
	if (t->kind == TRACE_TERM_VAR && f->offline)
		return TRACE_ENOENT;
	*value = fake_value(t->kind, t->arg, f->salt);
	return 0;
}

/* A state given by a table: the tests below that spell out expected values use it. */
struct table {
	int64_t events, sent, received, bytes_sent, bytes_received, exited;
	const char *in_fn;     /* the only function on the stack */
	uint32_t last;         /* kind of the last event */
	int64_t mark_x, var_g, sent_to_q;
};

static int table_term(void *ctx, const struct trace_pred_term *t, int64_t *v)
{
	const struct table *s = ctx;

	switch (t->kind) {
	case TRACE_TERM_EVENTS: *v = s->events; return 0;
	case TRACE_TERM_SENT: *v = s->sent; return 0;
	case TRACE_TERM_RECEIVED: *v = s->received; return 0;
	case TRACE_TERM_SENT_TO: *v = strcmp(t->arg, "q") == 0 ? s->sent_to_q : 0; return 0;
	case TRACE_TERM_RECEIVED_FROM: *v = 0; return 0;
	case TRACE_TERM_BYTES_SENT: *v = s->bytes_sent; return 0;
	case TRACE_TERM_BYTES_RECEIVED: *v = s->bytes_received; return 0;
	case TRACE_TERM_MARK: *v = strcmp(t->arg, "x") == 0 ? s->mark_x : 0; return 0;
	case TRACE_TERM_VAR: *v = s->var_g; return 0;
	case TRACE_TERM_IN: *v = strcmp(t->arg, s->in_fn) == 0; return 0;
	case TRACE_TERM_LAST: *v = t->ev_kind == s->last; return 0;
	case TRACE_TERM_EXITED: *v = s->exited; return 0;
	default: return TRACE_EINVAL;
	}
}

/* Truth of the single SP of a one-SP predicate "p: LOCAL" in state s. */
static int truth_in(const char *text, const struct table *s)
{
	struct trace_pred *p = parse_ok(text);
	int truth = -1, rc;

	ck_assert_uint_eq(trace_pred_ndp(p), 1);
	rc = trace_pred_sp_eval(trace_pred_get_sp(p, 0, 0, 0), table_term, (void *)s, &truth);
	ck_assert_msg(rc == 0, "eval of \"%s\": %d", text, rc);
	trace_pred_free(p);
	return truth;
}

/* ---------------------------------------------------------------------------------------
 * Every form parses, with its canonical text.
 */
START_TEST(test_forms_canonical)
{
	static const char *const cases[][2] = {
		/* terms */
		{"p: events > 3", "p: events > 3"},
		{"p:sent>=1", "p: sent >= 1"},
		{"p: received == 2", "p: received == 2"},
		{"p: sent(q) != 0", "p: sent(q) != 0"},
		{"p: received( node-3 ) < 5", "p: received(node-3) < 5"},
		{"p: bytes_sent <= 100", "p: bytes_sent <= 100"},
		{"p: bytes_received > 0x10", "p: bytes_received > 16"},
		{"p: mark.phase == 2", "p: mark.phase == 2"},
		{"p: var.counter > 10", "p: var.counter > 10"},
		{"p: in(main)", "p: in(main)"},
		{"p: in ( ns::Cls::~Cls )", "p: in(ns::Cls::~Cls)"},
		{"p: in(handle.cold)", "p: in(handle.cold)"},
		{"p: last(send)", "p: last(send)"},
		{"p: last( accept )", "p: last(accept)"},
		{"p: exited", "p: exited"},
		/* a bare integer means != 0 */
		{"p: mark.x", "p: mark.x != 0"},
		{"p: not sent", "p: not sent != 0"},
		{"p: 1", "p: 1 != 0"},
		/* and / or / not, precedence and parentheses */
		{"p: exited or in(f) and last(send)", "p: exited or in(f) and last(send)"},
		{"p: (exited or in(f)) and last(send)", "p: (exited or in(f)) and last(send)"},
		{"p: not (exited or in(f))", "p: not (exited or in(f))"},
		{"p: not not exited", "p: not not exited"},
		{"p: not sent == 1", "p: not sent == 1"},
		{"p: ((sent)) == ((1))", "p: sent == 1"},
		{"p: exited and (in(f) and last(recv))", "p: exited and in(f) and last(recv)"},
		/* arithmetic */
		{"p: sent - received > 2", "p: sent - received > 2"},
		{"p: sent-(received-1) > 2", "p: sent - (received - 1) > 2"},
		{"p: -sent < -3", "p: -sent < -3"},
		{"p: -(sent + 1) < - 3", "p: -(sent + 1) < -3"},
		{"p: - - sent == 0", "p: -(-sent) == 0"},
		{"p: 1 - -2 == 3", "p: 1 - -2 == 3"},
		{"p: -(5) == - -(-5)", "p: -5 == -5"},
		{"p: -9223372036854775808 < 9223372036854775807",
		 "p: -9223372036854775808 < 9223372036854775807"},
		/* process names */
		{"ring.1.2: exited", "ring.1.2: exited"},
		{"node-3: exited", "node-3: exited"},
		{"p_1: exited", "p_1: exited"},
		{"2pc: exited", "2pc: exited"},
		/* predicate level */
		{"a: exited && b: exited", "a: exited && b: exited"},
		{"a: exited || b: exited", "a: exited || b: exited"},
		{"a:exited->b:exited", "a: exited -> b: exited"},
		{"(a: exited)", "a: exited"},
		{"((a: exited && b: exited)) && c: exited", "a: exited && b: exited && c: exited"},
		{"a: exited || (b: exited || c: exited)", "a: exited || b: exited || c: exited"},
		{"(a: exited -> b: exited) -> c: exited", "a: exited -> b: exited -> c: exited"},
		{"a: exited && b: exited || c: exited", "a: exited && b: exited || c: exited"},
		{"(a: exited || b: exited) && c: exited", "(a: exited || b: exited) && c: exited"},
		{"a: exited || b: exited && c: exited -> d: exited",
		 "a: exited || b: exited && c: exited -> d: exited"},
		/* the LOCAL runs to the next top-level && || -> or unbalanced ) */
		{"(a: (exited or in(f)) && b: sent > 1)", "a: exited or in(f) && b: sent > 1"},
		{"a: sent > 1 or exited && b: exited", "a: sent > 1 or exited && b: exited"},
		/* merging */
		{"p: exited && p: sent > 1", "p: exited and sent > 1"},
		{"p: exited or in(f) && q: exited && p: sent > 1",
		 "p: (exited or in(f)) and sent > 1 && q: exited"},
		{"p: exited || p: sent > 1", "p: exited || p: sent > 1"},
		/* whitespace of every kind */
		{" \t a\n:\r\nexited \t", "a: exited"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_canon(cases[i][0], cases[i][1]);
}
END_TEST

/* ---------------------------------------------------------------------------------------
 * Shapes and the normal form.
 */
struct shape_case {
	const char *text;
	int shape;
	size_t ndp;
	const char *layout; /* "dp|dp" of "cp,cp" of SP counts, e.g. "2,1|1" */
};

static void check_layout(const struct trace_pred *p, const char *layout, const char *text)
{
	char got[256];
	size_t dp, cp, n = 0;

	got[0] = '\0';
	for (dp = 0; dp < trace_pred_ndp(p); dp++) {
		for (cp = 0; cp < trace_pred_ncp(p, dp); cp++)
			n += (size_t)snprintf(got + n, sizeof(got) - n, "%s%zu", cp ? "," : dp ? "|" : "",
			                      trace_pred_nsp(p, dp, cp));
	}
	ck_assert_msg(strcmp(got, layout) == 0, "\"%s\": layout %s, want %s", text, got, layout);
}

START_TEST(test_shapes)
{
	static const struct shape_case cases[] = {
		{"a: exited", TRACE_PRED_CONJUNCTIVE, 1, "1"},
		{"(a: exited)", TRACE_PRED_CONJUNCTIVE, 1, "1"},
		{"a: exited && b: exited && c: exited", TRACE_PRED_CONJUNCTIVE, 1, "3"},
		{"a: exited && a: in(f)", TRACE_PRED_CONJUNCTIVE, 1, "1"},
		{"a: exited && b: exited && a: in(f)", TRACE_PRED_CONJUNCTIVE, 1, "2"},
		{"a: exited || b: exited", TRACE_PRED_DISJUNCTIVE, 1, "1,1"},
		{"a: exited || a: in(f) || (b: exited)", TRACE_PRED_DISJUNCTIVE, 1, "1,1,1"},
		{"(a: exited && a: in(f)) || b: exited", TRACE_PRED_DISJUNCTIVE, 1, "1,1"},
		{"a: exited -> b: exited", TRACE_PRED_LINKED, 2, "1|1"},
		{"a: exited || b: exited -> c: exited && d: exited -> e: exited",
		 TRACE_PRED_LINKED, 3, "1,1|2|1"},
		{"a: exited && b: exited || c: exited -> d: exited", TRACE_PRED_LINKED, 2, "2,1|1"},
		{"a: exited && b: exited || c: exited", TRACE_PRED_GENERAL, 1, "2,1"},
		{"a: exited || b: exited && c: exited && b: in(f)", TRACE_PRED_GENERAL, 1, "1,2"},
		{"(a: exited || b: exited) && c: exited", TRACE_PRED_GENERAL, 0, ""},
		{"a: exited && (b: exited || c: exited && (d: exited || e: exited))",
		 TRACE_PRED_GENERAL, 0, ""},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct trace_pred *p = parse_ok(cases[i].text);

		ck_assert_msg((int)trace_pred_shape(p) == cases[i].shape, "\"%s\": shape %d, want %d",
		              cases[i].text, trace_pred_shape(p), cases[i].shape);
		ck_assert_uint_eq(trace_pred_ndp(p), cases[i].ndp);
		check_layout(p, cases[i].layout, cases[i].text);
		/* out of range is 0 / NULL, never a crash */
		ck_assert_uint_eq(trace_pred_ncp(p, 99), 0);
		ck_assert_uint_eq(trace_pred_nsp(p, 0, 99), 0);
		ck_assert_ptr_null(trace_pred_get_sp(p, 0, 0, 99));
		ck_assert_ptr_null(trace_pred_get_sp(p, 99, 0, 0));
		trace_pred_free(p);
	}
}
END_TEST

START_TEST(test_normal_form_contents)
{
	struct trace_pred *p = parse_ok(
		"a: sent > 1 && b: exited && a: mark.x == 2 || c: in(f) -> b: last(recv) && a: exited");
	const struct trace_pred_sp *const *all;
	char buf[256];

	ck_assert_int_eq(trace_pred_shape(p), TRACE_PRED_LINKED);
	ck_assert_uint_eq(trace_pred_ndp(p), 2);
	ck_assert_uint_eq(trace_pred_ncp(p, 0), 2);
	ck_assert_uint_eq(trace_pred_nsp(p, 0, 0), 2);
	ck_assert_str_eq(trace_pred_sp_proc(trace_pred_get_sp(p, 0, 0, 0)), "a");
	sp_text(trace_pred_get_sp(p, 0, 0, 0), buf, sizeof(buf));
	ck_assert_str_eq(buf, "a: sent > 1 and mark.x == 2");
	ck_assert_str_eq(trace_pred_sp_proc(trace_pred_get_sp(p, 0, 0, 1)), "b");
	ck_assert_uint_eq(trace_pred_nsp(p, 0, 1), 1);
	ck_assert_str_eq(trace_pred_sp_proc(trace_pred_get_sp(p, 0, 1, 0)), "c");
	ck_assert_uint_eq(trace_pred_ncp(p, 1), 1);
	ck_assert_uint_eq(trace_pred_nsp(p, 1, 0), 2);
	sp_text(trace_pred_get_sp(p, 1, 0, 1), buf, sizeof(buf));
	ck_assert_str_eq(buf, "a: exited");

	/* all SPs, text order, after merging: a b c b a */
	ck_assert_uint_eq(trace_pred_all_sps(p, &all), 5);
	ck_assert_ptr_eq(all[0], trace_pred_get_sp(p, 0, 0, 0));
	ck_assert_ptr_eq(all[2], trace_pred_get_sp(p, 0, 1, 0));
	ck_assert_ptr_eq(all[4], trace_pred_get_sp(p, 1, 0, 1));
	ck_assert_int_eq(trace_pred_uses_var(p), 0);
	trace_pred_free(p);

	/* GENERAL without normal form still lists its SPs */
	p = parse_ok("(a: exited || b: var.g > 1) && a: in(f) && a: sent > 0");
	ck_assert_uint_eq(trace_pred_ndp(p), 0);
	ck_assert_ptr_null(trace_pred_get_sp(p, 0, 0, 0));
	ck_assert_uint_eq(trace_pred_all_sps(p, &all), 3);
	sp_text(all[2], buf, sizeof(buf));
	ck_assert_str_eq(buf, "a: in(f) and sent > 0");
	ck_assert_int_eq(trace_pred_uses_var(p), 1);
	trace_pred_free(p);
}
END_TEST

START_TEST(test_terms_listed)
{
	struct trace_pred *p = parse_ok("p: sent > 1 and sent(q) > sent and mark.x + mark.y > "
	                                "mark.x and last(send) or last(recv) or var.g == 0 "
	                                "&& p: in(main) or in(main) or events == received(q)");
	const struct trace_pred_term *const *t;
	size_t n = trace_pred_sp_terms(trace_pred_get_sp(p, 0, 0, 0), &t);

	/* distinct, first appearance first */
	ck_assert_uint_eq(n, 10);
	ck_assert_uint_eq(t[0]->kind, TRACE_TERM_SENT);
	ck_assert_ptr_null(t[0]->arg);
	ck_assert_uint_eq(t[1]->kind, TRACE_TERM_SENT_TO);
	ck_assert_str_eq(t[1]->arg, "q");
	ck_assert_uint_eq(t[2]->kind, TRACE_TERM_MARK);
	ck_assert_str_eq(t[2]->arg, "x");
	ck_assert_uint_eq(t[3]->kind, TRACE_TERM_MARK);
	ck_assert_str_eq(t[3]->arg, "y");
	ck_assert_uint_eq(t[4]->kind, TRACE_TERM_LAST);
	ck_assert_uint_eq(t[4]->ev_kind, TRACE_EV_SEND);
	ck_assert_str_eq(t[4]->arg, "send");
	ck_assert_uint_eq(t[5]->ev_kind, TRACE_EV_RECV);
	ck_assert_uint_eq(t[6]->kind, TRACE_TERM_VAR);
	ck_assert_str_eq(t[6]->arg, "g");
	ck_assert_uint_eq(t[7]->kind, TRACE_TERM_IN);
	ck_assert_str_eq(t[7]->arg, "main");
	ck_assert_uint_eq(t[8]->kind, TRACE_TERM_EVENTS);
	ck_assert_uint_eq(t[9]->kind, TRACE_TERM_RECEIVED_FROM);
	ck_assert_int_eq(trace_pred_uses_var(p), 1);
	trace_pred_free(p);
}
END_TEST

/* ---------------------------------------------------------------------------------------
 * Evaluation.
 */
START_TEST(test_eval_table)
{
	struct table s = {.events = 7, .sent = 3, .received = 2, .bytes_sent = 300,
	                  .bytes_received = 20, .exited = 0, .in_fn = "handle",
	                  .last = TRACE_EV_SEND, .mark_x = 5, .var_g = -4, .sent_to_q = 1};

	ck_assert_int_eq(truth_in("p: events == 7", &s), 1);
	ck_assert_int_eq(truth_in("p: events != 7", &s), 0);
	ck_assert_int_eq(truth_in("p: sent < 3", &s), 0);
	ck_assert_int_eq(truth_in("p: sent <= 3", &s), 1);
	ck_assert_int_eq(truth_in("p: received > 1", &s), 1);
	ck_assert_int_eq(truth_in("p: received >= 3", &s), 0);
	ck_assert_int_eq(truth_in("p: sent(q) == 1 and sent(r) == 0", &s), 1);
	ck_assert_int_eq(truth_in("p: bytes_sent - bytes_received == 280", &s), 1);
	ck_assert_int_eq(truth_in("p: mark.x == 5 and mark.y == 0", &s), 1);
	ck_assert_int_eq(truth_in("p: mark.x", &s), 1);
	ck_assert_int_eq(truth_in("p: mark.y", &s), 0);
	ck_assert_int_eq(truth_in("p: var.g < -3", &s), 1);
	ck_assert_int_eq(truth_in("p: -var.g == 4", &s), 1);
	ck_assert_int_eq(truth_in("p: in(handle)", &s), 1);
	ck_assert_int_eq(truth_in("p: in(main)", &s), 0);
	ck_assert_int_eq(truth_in("p: last(send)", &s), 1);
	ck_assert_int_eq(truth_in("p: last(recv)", &s), 0);
	ck_assert_int_eq(truth_in("p: exited", &s), 0);
	ck_assert_int_eq(truth_in("p: not exited", &s), 1);
	ck_assert_int_eq(truth_in("p: exited or in(main) or last(send)", &s), 1);
	ck_assert_int_eq(truth_in("p: (exited or last(send)) and in(main)", &s), 0);
	ck_assert_int_eq(truth_in("p: exited or last(send) and in(main)", &s), 0);
	ck_assert_int_eq(truth_in("p: not exited and not in(main)", &s), 1);
	ck_assert_int_eq(truth_in("p: 0", &s), 0);
	ck_assert_int_eq(truth_in("p: 1 - 1 + sent - 3", &s), 0);
	/* 64-bit arithmetic wraps instead of trapping */
	ck_assert_int_eq(truth_in("p: 9223372036854775807 + 1 == -9223372036854775808", &s), 1);
	ck_assert_int_eq(truth_in("p: -9223372036854775808 - 1 > 0", &s), 1);
	ck_assert_int_eq(truth_in("p: -(-9223372036854775808) < 0", &s), 1);
}
END_TEST

START_TEST(test_eval_errors_and_order)
{
	struct trace_pred *p = parse_ok("p: exited and var.g > 1 && q: sent > 0");
	struct fake f = {.salt = 1, .offline = 1};
	const struct trace_pred_sp *sp = trace_pred_get_sp(p, 0, 0, 0);
	int truth = 42;

	/* var offline fails, whatever exited is: every term is asked for, no short-circuit */
	ck_assert_int_eq(trace_pred_sp_eval(sp, fake_term, &f, &truth), TRACE_ENOENT);
	ck_assert_int_eq(truth, 42);
	ck_assert_uint_eq(f.calls, 2);
	f.offline = 0;
	ck_assert_int_eq(trace_pred_sp_eval(sp, fake_term, &f, &truth), 0);
	ck_assert(truth == 0 || truth == 1);
	ck_assert_int_eq(trace_pred_sp_eval(NULL, fake_term, &f, &truth), TRACE_EINVAL);
	ck_assert_int_eq(trace_pred_sp_eval(sp, NULL, &f, &truth), TRACE_EINVAL);
	trace_pred_free(p);
}
END_TEST

/* sp_truth from a string of 0/1 per SP in text order ("all" order). */
struct truths {
	const struct trace_pred_sp *const *all;
	size_t n;
	const char *bits;
	int fail_at; /* index of an SP whose truth is an error, -1 for none */
	size_t calls;
};

static int bits_truth(void *ctx, const struct trace_pred_sp *sp)
{
	struct truths *t = ctx;
	size_t i;

	t->calls++;
	for (i = 0; i < t->n; i++)
		if (t->all[i] == sp)
			return (int)i == t->fail_at ? TRACE_ENOENT : t->bits[i] == '1';
	ck_abort_msg("eval_tree passed an SP that is not in all_sps");
	return -1;
}

static int tree_truth(const char *text, const char *bits, int fail_at, size_t *calls)
{
	struct trace_pred *p = parse_ok(text);
	struct truths t = {.bits = bits, .fail_at = fail_at};
	int r;

	t.n = trace_pred_all_sps(p, &t.all);
	ck_assert_uint_eq(t.n, strlen(bits));
	r = trace_pred_eval_tree(p, bits_truth, &t);
	if (calls)
		*calls = t.calls;
	trace_pred_free(p);
	return r;
}

START_TEST(test_eval_tree)
{
	static const char *const general = "(a: exited || b: exited) && c: exited";
	static const char *const dnf = "a: exited && b: exited || c: exited && d: exited";
	size_t calls;
	struct trace_pred *p;

	ck_assert_int_eq(tree_truth(general, "101", -1, NULL), 1);
	ck_assert_int_eq(tree_truth(general, "011", -1, NULL), 1);
	ck_assert_int_eq(tree_truth(general, "001", -1, NULL), 0);
	ck_assert_int_eq(tree_truth(general, "110", -1, NULL), 0);
	ck_assert_int_eq(tree_truth(dnf, "1100", -1, NULL), 1);
	ck_assert_int_eq(tree_truth(dnf, "1011", -1, NULL), 1);
	ck_assert_int_eq(tree_truth(dnf, "1010", -1, NULL), 0);
	ck_assert_int_eq(tree_truth("a: exited", "1", -1, NULL), 1);
	ck_assert_int_eq(tree_truth("a: exited || b: exited", "00", -1, NULL), 0);
	/* an error anywhere fails the whole, and every SP is asked (no short-circuit) */
	ck_assert_int_eq(tree_truth(dnf, "1111", 3, &calls), TRACE_ENOENT);
	ck_assert_uint_eq(calls, 4);
	ck_assert_int_eq(tree_truth(general, "000", 2, &calls), TRACE_ENOENT);
	ck_assert_uint_eq(calls, 3);

	p = parse_ok("a: exited -> b: exited");
	ck_assert_int_eq(trace_pred_eval_tree(p, bits_truth, NULL), TRACE_EINVAL);
	trace_pred_free(p);
}
END_TEST

/* ---------------------------------------------------------------------------------------
 * Errors: code, column, and what the message says.
 */
struct err_case {
	const char *text;
	int col;
	const char *says;
};

START_TEST(test_errors)
{
	static const struct err_case cases[] = {
		{"", 0, "expected a process name or '(', found end of predicate"},
		{"   ", 3, "expected a process name or '('"},
		{")", 0, "expected a process name or '(', found ')'"},
		{"p", 1, "expected ':' after the process name 'p', found end of predicate"},
		{"p exited", 2, "expected ':' after the process name 'p', found 'exited'"},
		{"p:", 2, "expected a term"},
		{"p: ", 3, "found end of predicate"},
		{"p: x == 1", 3, "expected a term (events, sent"},
		{"p: sent 3", 8, "expected a comparison operator after 'sent', found '3'"},
		{"p: mark.x + 1 y", 14, "expected a comparison operator after 'mark.x + 1', found 'y'"},
		{"p: sent == 1 b", 13, "expected 'and', 'or', '&&', '||', '->' or the end"},
		{"p: sent == 1 q: exited", 13, "expected '&&', '||' or '->' before the simple predicate of 'q'"},
		{"p: sent == 1 and q: exited", 17, "'q' starts a simple predicate of another process"},
		{"p: sent == 1 && sent == 2", 21, "'sent' is a term: inside one process's condition use 'and'"},
		{"p: sent = 1", 8, "'=' is not a comparison: write '=='"},
		{"p: !exited", 3, "'!' is not an operator here: write 'not'"},
		{"p: sent < 1 < 2", 12, "comparisons do not chain"},
		{"p: exited == 1", 3, "'exited' is a condition, not a number"},
		{"p: sent + in(f) > 1", 10, "'in(f)' is a condition, not a number"},
		{"p: -exited", 4, "'exited' is a condition, not a number: it cannot be negated"},
		{"p: (sent > 1) + 1 > 1", 4, "'sent > 1' is a condition"},
		{"p: 9223372036854775808 > 0", 3, "integer literal out of the 64-bit signed range"},
		{"p: 99999999999999999999 > 0", 3, "out of the 64-bit signed range"},
		{"p: 0x > 1", 5, "expected hexadecimal digits after '0x'"},
		{"p: 12abc > 1", 5, "expected a digit or an operator in the number, found 'abc'"},
		{"p: mark > 1", 7, "expected '.' and a KEY right after 'mark'"},
		{"p: mark. x > 1", 8, "expected a KEY (a C identifier) after 'mark.'"},
		{"p: var.1 > 1", 7, "expected a SYMBOL (a C identifier) after 'var.'"},
		{"p: in main", 6, "expected '(' after 'in', found 'main'"},
		{"p: in()", 6, "expected a function name in in(...), found ')'"},
		{"p: in(f g)", 8, "expected ')' after a function name in in(...), found 'g'"},
		{"p: last(foo)", 8, "unknown event kind 'foo' in last(...)"},
		{"p: last( 7)", 9, "expected an event kind in last(...), found '7'"},
		{"p: sent( ) > 1", 9, "expected a process name in sent(...), found ')'"},
		{"p: received(q > 1", 14, "expected ')' after a process name in received(...)"},
		{"p: (sent > 1", 12, "expected ')' to close the '(' at column 3, found end of predicate"},
		{"p: (sent > 1 && q: exited)", 13, "'&&' joins simple predicates and cannot appear inside the parentheses of a local condition: write 'and'"},
		{"p: (exited || q: exited)", 11, "write 'or'"},
		{"p: (exited -> q: exited)", 11, "'->' links whole predicates"},
		{"p: exited)", 9, "unmatched ')'"},
		{"(p: exited", 10, "expected ')' to close the '(' at column 0, found end of predicate"},
		{"(p: exited) q", 12, "expected '&&', '||', '->' or the end of the predicate, found 'q'"},
		{"p: exited &&", 12, "expected a process name or '(', found end of predicate"},
		{"p: exited || || q: exited", 13, "expected a process name or '(', found '||'"},
		{"p: exited -> ", 13, "expected a process name or '('"},
		{"-> p: exited", 0, "expected a process name or '(', found '->'"},
		{"(a: exited -> b: exited) && c: exited", 11, "'->' cannot be used under '&&'"},
		{"c: exited || (a: exited -> b: exited)", 24, "'->' cannot be used under '||'"},
		{"a: exited && (b: exited || c: exited) -> d: exited", 24, "'||' under '&&' is not allowed in a step of a linked predicate"},
		{"p: exited or", 12, "expected a term"},
		{"p: not", 6, "expected a term"},
		{"p: exited and and exited", 14, "found 'and'"},
		{"p:\x01", 2, "found byte 0x01"},
		{"p\xff: exited", 1, "found byte 0xff"},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct trace_pred *p = (struct trace_pred *)&p; /* must be reset to NULL */
		struct trace_diag d;
		char prefix[32];
		int rc;

		memset(&d, 0x55, sizeof(d));
		rc = trace_pred_parse(cases[i].text, &p, &d);
		ck_assert_msg(rc == TRACE_EPARSE, "\"%s\" parsed (%d)", cases[i].text, rc);
		ck_assert_ptr_null(p);
		ck_assert_int_eq(d.code, TRACE_EPARSE);
		ck_assert_str_eq(d.file, "");
		ck_assert_msg(d.offset == (uint64_t)cases[i].col, "\"%s\": column %" PRIu64 ", want %d (%s)",
		              cases[i].text, d.offset, cases[i].col, d.msg);
		snprintf(prefix, sizeof(prefix), "column %d: ", cases[i].col);
		ck_assert_msg(strncmp(d.msg, prefix, strlen(prefix)) == 0, "msg \"%s\"", d.msg);
		ck_assert_msg(strstr(d.msg, cases[i].says), "\"%s\": msg \"%s\" lacks \"%s\"",
		              cases[i].text, d.msg, cases[i].says);
		/* diag is optional */
		ck_assert_int_eq(trace_pred_parse(cases[i].text, &p, NULL), TRACE_EPARSE);
	}
	ck_assert_int_eq(trace_pred_parse(NULL, NULL, NULL), TRACE_EINVAL);
	trace_pred_free(NULL);
}
END_TEST

START_TEST(test_limits)
{
	size_t n = 100000, i, len;
	char *s = malloc(n + 64);
	struct trace_diag d;
	struct trace_pred *p;

	ck_assert_ptr_nonnull(s);
	/* deep parentheses at both levels: an error, not a stack overflow */
	for (i = 0; i < 2000; i++)
		s[i] = '(';
	strcpy(s + 2000, "p: exited");
	ck_assert_int_eq(trace_pred_parse(s, &p, &d), TRACE_EPARSE);
	ck_assert_ptr_nonnull(strstr(d.msg, "nested more than"));
	len = (size_t)sprintf(s, "p: ");
	for (i = 0; i < 2000; i++)
		s[len++] = i % 2 ? '(' : '-';
	strcpy(s + len, "sent");
	ck_assert_int_eq(trace_pred_parse(s, &p, &d), TRACE_EPARSE);
	len = (size_t)sprintf(s, "p: ");
	for (i = 0; i < 2000; i++)
		len += (size_t)sprintf(s + len, "not ");
	strcpy(s + len, "exited");
	ck_assert_int_eq(trace_pred_parse(s, &p, &d), TRACE_EPARSE);

	/* a long and-chain is fine up to the documented height */
	len = (size_t)sprintf(s, "p: exited");
	for (i = 0; i < 500; i++)
		len += (size_t)sprintf(s + len, " and sent > %zu", i);
	p = parse_ok(s);
	ck_assert_int_gt(trace_pred_format(p, NULL, 0), 500 * 10);
	trace_pred_free(p);
	for (; i < 1200; i++)
		len += (size_t)sprintf(s + len, " and sent > %zu", i);
	ck_assert_int_eq(trace_pred_parse(s, &p, &d), TRACE_EPARSE);
	ck_assert_ptr_nonnull(strstr(d.msg, "condition too long"));

	/* many SPs at the predicate level are flat: no depth limit */
	len = 0;
	for (i = 0; i < 2000; i++)
		len += (size_t)sprintf(s + len, "%sp%zu: exited", i ? " && " : "", i);
	p = parse_ok(s);
	ck_assert_uint_eq(trace_pred_nsp(p, 0, 0), 2000);
	trace_pred_free(p);

	/* too long a text */
	memset(s, ' ', n);
	s[n] = '\0';
	ck_assert_int_eq(trace_pred_parse(s, &p, &d), TRACE_EPARSE);
	ck_assert_ptr_nonnull(strstr(d.msg, "longer than"));

	/* a process name longer than a trace can hold */
	memset(s, 'a', 200);
	strcpy(s + 200, ": exited");
	ck_assert_int_eq(trace_pred_parse(s, &p, &d), TRACE_EPARSE);
	ck_assert_uint_eq(d.offset, 0);
	free(s);
}
END_TEST

START_TEST(test_format_truncation)
{
	struct trace_pred *p = parse_ok("alpha: sent > 1 && beta: exited");
	char buf[64];
	int full = trace_pred_format(p, NULL, 0), n;

	ck_assert_int_eq(full, (int)strlen("alpha: sent > 1 && beta: exited"));
	memset(buf, 'x', sizeof(buf));
	n = trace_pred_format(p, buf, 10);
	ck_assert_int_eq(n, full);
	ck_assert_str_eq(buf, "alpha: se");
	ck_assert_int_eq(buf[10], 'x');
	n = trace_pred_format(p, buf, 1);
	ck_assert_int_eq(n, full);
	ck_assert_str_eq(buf, "");
	n = trace_pred_sp_format(trace_pred_get_sp(p, 0, 0, 1), buf, 5);
	ck_assert_int_eq(n, (int)strlen("beta: exited"));
	ck_assert_str_eq(buf, "beta");
	trace_pred_free(p);
}
END_TEST

/* ---------------------------------------------------------------------------------------
 * Random valid predicates, built with their expected truth by an evaluator independent of
 * the one under test.
 */
struct gen {
	struct unit_rng *r;
	char *s;
	size_t n, cap;
	uint64_t salt;
};

static void gput(struct gen *g, const char *text)
{
	size_t n = strlen(text);

	ck_assert_uint_lt(g->n + n, g->cap);
	memcpy(g->s + g->n, text, n + 1);
	g->n += n;
}

static void gsp(struct gen *g)
{
	gput(g, unit_rng_below(g->r, 2) ? " " : "");
}

static const char *const procs[] = {"a", "b", "ring.1", "node-3", "p_1"};
static const char *const keys[] = {"x", "y", "phase"};
static const char *const fns[] = {"main", "ns::f", "f.cold"};
static const char *const kinds[] = {"send", "recv", "accept", "close"};

#define PICK(g, arr) (arr[unit_rng_below((g)->r, sizeof(arr) / sizeof(arr[0]))])

static int64_t gen_int(struct gen *g, int depth)
{
	char num[32];
	int64_t a, b;
	const char *arg;

	switch (depth > 0 ? unit_rng_below(g->r, 7) : unit_rng_below(g->r, 3)) {
	case 0: {
		int64_t v = (int64_t)unit_rng_below(g->r, 21) - 10;

		snprintf(num, sizeof(num), "%" PRId64, v);
		gput(g, num);
		return v;
	}
	case 1: {
		static const char *const w[] = {"events", "sent", "received", "bytes_sent",
		                                "bytes_received"};
		static const uint32_t k[] = {TRACE_TERM_EVENTS, TRACE_TERM_SENT, TRACE_TERM_RECEIVED,
		                             TRACE_TERM_BYTES_SENT, TRACE_TERM_BYTES_RECEIVED};
		size_t i = unit_rng_below(g->r, 5);

		gput(g, w[i]);
		return fake_value(k[i], NULL, g->salt);
	}
	case 2:
		switch (unit_rng_below(g->r, 4)) {
		case 0:
			arg = PICK(g, keys);
			gput(g, "mark.");
			gput(g, arg);
			return fake_value(TRACE_TERM_MARK, arg, g->salt);
		case 1:
			arg = PICK(g, keys);
			gput(g, "var.");
			gput(g, arg);
			return fake_value(TRACE_TERM_VAR, arg, g->salt);
		case 2:
			arg = PICK(g, procs);
			gput(g, "sent(");
			gput(g, arg);
			gput(g, ")");
			return fake_value(TRACE_TERM_SENT_TO, arg, g->salt);
		default:
			arg = PICK(g, procs);
			gput(g, "received (");
			gput(g, arg);
			gput(g, " )");
			return fake_value(TRACE_TERM_RECEIVED_FROM, arg, g->salt);
		}
	case 3:
	case 4: {
		int add = unit_rng_below(g->r, 2);

		gput(g, "(");
		a = gen_int(g, depth - 1);
		gsp(g);
		gput(g, add ? "+" : "-");
		gput(g, " "); /* "- -5" must not become "--5" ... which also parses; keep it readable */
		b = gen_int(g, depth - 1);
		gput(g, ")");
		return (int64_t)(add ? (uint64_t)a + (uint64_t)b : (uint64_t)a - (uint64_t)b);
	}
	case 5:
		gput(g, "-(");
		a = gen_int(g, depth - 1);
		gput(g, ")");
		return (int64_t)(0 - (uint64_t)a);
	default:
		gput(g, "(");
		a = gen_int(g, depth - 1);
		gput(g, ")");
		return a;
	}
}

static int gen_bool(struct gen *g, int depth)
{
	static const char *const ops[] = {"==", "!=", "<", "<=", ">", ">="};
	const char *arg;
	int64_t a, b;
	int x, y, z;
	size_t op;

	switch (depth > 0 ? unit_rng_below(g->r, 8) : unit_rng_below(g->r, 3)) {
	case 0:
		op = unit_rng_below(g->r, 6);
		a = gen_int(g, depth - 1);
		gsp(g);
		gput(g, ops[op]);
		gsp(g);
		b = gen_int(g, depth - 1);
		switch (op) {
		case 0: return a == b;
		case 1: return a != b;
		case 2: return a < b;
		case 3: return a <= b;
		case 4: return a > b;
		default: return a >= b;
		}
	case 1:
		switch (unit_rng_below(g->r, 3)) {
		case 0:
			gput(g, "exited");
			return (int)fake_value(TRACE_TERM_EXITED, NULL, g->salt);
		case 1:
			arg = PICK(g, fns);
			gput(g, "in(");
			gput(g, arg);
			gput(g, ")");
			return (int)fake_value(TRACE_TERM_IN, arg, g->salt);
		default:
			arg = PICK(g, kinds);
			gput(g, "last(");
			gput(g, arg);
			gput(g, ")");
			return (int)fake_value(TRACE_TERM_LAST, arg, g->salt);
		}
	case 2:
		return gen_int(g, depth - 1) != 0; /* a bare integer means != 0 */
	case 3:
		gput(g, "not ");
		return !gen_bool(g, depth - 1);
	case 4:
	case 5: {
		int and = unit_rng_below(g->r, 2);

		gput(g, "(");
		x = gen_bool(g, depth - 1);
		gput(g, and ? " and " : " or ");
		y = gen_bool(g, depth - 1);
		gput(g, ")");
		return and ? x && y : x || y;
	}
	default:
		/* unparenthesised inside: and binds tighter than or, not tighter than and */
		gput(g, "(");
		x = gen_bool(g, 0);
		gput(g, " or ");
		y = gen_bool(g, 0);
		gput(g, " and ");
		z = gen_bool(g, 0); /* not inside || &&: C's short-circuit would skip printing it */
		gput(g, ")");
		return x || (y && z);
	}
}

/* A whole LOCAL: sometimes an unparenthesised mix, which the LOCAL's end (&&, ||, -> or
 * an unbalanced ')') must cut at the right place. */
static int gen_local(struct gen *g)
{
	int x, y, z;

	if (unit_rng_below(g->r, 4))
		return gen_bool(g, 3);
	x = gen_bool(g, 1);
	gput(g, " or not ");
	y = gen_bool(g, 1);
	gput(g, " and ");
	z = gen_bool(g, 1);
	return x || (!y && z);
}

static int gen_pred(struct gen *g, int depth)
{
	int x, y;

	switch (depth > 0 ? unit_rng_below(g->r, 4) : 0) {
	case 0:
		gput(g, PICK(g, procs));
		gsp(g);
		gput(g, ":");
		gsp(g);
		return gen_local(g);
	case 1:
		gput(g, "(");
		x = gen_pred(g, depth - 1);
		gput(g, ")");
		return x;
	case 2:
		gput(g, "(");
		x = gen_pred(g, depth - 1);
		gsp(g);
		gput(g, "&&");
		gsp(g);
		y = gen_pred(g, depth - 1);
		gput(g, ")");
		return x && y;
	default:
		gput(g, "(");
		x = gen_pred(g, depth - 1);
		gsp(g);
		gput(g, "||");
		gsp(g);
		y = gen_pred(g, depth - 1);
		gput(g, ")");
		return x || y;
	}
}

static int sp_truth_fake(void *ctx, const struct trace_pred_sp *sp)
{
	int truth = -1, rc = trace_pred_sp_eval(sp, fake_term, ctx, &truth);

	return rc < 0 ? rc : truth;
}

START_TEST(test_random_valid)
{
	struct unit_rng r;
	char text[16384], a[32768], b[32768];
	int iter;

	unit_rng_seed(&r, unit_seed());
	for (iter = 0; iter < 3000; iter++) {
		struct gen g = {.r = &r, .s = text, .cap = sizeof(text), .salt = unit_rng_next(&r)};
		struct fake f = {.salt = g.salt};
		struct trace_pred *p, *q;
		int want, got;

		text[0] = '\0';
		want = gen_pred(&g, 3);
		p = parse_ok(text);
		format_of(p, a, sizeof(a));
		q = parse_ok(a);
		format_of(q, b, sizeof(b));
		ck_assert_msg(strcmp(a, b) == 0, "seed %" PRIu64 ": \"%s\" -> \"%s\" -> \"%s\"",
		              unit_seed(), text, a, b);
		got = trace_pred_eval_tree(p, sp_truth_fake, &f);
		ck_assert_msg(got == want, "seed %" PRIu64 " iter %d: \"%s\" is %d, want %d",
		              unit_seed(), iter, text, got, want);
		got = trace_pred_eval_tree(q, sp_truth_fake, &f);
		ck_assert_msg(got == want, "canonical \"%s\" is %d, want %d", a, got, want);
		/* offline, var.SYMBOL makes evaluation fail, and only then */
		f.offline = 1;
		got = trace_pred_eval_tree(p, sp_truth_fake, &f);
		ck_assert_int_eq(got < 0, trace_pred_uses_var(p));
		ck_assert_int_eq(trace_pred_uses_var(p), strstr(text, "var.") != NULL);
		trace_pred_free(q);
		trace_pred_free(p);
	}
}
END_TEST

/* ---------------------------------------------------------------------------------------
 * Random junk never crashes; an error always points inside the text.
 */
static void check_any(const char *text)
{
	struct trace_pred *p = NULL, *q;
	struct trace_diag d;
	char a[8192], b[8192], prefix[40];
	int rc = trace_pred_parse(text, &p, &d);

	if (rc == 0) {
		struct fake f = {.salt = 7};
		const struct trace_pred_sp *const *all;
		size_t i, n = trace_pred_all_sps(p, &all);
		int t;

		format_of(p, a, sizeof(a));
		q = parse_ok(a);
		format_of(q, b, sizeof(b));
		ck_assert_str_eq(a, b);
		for (i = 0; i < n; i++)
			ck_assert_int_eq(trace_pred_sp_eval(all[i], fake_term, &f, &t), 0);
		if (trace_pred_shape(p) != TRACE_PRED_LINKED)
			ck_assert_int_ge(trace_pred_eval_tree(p, sp_truth_fake, &f), 0);
		trace_pred_free(q);
		trace_pred_free(p);
		return;
	}
	ck_assert_msg(rc == TRACE_EPARSE, "\"%s\": %d", text, rc);
	ck_assert_ptr_null(p);
	ck_assert_uint_le(d.offset, strlen(text));
	snprintf(prefix, sizeof(prefix), "column %" PRIu64 ": ", d.offset);
	ck_assert_msg(strncmp(d.msg, prefix, strlen(prefix)) == 0, "\"%s\": \"%s\"", text, d.msg);
}

START_TEST(test_fuzz)
{
	static const char *const frags[] = {
		"a", "p", "ring.1", "node-3", ":", " ", "(", ")", "&&", "||", "->", " and ", " or ",
		"not ", "sent", "received", "events", "mark.k", "var.v", "==", "!=", "<", ">=", "=",
		"!", "1", "0x", "9223372036854775808", "-", "+", "exited", "last(send)", "last(",
		"in(f)", "in(a::b", "x", ".", "\t", "\x01", "\xff", "sent(q)", "sent(", "bytes_sent",
	};
	struct unit_rng r;
	char text[512];
	int iter;

	unit_rng_seed(&r, unit_seed() ^ 0xf00d);
	for (iter = 0; iter < 20000; iter++) {
		size_t n = 0, k = unit_rng_below(&r, 24), i;

		for (i = 0; i < k; i++) {
			const char *f = frags[unit_rng_below(&r, sizeof(frags) / sizeof(frags[0]))];
			size_t m = strlen(f);

			if (n + m >= sizeof(text))
				break;
			memcpy(text + n, f, m);
			n += m;
		}
		text[n] = '\0';
		check_any(text);
		/* and raw bytes */
		k = unit_rng_below(&r, 40);
		for (i = 0; i < k; i++)
			text[i] = (char)(unit_rng_below(&r, 255) + 1);
		text[k] = '\0';
		check_any(text);
	}
}
END_TEST

static Suite *predicate_suite(void)
{
	Suite *s = suite_create("predicate");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_forms_canonical);
	tcase_add_test(tc, test_shapes);
	tcase_add_test(tc, test_normal_form_contents);
	tcase_add_test(tc, test_terms_listed);
	tcase_add_test(tc, test_eval_table);
	tcase_add_test(tc, test_eval_errors_and_order);
	tcase_add_test(tc, test_eval_tree);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_format_truncation);
	tcase_add_test(tc, test_random_valid);
	tcase_add_test(tc, test_fuzz);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(predicate_suite)
