/*
 * view.c: a session as the viewers see it (view.h): the analyzer's model plus timestamps,
 * mark keys and fork parents read from the trace files, each event's display time and
 * Lamport rank computed along happened-before (ana_sweep).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"
#include "view_internal.h"

static int is_external_kind(uint32_t kind)
{
	return kind == TRACE_EV_INPUT || kind == TRACE_EV_CLOCK || kind == TRACE_EV_RANDOM ||
	       kind == TRACE_EV_READY || kind == TRACE_EV_PID;
}

int view_is_message(const struct view *v, size_t p, uint64_t k)
{
	const struct view_event *e = &v->procs[p].ev[k - 1];

	return e->kind == TRACE_EV_RECV && e->result > 0 && e->src_proc != ANA_NO_PROC;
}

void view_free(struct view *v)
{
	if (!v)
		return;
	for (size_t p = 0; v->procs && p < v->nprocs; p++) {
		struct view_proc *pr = &v->procs[p];

		for (uint64_t k = 0; pr->ev && k < pr->n; k++) {
			free((char *)pr->ev[k].key);
			free(pr->ev[k].xdeps);
		}
		free(pr->ev);
	}
	free(v->procs);
	ana_free(v->s);
	memset(v, 0, sizeof(*v));
}

struct stamp_ctx {
	struct view *v;
	uint64_t *first_time;   /* per process: its first recorded timestamp */
	struct ana_ref *deps;   /* room for ana_event_deps */
	size_t cap;
};

/* Display time and Lamport rank, in happened-before order (ana_sweep): one more than the
 * previous event's and than every event this one depends on. */
static int stamp(void *ctx, size_t p, uint64_t k)
{
	struct stamp_ctx *c = ctx;
	struct view *v = c->v;
	struct view_proc *pr = &v->procs[p];
	struct view_event *e = &pr->ev[k - 1];
	uint64_t ts = e->time_ns ? e->time_ns : c->first_time[p], rank = 1, base = 0;
	int64_t n = ana_event_deps(v->s, p, k, c->deps, c->cap);

	if (n > (int64_t)c->cap) {
		struct ana_ref *nd = realloc(c->deps, (size_t)n * sizeof(*nd));

		if (!nd)
			return TRACE_ENOMEM;
		c->deps = nd;
		c->cap = (size_t)n;
		n = ana_event_deps(v->s, p, k, c->deps, c->cap);
	}
	if (n < 0)
		return (int)n;
	if (k > 1) {
		base = pr->ev[k - 2].ts_ns + 1;
		rank = pr->ev[k - 2].rank + 1;
	}
	for (int64_t i = 0; i < n; i++) {
		const struct view_event *s = &v->procs[c->deps[i].proc].ev[c->deps[i].index - 1];

		if (s->ts_ns + 1 > base)
			base = s->ts_ns + 1;
		if (s->rank + 1 > rank)
			rank = s->rank + 1;
	}
	e->ts_ns = ts > base ? ts : base;
	e->rank = rank;
	if (rank > v->max_rank)
		v->max_rank = rank;
	return 0;
}

/* Timestamps, mark keys and fork parents come from the trace files themselves. */
static int read_extras(const char *dir, struct view *v, struct trace_diag *diag)
{
	struct trace_session *ts;
	int rc;

	if ((rc = trace_session_open(dir, &ts, diag)))
		return rc;
	for (size_t i = 0; i < trace_session_count(ts) && !rc; i++) {
		const char *const *paths;
		size_t nf = trace_session_files(ts, i, &paths);
		int p = ana_proc_find(v->s, trace_session_name(ts, i));
		struct view_proc *pr;

		if (p < 0)
			continue;
		pr = &v->procs[p];
		for (size_t f = 0; f < nf && !rc; f++) {
			struct trace_reader *r;
			struct trace_event ev;

			if ((rc = trace_reader_open(paths[f], &r, diag)))
				break;
			if (f == 0) {
				const struct trace_process *tp = trace_reader_process(r);
				int q = tp->parent[0] ? ana_proc_find(v->s, tp->parent) : -1;

				pr->parent = q >= 0 && q != p ? q : -1;
				pr->fork_index = tp->fork_index;
				pr->pid = tp->pid;
			}
			while ((rc = trace_reader_next(r, &ev)) > 0) {
				struct view_event *e;

				if (ev.index < 1 || ev.index > pr->n)
					continue;
				e = &pr->ev[ev.index - 1];
				e->time_ns = ev.time_ns;
				if (ev.kind == TRACE_EV_MARK && !e->key &&
				    !(e->key = strndup((const char *)ev.data, ev.data_len)))
					rc = TRACE_ENOMEM;
			}
			trace_reader_close(r);
		}
	}
	trace_session_close(ts);
	return rc < 0 ? rc : 0;
}

/* The edges into (p, k) that src does not carry: an end of file's releases.  A first event's
 * fork edge comes from the trace files (read_extras), so it is left out here. */
static int load_xdeps(struct ana_session *s, size_t p, uint64_t k, struct view_event *e)
{
	struct ana_ref deps[16], *all = deps;
	int64_t n = ana_event_deps(s, p, k, deps, 16);
	uint32_t m = 0;

	if (n < 0)
		return (int)n;
	if (n > 16) {
		if (!(all = malloc((size_t)n * sizeof(*all))))
			return TRACE_ENOMEM;
		n = ana_event_deps(s, p, k, all, (size_t)n);
	}
	for (int64_t i = 0; i < n; i++) {
		struct ana_event fe;

		if (all[i].proc == e->src_proc && all[i].index == e->src_index)
			continue;
		/* ana_event_deps lists a first event's fork edge first */
		if (k == 1 && i == 0 && ana_event_get(s, all[i].proc, all[i].index, &fe) == 0 &&
		    fe.kind == TRACE_EV_FORK)
			continue;
		if (!e->xdeps && !(e->xdeps = malloc((size_t)n * sizeof(*e->xdeps)))) {
			if (all != deps)
				free(all);
			return TRACE_ENOMEM;
		}
		e->xdeps[m++] = all[i];
	}
	e->nxdeps = m;
	if (all != deps)
		free(all);
	return 0;
}

int view_load(const char *dir, struct view *v, struct trace_diag *diag)
{
	struct stamp_ctx sc = { v, NULL, NULL, 0 };
	int rc;

	memset(v, 0, sizeof(*v));
	if ((rc = ana_load(dir, &v->s, diag)))
		return rc;
	v->nprocs = ana_nprocs(v->s);
	if (!(v->procs = calloc(v->nprocs ? v->nprocs : 1, sizeof(*v->procs))))
		goto nomem;
	for (size_t p = 0; p < v->nprocs; p++) {
		struct view_proc *pr = &v->procs[p];

		pr->name = ana_proc_name(v->s, p);
		pr->parent = -1;
		pr->n = ana_nevents(v->s, p);
		pr->nthreads = 1;
		if (!(pr->ev = calloc(pr->n ? pr->n : 1, sizeof(*pr->ev))))
			goto nomem;
		for (uint64_t k = 1; k <= pr->n; k++) {
			struct view_event *e = &pr->ev[k - 1];
			struct ana_event ae;

			if ((rc = ana_event_get(v->s, p, k, &ae)))
				goto fail;
			e->kind = ae.kind;
			e->channel = ae.channel;
			e->result = ae.result;
			e->src_proc = ae.src_proc;
			e->src_index = ae.src_index;
			e->external = ae.external || is_external_kind(ae.kind);
			e->thread = ae.thread;
			if (ae.thread >= pr->nthreads && ae.thread < UINT32_MAX)
				pr->nthreads = ae.thread + 1;
			if ((rc = load_xdeps(v->s, p, k, e)))
				goto fail;
		}
	}
	for (size_t p = 0; p < v->nprocs; p++)
		for (uint64_t k = 1; k <= v->procs[p].n; k++) {
			const struct view_event *e = &v->procs[p].ev[k - 1];

			if (e->src_proc == ANA_NO_PROC || e->src_proc >= v->nprocs ||
			    e->src_index < 1 || e->src_index > v->procs[e->src_proc].n)
				continue;
			v->nmessages += view_is_message(v, p, k);
		}
	if ((rc = read_extras(dir, v, diag)))
		goto fail;
	if (!(sc.first_time = calloc(v->nprocs ? v->nprocs : 1, sizeof(uint64_t))))
		goto nomem;
	for (size_t p = 0; p < v->nprocs; p++)
		for (uint64_t k = 0; k < v->procs[p].n && !sc.first_time[p]; k++)
			sc.first_time[p] = v->procs[p].ev[k].time_ns;
	rc = ana_sweep(v->s, stamp, &sc);
	free(sc.first_time);
	free(sc.deps);
	if (rc == TRACE_ENOMEM)
		goto nomem;
	if (rc) {
		snprintf(diag->msg, sizeof(diag->msg), "%s: the messages of this session form a "
		         "cycle with program order; run `encore analyze %s`", dir, dir);
		diag->code = rc;
		goto fail;
	}
	return 0;
nomem:
	rc = TRACE_ENOMEM;
	memset(diag, 0, sizeof(*diag));
	diag->code = rc;
	snprintf(diag->msg, sizeof(diag->msg), "%s: out of memory", dir);
fail:
	view_free(v);
	return rc;
}

void view__describe(const struct view_event *e, uint64_t k, char *buf, size_t cap)
{
	if (e->kind == TRACE_EV_MARK)
		snprintf(buf, cap, "#%" PRIu64 " mark %s=%" PRId64, k, e->key ? e->key : "?",
		         e->result);
	else if (e->kind == TRACE_EV_SEND || e->kind == TRACE_EV_RECV ||
	         e->kind == TRACE_EV_INPUT)
		snprintf(buf, cap, "#%" PRIu64 " %s %" PRId64 " bytes on channel %u%s", k,
		         trace_kind_name(e->kind), e->result, e->channel,
		         e->external ? " (external input)" : "");
	else
		snprintf(buf, cap, "#%" PRIu64 " %s = %" PRId64 "%s", k, trace_kind_name(e->kind),
		         e->result, e->external ? " (external input)" : "");
}
