/*
 * debug_trace.c: `trace C print E` in `encore debug` (Manabe & Imase section 4: tracing a
 * condition without halting).  C is a simple predicate `PROC: LOCAL`, E one term of the
 * predicate language (schemas/predicates.md).  Without var. terms both are evaluated offline
 * from the trace: the analyzer gives the states of PROC where C holds (ana_sp_bits), and each
 * move forward reports every state it passed where C became true (held there, not in the
 * state before), with E's value there (ana_term_at).  When C or E reads the program's memory
 * (var.), PROC's local controller evaluates them live before each event and reports (the GD
 * collects it, rep_trace_add); a move forward shows what it reported for the states passed.
 * A move back re-executes states already reported: they are not reported again.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "debug.h"

static int bit(const uint64_t *bits, uint64_t k)
{
	return (int)((bits[k / 64] >> (k % 64)) & 1);
}

/* E as one term: parsed as the LOCAL of a simple predicate on proc. */
static int parse_term(struct dbg *g, struct dbg_trace *t, const char *proc, const char *expr)
{
	const struct trace_pred_sp *const *sps;
	const struct trace_pred_term *const *terms;
	struct trace_pred *p = NULL;
	struct trace_diag d;
	char text[2048];
	int rc;

	snprintf(text, sizeof(text), "%s: %s", proc, expr);
	memset(&d, 0, sizeof(d));
	if ((rc = trace_pred_parse(text, &p, &d)) != 0) {
		snprintf(text, sizeof(text), "%s: %s != 0", proc, expr);
		rc = trace_pred_parse(text, &p, NULL);
	}
	if (rc != 0 || trace_pred_all_sps(p, &sps) != 1 || trace_pred_sp_terms(sps[0], &terms) != 1) {
		dbg_error(g, "trace: print wants one term (events, sent, received, sent(P), "
		          "received(P), bytes_sent, bytes_received, mark.KEY, exited, last(KIND), var.NAME), "
		          "not '%s'", expr);
		trace_pred_free(p);
		return -1;
	}
	t->term = *terms[0];
	t->arg = terms[0]->arg ? strdup(terms[0]->arg) : NULL;
	t->term.arg = t->arg;
	t->etext = strdup(text);
	trace_pred_free(p);
	if (t->term.kind == TRACE_TERM_VAR)
		t->live = 1;
	if (t->term.kind == TRACE_TERM_IN && !t->live) {
		dbg_error(g, "trace: in(FUNCTION) is not a value of the trace; print a count or a "
		          "var. term");
		return -1;
	}
	return 0;
}

/* A live trace point: no sent(P)/received(P) (counted from the start only by the online
 * protocol), and every var. term names a global of PROC (checked when PROC is halted: else
 * its LC could not read it).  0, or -1 (said). */
static int live_check(struct dbg *g, struct dbg_trace *t, const struct trace_pred_sp *sp)
{
	const struct trace_pred_term *const *terms;
	size_t nt = trace_pred_sp_terms(sp, &terms);
	struct rep_proc_info in;

	for (size_t k = 0; k <= nt; k++) {
		const struct trace_pred_term *term = k < nt ? terms[k] : &t->term;
		struct trace_diag d;
		int64_t v;

		if (term->kind == TRACE_TERM_SENT_TO || term->kind == TRACE_TERM_RECEIVED_FROM) {
			dbg_error(g, "trace: with var. terms, sent(P) and received(P) cannot be counted "
			          "live: use sent and received");
			return -1;
		}
		memset(&d, 0, sizeof(d));
		if (term->kind == TRACE_TERM_VAR && g->live &&
		    rep_proc_info(g->r, t->proc, &in) == 0 && in.state == REP_P_HALTED &&
		    rep_read_global(g->r, t->proc, term->arg, &v, &d) == TRACE_ENOENT) {
			dbg_error(g, "trace: %s", d.msg);
			return -1;
		}
	}
	return 0;
}

void dbg_trace_add(struct dbg *g, char *args)
{
	char *sep = strstr(args, " print ");
	const struct trace_pred_sp *const *sps;
	struct dbg_trace t;
	struct trace_diag d;
	size_t proc;
	int i;

	memset(&t, 0, sizeof(t));
	if (!sep) {
		dbg_error(g, "trace wants a condition and a term: trace PROC: LOCAL print TERM, "
		          "e.g. trace %s: sent >= 1 print received", g->n ? rep_proc_name(g->r, 0) :
		          "PROC");
		return;
	}
	*sep = '\0';
	t.cond = strdup(args);
	t.expr = strdup(sep + 7);
	memset(&d, 0, sizeof(d));
	if (!t.cond || !t.expr) {
		dbg_error(g, "out of memory");
		goto fail;
	}
	if (trace_pred_parse(t.cond, &t.pred, &d) != 0) {
		dbg_error(g, "bad condition: %s", d.msg);
		goto fail;
	}
	if (trace_pred_all_sps(t.pred, &sps) != 1 ||
	    trace_pred_shape(t.pred) != TRACE_PRED_CONJUNCTIVE) {
		dbg_error(g, "trace: the condition is a simple predicate, one process: PROC: LOCAL");
		goto fail;
	}
	if ((i = dbg_proc(g, trace_pred_sp_proc(sps[0]))) < 0) {
		dbg_error(g, "trace: no process '%s' in this session", trace_pred_sp_proc(sps[0]));
		goto fail;
	}
	t.proc = (size_t)i;
	while (*t.expr == ' ')
		memmove(t.expr, t.expr + 1, strlen(t.expr));
	t.live = trace_pred_uses_var(t.pred);
	if (parse_term(g, &t, trace_pred_sp_proc(sps[0]), t.expr) != 0)
		goto fail;
	memset(&d, 0, sizeof(d));
	if (!t.live && ana_sp_bits(rep_analysis(g->r), sps[0], &proc, &t.bits, &d) != 0) {
		dbg_error(g, "trace: %s", d.msg);
		goto fail;
	}
	if (g->ntr == DBG_MAX_TRACE) {
		dbg_error(g, "at most %d trace points: untrace one first", DBG_MAX_TRACE);
		goto fail;
	}
	if (t.live && live_check(g, &t, sps[0]) != 0)
		goto fail;
	t.id = ++g->next_tr;
	memset(&d, 0, sizeof(d));
	if (t.live && rep_trace_add(g->r, t.id, rep_proc_name(g->r, t.proc), t.cond, t.etext,
	                            &d) != 0) {
		dbg_error(g, "trace: %s", d.msg);
		g->next_tr--;
		goto fail;
	}
	g->trs[g->ntr++] = t;
	if (g->json) {
		printf("{\"ok\":true,\"command\":\"trace\",\"trace\":%d,\"condition\":", t.id);
		cli_json_string(stdout, t.cond);
		printf(",\"print\":");
		cli_json_string(stdout, t.expr);
		printf("}\n");
	} else {
		printf("Trace %d: %s print %s\n", t.id, t.cond, t.expr);
	}
	fflush(stdout);
	return;
fail:
	free(t.cond);
	free(t.expr);
	free(t.arg);
	free(t.etext);
	free(t.bits);
	trace_pred_free(t.pred);
}

void dbg_trace_del(struct dbg *g, char *args)
{
	char *end;
	long id = *args ? strtol(args, &end, 10) : 0;
	size_t kept = 0, gone = 0;

	if (*args && *end) {
		dbg_error(g, "untrace wants the number `trace` gave, or nothing for all");
		return;
	}
	for (size_t i = 0; i < g->ntr; i++) {
		struct dbg_trace *t = &g->trs[i];

		if (*args && t->id != id) {
			g->trs[kept++] = *t;
			continue;
		}
		if (t->live)
			rep_trace_del(g->r, t->id);
		free(t->cond);
		free(t->expr);
		free(t->arg);
		free(t->etext);
		free(t->bits);
		trace_pred_free(t->pred);
		gone++;
	}
	g->ntr = kept;
	if (*args && !gone) {
		dbg_error(g, "no trace point %ld (info lists them)", id);
		return;
	}
	if (g->json)
		printf("{\"ok\":true,\"command\":\"untrace\",\"removed\":%zu}\n", gone);
	else
		printf("Removed %zu trace point%s\n", gone, gone == 1 ? "" : "s");
	fflush(stdout);
}

static int print_one(struct dbg *g, struct dbg_trace *t, uint64_t k, int64_t v, int first)
{
	if (g->json) {
		printf("%s{\"trace\":%d,\"process\":", first ? "" : ",", t->id);
		cli_json_string(stdout, rep_proc_name(g->r, t->proc));
		printf(",\"state\":%llu,\"value\":%lld}", (unsigned long long)k, (long long)v);
	} else {
		printf("Trace %d: %s state %llu: %s = %lld\n", t->id, rep_proc_name(g->r, t->proc),
		       (unsigned long long)k, t->expr, (long long)v);
	}
	return 0;
}

void dbg_print_traced(struct dbg *g, const uint64_t *from, const uint64_t *to)
{
	struct ana_session *a = rep_analysis(g->r);
	size_t nhits;
	const struct rep_traced *hits = rep_traced(g->r, &nhits);
	int first = 1;

	if (g->json)
		printf(",\"traced\":[");
	for (size_t i = 0; i < g->ntr; i++) {
		struct dbg_trace *t = &g->trs[i];
		size_t p = t->proc;

		if (t->live) {
			for (size_t h = 0; h < nhits; h++)
				if (hits[h].id == t->id && hits[h].proc == p && hits[h].state > from[p] &&
				    hits[h].state <= to[p])
					first = print_one(g, t, hits[h].state, hits[h].value, first);
			continue;
		}
		for (uint64_t k = from[p] + 1; k <= to[p]; k++) {
			int64_t v = 0;

			if (!bit(t->bits, k) || bit(t->bits, k - 1))
				continue;
			ana_term_at(a, (size_t)g->amap[p], k, &t->term, &v);
			first = print_one(g, t, k, v, first);
		}
	}
	rep_traced_clear(g->r);
	if (g->json)
		printf("]");
}
