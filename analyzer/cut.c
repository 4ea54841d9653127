/*
 * cut.c: Ariadne's global breakpoints (Kundu et al., "Using Ave/Ariadne to Set Consistent
 * Global Breakpoints"): stop just after or just before a set of events at a consistent
 * state, with the processes split into the core set (holding the events), the influence set
 * (can causally influence them) and the other set (cannot).
 *
 * Per the paper: other processes stop at their earliest state, influence processes just
 * after their latest event that could causally influence the events, core processes just
 * before their earliest / just after their latest event: the causal-past closure of the core
 * positions.  For "after" that is the least consistent cut containing the events.  For
 * "before", encore takes the greatest consistent cut excluding the events (the other
 * processes run as far as they can); both are returned, the paper's stop being the causal
 * past of the greatest cut's core.  An inconsistent "before" request (one event happened
 * before another's predecessor) is rolled back to the latest consistent state excluding every
 * event, as the paper's greedy readjustment does.
 */
#include <stdlib.h>
#include <string.h>

#include "ana_internal.h"

void ana_breakpoint_free(struct ana_breakpoint *b)
{
	if (!b)
		return;
	free(b->cut);
	free(b->ariadne);
	free(b->role);
	memset(b, 0, sizeof(*b));
}

static int bp_init(const struct ana_session *s, const struct ana_ref *refs, size_t n,
                   struct ana_breakpoint *out, struct trace_diag *diag)
{
	size_t np = s->nprocs;

	memset(out, 0, sizeof(*out));
	if (!n) {
		ana__diag(diag, TRACE_EINVAL, "no event given: name at least one PROC:INDEX");
		return TRACE_EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		if (refs[i].proc >= np) {
			ana__diag(diag, TRACE_ENOENT, "no such process (number %zu)", refs[i].proc);
			return TRACE_ENOENT;
		}
		if (refs[i].index < 1 || refs[i].index > s->procs[refs[i].proc].n) {
			ana__diag(diag, TRACE_ENOENT,
			          "%s has no event %llu: its events are numbered 1..%llu",
			          s->procs[refs[i].proc].name, (unsigned long long)refs[i].index,
			          (unsigned long long)s->procs[refs[i].proc].n);
			return TRACE_ENOENT;
		}
	}
	out->cut = calloc(np ? np : 1, sizeof(uint64_t));
	out->ariadne = calloc(np ? np : 1, sizeof(uint64_t));
	out->role = calloc(np ? np : 1, 1);
	if (!out->cut || !out->ariadne || !out->role) {
		ana_breakpoint_free(out);
		ana__diag(diag, TRACE_ENOMEM, "out of memory");
		return TRACE_ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		out->role[refs[i].proc] = ANA_ROLE_CORE;
	return 0;
}

static void set_roles(const struct ana_session *s, struct ana_breakpoint *out)
{
	for (size_t p = 0; p < s->nprocs; p++)
		if (out->role[p] != ANA_ROLE_CORE)
			out->role[p] = out->cut[p] > 0 ? ANA_ROLE_INFLUENCE : ANA_ROLE_OTHER;
}

int ana_cut_after(const struct ana_session *s, const struct ana_ref *refs, size_t n,
                  struct ana_breakpoint *out, struct trace_diag *diag)
{
	int rc;

	if (!s || !out || (n && !refs) || !s->finished)
		return TRACE_EINVAL;
	if ((rc = bp_init(s, refs, n, out, diag)))
		return rc;
	/* just after the latest event of each core process, then its causal past */
	for (size_t i = 0; i < n; i++)
		if (refs[i].index > out->cut[refs[i].proc])
			out->cut[refs[i].proc] = refs[i].index;
	if ((rc = ana_close_down(s, out->cut))) {
		ana_breakpoint_free(out);
		return rc;
	}
	set_roles(s, out);
	/* the least cut containing the events is Ariadne's stop after them */
	memcpy(out->ariadne, out->cut, s->nprocs * sizeof(uint64_t));
	return 0;
}

int ana_cut_before(const struct ana_session *s, const struct ana_ref *refs, size_t n,
                   struct ana_breakpoint *out, struct trace_diag *diag)
{
	size_t np;
	int rc;

	if (!s || !out || (n && !refs) || !s->finished)
		return TRACE_EINVAL;
	if ((rc = bp_init(s, refs, n, out, diag)))
		return rc;
	np = s->nprocs;
	/* the bound: core processes just before their earliest event, others unbounded; the
	 * request for the core is kept in ariadne[] to see whether it moved */
	for (size_t p = 0; p < np; p++)
		out->cut[p] = s->procs[p].n;
	for (size_t i = 0; i < n; i++)
		if (refs[i].index - 1 < out->cut[refs[i].proc])
			out->cut[refs[i].proc] = refs[i].index - 1;
	memcpy(out->ariadne, out->cut, np * sizeof(uint64_t));
	if ((rc = ana_close_up(s, out->cut)))
		goto fail;
	for (size_t p = 0; p < np; p++) {
		if (out->role[p] == ANA_ROLE_CORE && out->cut[p] < out->ariadne[p] && !out->moved) {
			out->moved = 1;
			out->moved_proc = p;
			out->moved_from = out->ariadne[p];
		}
	}
	/* Ariadne's stop: the core where the greatest cut leaves it, everything else only as far
	 * as it influences the core (the causal past), which stays below the greatest cut */
	for (size_t p = 0; p < np; p++)
		out->ariadne[p] = out->role[p] == ANA_ROLE_CORE ? out->cut[p] : 0;
	if ((rc = ana_close_down(s, out->ariadne)))
		goto fail;
	/* roles: the influence set is who the core's state depends on */
	for (size_t p = 0; p < np; p++)
		if (out->role[p] != ANA_ROLE_CORE)
			out->role[p] = out->ariadne[p] > 0 ? ANA_ROLE_INFLUENCE : ANA_ROLE_OTHER;
	return 0;
fail:
	ana_breakpoint_free(out);
	return rc;
}
