/*
 * cmd_show.c: `encore show DIR --svg FILE [--stop 'P']`: a space-time diagram of a session
 * as SVG.  One vertical line per process, events as dots labelled by kind (external input
 * marked), messages as arrows from send to receive, forks as dashed arrows, and with
 * --stop the Inf(P) cut drawn across the processes.
 *
 * The vertical axis is logical time (Lamport clocks), not wall-clock time: every arrow
 * points down and idle stretches take no room, so a few hundred events stay readable.
 *
 * This file also defines the view (view.h) that `encore export` shares.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "view.h"

/* ---------------------------------------------------------------------------------------
 * The view: the analyzer's model plus timestamps, mark keys and fork parents.
 */

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

static int xdeps_done(const struct view_event *e, const uint64_t *done)
{
	for (uint32_t i = 0; i < e->nxdeps; i++)
		if (done[e->xdeps[i].proc] < e->xdeps[i].index)
			return 0;
	return 1;
}

int view_sweep(const struct view *v, int (*fn)(void *ctx, size_t p, uint64_t k), void *ctx)
{
	uint64_t *done = calloc(v->nprocs ? v->nprocs : 1, sizeof(*done));
	uint64_t total = 0, count = 0;
	int progress, rc = 0;

	if (!done)
		return TRACE_ENOMEM;
	for (size_t p = 0; p < v->nprocs; p++)
		total += v->procs[p].n;
	/* Each pass runs every process as far as its dependencies allow; a pass that moves
	 * nobody while events remain means a cycle (ana_finish already refuses those). */
	do {
		progress = 0;
		for (size_t p = 0; p < v->nprocs && !rc; p++) {
			const struct view_proc *pr = &v->procs[p];

			while (done[p] < pr->n) {
				uint64_t k = done[p] + 1;
				const struct view_event *e = &pr->ev[k - 1];

				if (k == 1 && pr->parent >= 0 &&
				    pr->fork_index <= v->procs[pr->parent].n &&
				    done[pr->parent] < pr->fork_index)
					break;
				if (e->src_proc != ANA_NO_PROC && e->src_proc < v->nprocs &&
				    done[e->src_proc] < e->src_index)
					break;
				if (!xdeps_done(e, done))
					break;
				if ((rc = fn(ctx, p, k)))
					break;
				done[p] = k;
				count++;
				progress = 1;
			}
		}
	} while (!rc && progress && count < total);
	free(done);
	if (rc)
		return rc;
	return count == total ? 0 : TRACE_ECORRUPT;
}

struct stamp_ctx {
	struct view *v;
	uint64_t *first_time;   /* per process: its first recorded timestamp */
};

/* Display time and Lamport rank, in happened-before order. */
static int stamp(void *ctx, size_t p, uint64_t k)
{
	struct stamp_ctx *c = ctx;
	struct view *v = c->v;
	struct view_proc *pr = &v->procs[p];
	struct view_event *e = &pr->ev[k - 1];
	uint64_t ts = e->time_ns ? e->time_ns : c->first_time[p], rank = 1, base = 0;

	if (k > 1) {
		base = pr->ev[k - 2].ts_ns + 1;
		rank = pr->ev[k - 2].rank + 1;
	} else if (pr->parent >= 0 && pr->fork_index >= 1 &&
	           pr->fork_index <= v->procs[pr->parent].n) {
		const struct view_event *f = &v->procs[pr->parent].ev[pr->fork_index - 1];

		base = f->ts_ns + 1;
		rank = f->rank + 1;
	}
	if (e->src_proc != ANA_NO_PROC && e->src_proc < v->nprocs) {
		const struct view_event *s = &v->procs[e->src_proc].ev[e->src_index - 1];

		if (s->ts_ns + 1 > base)
			base = s->ts_ns + 1;
		if (s->rank + 1 > rank)
			rank = s->rank + 1;
	}
	for (uint32_t i = 0; i < e->nxdeps; i++) {
		const struct view_event *s = &v->procs[e->xdeps[i].proc].ev[e->xdeps[i].index - 1];

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
	struct stamp_ctx sc = { v, NULL };
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
			v->procs[e->src_proc].ev[e->src_index - 1].is_src = 1;
			v->nmessages += view_is_message(v, p, k);
		}
	for (size_t p = 0; p < v->nprocs; p++)
		for (uint64_t k = 1; k <= v->procs[p].n; k++) {
			const struct view_event *e = &v->procs[p].ev[k - 1];

			for (uint32_t i = 0; i < e->nxdeps; i++)
				v->procs[e->xdeps[i].proc].ev[e->xdeps[i].index - 1].is_src = 1;
		}
	if ((rc = read_extras(dir, v, diag)))
		goto fail;
	for (size_t p = 0; p < v->nprocs; p++) {
		const struct view_proc *pr = &v->procs[p];

		if (pr->parent >= 0 && pr->fork_index >= 1 &&
		    pr->fork_index <= v->procs[pr->parent].n)
			v->procs[pr->parent].ev[pr->fork_index - 1].is_src = 1;
	}
	if (!(sc.first_time = calloc(v->nprocs ? v->nprocs : 1, sizeof(uint64_t))))
		goto nomem;
	for (size_t p = 0; p < v->nprocs; p++)
		for (uint64_t k = 0; k < v->procs[p].n && !sc.first_time[p]; k++)
			sc.first_time[p] = v->procs[p].ev[k].time_ns;
	rc = view_sweep(v, stamp, &sc);
	free(sc.first_time);
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

/* ---------------------------------------------------------------------------------------
 * SVG.
 */

/* Geometry, in SVG user units (pixels). */
#define COL_W 200     /* between process lines: room for a label and a gap */
#define LEFT 40
#define TOP 165       /* title and legend above the first row */
#define ROW_H 18      /* one Lamport step */
#define DOT_R 4.5

struct svg {
	FILE *out;
	const struct view *v;
};

static void xml_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		default:
			/* Keep the document valid XML whatever bytes a key holds. */
			fputc((unsigned char)*s < 0x20 ? '?' : *s, out);
		}
	}
}

static double col_x(size_t p)
{
	return LEFT + 70 + (double)p * COL_W;
}

static double row_y(uint64_t rank)
{
	return TOP + (double)rank * ROW_H;
}

/* Colour classes of events (also the legend). */
static const char *event_class(const struct view_event *e)
{
	switch (e->kind) {
	case TRACE_EV_SEND: return "send";
	case TRACE_EV_RECV: return e->external ? "ext" : "recv";
	case TRACE_EV_MARK: return "mark";
	case TRACE_EV_FORK: case TRACE_EV_EXEC: case TRACE_EV_EXIT: case TRACE_EV_SIGNAL:
	case TRACE_EV_THREAD:
		return "life";
	default:
		return e->external ? "ext" : "chan";
	}
}

static void event_label(const struct view_event *e, char *buf, size_t cap)
{
	if (e->kind == TRACE_EV_MARK)
		snprintf(buf, cap, "%s=%" PRId64, e->key ? e->key : "mark", e->result);
	else if ((e->kind == TRACE_EV_SEND || e->kind == TRACE_EV_RECV ||
	          e->kind == TRACE_EV_INPUT) && e->result >= 0)
		snprintf(buf, cap, "%s %" PRId64, trace_kind_name(e->kind), e->result);
	else if (e->kind == TRACE_EV_EXIT)
		snprintf(buf, cap, "exit %" PRId64, e->result);
	else
		snprintf(buf, cap, "%s", trace_kind_name(e->kind));
}

static void svg_head(FILE *out, const char *dir, const struct view *v, double w, double h,
                     const char *pred)
{
	fprintf(out,
	        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
	        "viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
	        "<defs>\n"
	        "<marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" "
	        "markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" "
	        "fill=\"#1f5fbf\"/></marker>\n"
	        "<marker id=\"farrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" "
	        "markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#777\"/>"
	        "</marker>\n"
	        "<style>\n"
	        "text { font-size: 11px; fill: #222; }\n"
	        ".title { font-size: 16px; font-weight: bold; }\n"
	        ".pname { font-size: 13px; font-weight: bold; text-anchor: middle; }\n"
	        ".label { font-size: 10px; fill: #333; paint-order: stroke; stroke: #fff; "
	        "stroke-width: 3px; stroke-linejoin: round; }\n"
	        "line.proc { stroke: #444; stroke-width: 2; }\n"
	        "line.msg { stroke: #1f5fbf; stroke-width: 1.3; }\n"
	        "line.fork { stroke: #777; stroke-width: 1.3; stroke-dasharray: 5 3; }\n"
	        "line.conn { stroke: #777; stroke-width: 1.3; stroke-dasharray: 1.5 2.5; }\n"
	        "polyline.cut { stroke: #d62728; stroke-width: 2.5; fill: none; }\n"
	        ".cutlabel { fill: #d62728; font-weight: bold; }\n"
	        "circle.cutmark { fill: #fff; stroke: #d62728; stroke-width: 2; }\n"
	        "circle.send { fill: #1f5fbf; }\n"
	        "circle.recv { fill: #2ca02c; }\n"
	        "circle.mark { fill: #ff9800; }\n"
	        "circle.chan { fill: #bbb; }\n"
	        "circle.life { fill: #111; }\n"
	        "rect.ext { fill: #fff; stroke: #d62728; stroke-width: 2; }\n"
	        "</style>\n"
	        "</defs>\n"
	        "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
	        w, h, w, h);
	fprintf(out, "<text class=\"title\" x=\"%d\" y=\"26\">encore: ", LEFT);
	xml_text(out, dir);
	fprintf(out, " (%zu processes, %" PRIu64 " events, %" PRIu64 " messages)</text>\n",
	        v->nprocs, ana_total_events(v->s), v->nmessages);
	if (pred) {
		fprintf(out, "<text class=\"cutlabel\" x=\"%d\" y=\"46\">Inf(P) for P = ", LEFT);
		xml_text(out, pred);
		fputs("</text>\n", out);
	}
}

/* The legend: one sample of every mark used in the diagram, in three rows. */
static void svg_legend(FILE *out)
{
	static const struct {
		int row;
		double x;               /* offset from the left of the legend */
		const char *sample;     /* "circle CLASS", "ext", "line STYLE" */
		const char *text;
	} items[] = {
		{ 0, 0, "send", "send" },
		{ 0, 70, "recv", "receive" },
		{ 0, 160, "mark", "encore_mark key=value" },
		{ 0, 330, "chan", "socket, connect, accept, close..." },
		{ 0, 560, "life", "fork, exec, exit" },
		{ 1, 0, "ext", "external input: clock, random, poll result, bytes from outside" },
		{ 1, 430, "msg", "message: send to the receive of its last byte" },
		{ 2, 0, "fork", "fork" },
		{ 2, 90, "conn", "other order: connect, close, room, readiness" },
		{ 2, 400, "cut", "Inf(P) cut (--stop)" },
		{ 2, 570, "", "time flows down (Lamport clocks)" },
	};

	fprintf(out, "<g class=\"legend\">\n<rect x=\"%d\" y=\"58\" width=\"780\" height=\"70\" "
	             "fill=\"#f7f7f7\" stroke=\"#ccc\"/>\n", LEFT - 8);
	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++) {
		double x = LEFT + items[i].x, y = 72 + 20 * items[i].row, tx = x + 14;
		const char *smp = items[i].sample;

		if (!strcmp(smp, "ext")) {
			fprintf(out, "<rect class=\"ext\" x=\"%.1f\" y=\"%.1f\" width=\"9\" "
			             "height=\"9\"/>", x + 0.5, y - 4.5);
		} else if (!strcmp(smp, "msg") || !strcmp(smp, "fork") || !strcmp(smp, "conn") ||
		           !strcmp(smp, "cut")) {
			const char *style = !strcmp(smp, "msg") ?
			        "stroke=\"#1f5fbf\" stroke-width=\"1.3\" marker-end=\"url(#arrow)\"" :
			        !strcmp(smp, "fork") ?
			        "stroke=\"#777\" stroke-width=\"1.3\" stroke-dasharray=\"5 3\" "
			        "marker-end=\"url(#farrow)\"" :
			        !strcmp(smp, "conn") ?
			        "stroke=\"#777\" stroke-width=\"1.3\" stroke-dasharray=\"1.5 2.5\" "
			        "marker-end=\"url(#farrow)\"" :
			        "stroke=\"#d62728\" stroke-width=\"2.5\"";

			fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" %s/>", x, y,
			        x + 30, y, style);
			tx = x + 38;
		} else if (smp[0]) {
			fprintf(out, "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\"/>", smp,
			        x + 5, y, DOT_R);
		} else {
			tx = x;
		}
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\"%s>%s</text>\n", tx, y + 4,
		        smp[0] ? "" : " fill=\"#666\"", items[i].text);
	}
	fprintf(out, "</g>\n");
}

/* Square root by Newton's method: the CLI does not link libm for one call, and drawing
 * needs no more precision than this. */
static double root(double x)
{
	double r = x > 1 ? x / 2 : 1;

	for (int i = 0; i < 40; i++)
		r = (r + x / r) / 2;
	return r;
}

/* A line from (x1,y1) to (x2,y2) shortened at both ends so it meets the dots' edges. */
static void svg_arrow(FILE *out, const char *cls, const char *marker, double x1, double y1,
                      double x2, double y2, double shrink)
{
	double dx = x2 - x1, dy = y2 - y1, len = dx * dx + dy * dy;

	if (len > 0) {
		double f = shrink / root(len);

		x1 += dx * f;
		y1 += dy * f;
		x2 -= dx * f;
		y2 -= dy * f;
	}
	fprintf(out, "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
	             "marker-end=\"url(#%s)\">", cls, x1, y1, x2, y2, marker);
}

/* The y of state c of process p: between events c and c+1. */
static double state_y(const struct view *v, size_t p, uint64_t c)
{
	const struct view_proc *pr = &v->procs[p];

	if (pr->n == 0)
		return row_y(0) + ROW_H / 2.0;
	if (c == 0)
		return row_y(pr->ev[0].rank) - ROW_H / 2.0;
	if (c >= pr->n)
		return row_y(pr->ev[pr->n - 1].rank) + ROW_H / 2.0;
	return (row_y(pr->ev[c - 1].rank) + row_y(pr->ev[c].rank)) / 2.0;
}

static void svg_write(FILE *out, const char *dir, const struct view *v, const char *pred,
                      const struct ana_cuts *cuts)
{
	double w = LEFT + 70 + (double)(v->nprocs ? v->nprocs - 1 : 0) * COL_W + 190;
	double h = row_y(v->max_rank + 2) + 30;

	if (w < 800)
		w = 800;
	svg_head(out, dir, v, w, h, pred);
	svg_legend(out);

	/* Process lines and names, drawn first so everything else lies on top. */
	for (size_t p = 0; p < v->nprocs; p++) {
		const struct view_proc *pr = &v->procs[p];
		double top = pr->n ? row_y(pr->ev[0].rank) - ROW_H : row_y(0);
		double bottom = pr->n ? row_y(pr->ev[pr->n - 1].rank) + ROW_H : row_y(1);

		fprintf(out, "<text class=\"pname\" x=\"%.1f\" y=\"%d\">", col_x(p), TOP - 8);
		xml_text(out, pr->name);
		fprintf(out, "</text>\n<line class=\"proc\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
		             "y2=\"%.1f\"><title>", col_x(p), top, col_x(p), bottom);
		xml_text(out, pr->name);
		fprintf(out, " (pid %" PRId64 ", %" PRIu64 " events)</title></line>\n", pr->pid,
		        pr->n);
	}

	/* Forks and messages. */
	for (size_t p = 0; p < v->nprocs; p++) {
		const struct view_proc *pr = &v->procs[p];

		if (pr->parent >= 0 && pr->n && pr->fork_index >= 1 &&
		    pr->fork_index <= v->procs[pr->parent].n) {
			const struct view_event *f = &v->procs[pr->parent].ev[pr->fork_index - 1];

			svg_arrow(out, "fork", "farrow", col_x((size_t)pr->parent), row_y(f->rank),
			          col_x(p), row_y(pr->ev[0].rank), DOT_R + 1);
			fprintf(out, "<title>%s forks %s</title></line>\n",
			        v->procs[pr->parent].name, pr->name);
		}
		for (uint64_t k = 1; k <= pr->n; k++) {
			const struct view_event *e = &pr->ev[k - 1];
			const struct view_event *s;

			if (e->kind == TRACE_EV_ACCEPT && e->src_proc != ANA_NO_PROC &&
			    e->src_proc < v->nprocs) {
				s = &v->procs[e->src_proc].ev[e->src_index - 1];
				svg_arrow(out, "conn", "farrow", col_x(e->src_proc), row_y(s->rank),
				          col_x(p), row_y(e->rank), DOT_R + 1);
				fputs("<title>", out);
				xml_text(out, v->procs[e->src_proc].name);
				fprintf(out, " event %" PRIu64 " (connect) accepted by ", e->src_index);
				xml_text(out, pr->name);
				fprintf(out, " event %" PRIu64 "</title></line>\n", k);
				continue;
			}
			for (uint32_t i = 0; i < e->nxdeps; i++) {
				size_t q = e->xdeps[i].proc;

				s = &v->procs[q].ev[e->xdeps[i].index - 1];
				svg_arrow(out, "conn", "farrow", col_x(q), row_y(s->rank), col_x(p),
				          row_y(e->rank), DOT_R + 1);
				fputs("<title>", out);
				xml_text(out, v->procs[q].name);
				fprintf(out, " event %" PRIu64 " (%s) happened before ", e->xdeps[i].index,
				        trace_kind_name(s->kind));
				xml_text(out, pr->name);
				fprintf(out, " event %" PRIu64 " (%s)</title></line>\n", k,
				        e->kind == TRACE_EV_RECV ? "end of file" : trace_kind_name(e->kind));
			}
			if (!view_is_message(v, p, k))
				continue;
			s = &v->procs[e->src_proc].ev[e->src_index - 1];
			svg_arrow(out, "msg", "arrow", col_x(e->src_proc), row_y(s->rank), col_x(p),
			          row_y(e->rank), DOT_R + 1);
			fputs("<title>", out);
			xml_text(out, v->procs[e->src_proc].name);
			fprintf(out, " event %" PRIu64 " (send %" PRId64 ") to ", e->src_index,
			        s->result);
			xml_text(out, pr->name);
			fprintf(out, " event %" PRIu64 " (receive %" PRId64 " bytes)</title></line>\n", k,
			        e->result);
		}
	}

	/* Events. */
	for (size_t p = 0; p < v->nprocs; p++) {
		const struct view_proc *pr = &v->procs[p];

		for (uint64_t k = 1; k <= pr->n; k++) {
			const struct view_event *e = &pr->ev[k - 1];
			const char *cls = event_class(e);
			double x = col_x(p), y = row_y(e->rank);
			char label[160];

			event_label(e, label, sizeof(label));
			fprintf(out, "<g class=\"ev\">");
			if (!strcmp(cls, "ext"))
				fprintf(out, "<rect class=\"ext\" x=\"%.1f\" y=\"%.1f\" width=\"9\" "
				             "height=\"9\"/>", x - 4.5, y - 4.5);
			else
				fprintf(out, "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\"/>",
				        cls, x, y, DOT_R);
			fprintf(out, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\">", x + 8, y + 3.5);
			xml_text(out, label);
			fprintf(out, "</text><title>");
			xml_text(out, pr->name);
			fprintf(out, " event %" PRIu64 ": ", k);
			xml_text(out, label);
			fprintf(out, "</title></g>\n");
		}
	}

	/* The cut(s). */
	for (size_t i = 0; cuts && i < cuts->ncuts; i++) {
		const uint64_t *cut = cuts->cuts + i * cuts->nprocs;
		double ly = 0;

		fprintf(out, "<polyline class=\"cut\" points=\"");
		for (size_t p = 0; p < v->nprocs; p++) {
			double y = state_y(v, p, cut[p]);

			fprintf(out, "%s%.1f,%.1f %.1f,%.1f", p ? " " : "", col_x(p) - COL_W / 2.5, y,
			        col_x(p) + COL_W / 2.5, y);
			ly = y;
		}
		fprintf(out, "\"><title>Inf(P)");
		if (cuts->ncuts > 1)
			fprintf(out, " %zu of %zu", i + 1, cuts->ncuts);
		fprintf(out, ":");
		for (size_t p = 0; p < v->nprocs; p++) {
			fputc(' ', out);
			xml_text(out, v->procs[p].name);
			fprintf(out, "=%" PRIu64, cut[p]);
		}
		fprintf(out, "</title></polyline>\n");
		/* Where the cut crosses each process: a marker saying which state it is. */
		for (size_t p = 0; p < v->nprocs; p++) {
			fprintf(out, "<circle class=\"cutmark\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\">"
			             "<title>", col_x(p), state_y(v, p, cut[p]));
			xml_text(out, v->procs[p].name);
			fprintf(out, ": state %" PRIu64 "</title></circle>\n", cut[p]);
		}
		fprintf(out, "<text class=\"cutlabel\" x=\"%.1f\" y=\"%.1f\">Inf(P)",
		        col_x(v->nprocs - 1) + COL_W / 2.5 + 4, ly + 4);
		if (cuts->ncuts > 1)
			fprintf(out, " %zu", i + 1);
		fprintf(out, "</text>\n");
	}
	fprintf(out, "</svg>\n");
}

static void usage(FILE *out)
{
	fprintf(out,
	        "NAME\n"
	        "    encore show - draw a space-time diagram of a recorded session as SVG\n\n"
	        "SYNOPSIS\n"
	        "    encore show DIR --svg FILE [--stop 'PREDICATE']\n\n"
	        "DESCRIPTION\n"
	        "    Draws the session DIR: one vertical line per process (named at the top),\n"
	        "    its events as dots from top to bottom labelled by kind (marks as key=value,\n"
	        "    sends and receives with their byte counts), external input as red squares,\n"
	        "    every message as an arrow from its send to the receive of its last byte,\n"
	        "    and every fork as a dashed arrow.  A legend explains the marks.  The\n"
	        "    vertical axis is logical time (Lamport clocks): every arrow points down and\n"
	        "    idle time takes no room.  Hover over an element in a browser for details.\n"
	        "    With --stop, the least consistent cut(s) where PREDICATE holds (Inf(P), as\n"
	        "    `encore inf` computes it) are drawn as red lines across the processes,\n"
	        "    passing just below the last event of each process inside the cut.\n\n"
	        "OPTIONS\n"
	        "    --svg FILE      write the SVG to FILE (- for standard output); required\n"
	        "    --stop P        draw Inf(P); the grammar is in schemas/predicates.md\n"
	        "    -h, --help      this text\n\n"
	        "EXAMPLES\n"
	        "    encore record -o run -- build/examples/ring --bug\n"
	        "    encore show run --svg ring.svg \\\n"
	        "        --stop 'ring.1: mark.holding == 1 && ring.2: mark.holding == 1'\n"
	        "    rsvg-convert ring.svg -o ring.png\n\n"
	        "EXIT STATUS\n"
	        "    0 written (also when P never holds: no cut is drawn and a note says so);\n"
	        "    1 the session cannot be loaded, P cannot be evaluated offline, or FILE\n"
	        "    cannot be written; 2 usage error or a predicate that does not parse.\n");
	fprintf(out, "\nSee encore-show(1).\n");
}

int cmd_show(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "svg", required_argument, NULL, 's' },
		{ "stop", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *svg = NULL, *pred_text = NULL, *dir;
	struct trace_pred *pred = NULL;
	struct ana_cuts cuts = {0};
	struct trace_diag d;
	struct view v = {0};
	FILE *out = NULL;
	int c, rc, ret = CLI_FAIL;

	optind = 1;
	while ((c = getopt_long(argc, argv, "hs:p:", opts, NULL)) != -1) {
		switch (c) {
		case 's': svg = optarg; break;
		case 'p': pred_text = optarg; break;
		case 'h': usage(stdout); return CLI_OK;
		default: usage(stderr); return CLI_USAGE;
		}
	}
	if (argc - optind != 1) {
		cli_error("show", "expected one session directory, e.g. encore show DIR --svg "
		          "out.svg; see 'encore show --help'");
		return CLI_USAGE;
	}
	if (!svg) {
		cli_error("show", "say where to write the diagram with --svg FILE (- for standard "
		          "output)");
		return CLI_USAGE;
	}
	dir = argv[optind];
	memset(&d, 0, sizeof(d));
	if (pred_text && (rc = trace_pred_parse(pred_text, &pred, &d))) {
		if (rc == TRACE_EPARSE) {
			cli_error("show", "--stop '%s': %s (the grammar is in schemas/predicates.md)",
			          pred_text, d.msg);
			return CLI_USAGE;
		}
		cli_diag("show", &d);
		return CLI_FAIL;
	}
	memset(&d, 0, sizeof(d));
	if ((rc = view_load(dir, &v, &d))) {
		cli_diag("show", &d);
		goto out;
	}
	if (pred) {
		memset(&d, 0, sizeof(d));
		if ((rc = ana_inf(v.s, pred, &cuts, &d))) {
			cli_diag("show", &d);
			goto out;
		}
		if (!cuts.ncuts)
			cli_error("show", "note: P never holds in %s; no cut drawn", dir);
	}
	if (!strcmp(svg, "-")) {
		out = stdout;
	} else if (!(out = fopen(svg, "w"))) {
		cli_error("show", "cannot write %s: %s", svg, strerror(errno));
		goto out;
	}
	svg_write(out, dir, &v, pred_text, pred ? &cuts : NULL);
	if (out != stdout) {
		if (fclose(out) != 0) {
			out = NULL;
			cli_error("show", "cannot write %s: %s", svg, strerror(errno));
			goto out;
		}
		out = NULL;
		printf("%s: %zu processes, %" PRIu64 " events, %" PRIu64 " messages%s\n", svg,
		       v.nprocs, ana_total_events(v.s), v.nmessages,
		       cuts.ncuts ? ", Inf(P) drawn" : "");
	} else if (fflush(stdout) != 0) {
		cli_error("show", "cannot write the SVG to standard output: %s", strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < ana_nwarnings(v.s); i++)
		fprintf(stderr, "encore show: warning: %s\n", ana_warning(v.s, i));
	ret = CLI_OK;
out:
	if (out && out != stdout)
		fclose(out);
	ana_cuts_free(&cuts);
	view_free(&v);
	trace_pred_free(pred);
	return ret;
}
