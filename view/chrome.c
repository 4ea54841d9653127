/*
 * chrome.c: a session as Chrome trace-event JSON (view.h), for chrome://tracing and
 * https://ui.perfetto.dev: one track per thread of each process (tid: the thread index, 0
 * the main thread), every event a short complete ("X") slice
 * at its display time, every message a flow arrow ("s" -> "f", category "message"), every
 * fork a flow of category "fork", every accepted connect one of category "connect".
 *
 * Recorded timestamps are for display only: where they disagree with happened-before
 * (clocks of two hosts, unstamped events), the display time (view.c) is moved just after
 * the events that happened before, so that no arrow points back in time.
 */
#include <inttypes.h>
#include <string.h>

#include "view.h"
#include "view_internal.h"

void view_json_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', out);
	for (; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\r': fputs("\\r", out); break;
		case '\t': fputs("\\t", out); break;
		default:
			if (*p < 0x20)
				fprintf(out, "\\u%04x", *p);
			else
				fputc(*p, out);
		}
	}
	fputc('"', out);
}

struct chrome {
	FILE *out;
	const struct view *v;
	uint64_t t0;            /* display times start at 0 */
	uint64_t flows;         /* message flows written */
};

static double usec(const struct chrome *c, uint64_t ns)
{
	return (double)(ns - c->t0) / 1000.0;
}

static void chrome_events(struct chrome *c)
{
	const struct view *v = c->v;
	uint64_t fork_flows = 0, conn_flows = 0;

	for (size_t p = 0; p < v->nprocs; p++) {
		const struct view_proc *pr = &v->procs[p];

		fprintf(c->out, "%s\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%zu,"
		                "\"args\":{\"name\":", p ? "," : "", p + 1);
		view_json_string(c->out, pr->name);
		fprintf(c->out, "}},\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%zu,"
		                "\"args\":{\"sort_index\":%zu}}", p + 1, p);
		/* one track per thread: tid is the thread's index in its process (0 the main
		 * thread, then in creation order) */
		for (uint32_t t = 0; t < pr->nthreads; t++) {
			fprintf(c->out, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%zu,"
			                "\"tid\":%u,\"args\":{\"name\":", p + 1, t);
			if (t == 0) {
				view_json_string(c->out, pr->name);
			} else {
				char tn[300];

				snprintf(tn, sizeof(tn), "%s thread %u", pr->name, t);
				view_json_string(c->out, tn);
			}
			fprintf(c->out, "}}");
		}
		for (uint64_t k = 1; k <= pr->n; k++) {
			const struct view_event *e = &pr->ev[k - 1];
			/* A slice lasts until the next event, at most 1 us: long enough to click,
			 * never overlapping its successor (slices of a track must nest). */
			uint64_t dur = 1000;
			char desc[200];

			if (k < pr->n && pr->ev[k].ts_ns - e->ts_ns < dur)
				dur = pr->ev[k].ts_ns - e->ts_ns;
			view__describe(e, k, desc, sizeof(desc));
			fprintf(c->out, ",\n{\"ph\":\"X\",\"name\":\"%s\",\"cat\":\"%s\",\"pid\":%zu,"
			                "\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"index\":%" PRIu64
			                ",\"what\":",
			        e->kind == TRACE_EV_MARK && e->key ? "mark" : trace_kind_name(e->kind),
			        e->external ? "external" : trace_kind_name(e->kind), p + 1, e->thread,
			        usec(c, e->ts_ns), (double)dur / 1000.0, k);
			view_json_string(c->out, desc);
			if (e->kind == TRACE_EV_MARK && e->key) {
				fprintf(c->out, ",\"key\":");
				view_json_string(c->out, e->key);
				fprintf(c->out, ",\"value\":%" PRId64, e->result);
			}
			fprintf(c->out, "}}");
			/* A connection: from the connect's slice to this accept's (ids of their own). */
			if (e->kind == TRACE_EV_ACCEPT && e->src_proc != ANA_NO_PROC &&
			    e->src_proc < v->nprocs) {
				const struct view_event *s = &v->procs[e->src_proc].ev[e->src_index - 1];

				conn_flows++;
				fprintf(c->out, ",\n{\"ph\":\"s\",\"name\":\"connect\",\"cat\":\"connect\","
				                "\"id\":\"c%" PRIu64 "\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f}",
				        conn_flows, e->src_proc + 1, s->thread, usec(c, s->ts_ns));
				fprintf(c->out, ",\n{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"connect\","
				                "\"cat\":\"connect\",\"id\":\"c%" PRIu64 "\",\"pid\":%zu,"
				                "\"tid\":%u,\"ts\":%.3f}", conn_flows, p + 1, e->thread,
				        usec(c, e->ts_ns));
			}
			/* A message: the flow starts in the send's slice and ends in this one. */
			if (view_is_message(v, p, k)) {
				const struct view_event *s = &v->procs[e->src_proc].ev[e->src_index - 1];

				c->flows++;
				fprintf(c->out, ",\n{\"ph\":\"s\",\"name\":\"message\",\"cat\":\"message\","
				                "\"id\":%" PRIu64 ",\"pid\":%u,\"tid\":%u,\"ts\":%.3f}",
				        c->flows, e->src_proc + 1, s->thread, usec(c, s->ts_ns));
				fprintf(c->out, ",\n{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"message\","
				                "\"cat\":\"message\",\"id\":%" PRIu64 ",\"pid\":%zu,"
				                "\"tid\":%u,\"ts\":%.3f}", c->flows, p + 1, e->thread,
				        usec(c, e->ts_ns));
			}
		}
		if (pr->parent >= 0 && pr->n && pr->fork_index >= 1 &&
		    pr->fork_index <= v->procs[pr->parent].n) {
			const struct view_event *f = &v->procs[pr->parent].ev[pr->fork_index - 1];

			/* Fork flows get ids of their own, after every message's. */
			fork_flows++;
			fprintf(c->out, ",\n{\"ph\":\"s\",\"name\":\"fork\",\"cat\":\"fork\",\"id\":\"f%"
			                PRIu64 "\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f}", fork_flows,
			        pr->parent + 1, f->thread, usec(c, f->ts_ns));
			fprintf(c->out, ",\n{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"fork\",\"cat\":\"fork\","
			                "\"id\":\"f%" PRIu64 "\",\"pid\":%zu,\"tid\":%u,\"ts\":%.3f}",
			        fork_flows, p + 1, pr->ev[0].thread, usec(c, pr->ev[0].ts_ns));
		}
	}
}

int view_chrome_write(FILE *out, const char *dir, const struct view *v, uint64_t *flows)
{
	struct chrome c = { out, v, UINT64_MAX, 0 };

	for (size_t p = 0; p < v->nprocs; p++)
		if (v->procs[p].n && v->procs[p].ev[0].ts_ns < c.t0)
			c.t0 = v->procs[p].ev[0].ts_ns;
	if (c.t0 == UINT64_MAX)
		c.t0 = 0;
	/* Counts go in otherData (free-form); a metadata event of our own would be reported
	 * by Perfetto's importer as unknown. */
	fprintf(out, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"encore_session\":");
	view_json_string(out, dir);
	fprintf(out, ",\"processes\":%zu,\"events\":%" PRIu64 ",\"messages\":%" PRIu64 "},"
	             "\"traceEvents\":[", v->nprocs, ana_total_events(v->s), v->nmessages);
	chrome_events(&c);
	fprintf(out, "\n]}\n");
	if (flows)
		*flows = c.flows;
	return 0;
}
