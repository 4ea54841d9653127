/*
 * cmd_show.c: `encore show DIR --svg FILE [--stop 'P']`: a space-time diagram of a session
 * as SVG.  One vertical line per process, events as dots labelled by kind (external input
 * marked), messages as arrows from send to receive, forks as dashed arrows, and with
 * --stop the Inf(P) cut drawn across the processes.
 *
 * Thin: parses options, loads the view and Inf(P), and hands them to view_svg_write (view/).
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
	        "    encore show - draw a space-time diagram of a recorded session as SVG\n\n"
	        "SYNOPSIS\n"
	        "    encore show DIR --svg FILE [--stop 'PREDICATE']\n\n"
	        "DESCRIPTION\n"
	        "    Draws the session DIR: one vertical line per process (named at the top),\n"
	        "    its events as dots from top to bottom labelled by kind (marks as key=value,\n"
	        "    sends and receives with their byte counts; in a process with threads,\n"
	        "    prefixed by the thread's index, \"t1 \"), external input as red squares,\n"
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
	        "    cannot be written; 2 usage error or a predicate that does not parse.\n"
	        "    A damaged trace: the answer from what could be read, the damage named on\n"
	        "    stderr, and 1.\n");
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
		default: return cli_bad_option("show");
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
	} else if (!(out = fopen(svg, "we"))) {
		cli_error("show", "cannot write %s: %s", svg, strerror(errno));
		goto out;
	}
	view_svg_write(out, dir, &v, pred_text, pred ? &cuts : NULL);
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
	/* a damaged trace: the answer above, from what could be read, and exit 1 */
	ret = cli_warnings("show", v.s) ? CLI_FAIL : CLI_OK;
out:
	if (out && out != stdout)
		fclose(out);
	ana_cuts_free(&cuts);
	view_free(&v);
	trace_pred_free(pred);
	return ret;
}
