/*
 * svg.c: the space-time diagram of `encore show` (view.h).  One vertical line per process,
 * events as dots labelled by kind (external input marked), messages as arrows from send to
 * receive, forks as dashed arrows, other orderings (connect -> accept, releases -> end of
 * file, room in a pipe, readiness) as dotted arrows, and the Inf(P) cut(s) drawn across.
 *
 * The vertical axis is logical time (Lamport ranks, view.c), not wall-clock time: every
 * arrow points down and idle stretches take no room, so a few hundred events stay readable.
 */
#include <inttypes.h>
#include <string.h>

#include "view.h"

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
	case TRACE_EV_THREAD: case TRACE_EV_WAIT:
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
	else if (e->kind == TRACE_EV_WAIT && e->result > 0)
		snprintf(buf, cap, "wait %" PRId64, e->result); /* the child's pid */
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

/* Process lines and names, drawn first so everything else lies on top. */
static void svg_procs(FILE *out, const struct view *v)
{
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
}

/* Forks, messages and the other edges of happened-before, as arrows. */
static void svg_edges(FILE *out, const struct view *v)
{
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
}

/* Events: a dot (external input: a square) and a label each. */
static void svg_events(FILE *out, const struct view *v)
{
	for (size_t p = 0; p < v->nprocs; p++) {
		const struct view_proc *pr = &v->procs[p];

		for (uint64_t k = 1; k <= pr->n; k++) {
			const struct view_event *e = &pr->ev[k - 1];
			const char *cls = event_class(e);
			double x = col_x(p), y = row_y(e->rank);
			char label[160];
			size_t tl = 0;

			/* a process with threads: each label says whose event it is */
			if (pr->nthreads > 1)
				tl = (size_t)snprintf(label, sizeof(label), "t%u ", e->thread);
			event_label(e, label + tl, sizeof(label) - tl);
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
}

/* The cut(s), each a red line across the processes with its states marked. */
static void svg_cuts(FILE *out, const struct view *v, const struct ana_cuts *cuts)
{
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
}

int view_svg_write(FILE *out, const char *dir, const struct view *v, const char *pred,
                   const struct ana_cuts *cuts)
{
	double w = LEFT + 70 + (double)(v->nprocs ? v->nprocs - 1 : 0) * COL_W + 190;
	double h = row_y(v->max_rank + 2) + 30;

	if (w < 800)
		w = 800;
	svg_head(out, dir, v, w, h, pred);
	svg_legend(out);
	svg_procs(out, v);
	svg_edges(out, v);
	svg_events(out, v);
	svg_cuts(out, v, cuts);
	fprintf(out, "</svg>\n");
	return 0;
}
