/*
 * debug_cmds.c: the commands of `encore debug` (cmd_debug.c; docs/man/encore-debug.1.scd).
 * Each command answers once: text on a terminal, or exactly one JSON object on one line with
 * --json (schemas/json.md, "encore debug").  A bad command says what is wrong and the
 * console goes on.  Examining a process (bt, print, gdb, output) and races are in
 * debug_inspect.c, trace points in debug_trace.c.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "debug.h"

void dbg_error(struct dbg *g, const char *fmt, ...)
{
	char msg[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (g->json) {
		printf("{\"ok\":false,\"error\":");
		cli_json_string(stdout, msg);
		printf("}\n");
	} else {
		printf("error: %s\n", msg);
	}
	fflush(stdout);
}

/* The next word of *s (NUL-terminated in place), NULL when none; *s moves past it. */
char *dbg_word(char **s)
{
	char *w = *s, *e;

	while (*w && isspace((unsigned char)*w))
		w++;
	if (!*w)
		return NULL;
	for (e = w; *e && !isspace((unsigned char)*e); e++)
		;
	if (*e)
		*e++ = '\0';
	*s = e;
	return w;
}

char *dbg_rest(char *s)
{
	size_t n;

	while (*s && isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

/* A process of the session by name; prints the error and returns -1 when it is not one. */
int dbg_proc_arg(struct dbg *g, const char *cmd, const char *name)
{
	int i;

	if (!name || !*name) {
		dbg_error(g, "%s wants a process name, e.g. %s %s", cmd, cmd,
		          g->n ? rep_proc_name(g->r, 0) : "PROC");
		return -1;
	}
	if ((i = dbg_proc(g, name)) < 0)
		dbg_error(g, "no process '%s' in this session (`state` lists them)", name);
	return i;
}

/* A term's name as predicates write it (schemas/predicates.md). */
static void term_name(const struct trace_pred_term *t, char *buf, size_t cap)
{
	static const char *const plain[] = {
		[TRACE_TERM_EVENTS] = "events", [TRACE_TERM_SENT] = "sent",
		[TRACE_TERM_RECEIVED] = "received", [TRACE_TERM_BYTES_SENT] = "bytes_sent",
		[TRACE_TERM_BYTES_RECEIVED] = "bytes_received", [TRACE_TERM_EXITED] = "exited",
	};

	switch (t->kind) {
	case TRACE_TERM_SENT_TO: snprintf(buf, cap, "sent(%s)", t->arg); break;
	case TRACE_TERM_RECEIVED_FROM: snprintf(buf, cap, "received(%s)", t->arg); break;
	case TRACE_TERM_MARK: snprintf(buf, cap, "mark.%s", t->arg); break;
	case TRACE_TERM_LAST: snprintf(buf, cap, "last(%s)", trace_kind_name(t->ev_kind)); break;
	case TRACE_TERM_VAR: snprintf(buf, cap, "var.%s", t->arg); break;
	default:
		snprintf(buf, cap, "%s", t->kind < sizeof(plain) / sizeof(plain[0]) && plain[t->kind] ?
		         plain[t->kind] : "?");
	}
}

/* The values, at the current state, of the terms predicate `pred` names on process i, as
 * `encore replay` reports them (evaluated from the trace): JSON members of a map, or text
 * "NAME = VALUE, ...".  Returns how many. */
static int print_terms(struct dbg *g, const struct trace_pred *pred, size_t i)
{
	const struct trace_pred_sp *const *sps;
	size_t nsp = trace_pred_all_sps(pred, &sps);
	int n = 0;

	for (size_t k = 0; k < nsp; k++) {
		const struct trace_pred_term *const *terms;
		size_t nt;

		if (strcmp(trace_pred_sp_proc(sps[k]), rep_proc_name(g->r, i)) != 0 || g->amap[i] < 0)
			continue;
		nt = trace_pred_sp_terms(sps[k], &terms);
		for (size_t t = 0; t < nt; t++) {
			char name[256];
			int64_t v;

			if (terms[t]->kind == TRACE_TERM_VAR) {
				struct trace_diag d;

				/* read live in the halted process, as the online protocol read it */
				memset(&d, 0, sizeof(d));
				if (!g->live || rep_read_global(g->r, i, terms[t]->arg, &v, &d) != 0)
					continue;
			} else if (ana_term_at(rep_analysis(g->r), (size_t)g->amap[i], g->cur[i],
			                       terms[t], &v)) {
				continue;
			}
			term_name(terms[t], name, sizeof(name));
			if (g->json) {
				printf("%s", n ? "," : "");
				cli_json_string(stdout, name);
				printf(":%lld", (long long)v);
			} else {
				printf("%s%s = %lld", n ? ", " : "", name, (long long)v);
			}
			n++;
		}
	}
	return n;
}

/* The terms of `pred` per process: a JSON member "terms" ({"PROC": {"TERM": V}}), or text
 * lines. */
static void show_terms(struct dbg *g, const struct trace_pred *pred)
{
	int any = 0;

	if (g->json)
		printf(",\"terms\":{");
	for (size_t i = 0; i < g->n; i++) {
		if (g->json) {
			/* only processes the predicate names */
			const struct trace_pred_sp *const *sps;
			size_t nsp = trace_pred_all_sps(pred, &sps), k;

			for (k = 0; k < nsp; k++)
				if (strcmp(trace_pred_sp_proc(sps[k]), rep_proc_name(g->r, i)) == 0)
					break;
			if (k == nsp)
				continue;
			printf("%s", any++ ? "," : "");
			cli_json_string(stdout, rep_proc_name(g->r, i));
			printf(":{");
			print_terms(g, pred, i);
			printf("}");
		} else {
			printf("  %-16s ", rep_proc_name(g->r, i));
			if (!print_terms(g, pred, i))
				printf("-");
			printf("\n");
		}
	}
	if (g->json)
		printf("}");
}

/* Print the state reached (or kept), with `extra` JSON members or a text line first. */
static void show_state(struct dbg *g, const char *cmd, const char *json_extra,
                       const char *text_line, const uint64_t *from, int moved)
{
	if (g->json) {
		printf("{\"ok\":true,\"command\":\"%s\",\"halted\":%s%s,", cmd,
		       g->live ? "true" : "false", json_extra ? json_extra : "");
		dbg_print_state_json(g);
		if (g->hit)
			show_terms(g, g->hit->pred);
		if (from)
			dbg_print_traced(g, from, g->cur);
		else if (moved)
			printf(",\"traced\":[]");
		printf("}\n");
	} else {
		if (from)
			dbg_print_traced(g, from, g->cur);
		if (text_line)
			printf("%s\n", text_line);
		dbg_print_state_text(g);
		if (g->hit) {
			printf("Its terms:\n");
			show_terms(g, g->hit->pred);
		}
	}
	fflush(stdout);
}

/* Move to cut[] and show it, with the trace points passed since from0 (NULL: the current
 * state); on failure say why (the processes are ended then). */
static void move_show_from(struct dbg *g, const char *cmd, const uint64_t *cut,
                           const char *json_extra, const char *text_line, const uint64_t *from0)
{
	uint64_t *from = malloc((g->n ? g->n : 1) * sizeof(*from));
	char err[8192];
	int forward = g->live; /* trace points are reported on moves forward in one execution */

	if (!from) {
		dbg_error(g, "out of memory");
		return;
	}
	memcpy(from, from0 ? from0 : g->cur, g->n * sizeof(*from));
	for (size_t i = 0; i < g->n; i++)
		if (cut[i] < from[i])
			forward = 0;
	if (dbg_move(g, cut, err, sizeof(err)) != 0)
		dbg_error(g, "%s: the replay stopped, every process was ended (`restart` starts "
		          "again): %s", cmd, err);
	else
		show_state(g, cmd, json_extra, text_line, forward ? from : NULL, 1);
	free(from);
}

static void move_show(struct dbg *g, const char *cmd, const uint64_t *cut, const char *json_extra,
                      const char *text_line)
{
	move_show_from(g, cmd, cut, json_extra, text_line, NULL);
}

/* --- breakpoints and continue ------------------------------------------------------------- */

/* A predicate with var. terms is found live, by the online protocol from the current halt:
 * one at a time, conjunctive or disjunctive, without sent(P)/received(P) (counted from the
 * start of the online protocol only).  1 when refused (said). */
static int live_refused(struct dbg *g, const struct trace_pred *pred)
{
	const struct trace_pred_sp *const *sps;
	enum trace_pred_shape shape = trace_pred_shape(pred);
	size_t nsp = trace_pred_all_sps(pred, &sps);

	for (size_t i = 0; i < g->nbp; i++)
		if (g->bps[i].live) {
			dbg_error(g, "predicate %d already reads var. terms: one such predicate at a time "
			          "(delete %d first)", g->bps[i].id, g->bps[i].id);
			return 1;
		}
	if (shape != TRACE_PRED_CONJUNCTIVE && shape != TRACE_PRED_DISJUNCTIVE) {
		dbg_error(g, "with var. terms, stop takes conjunctive (&&) and disjunctive (||) "
		          "predicates, found live by the online protocol; linked (->) and general "
		          "ones: `encore replay --stop` takes the linked ones");
		return 1;
	}
	for (size_t i = 0; i < nsp; i++) {
		const struct trace_pred_term *const *terms;
		size_t nt = trace_pred_sp_terms(sps[i], &terms);

		for (size_t t = 0; t < nt; t++)
			if (terms[t]->kind == TRACE_TERM_SENT_TO ||
			    terms[t]->kind == TRACE_TERM_RECEIVED_FROM) {
				dbg_error(g, "with var. terms, sent(P) and received(P) cannot be counted live "
				          "from a halt: use sent and received, or `encore replay --stop`");
				return 1;
			}
	}
	return 0;
}

static void cmd_stop(struct dbg *g, char *args)
{
	const struct trace_pred_sp *const *sps;
	struct trace_pred *pred = NULL;
	struct trace_diag d;
	size_t nsp;

	if (!*args) {
		dbg_error(g, "stop wants a predicate, e.g. stop %s: sent >= 1",
		          g->n ? rep_proc_name(g->r, 0) : "PROC");
		return;
	}
	memset(&d, 0, sizeof(d));
	if (trace_pred_parse(args, &pred, &d) != 0) {
		dbg_error(g, "bad predicate: %s", d.msg);
		return;
	}
	nsp = trace_pred_all_sps(pred, &sps);
	for (size_t i = 0; i < nsp; i++)
		if (dbg_proc(g, trace_pred_sp_proc(sps[i])) < 0) {
			dbg_error(g, "the predicate names process '%s', which is not in this session",
			          trace_pred_sp_proc(sps[i]));
			trace_pred_free(pred);
			return;
		}
	if (trace_pred_uses_var(pred) && live_refused(g, pred)) {
		trace_pred_free(pred);
		return;
	}
	if (g->nbp == DBG_MAX_BP) {
		dbg_error(g, "at most %d halting predicates: delete one first", DBG_MAX_BP);
		trace_pred_free(pred);
		return;
	}
	g->bps[g->nbp].id = ++g->next_bp;
	g->bps[g->nbp].text = strdup(args);
	g->bps[g->nbp].pred = pred;
	g->bps[g->nbp].live = trace_pred_uses_var(pred);
	if (g->json) {
		printf("{\"ok\":true,\"command\":\"stop\",\"breakpoint\":%d,\"predicate\":",
		       g->bps[g->nbp].id);
		cli_json_string(stdout, args);
		printf("}\n");
	} else {
		printf("Predicate %d: %s\n", g->bps[g->nbp].id, args);
	}
	g->nbp++;
	fflush(stdout);
}

/* delete N: a halting predicate or a trace point (they are numbered apart: stop's and
 * trace's numbers; a trace point is deleted with untrace). */
static void cmd_delete(struct dbg *g, char *args)
{
	char *end;
	long id = strtol(args, &end, 10);

	if (!*args || *dbg_rest(end)) {
		dbg_error(g, "delete wants the number `stop` gave, e.g. delete 1");
		return;
	}
	for (size_t i = 0; i < g->nbp; i++)
		if (g->bps[i].id == id) {
			free(g->bps[i].text);
			trace_pred_free(g->bps[i].pred);
			memmove(&g->bps[i], &g->bps[i + 1], (g->nbp - i - 1) * sizeof(g->bps[0]));
			g->nbp--;
			if (g->json)
				printf("{\"ok\":true,\"command\":\"delete\",\"breakpoint\":%ld}\n", id);
			else
				printf("Deleted predicate %ld\n", id);
			fflush(stdout);
			return;
		}
	dbg_error(g, "no halting predicate %ld (info lists them)", id);
}

/* Linked and general predicates: the analyzer gives their minimal cuts only (Inf(P)); the
 * first of them at or after the current state, other than it.  1 and cut[], 0, -1 (said). */
static int next_minimal(struct dbg *g, struct dbg_bp *b, uint64_t *cut, const uint64_t *acur)
{
	struct ana_session *a = rep_analysis(g->r);
	size_t na = ana_nprocs(a);
	struct ana_cuts cuts;
	struct trace_diag d;
	int rc, found = 0;

	memset(&d, 0, sizeof(d));
	if ((rc = ana_inf(a, b->pred, &cuts, &d)) != 0) {
		dbg_error(g, "predicate %d: %s", b->id, d.msg[0] ? d.msg : trace_strerror(rc));
		return -1;
	}
	for (size_t c = 0; c < cuts.ncuts && !found; c++) {
		const uint64_t *x = cuts.cuts + c * na;
		int above = 1, same = 1;

		for (size_t q = 0; q < na; q++) {
			above &= x[q] >= acur[q];
			same &= x[q] == acur[q];
		}
		if (above && !same) {
			dbg_from_ana(g, x, cut);
			found = 1;
		}
	}
	ana_cuts_free(&cuts);
	return found;
}

/* The next state where breakpoint b holds, at or after the current one and not it: 1 and
 * cut[] (rep order), 0 none, -1 error (said). */
static int next_for(struct dbg *g, struct dbg_bp *b, uint64_t *cut, uint64_t *acur,
                    uint64_t *acut)
{
	struct ana_session *a = rep_analysis(g->r);
	size_t na = ana_nprocs(a);
	struct trace_diag d;
	int rc;

	memset(acur, 0, na * sizeof(*acur));
	dbg_to_ana(g, g->cur, acur);
	memset(&d, 0, sizeof(d));
	if (trace_pred_shape(b->pred) == TRACE_PRED_LINKED ||
	    trace_pred_shape(b->pred) == TRACE_PRED_GENERAL)
		return next_minimal(g, b, cut, acur);
	rc = ana_inf_next(a, b->pred, acur, 0, acut, &d);
	if (rc == 1 && memcmp(acut, acur, na * sizeof(*acur)) == 0)
		rc = ana_inf_next(a, b->pred, acur, 1, acut, &d);
	if (rc < 0) {
		dbg_error(g, "predicate %d: %s", b->id, d.msg[0] ? d.msg : trace_strerror(rc));
		return -1;
	}
	if (rc == 1)
		dbg_from_ana(g, acut, cut);
	return rc;
}

static uint64_t cut_total(const uint64_t *cut, size_t n)
{
	uint64_t t = 0;

	for (size_t i = 0; i < n; i++)
		t += cut[i];
	return t;
}

/* continue's JSON members and text line for the predicate that holds. */
static void hit_text(struct dbg_bp *hit, char *extra, size_t ecap, char *line, size_t lcap)
{
	int n = snprintf(extra, ecap, ",\"breakpoint\":%d,\"predicate\":", hit->id);
	FILE *f = fmemopen(extra + n, ecap - (size_t)n, "w");

	if (f) {
		cli_json_string(f, hit->text);
		fclose(f);
	}
	snprintf(line, lcap, "Predicate %d holds: %s", hit->id, hit->text);
}

static const char end_json[] = ",\"end\":true,\"message\":\"no halting predicate holds after "
                               "this state: replayed to the end\"";
static const char end_text[] = "No halting predicate holds after this state: replayed to the end.";

/* Every var. term of b names a global of its process, where that process is halted (else
 * the LC could not evaluate it and the replay would stop).  0, or -1 (said). */
static int live_vars_ok(struct dbg *g, struct dbg_bp *b)
{
	const struct trace_pred_sp *const *sps;
	size_t nsp = trace_pred_all_sps(b->pred, &sps);

	for (size_t k = 0; k < nsp; k++) {
		const struct trace_pred_term *const *terms;
		size_t nt = trace_pred_sp_terms(sps[k], &terms);
		int i = dbg_proc(g, trace_pred_sp_proc(sps[k]));
		struct rep_proc_info in;

		if (i < 0 || rep_proc_info(g->r, (size_t)i, &in) != 0 || in.state != REP_P_HALTED)
			continue;
		for (size_t t = 0; t < nt; t++) {
			struct trace_diag d;
			int64_t v;

			memset(&d, 0, sizeof(d));
			if (terms[t]->kind == TRACE_TERM_VAR &&
			    rep_read_global(g->r, (size_t)i, terms[t]->arg, &v, &d) == TRACE_ENOENT) {
				dbg_error(g, "predicate %d: %s", b->id, d.msg);
				return -1;
			}
		}
	}
	return 0;
}

/* continue with a predicate on the program's memory (b): the online protocol from the current
 * halt finds the next state where it holds; best (NULL: none) is the next state of the other
 * predicates, obtained from the trace (ohit holds there): the earlier of the two is shown. */
static void continue_live(struct dbg *g, struct dbg_bp *b, const uint64_t *best,
                          struct dbg_bp *ohit)
{
	uint64_t *from = calloc(g->n + 1, sizeof(*from)), *end = calloc(g->n + 1, sizeof(*end));
	char err[8192], extra[4096], line[4096];
	int rc = 0, same = 1, ran = 0;

	if (!from || !end) {
		dbg_error(g, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < g->n; i++)
		end[i] = rep_proc_nevents(g->r, i);
	if (!g->live && g->failed) { /* the execution stopped: a new one to the state shown */
		g->moving_back = 1;
		rc = dbg_move(g, g->cur, err, sizeof(err));
		g->moving_back = 0;
		if (rc != 0) {
			dbg_error(g, "continue: the replay stopped, every process was ended (`restart` "
			          "starts again): %s", err);
			goto out;
		}
	}
	memcpy(from, g->cur, g->n * sizeof(*from));
	if (g->live) {
		if (live_vars_ok(g, b) != 0)
			goto out;
		rc = dbg_online(g, b->text, 0, err, sizeof(err));
		ran = rc >= 0;
		for (size_t i = 0; i < g->n; i++)
			same &= g->cur[i] == from[i];
		if (rc == 1 && same) /* it holds here: the next state where it holds again */
			rc = dbg_online(g, b->text, 1, err, sizeof(err));
		if (rc == -2) {
			dbg_error(g, "predicate %d: %s", b->id, err);
			goto out;
		}
		if (rc == -1) {
			dbg_error(g, "continue: the replay stopped, every process was ended (`restart` "
			          "starts again): %s", err);
			goto out;
		}
	}
	/* (the moves below go on from the online halt, which is not a state shown: back skips it) */
	g->moving_back = ran;
	if (best && (rc != 1 || cut_total(best, g->n) < cut_total(g->cur, g->n))) {
		hit_text(ohit, extra, sizeof(extra), line, sizeof(line));
		g->hit = ohit;
		move_show_from(g, "continue", best, extra, line, from);
	} else if (rc == 1) {
		const char *fired = rep_fired(g->r);

		hit_text(b, extra, sizeof(extra), line, sizeof(line));
		if (fired) { /* a disjunction: the disjunct that held first (halt markers) */
			size_t n = strlen(extra), l = strlen(line);
			FILE *f;

			snprintf(extra + n, sizeof(extra) - n, ",\"fired\":");
			n = strlen(extra);
			if ((f = fmemopen(extra + n, sizeof(extra) - n, "w"))) {
				cli_json_string(f, fired);
				fclose(f);
			}
			snprintf(line + l, sizeof(line) - l, " (%s's disjunct)", fired);
		}
		g->hit = b;
		show_state(g, "continue", extra, line, from, 1);
	} else {
		move_show_from(g, "continue", end, end_json, end_text, from);
	}
	g->hit = NULL;
	g->moving_back = 0;
out:
	free(from);
	free(end);
}

static void cmd_continue(struct dbg *g)
{
	size_t na = ana_nprocs(rep_analysis(g->r)) + 1, np = g->n + 1;
	uint64_t *buf = calloc(2 * np + 2 * na, sizeof(*buf)), *best = buf, *cut = buf + np;
	uint64_t *acur = cut + np, *acut = acur + na;
	struct dbg_bp *hit = NULL, *live = NULL;
	char extra[4096], line[4096];

	if (!buf) {
		dbg_error(g, "out of memory");
		return;
	}
	if (!g->nbp) {
		dbg_error(g, "no halting predicate: set one with stop, e.g. stop %s: sent >= 1",
		          g->n ? rep_proc_name(g->r, 0) : "PROC");
		free(buf);
		return;
	}
	for (size_t i = 0; i < g->nbp; i++) {
		int rc;

		if (g->bps[i].live) {
			live = &g->bps[i];
			continue;
		}
		rc = next_for(g, &g->bps[i], cut, acur, acut);

		if (rc < 0) {
			free(buf);
			return;
		}
		if (rc == 1 && (!hit || cut_total(cut, g->n) < cut_total(best, g->n))) {
			memcpy(best, cut, g->n * sizeof(*cut));
			hit = &g->bps[i];
		}
	}
	if (live) {
		continue_live(g, live, hit ? best : NULL, hit);
	} else if (hit) {
		hit_text(hit, extra, sizeof(extra), line, sizeof(line));
		g->hit = hit;
		move_show(g, "continue", best, extra, line);
		g->hit = NULL;
	} else {
		for (size_t i = 0; i < g->n; i++)
			best[i] = rep_proc_nevents(g->r, i);
		move_show(g, "continue", best, end_json, end_text);
	}
	free(buf);
}

/* --- moving one process --------------------------------------------------------------- */

/* cut = the current state with process i at state `to`, closed under happened-before. */
static int close_with(struct dbg *g, size_t i, uint64_t to, uint64_t *cut)
{
	struct ana_session *a = rep_analysis(g->r);
	uint64_t *acut = calloc(ana_nprocs(a) + 1, sizeof(*acut));
	int rc;

	if (!acut)
		return TRACE_ENOMEM;
	memcpy(cut, g->cur, g->n * sizeof(*cut));
	cut[i] = to;
	dbg_to_ana(g, cut, acut);
	/* Manabe & Imase 5.1: the least consistent cut holding the new events of i */
	rc = ana_close_down(a, acut);
	if (rc == 0)
		dbg_from_ana(g, acut, cut);
	free(acut);
	return rc;
}

static void cmd_step(struct dbg *g, char *args, int to_message)
{
	const char *cmd = to_message ? "next" : "step";
	char *name = dbg_word(&args), *count = dbg_word(&args), *end = NULL;
	uint64_t n = 1, to, *cut;
	int i = dbg_proc_arg(g, cmd, name);

	if (i < 0)
		return;
	if (count && (!(n = strtoull(count, &end, 10)) || *end)) {
		dbg_error(g, "step %s N: N is a positive number of events", name);
		return;
	}
	if (!g->live) {
		dbg_error(g, "the replay is not halted (it ran to the end, or stopped): `restart` or "
		          "`back` first");
		return;
	}
	to = g->cur[i] + n;
	if (to_message) {
		struct ana_session *a = rep_analysis(g->r);
		struct ana_event ev;

		for (to = g->cur[i] + 1; to <= rep_proc_nevents(g->r, (size_t)i); to++)
			if (ana_event_get(a, (size_t)g->amap[i], to, &ev) == 0 &&
			    (ev.kind == TRACE_EV_SEND || ev.kind == TRACE_EV_RECV))
				break;
	}
	if (to > rep_proc_nevents(g->r, (size_t)i)) {
		dbg_error(g, "%s is at state %llu of %llu: %s", name, (unsigned long long)g->cur[i],
		          (unsigned long long)rep_proc_nevents(g->r, (size_t)i),
		          to_message ? "no send or receive after it" : "cannot step past the end "
		          "of its trace");
		return;
	}
	if (!(cut = calloc(g->n + 1, sizeof(*cut))) || close_with(g, (size_t)i, to, cut) != 0) {
		dbg_error(g, "out of memory");
		free(cut);
		return;
	}
	move_show(g, cmd, cut, NULL, NULL);
	free(cut);
}

/* --- going back ----------------------------------------------------------------------- */

static void cmd_back(struct dbg *g, int restart)
{
	uint64_t *cut = calloc(g->n + 1, sizeof(*cut));

	if (!cut) {
		dbg_error(g, "out of memory");
		return;
	}
	if (!restart) {
		if (!g->nhist) {
			dbg_error(g, "no previous state: this is the first one shown");
			free(cut);
			return;
		}
		memcpy(cut, g->hist + --g->nhist * g->n, g->n * sizeof(*cut));
		g->moving_back = 1;
	}
	move_show(g, restart ? "restart" : "back", cut, NULL, NULL);
	g->moving_back = 0;
	free(cut);
}

/* The first cut of FILE ({"cuts":[{"PROC":N,...}]} as `encore inf --json` prints, or a bare
 * {"PROC":N,...}) into cut[] (rep order).  0, or -1 (said). */
static int parse_cut(struct dbg *g, const char *text, uint64_t *cut)
{
	const char *p = strstr(text, "\"cuts\""), *end;

	p = strchr(p ? p : text, '{');
	if (!p || !(end = strchr(p, '}'))) {
		dbg_error(g, "goto: expected a cut as `encore inf --json` prints it "
		          "({\"cuts\":[{\"PROC\":N,...}]}) or {\"PROC\":N,...}");
		return -1;
	}
	memset(cut, 0, g->n * sizeof(*cut));
	for (p++; p < end;) {
		const char *q = strchr(p, '"'), *qe;
		char name[256];
		int i;

		if (!q || q >= end)
			break;
		if (!(qe = strchr(q + 1, '"')) || qe >= end || (size_t)(qe - q - 1) >= sizeof(name)) {
			dbg_error(g, "goto: a process name is not closed");
			return -1;
		}
		snprintf(name, sizeof(name), "%.*s", (int)(qe - q - 1), q + 1);
		p = qe + 1;
		while (p < end && (isspace((unsigned char)*p) || *p == ':'))
			p++;
		if ((i = dbg_proc(g, name)) < 0) {
			dbg_error(g, "goto: no process '%s' in this session", name);
			return -1;
		}
		if (!isdigit((unsigned char)*p)) {
			dbg_error(g, "goto: the state of %s is not a number", name);
			return -1;
		}
		cut[i] = strtoull(p, (char **)&p, 10);
		if (cut[i] > rep_proc_nevents(g->r, (size_t)i)) {
			dbg_error(g, "goto: %s has %llu events, state %llu is past its end", name,
			          (unsigned long long)rep_proc_nevents(g->r, (size_t)i),
			          (unsigned long long)cut[i]);
			return -1;
		}
	}
	return 0;
}

static void cmd_goto(struct dbg *g, char *args)
{
	uint64_t *cut = calloc(g->n + 1, sizeof(*cut));
	uint64_t *acut = calloc(ana_nprocs(rep_analysis(g->r)) + 1, sizeof(*acut));
	/* (close-on-exec, and closed before the move: a goto backwards starts the roots again,
	 * which took it as one more descriptor, and their numbers came out other than recorded) */
	FILE *f = *args ? fopen(args, "re") : NULL;
	char *text = NULL;
	size_t cap = 0;
	int e = errno;
	ssize_t got = f ? getdelim(&text, &cap, '\0', f) : -1;

	if (f)
		fclose(f);
	if (!cut || !acut) {
		dbg_error(g, "out of memory");
	} else if (!*args || (got < 0 && !text)) {
		dbg_error(g, "goto wants a cut file (encore inf --json DIR 'P' > cut.json): %s%s%s",
		          args, *args ? ": " : "", *args ? strerror(e) : "none given");
	} else if (got < 0) {
		dbg_error(g, "goto: cannot read %s", args);
	} else if (parse_cut(g, text, cut) == 0) {
		dbg_to_ana(g, cut, acut);
		if (ana_consistent(rep_analysis(g->r), acut) != 1)
			dbg_error(g, "goto: the cut of %s is not consistent (a receive without its send, "
			          "an accept without its connect, a child before its fork)", args);
		else
			move_show(g, "goto", cut, NULL, NULL);
	}
	free(text);
	free(cut);
	free(acut);
}

/* --- the state ----------------------------------------------------------------------------- */

static void cmd_state(struct dbg *g)
{
	show_state(g, "state", NULL, NULL, NULL, 0);
}

static const char help_text[] =
	"stop P | break P      set a halting predicate (as encore inf takes it); numbered;\n"
	"                      with var. terms, found live by the online protocol (one\n"
	"                      at a time, && or ||, no sent(P)/received(P))\n"
	"delete N              remove halting predicate N\n"
	"continue | c          run to the next global state where a predicate holds (at or\n"
	"                      after this one, not this one); at the end when none does\n"
	"step PROC [N] | s     advance PROC by N events (1), with the sends they need\n"
	"next PROC | n         advance PROC to its next send or receive\n"
	"state                 the global state: each process's state, last and next event\n"
	"bt PROC               backtrace of a halted process\n"
	"print PROC EXPR | p   a C expression in PROC (gdb in batch mode); var.NAME: a\n"
	"                      global integer by its symbol, without gdb\n"
	"gdb PROC              interactive gdb on PROC; detach to come back\n"
	"output PROC           what PROC's root process wrote so far (stdout and stderr)\n"
	"trace C print E       at each state where C (PROC: LOCAL) becomes true, print term E\n"
	"                      (var. terms: evaluated live by PROC's local controller)\n"
	"untrace [N]           remove trace point N (all without N)\n"
	"back                  the state shown before this one, and before that... (re-executes\n"
	"                      when behind)\n"
	"restart               every process at its start again (re-executes)\n"
	"goto CUT.json         any consistent cut (encore inf --json prints them)\n"
	"races                 message races among the receives of this state\n"
	"info                  the halting predicates and trace points set\n"
	"help                  this text\n"
	"quit | q              end every process and leave\n";

static void cmd_help(struct dbg *g)
{
	if (g->json) {
		printf("{\"ok\":true,\"command\":\"help\",\"help\":");
		cli_json_string(stdout, help_text);
		printf("}\n");
	} else {
		fputs(help_text, stdout);
	}
	fflush(stdout);
}

static void cmd_info(struct dbg *g)
{
	if (g->json) {
		printf("{\"ok\":true,\"command\":\"info\",\"breakpoints\":[");
		for (size_t i = 0; i < g->nbp; i++) {
			printf("%s{\"breakpoint\":%d,\"predicate\":", i ? "," : "", g->bps[i].id);
			cli_json_string(stdout, g->bps[i].text);
			printf("}");
		}
		printf("],\"traces\":[");
		for (size_t i = 0; i < g->ntr; i++) {
			printf("%s{\"trace\":%d,\"condition\":", i ? "," : "", g->trs[i].id);
			cli_json_string(stdout, g->trs[i].cond);
			printf(",\"print\":");
			cli_json_string(stdout, g->trs[i].expr);
			printf("}");
		}
		printf("]}\n");
	} else {
		for (size_t i = 0; i < g->nbp; i++)
			printf("Predicate %d: %s\n", g->bps[i].id, g->bps[i].text);
		for (size_t i = 0; i < g->ntr; i++)
			printf("Trace %d: %s print %s\n", g->trs[i].id, g->trs[i].cond, g->trs[i].expr);
		if (!g->nbp && !g->ntr)
			printf("No halting predicate, no trace point.\n");
	}
	fflush(stdout);
}

void dbg_command(struct dbg *g, char *line)
{
	char *args = line, *cmd = dbg_word(&args);

	if (!cmd || cmd[0] == '#')
		return; /* empty lines and comments answer nothing */
	args = dbg_rest(args);
	if (!g->r) {
		dbg_error(g, "no replay");
	} else if (!strcmp(cmd, "stop") || !strcmp(cmd, "break") || !strcmp(cmd, "b")) {
		cmd_stop(g, args);
	} else if (!strcmp(cmd, "delete") || !strcmp(cmd, "d")) {
		cmd_delete(g, args);
	} else if (!strcmp(cmd, "continue") || !strcmp(cmd, "c")) {
		cmd_continue(g);
	} else if (!strcmp(cmd, "step") || !strcmp(cmd, "s")) {
		cmd_step(g, args, 0);
	} else if (!strcmp(cmd, "next") || !strcmp(cmd, "n")) {
		cmd_step(g, args, 1);
	} else if (!strcmp(cmd, "state")) {
		cmd_state(g);
	} else if (!strcmp(cmd, "bt") || !strcmp(cmd, "backtrace")) {
		dbg_cmd_bt(g, args);
	} else if (!strcmp(cmd, "print") || !strcmp(cmd, "p")) {
		dbg_cmd_print(g, args);
	} else if (!strcmp(cmd, "gdb")) {
		dbg_cmd_gdb(g, args);
	} else if (!strcmp(cmd, "output")) {
		dbg_cmd_output(g, args);
	} else if (!strcmp(cmd, "trace")) {
		dbg_trace_add(g, args);
	} else if (!strcmp(cmd, "untrace")) {
		dbg_trace_del(g, args);
	} else if (!strcmp(cmd, "back")) {
		cmd_back(g, 0);
	} else if (!strcmp(cmd, "restart")) {
		cmd_back(g, 1);
	} else if (!strcmp(cmd, "goto")) {
		cmd_goto(g, args);
	} else if (!strcmp(cmd, "races")) {
		dbg_cmd_races(g);
	} else if (!strcmp(cmd, "info")) {
		cmd_info(g);
	} else if (!strcmp(cmd, "help") || !strcmp(cmd, "h")) {
		cmd_help(g);
	} else if (!strcmp(cmd, "quit") || !strcmp(cmd, "q") || !strcmp(cmd, "exit")) {
		if (g->json)
			printf("{\"ok\":true,\"command\":\"quit\"}\n");
		fflush(stdout);
		g->quit = 1;
	} else {
		dbg_error(g, "unknown command '%s' (help lists the commands)", cmd);
	}
}
