/*
 * cut.c: where to halt.  A cut is one state index per process (docs/design.md,
 * "Vocabulary"); the GD gets it precomputed -- the fast path of Manabe & Imase section 3.2, since the analyzer
 * computes Inf(P) offline from the whole trace (the twin of their Appendix B algorithm) --
 * either as JSON in the shape `encore inf --json` prints, or from predicate text here.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ana.h"
#include "rep.h"

static void set_diag(struct trace_diag *d, int code, size_t off, const char *msg, const char *arg)
{
	if (!d)
		return;
	memset(d, 0, sizeof(*d));
	d->code = code;
	d->offset = off;
	snprintf(d->msg, sizeof(d->msg), "%s%s%s", msg, arg ? ": " : "", arg ? arg : "");
}

static const char *skip_ws(const char *p)
{
	while (*p && isspace((unsigned char)*p))
		p++;
	return p;
}

/* A JSON string without escapes other than \" and \\ (process names are plain). */
static const char *parse_string(const char *p, char *out, size_t cap)
{
	size_t n = 0;

	if (*p != '"')
		return NULL;
	for (p++; *p && *p != '"'; p++) {
		if (*p == '\\' && p[1])
			p++;
		if (n + 1 < cap)
			out[n++] = *p;
	}
	out[n] = '\0';
	return *p == '"' ? p + 1 : NULL;
}

int rep_cut_json(struct rep *r, const char *json, struct trace_diag *d)
{
	const char *p = strstr(json, "\"cuts\"");
	size_t n = rep_nprocs(r);

	p = p ? strchr(p, '[') : json;
	if (!p || !(p = strchr(p, '{'))) {
		set_diag(d, TRACE_EPARSE, 0, "no cut in the JSON text: expected {\"cuts\":[{\"PROC\":N,"
		         "...}]} as `encore inf --json` prints, or {\"PROC\":N,...}", NULL);
		return TRACE_EPARSE;
	}
	for (size_t i = 0; i < n; i++)
		rep_set_target(r, i, 0);
	p = skip_ws(p + 1);
	while (*p && *p != '}') {
		char name[TRACE_NAME_MAX];
		char *end;
		unsigned long long v;
		size_t i;

		if (!(p = parse_string(p, name, sizeof(name)))) {
			set_diag(d, TRACE_EPARSE, 0, "expected a process name in quotes", NULL);
			return TRACE_EPARSE;
		}
		p = skip_ws(p);
		if (*p != ':') {
			set_diag(d, TRACE_EPARSE, 0, "expected ':' after the process name", name);
			return TRACE_EPARSE;
		}
		p = skip_ws(p + 1);
		v = strtoull(p, &end, 10);
		if (end == p) {
			set_diag(d, TRACE_EPARSE, 0, "expected a state index for process", name);
			return TRACE_EPARSE;
		}
		for (i = 0; i < n; i++)
			if (strcmp(rep_proc_name(r, i), name) == 0)
				break;
		if (i == n) {
			set_diag(d, TRACE_ENOENT, 0, "the cut names a process the session does not have",
			         name);
			return TRACE_ENOENT;
		}
		if (rep_set_target(r, i, v) != 0) {
			set_diag(d, TRACE_EINVAL, 0, "the cut's state is past the end of the trace of", name);
			return TRACE_EINVAL;
		}
		p = skip_ws(end);
		if (*p == ',')
			p = skip_ws(p + 1);
	}
	if (*p != '}') {
		set_diag(d, TRACE_EPARSE, 0, "the cut object is not closed with '}'", NULL);
		return TRACE_EPARSE;
	}
	return 0;
}

int rep_cut_predicate(struct rep *r, const char *text, size_t *which, size_t *ncuts,
                      struct trace_diag *d)
{
	struct trace_pred *pred = NULL;
	struct ana_cuts cuts;
	struct ana_session *s = rep_analysis(r);
	int rc;

	memset(&cuts, 0, sizeof(cuts));
	*which = 0;
	*ncuts = 0;
	if ((rc = trace_pred_parse(text, &pred, d)) != 0)
		return rc;
	if ((rc = ana_inf(s, pred, &cuts, d)) != 0)
		goto out;
	*ncuts = cuts.ncuts;
	if (!cuts.ncuts) {
		rc = 0;
		goto out;
	}
	for (size_t p = 0; p < cuts.nprocs; p++) {
		const char *name = ana_proc_name(s, p);

		for (size_t i = 0; i < rep_nprocs(r); i++)
			if (strcmp(rep_proc_name(r, i), name) == 0)
				rep_set_target(r, i, cuts.cuts[p]);
	}
	rc = 1;
out:
	ana_cuts_free(&cuts);
	trace_pred_free(pred);
	return rc;
}
