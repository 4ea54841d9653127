/*
 * gd_debug.c: what `encore debug` (cli/cmd_debug.c) needs of the GD beyond `encore replay`:
 * the cut the processes are halted at, and moving from one halt to any consistent cut
 * after it (continue to the next state where a predicate holds, step, next, goto) in the same
 * execution.  A cut behind the current one is reached by re-executing from the start
 * (Manabe & Imase section 5.2): the caller closes this replay and opens another.  Predicates
 * on the program's memory (var.) are found by the online protocol from the current halt
 * (rep_online_here, gd_halt.c); the next move returns to precomputed cuts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gd_internal.h"

/* Process p's state now: at the end of its trace once it ended, 0 before it started. */
static uint64_t state_now(struct rep *r, struct gd_proc *p)
{
	if (p->done || p->gone)
		return p->nevents;
	return p->started ? rep__cur_index(r, p) : 0;
}

int rep_current_cut(struct rep *r, uint64_t *cut)
{
	for (size_t i = 0; i < r->nprocs; i++)
		cut[i] = state_now(r, &r->procs[i]);
	return 0;
}

int rep_goto(struct rep *r, const uint64_t *cut, struct trace_diag *d)
{
	size_t n = ana_nprocs(r->ana);
	uint64_t *acut;
	int ok;

	if (r->lp_n) {
		rep__diag_set(d, TRACE_EINVAL, NULL, "moving between cuts follows precomputed cuts, "
		              "not a linked predicate's online protocol");
		return TRACE_EINVAL;
	}
	if (!(acut = calloc(n ? n : 1, sizeof(*acut))))
		return TRACE_ENOMEM;
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];
		uint64_t now = state_now(r, p);

		if (cut[i] > p->nevents) {
			rep__diag_set(d, TRACE_EINVAL, NULL, "process %s has %llu events: state %llu is "
			              "past the end of its trace", p->name,
			              (unsigned long long)p->nevents, (unsigned long long)cut[i]);
			free(acut);
			return TRACE_EINVAL;
		}
		if (cut[i] < now) {
			rep__diag_set(d, TRACE_EINVAL, NULL, "process %s is at state %llu, after %llu: "
			              "going back needs a new execution", p->name,
			              (unsigned long long)now, (unsigned long long)cut[i]);
			free(acut);
			return TRACE_EINVAL;
		}
		if (p->ana >= 0)
			acut[p->ana] = cut[i];
	}
	ok = ana_consistent(r->ana, acut);
	free(acut);
	if (ok != 1) {
		rep__diag_set(d, TRACE_EINVAL, NULL, "the cut is not consistent (a receive without its "
		              "send, an accept without its connect, a child before its fork)");
		return TRACE_EINVAL;
	}
	for (size_t i = 0; i < r->nprocs; i++)
		r->procs[i].target = cut[i];
	if (r->mode != GD_OFFLINE) /* after a halt of the online protocol (rep_online_here) */
		rep__offline_here(r);
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];

		if (p->halted && p->conn >= 0 && p->target != p->index) {
			p->halted = 0;
			rep_proto_send(p->conn, REP_MSG_CONT, (int64_t)p->target, 0, 0, NULL);
		}
	}
	rep__note_change(r);
	return 0;
}

int rep_output_path(const struct rep *r, size_t i, char *buf, size_t cap)
{
	const struct gd_proc *p;

	if (i >= r->nprocs || !r->opt.roots_output)
		return TRACE_ENOENT;
	p = &r->procs[i];
	for (size_t depth = 0; p->parent[0] && depth < r->nprocs; depth++) {
		const struct gd_proc *q = rep__by_name((struct rep *)r, p->parent);

		if (!q)
			break;
		p = q;
	}
	snprintf(buf, cap, "%s/" REP_SUBDIR "/%s.out", r->dir, p->name);
	return 0;
}
