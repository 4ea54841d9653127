/*
 * cmd_inf.c: `encore inf DIR 'P' [--json]`: the first consistent global state(s) of a
 * recording at which predicate P holds (Inf(P), Manabe & Imase section 3), computed offline
 * by the analyzer.  Thin: parses, calls ana_load / trace_pred_parse / ana_inf, prints.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "ana.h"
#include "cli.h"
#include "commands.h"

static void usage(FILE *out)
{
	fprintf(out,
	        "NAME\n"
	        "    encore inf - compute Inf(P), the first consistent cut where P holds\n\n"
	        "SYNOPSIS\n"
	        "    encore inf [--json] DIR 'PREDICATE'\n\n"
	        "DESCRIPTION\n"
	        "    Loads the recorded session DIR, matches its channels and finds the least\n"
	        "    consistent global states at which PREDICATE holds (schemas/predicates.md):\n"
	        "      conjunctive  a: sent >= 3 && b: mark.phase == 2    the unique least cut\n"
	        "      disjunctive  a: exited || b: in(abort)             every minimal cut\n"
	        "      linked       a: last(send) -> b: received >= 1     the first cut where the\n"
	        "                                                        last DP holds after the chain\n"
	        "      general      (a: ... || b: ...) && c: ...          searched with a bound\n"
	        "    For each cut it prints every process's state index (events executed; 0 is\n"
	        "    before the first event), its last event and that event's call site.\n"
	        "    Predicates reading program variables (var.NAME) need the live processes:\n"
	        "    use `encore replay DIR --stop 'P'` for those.  When P never holds, a note\n"
	        "    names the mark keys and functions P uses that occur nowhere in DIR.\n\n"
	        "OPTIONS\n"
	        "    --json      {\"predicate\":\"...\",\"kind\":\"conjunctive|disjunctive|linked|general\",\n"
	        "                \"cuts\":[{\"PROC\":INDEX,...}]}; cuts is [] when P never holds\n"
	        "    -h, --help  this text\n\n"
	        "EXIT STATUS\n"
	        "    0 computed (even when P never holds); 1 the session cannot be loaded or P\n"
	        "    cannot be evaluated offline; 2 usage error or a predicate that does not parse.\n"
	        "    A damaged trace: the answer from what could be read, the damage named on\n"
	        "    stderr, and 1.\n");
	fprintf(out, "\nSee encore-inf(1).\n");
}

static const char *shape_name(enum trace_pred_shape s)
{
	switch (s) {
	case TRACE_PRED_CONJUNCTIVE: return "conjunctive";
	case TRACE_PRED_DISJUNCTIVE: return "disjunctive";
	case TRACE_PRED_LINKED: return "linked";
	default: return "general";
	}
}

static void describe_event(const struct ana_session *s, size_t p, uint64_t k, char *buf,
                           size_t cap)
{
	struct ana_event ev;

	if (k == 0 || ana_event_get(s, p, k, &ev)) {
		snprintf(buf, cap, "-");
		return;
	}
	if (ev.kind == TRACE_EV_SEND || ev.kind == TRACE_EV_RECV)
		snprintf(buf, cap, "%s %lld bytes, channel %u", trace_kind_name(ev.kind),
		         (long long)ev.result, ev.channel);
	else if (ev.kind == TRACE_EV_MARK)
		snprintf(buf, cap, "mark = %lld", (long long)ev.result);
	else
		snprintf(buf, cap, "%s", trace_kind_name(ev.kind));
}

static void print_table(const struct ana_session *s, const uint64_t *cut)
{
	char desc[96];

	printf("    %-20s %8s  %-34s %s\n", "PROCESS", "STATE", "LAST EVENT", "CALL SITE");
	for (size_t p = 0; p < ana_nprocs(s); p++) {
		const char *site = "";
		struct ana_event ev;

		describe_event(s, p, cut[p], desc, sizeof(desc));
		if (cut[p] && ana_event_get(s, p, cut[p], &ev) == 0)
			site = ana_site_function(s, p, ev.site);
		printf("    %-20s %8llu  %-34s %s\n", ana_proc_name(s, p), (unsigned long long)cut[p],
		       desc, site[0] ? site : "-");
	}
}

/* The predicate text with a caret under the column the parser stopped at. */
static void parse_error(const char *text, const struct trace_diag *d)
{
	size_t col = (size_t)d->offset;

	/* the parser's message already names the column */
	cli_error("inf", "bad predicate: %s", d->msg[0] ? d->msg : trace_strerror(d->code));
	fprintf(stderr, "    %s\n    %*s^\n", text, (int)(col < strlen(text) ? col : strlen(text)),
	        "");
	fprintf(stderr, "    (the grammar is in schemas/predicates.md; quote P for the shell)\n");
}

int cmd_inf(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ana_session *s = NULL;
	struct trace_pred *pred = NULL;
	struct trace_diag d;
	struct ana_cuts cuts = {0};
	const char *dir, *text;
	int json = 0, c, rc, ret = CLI_FAIL;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'h': usage(stdout); return CLI_OK;
		default: return cli_bad_option("inf");
		}
	}
	if (argc - optind != 2) {
		cli_error("inf", "expected a session directory and a predicate, e.g. "
		          "encore inf DIR 'a: sent >= 1 && b: received >= 1'");
		return CLI_USAGE;
	}
	dir = argv[optind];
	text = argv[optind + 1];

	memset(&d, 0, sizeof(d));
	rc = trace_pred_parse(text, &pred, &d);
	if (rc) {
		if (rc == TRACE_EPARSE) {
			parse_error(text, &d);
			return CLI_USAGE;
		}
		cli_diag("inf", &d);
		return CLI_FAIL;
	}
	memset(&d, 0, sizeof(d));
	if ((rc = ana_load(dir, &s, &d))) {
		cli_diag("inf", &d);
		goto out;
	}
	memset(&d, 0, sizeof(d));
	if ((rc = ana_inf(s, pred, &cuts, &d))) {
		cli_diag("inf", &d);
		goto out;
	}
	if (json) {
		printf("{\"predicate\":");
		cli_json_string(stdout, text);
		printf(",\"kind\":\"%s\",\"cuts\":[", shape_name(trace_pred_shape(pred)));
		for (size_t i = 0; i < cuts.ncuts; i++) {
			printf("%s{", i ? "," : "");
			for (size_t p = 0; p < cuts.nprocs; p++) {
				printf("%s", p ? "," : "");
				cli_json_string(stdout, ana_proc_name(s, p));
				printf(":%llu", (unsigned long long)cuts.cuts[i * cuts.nprocs + p]);
			}
			printf("}");
		}
		printf("]%s}\n", cuts.bound_hit ? ",\"bound_hit\":true" : "");
	} else {
		printf("Inf(P) for the %s predicate %s\n", shape_name(trace_pred_shape(pred)), text);
		if (!cuts.ncuts)
			printf("P never holds in this recording.\n");
		for (size_t i = 0; i < cuts.ncuts; i++) {
			if (cuts.ncuts > 1)
				printf("\ncut %zu of %zu (minimal cuts are not ordered):\n", i + 1, cuts.ncuts);
			print_table(s, cuts.cuts + i * cuts.nprocs);
		}
	}
	if (!cuts.ncuts) {
		char names[512];

		if (ana_pred_unknown_names(s, pred, names, sizeof(names)))
			fprintf(stderr, "encore inf: note: %s: no such name in this recording (a mark key "
			        "no process marked, a function in no call site's stack): the term is 0 "
			        "or false everywhere\n", names);
	}
	if (cuts.bound_hit)
		cli_error("inf", "the search bound was hit: a general predicate (&& over ||) is "
		          "NP-hard to answer, and the cuts above may not be all of the minimal ones");
	/* a damaged trace: the answer above, from what could be read, and exit 1 */
	ret = cli_warnings("inf", s) ? CLI_FAIL : CLI_OK;
out:
	ana_cuts_free(&cuts);
	ana_free(s);
	trace_pred_free(pred);
	return ret;
}
