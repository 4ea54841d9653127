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

/* --- trace points evaluated live (Manabe & Imase section 4) --------------------------------- */

void rep__send_traces(struct rep *r, struct gd_proc *p, int fd)
{
	for (size_t i = 0; i < r->ntraces; i++)
		if (strcmp(r->traces[i].proc, p->name) == 0)
			rep_proto_send(fd, REP_MSG_TRACE, 1, 0, (uint32_t)r->traces[i].id,
			               r->traces[i].text);
}

void rep__on_traced(struct rep *r, struct gd_proc *p, const struct rep_msg *m)
{
	if (r->nhits == r->caphits) {
		size_t cap = r->caphits ? 2 * r->caphits : 64;
		struct rep_traced *h = realloc(r->hits, cap * sizeof(*h));

		if (!h)
			return; /* (out of memory: that report is lost) */
		r->hits = h;
		r->caphits = cap;
	}
	r->hits[r->nhits].id = (int)m->flags;
	r->hits[r->nhits].proc = (size_t)(p - r->procs);
	r->hits[r->nhits].state = (uint64_t)m->a;
	r->hits[r->nhits].value = m->b;
	r->nhits++;
}

int rep_trace_add(struct rep *r, int id, const char *proc, const char *cond, const char *term,
                  struct trace_diag *d)
{
	struct gd_trace *t;
	struct gd_proc *p = rep__by_name(r, proc);
	size_t n;

	if (!p || id <= 0) {
		rep__diag_set(d, TRACE_ENOENT, NULL, "no process '%s' in this session", proc);
		return TRACE_ENOENT;
	}
	n = strlen(cond) + strlen(term) + 2;
	if (n >= REP_TEXT_MAX) {
		rep__diag_set(d, TRACE_EINVAL, NULL, "the trace point is too long (%zu bytes, at most "
		              "%d)", n, REP_TEXT_MAX - 1);
		return TRACE_EINVAL;
	}
	if (!(t = realloc(r->traces, (r->ntraces + 1) * sizeof(*t))))
		return TRACE_ENOMEM;
	r->traces = t;
	t += r->ntraces;
	if (!(t->text = malloc(n)))
		return TRACE_ENOMEM;
	snprintf(t->text, n, "%s\x1e%s", cond, term);
	snprintf(t->proc, sizeof(t->proc), "%s", proc);
	t->id = id;
	r->ntraces++;
	/* the image running now takes it at its halt (a later one before its CONFIG) */
	if (p->halted && p->conn >= 0)
		rep_proto_send(p->conn, REP_MSG_TRACE, 1, 0, (uint32_t)id, t->text);
	return 0;
}

void rep_trace_del(struct rep *r, int id)
{
	size_t kept = 0;

	for (size_t i = 0; i < r->ntraces; i++) {
		struct gd_proc *p;

		if (id && r->traces[i].id != id) {
			r->traces[kept++] = r->traces[i];
			continue;
		}
		p = rep__by_name(r, r->traces[i].proc);
		if (p && p->halted && p->conn >= 0)
			rep_proto_send(p->conn, REP_MSG_TRACE, 0, 0, (uint32_t)r->traces[i].id, NULL);
		free(r->traces[i].text);
	}
	r->ntraces = kept;
	if (!kept) {
		free(r->traces);
		r->traces = NULL;
	}
}

void rep__traces_free(struct rep *r)
{
	for (size_t i = 0; i < r->ntraces; i++)
		free(r->traces[i].text);
	free(r->traces);
	free(r->hits);
	r->traces = NULL;
	r->hits = NULL;
	r->ntraces = r->nhits = r->caphits = 0;
}

const struct rep_traced *rep_traced(const struct rep *r, size_t *n)
{
	*n = r->nhits;
	return r->hits;
}

void rep_traced_clear(struct rep *r)
{
	r->nhits = 0;
}
