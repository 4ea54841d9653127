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
 *           connect -> accept, forks...): the analyzer's clocks (ana_vclocks).
 *
 * Recorded timestamps are for display only: where they disagree with happened-before
 * (clocks of two hosts, unstamped events), the display time is moved just after the events
 * that happened before, so that no arrow points back in time.  Thin: parses options, loads
 * the view and hands it to the writers of view/ (view.h).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "view.h"

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
	        "             name) and thread (tid: the thread's index in its process, 0\n"
	        "             the main thread, then in creation order; \"NAME thread N\"),\n"
	        "             every event a short slice at its recorded time, every\n"
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
	        "    2 usage error.\n"
	        "    A damaged trace: the answer from what could be read, the damage named on\n"
	        "    stderr, and 1.\n");
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
		default: return cli_bad_option("export");
		}
	}
	if (argc - optind != 1) {
		cli_error("export", "expected one session directory, e.g. encore export DIR "
		          "--format chrome -o trace.json; see 'encore export --help'");
		return CLI_USAGE;
	}
	if (!format) {
		cli_error("export", "say which format with --format chrome (Perfetto, "
		          "chrome://tracing) or --format shiviz");
		return CLI_USAGE;
	}
	if (strcmp(format, "chrome") && strcmp(format, "shiviz")) {
		cli_error("export", "no format '%s': --format chrome (Perfetto, chrome://tracing) or "
		          "--format shiviz", format);
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
	} else if (!(out = fopen(path, "we"))) {
		cli_error("export", "cannot write %s: %s", path, strerror(errno));
		goto out;
	}
	if (chrome) {
		view_chrome_write(out, dir, &v, &flows);
	} else if ((rc = view_shiviz_write(out, &v))) {
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
	/* a damaged trace: the answer above, from what could be read, and exit 1 */
	ret = cli_warnings("export", v.s) ? CLI_FAIL : CLI_OK;
out:
	if (out && out != stdout)
		fclose(out);
	view_free(&v);
	return ret;
}
