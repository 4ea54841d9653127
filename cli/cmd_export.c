/*
 * cmd_export.c: `encore export DIR --format chrome|shiviz -o FILE`: a recorded session in
 * the formats of viewers people already use.
 *
 *   chrome  Chrome trace-event JSON (chrome://tracing, https://ui.perfetto.dev): one track
 *           per process, every event a short complete ("X") slice at its recorded time,
 *           every message a flow arrow ("s" -> "f", category "message"), every fork a
 *           flow of category "fork", every accepted connect one of category "connect".
 *   shiviz  ShiViz's log (https://bestchai.bitbucket.io/shiviz/): the parsing regex on the
 *           first line, an empty multi-execution delimiter on the second, then two lines
 *           per event: "HOST {vector clock}" and a description.  Host names are logical
 *           names; vector clocks follow happened-before exactly (program order, messages,
 *           connect -> accept, forks), as the analyzer derives it.
 *
 * Recorded timestamps are for display only (DESIGN.md): where they disagree with
 * happened-before (clocks of two hosts, unstamped events), the display time is moved just
 * after the events that happened before, so that no arrow points back in time.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "view.h"

static void describe(const struct view_event *e, uint64_t k, char *buf, size_t cap)
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

/* ---------------------------------------------------------------------------------------
 * Chrome / Perfetto.
 */
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
		cli_json_string(c->out, pr->name);
		fprintf(c->out, "}},\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%zu,"
		                "\"args\":{\"sort_index\":%zu}}", p + 1, p);
		fprintf(c->out, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%zu,\"tid\":%zu,"
		                "\"args\":{\"name\":", p + 1, p + 1);
		cli_json_string(c->out, pr->name);
		fprintf(c->out, "}}");
		for (uint64_t k = 1; k <= pr->n; k++) {
			const struct view_event *e = &pr->ev[k - 1];
			/* A slice lasts until the next event, at most 1 us: long enough to click,
			 * never overlapping its successor (slices of a track must nest). */
			uint64_t dur = 1000;
			char desc[200];

			if (k < pr->n && pr->ev[k].ts_ns - e->ts_ns < dur)
				dur = pr->ev[k].ts_ns - e->ts_ns;
			describe(e, k, desc, sizeof(desc));
			fprintf(c->out, ",\n{\"ph\":\"X\",\"name\":\"%s\",\"cat\":\"%s\",\"pid\":%zu,"
			                "\"tid\":%zu,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"index\":%" PRIu64
			                ",\"what\":",
			        e->kind == TRACE_EV_MARK && e->key ? "mark" : trace_kind_name(e->kind),
			        e->external ? "external" : trace_kind_name(e->kind), p + 1, p + 1,
			        usec(c, e->ts_ns), (double)dur / 1000.0, k);
			cli_json_string(c->out, desc);
			if (e->kind == TRACE_EV_MARK && e->key) {
				fprintf(c->out, ",\"key\":");
				cli_json_string(c->out, e->key);
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
				        conn_flows, e->src_proc + 1, e->src_proc + 1, usec(c, s->ts_ns));
				fprintf(c->out, ",\n{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"connect\","
				                "\"cat\":\"connect\",\"id\":\"c%" PRIu64 "\",\"pid\":%zu,"
				                "\"tid\":%zu,\"ts\":%.3f}", conn_flows, p + 1, p + 1,
				        usec(c, e->ts_ns));
			}
			/* A message: the flow starts in the send's slice and ends in this one. */
			if (view_is_message(v, p, k)) {
				const struct view_event *s = &v->procs[e->src_proc].ev[e->src_index - 1];

				c->flows++;
				fprintf(c->out, ",\n{\"ph\":\"s\",\"name\":\"message\",\"cat\":\"message\","
				                "\"id\":%" PRIu64 ",\"pid\":%u,\"tid\":%u,\"ts\":%.3f}",
				        c->flows, e->src_proc + 1, e->src_proc + 1, usec(c, s->ts_ns));
				fprintf(c->out, ",\n{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"message\","
				                "\"cat\":\"message\",\"id\":%" PRIu64 ",\"pid\":%zu,"
				                "\"tid\":%zu,\"ts\":%.3f}", c->flows, p + 1, p + 1,
				        usec(c, e->ts_ns));
			}
		}
		if (pr->parent >= 0 && pr->n && pr->fork_index >= 1 &&
		    pr->fork_index <= v->procs[pr->parent].n) {
			const struct view_event *f = &v->procs[pr->parent].ev[pr->fork_index - 1];

			/* Fork flows get ids of their own, after every message's. */
			fork_flows++;
			fprintf(c->out, ",\n{\"ph\":\"s\",\"name\":\"fork\",\"cat\":\"fork\",\"id\":\"f%"
			                PRIu64 "\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f}", fork_flows,
			        pr->parent + 1, pr->parent + 1, usec(c, f->ts_ns));
			fprintf(c->out, ",\n{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"fork\",\"cat\":\"fork\","
			                "\"id\":\"f%" PRIu64 "\",\"pid\":%zu,\"tid\":%zu,\"ts\":%.3f}",
			        fork_flows, p + 1, p + 1, usec(c, pr->ev[0].ts_ns));
		}
	}
}

static void chrome_write(FILE *out, const char *dir, const struct view *v, uint64_t *flows)
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
	cli_json_string(out, dir);
	fprintf(out, ",\"processes\":%zu,\"events\":%" PRIu64 ",\"messages\":%" PRIu64 "},"
	             "\"traceEvents\":[", v->nprocs, ana_total_events(v->s), v->nmessages);
	chrome_events(&c);
	fprintf(out, "\n]}\n");
	*flows = c.flows;
}

/* ---------------------------------------------------------------------------------------
 * ShiViz.
 */
struct shiviz {
	FILE *out;
	const struct view *v;
	uint64_t *clock;        /* nprocs x nprocs: the current vector clock of each process */
	uint64_t ***saved;      /* per process, per event: the clock of a send (or fork) that
	                           a later event merges, else NULL */
};

static void merge(uint64_t *into, const uint64_t *from, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (from[i] > into[i])
			into[i] = from[i];
}

static int shiviz_event(void *ctx, size_t p, uint64_t k)
{
	struct shiviz *z = ctx;
	const struct view *v = z->v;
	const struct view_proc *pr = &v->procs[p];
	const struct view_event *e = &pr->ev[k - 1];
	uint64_t *vc = z->clock + p * v->nprocs;
	char desc[200];
	int first = 1;

	if (k == 1 && pr->parent >= 0 && pr->fork_index >= 1 &&
	    pr->fork_index <= v->procs[pr->parent].n) {
		const uint64_t *f = z->saved[pr->parent][pr->fork_index - 1];

		if (f)
			merge(vc, f, v->nprocs);
	}
	if (e->src_proc != ANA_NO_PROC && e->src_proc < v->nprocs &&
	    z->saved[e->src_proc][e->src_index - 1])
		merge(vc, z->saved[e->src_proc][e->src_index - 1], v->nprocs);
	for (uint32_t i = 0; i < e->nxdeps; i++)
		if (z->saved[e->xdeps[i].proc][e->xdeps[i].index - 1])
			merge(vc, z->saved[e->xdeps[i].proc][e->xdeps[i].index - 1], v->nprocs);
	vc[p]++;
	if (e->is_src) {
		uint64_t *copy = malloc(v->nprocs * sizeof(*copy));

		if (!copy)
			return TRACE_ENOMEM;
		memcpy(copy, vc, v->nprocs * sizeof(*copy));
		z->saved[p][k - 1] = copy;
	}
	fprintf(z->out, "%s {", pr->name);
	for (size_t q = 0; q < v->nprocs; q++) {
		if (!vc[q])
			continue;
		fprintf(z->out, "%s\"%s\":%" PRIu64, first ? "" : ", ", v->procs[q].name, vc[q]);
		first = 0;
	}
	describe(e, k, desc, sizeof(desc));
	fprintf(z->out, "}\n%s\n", desc);
	return 0;
}

static int shiviz_write(FILE *out, const struct view *v)
{
	struct shiviz z = { out, v, NULL, NULL };
	int rc = TRACE_ENOMEM;

	z.clock = calloc(v->nprocs * v->nprocs + 1, sizeof(*z.clock));
	z.saved = calloc(v->nprocs + 1, sizeof(*z.saved));
	if (!z.clock || !z.saved)
		goto out;
	for (size_t p = 0; p < v->nprocs; p++)
		if (!(z.saved[p] = calloc(v->procs[p].n + 1, sizeof(**z.saved))))
			goto out;
	/* Line 1: how ShiViz parses the log; line 2: no multi-execution delimiter. */
	fprintf(out, "(?<host>\\S*) (?<clock>{.*})\\n(?<event>.*)\n\n");
	rc = view_sweep(v, shiviz_event, &z);
out:
	for (size_t p = 0; z.saved && p < v->nprocs; p++) {
		for (uint64_t k = 0; z.saved[p] && k < v->procs[p].n; k++)
			free(z.saved[p][k]);
		free(z.saved[p]);
	}
	free(z.saved);
	free(z.clock);
	return rc;
}

static void usage(FILE *out)
{
	fprintf(out,
	        "NAME\n"
	        "    encore export - export a recorded session for Perfetto/Chrome or ShiViz\n\n"
	        "SYNOPSIS\n"
	        "    encore export DIR --format chrome|shiviz -o FILE\n\n"
	        "DESCRIPTION\n"
	        "    Writes the session DIR in a format an existing viewer opens:\n"
	        "    chrome   Chrome trace-event JSON, for https://ui.perfetto.dev or\n"
	        "             chrome://tracing: one track per process (named by its logical\n"
	        "             name), every event a short slice at its recorded time, every\n"
	        "             message a flow arrow from its send to its receive (category\n"
	        "             \"message\"), every fork a flow of category \"fork\".\n"
	        "    shiviz   a ShiViz log (https://bestchai.bitbucket.io/shiviz/, \"upload a\n"
	        "             file\"): the parsing regex on line 1, an empty delimiter on line 2,\n"
	        "             then per event a line \"HOST {\\\"HOST\\\":N, ...}\" with its vector clock\n"
	        "             and a line describing it.  Vector clocks follow happened-before\n"
	        "             as the analyzer derives it (program order, messages,\n"
	        "             connect -> accept, close -> end of file, forks).\n"
	        "    Recorded times are for display only: an event whose time disagrees with\n"
	        "    happened-before is shown just after the events it depends on.\n\n"
	        "OPTIONS\n"
	        "    --format F     chrome or shiviz; required\n"
	        "    -o, --output FILE  where to write (- for standard output); required\n"
	        "    -h, --help     this text\n\n"
	        "EXAMPLES\n"
	        "    encore export run --format chrome -o run.json    # open in ui.perfetto.dev\n"
	        "    encore export run --format shiviz -o run.log\n\n"
	        "EXIT STATUS\n"
	        "    0 written; 1 the session cannot be loaded or FILE cannot be written;\n"
	        "    2 usage error.\n");
	fprintf(out, "\nSee encore-export(1).\n");
}

int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *format = NULL, *path = NULL, *dir;
	struct trace_diag d;
	struct view v = {0};
	uint64_t flows = 0;
	FILE *out = NULL;
	int c, rc, ret = CLI_FAIL, chrome;

	optind = 1;
	while ((c = getopt_long(argc, argv, "hf:o:", opts, NULL)) != -1) {
		switch (c) {
		case 'f': format = optarg; break;
		case 'o': path = optarg; break;
		case 'h': usage(stdout); return CLI_OK;
		default: usage(stderr); return CLI_USAGE;
		}
	}
	if (argc - optind != 1) {
		cli_error("export", "expected one session directory, e.g. encore export DIR "
		          "--format chrome -o trace.json; see 'encore export --help'");
		return CLI_USAGE;
	}
	if (!format || (strcmp(format, "chrome") && strcmp(format, "shiviz"))) {
		cli_error("export", "say which format with --format chrome (Perfetto, "
		          "chrome://tracing) or --format shiviz");
		return CLI_USAGE;
	}
	if (!path) {
		cli_error("export", "say where to write with -o FILE (- for standard output)");
		return CLI_USAGE;
	}
	chrome = !strcmp(format, "chrome");
	dir = argv[optind];
	memset(&d, 0, sizeof(d));
	if ((rc = view_load(dir, &v, &d))) {
		cli_diag("export", &d);
		goto out;
	}
	if (!strcmp(path, "-")) {
		out = stdout;
	} else if (!(out = fopen(path, "w"))) {
		cli_error("export", "cannot write %s: %s", path, strerror(errno));
		goto out;
	}
	if (chrome) {
		chrome_write(out, dir, &v, &flows);
	} else if ((rc = shiviz_write(out, &v))) {
		cli_error("export", "%s: %s", dir, trace_strerror(rc));
		goto out;
	}
	if (out != stdout) {
		int bad = ferror(out) | fclose(out);

		out = NULL;
		if (bad) {
			cli_error("export", "cannot write %s: %s", path, strerror(errno));
			goto out;
		}
		printf("%s: %s, %zu processes, %" PRIu64 " events, %" PRIu64 " messages\n", path,
		       chrome ? "Chrome trace JSON" : "ShiViz log", v.nprocs, ana_total_events(v.s),
		       v.nmessages);
	} else if (fflush(stdout) != 0) {
		cli_error("export", "cannot write to standard output: %s", strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < ana_nwarnings(v.s); i++)
		fprintf(stderr, "encore export: warning: %s\n", ana_warning(v.s, i));
	ret = CLI_OK;
out:
	if (out && out != stdout)
		fclose(out);
	view_free(&v);
	return ret;
}
