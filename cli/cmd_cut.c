/*
 * cmd_cut.c: `encore cut DIR (--after PROC:INDEX | --before PROC:INDEX[,...]) [--json]`:
 * Ariadne's consistent global breakpoints (Kundu et al.): stop just after an event, or just
 * before a set of events, with the core / influence / other process sets.  Thin: parses the
 * event list, calls ana_cut_after / ana_cut_before, prints.
 */
#include <errno.h>
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
	        "    encore cut - consistent cuts just after or just before events\n\n"
	        "SYNOPSIS\n"
	        "    encore cut [--json] DIR --after PROC:INDEX[,PROC:INDEX...]\n"
	        "    encore cut [--json] DIR --before PROC:INDEX[,PROC:INDEX...]\n\n"
	        "DESCRIPTION\n"
	        "    PROC is a process's logical name (see `encore analyze DIR`), INDEX an event\n"
	        "    number (1 is its first event).  The processes are split as in Ariadne:\n"
	        "      core       the processes of the named events;\n"
	        "      influence  processes that can causally influence them: stopped just after\n"
	        "                 their last event that could;\n"
	        "      other      processes that cannot: stopped at their earliest state (0).\n"
	        "    --after gives the least consistent cut containing the named events: the core\n"
	        "    just after its latest named event, influence and other processes as above.\n"
	        "    --before gives the greatest consistent cut excluding the named events: the\n"
	        "    core just before its earliest named event, every other process as far as it\n"
	        "    can go; and, as ARIADNE, the stop that keeps what led to the events (influence\n"
	        "    and other processes as above).  If the core cannot stop just before its events\n"
	        "    (one named event happened before another's predecessor) the cut moves back to\n"
	        "    the latest consistent state excluding every named event, and the output says\n"
	        "    so.\n\n"
	        "OPTIONS\n"
	        "    --after LIST, --before LIST   the events\n"
	        "    --json      {\"mode\":\"after|before\",\"events\":[{\"PROC\":INDEX}],\n"
	        "                \"cut\":{\"PROC\":INDEX,...},\"core\":[...],\"influence\":[...],\n"
	        "                \"other\":[...],\"moved\":false,\"ariadne\":{\"PROC\":INDEX,...}}\n"
	        "    -h, --help  this text\n\n"
	        "EXIT STATUS\n"
	        "    0 computed; 1 the session cannot be loaded; 2 usage error or an unknown\n"
	        "    process or event.\n"
	        "    A damaged trace: the answer from what could be read, the damage named on\n"
	        "    stderr, and 1.\n");
	fprintf(out, "\nSee encore-cut(1).\n");
}

/* "a:3,b.1:7" into refs; names are resolved against the session. */
static int parse_refs(const struct ana_session *s, const char *list, struct ana_ref **out,
                      size_t *n)
{
	char *copy = strdup(list), *save = NULL, *tok;
	struct ana_ref *refs = NULL;
	size_t cnt = 0;

	if (!copy)
		return CLI_FAIL;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strrchr(tok, ':'), *end;
		uint64_t idx;
		struct ana_ref *nr;
		int p;

		if (!colon || colon == tok || !colon[1]) {
			cli_error("cut", "'%s' is not PROC:INDEX (e.g. server:12)", tok);
			goto bad;
		}
		*colon = '\0';
		(void)end;
		if (cli_parse_count(colon + 1, &idx) != 0 || idx == 0) {
			cli_error("cut", "'%s' is not an event number: events are numbered from 1",
			          colon + 1);
			goto bad;
		}
		p = ana_proc_find(s, tok);
		if (p < 0) {
			cli_error("cut", "no process named '%s' in this session (`encore analyze DIR` "
			          "lists them)", tok);
			goto bad;
		}
		if (idx > ana_nevents(s, (size_t)p)) {
			cli_error("cut", "%s has no event %llu: its events are numbered 1..%llu", tok, (unsigned long long)idx,
			          (unsigned long long)ana_nevents(s, (size_t)p));
			goto bad;
		}
		nr = realloc(refs, (cnt + 1) * sizeof(*refs));
		if (!nr)
			goto bad;
		refs = nr;
		refs[cnt].proc = (size_t)p;
		refs[cnt++].index = idx;
	}
	free(copy);
	if (!cnt) {
		cli_error("cut", "no event given: name at least one PROC:INDEX");
		free(refs);
		return CLI_USAGE;
	}
	*out = refs;
	*n = cnt;
	return 0;
bad:
	free(copy);
	free(refs);
	return CLI_USAGE;
}

static const char *role_name(uint8_t r)
{
	return r == ANA_ROLE_CORE ? "core" : r == ANA_ROLE_INFLUENCE ? "influence" : "other";
}

static void json_cut(const struct ana_session *s, const uint64_t *cut)
{
	printf("{");
	for (size_t p = 0; p < ana_nprocs(s); p++) {
		printf("%s", p ? "," : "");
		cli_json_string(stdout, ana_proc_name(s, p));
		printf(":%llu", (unsigned long long)cut[p]);
	}
	printf("}");
}

static void json_role(const struct ana_session *s, const struct ana_breakpoint *bp, uint8_t r)
{
	int first = 1;

	printf("[");
	for (size_t p = 0; p < ana_nprocs(s); p++) {
		if (bp->role[p] != r)
			continue;
		printf("%s", first ? "" : ",");
		cli_json_string(stdout, ana_proc_name(s, p));
		first = 0;
	}
	printf("]");
}

int cmd_cut(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "after", required_argument, NULL, 'a' },
		{ "before", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ana_session *s = NULL;
	struct ana_breakpoint bp = {0};
	struct ana_ref *refs = NULL;
	struct trace_diag d;
	const char *list = NULL, *dir;
	size_t nrefs = 0;
	int json = 0, before = -1, c, rc, ret = CLI_FAIL;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'a':
		case 'b':
			if (before != -1) {
				cli_error("cut", "give one --after or one --before, not both");
				return CLI_USAGE;
			}
			before = c == 'b';
			list = optarg;
			break;
		case 'h': usage(stdout); return CLI_OK;
		default: return cli_bad_option("cut");
		}
	}
	if (argc - optind != 1 || before == -1) {
		cli_error("cut", "expected a session directory and --after or --before, e.g. "
		          "encore cut DIR --after server:12");
		return CLI_USAGE;
	}
	dir = argv[optind];
	memset(&d, 0, sizeof(d));
	if ((rc = ana_load(dir, &s, &d))) {
		cli_diag("cut", &d);
		return CLI_FAIL;
	}
	if ((ret = parse_refs(s, list, &refs, &nrefs))) {
		/* (a process with fewer events than asked: its trace may be damaged, say so) */
		if (cli_warnings("cut", s))
			ret = CLI_FAIL;
		goto out;
	}
	ret = CLI_FAIL;
	memset(&d, 0, sizeof(d));
	rc = before ? ana_cut_before(s, refs, nrefs, &bp, &d)
	            : ana_cut_after(s, refs, nrefs, &bp, &d);
	if (rc) {
		cli_diag("cut", &d);
		goto out;
	}
	if (json) {
		printf("{\"mode\":\"%s\",\"events\":[", before ? "before" : "after");
		for (size_t i = 0; i < nrefs; i++) {
			printf("%s{", i ? "," : "");
			cli_json_string(stdout, ana_proc_name(s, refs[i].proc));
			printf(":%llu}", (unsigned long long)refs[i].index);
		}
		printf("],\"cut\":");
		json_cut(s, bp.cut);
		printf(",\"core\":");
		json_role(s, &bp, ANA_ROLE_CORE);
		printf(",\"influence\":");
		json_role(s, &bp, ANA_ROLE_INFLUENCE);
		printf(",\"other\":");
		json_role(s, &bp, ANA_ROLE_OTHER);
		printf(",\"moved\":%s", bp.moved ? "true" : "false");
		if (bp.moved) {
			printf(",\"moved_process\":");
			cli_json_string(stdout, ana_proc_name(s, bp.moved_proc));
			printf(",\"moved_from\":%llu", (unsigned long long)bp.moved_from);
		}
		printf(",\"ariadne\":");
		json_cut(s, bp.ariadne);
		printf("}\n");
	} else {
		printf("Stop just %s", before ? "before" : "after");
		for (size_t i = 0; i < nrefs; i++)
			printf("%s %s:%llu", i ? "," : "", ana_proc_name(s, refs[i].proc),
			       (unsigned long long)refs[i].index);
		printf("\n");
		if (bp.moved)
			printf("The request is not a consistent state: %s cannot stop at state %llu "
			       "(an event it needs depends on a named event); moved back to the latest "
			       "consistent state.\n", ana_proc_name(s, bp.moved_proc),
			       (unsigned long long)bp.moved_from);
		printf("    %-20s %-10s %8s%s\n", "PROCESS", "SET", "STATE",
		       before ? "   ARIADNE" : "");
		for (size_t p = 0; p < ana_nprocs(s); p++) {
			printf("    %-20s %-10s %8llu", ana_proc_name(s, p), role_name(bp.role[p]),
			       (unsigned long long)bp.cut[p]);
			if (before)
				printf("  %8llu", (unsigned long long)bp.ariadne[p]);
			printf("\n");
		}
	}
	/* a damaged trace: the answer above, from what could be read, and exit 1 */
	ret = cli_warnings("cut", s) ? CLI_FAIL : CLI_OK;
out:
	ana_breakpoint_free(&bp);
	free(refs);
	ana_free(s);
	return ret;
}
