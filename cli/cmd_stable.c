/*
 * cmd_stable.c: `encore stable`: simultaneous events (Spezialetti & Gupta): the distributed
 * control-flow graph of the recorded program, its PRE/POST sets (--sets), the valid
 * recognition points of `LE_1 == LE_2 ...`, and whether each LE_i is stable at the Inf cut
 * of the recorded run.  Thin: parses, calls stability/ (stab.h), prints.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "stab.h"
#include "cli.h"
#include "commands.h"

static void usage(FILE *out)
{
	fprintf(out,
	        "NAME\n"
	        "    encore stable - where a simultaneous event can be recognised and stays true\n\n"
	        "SYNOPSIS\n"
	        "    encore stable [OPTIONS] DIR 'PROC: LOCAL == PROC: LOCAL [== ...]'\n"
	        "    encore stable [OPTIONS] DIR --sets\n\n"
	        "DESCRIPTION\n"
	        "    Builds the distributed control-flow graph (DCFG) of the recorded program:\n"
	        "    nodes are its send and receive call sites (the call-site stacks the recorder\n"
	        "    logged), intraprocess edges the successions of sites each process was seen\n"
	        "    to take, interprocess edges its matched messages.  --also merges more\n"
	        "    recordings of the same program into the graph.  It then computes Reach, Dom,\n"
	        "    PDom, PRE (Definition 3.1) and POST1/POST2 (Definition 3.2) as Spezialetti\n"
	        "    and Gupta's data-flow equations say.\n\n"
	        "    LE_1 == LE_2 == ... is their simultaneous event: every LE_i, a LOCAL condition\n"
	        "    of schemas/predicates.md on its own process, is true at a point p of some\n"
	        "    process P and stays true if P starts a breakpoint there.  The parts are split\n"
	        "    on every ` == ` (spaces on both sides) outside parentheses that is followed by\n"
	        "    a process name and `:`; any other == is a LOCAL comparison.\n\n"
	        "    The command lists the valid recognition points (section 3.2.4): P and the call\n"
	        "    site after which p lies, the class of the event there (monotonic, dependent\n"
	        "    monotonic, generalized dependent monotonic) and, per part, the pre-recognition\n"
	        "    interaction that brings LE_i to P (S_i -> ... -> R_i^P) and the post-recognition\n"
	        "    interaction that keeps P_i waiting until P goes on (S_i^P -> ... -> R_i).  Then,\n"
	        "    for the recording DIR, it computes the Inf cut of LE_1 && LE_2 ... and says for\n"
	        "    each part whether it is stable there: true over every state a breakpoint\n"
	        "    started at the first valid point executed after the cut could halt its\n"
	        "    process in (without such a point: to the end of its trace).\n\n"
	        "    Guarantees are relative to the recordings: a path no recording took is not in\n"
	        "    the DCFG.  schemas/stability.md is the full contract, including where encore\n"
	        "    asks more of a point than the paper does.\n\n"
	        "OPTIONS\n"
	        "    --sets       print every node's Reach, Dom, PDom, PRE, POST1 and POST2 (node ids)\n"
	        "    --also DIR2  merge another recording of the same program into the DCFG\n"
	        "    --by-peer    one node per call site and process at the other end: a helper\n"
	        "                 calling several servers from one site becomes one node per\n"
	        "                 server, so its interactions can be unique (see stability.md)\n"
	        "    --context    one node per call site and the site its process executed just\n"
	        "                 before: an event loop that receives every kind of message at\n"
	        "                 one site gets one receive node per place it is reached from\n"
	        "    --json       one JSON object instead of text\n"
	        "    -h, --help   this text\n\n"
	        "EXAMPLES\n"
	        "    encore stable rec 'rpc: sent == received + 1 == rpc.1: received == 2'\n"
	        "    encore stable rec --sets\n\n"
	        "EXIT STATUS\n"
	        "    0 computed (even when no point is valid); 1 a recording cannot be loaded or\n"
	        "    a part names a process that is not in it; 2 usage error or an event that\n"
	        "    does not parse.\n"
	        "    A damaged trace: the answer from what could be read, the damage named on\n"
	        "    stderr, and 1.\n");
	fprintf(out, "\nSee encore-stable(1).\n");
}

/* The first frames of a site key ("f+0x1a < g+0x40 < main+0x9") without offsets, for
 * reading: "f < g < main".  Points into a static buffer. */
static const char *where(const char *key, const char *function)
{
	static char out[256];
	size_t o = 0;
	int frames = 0;

	for (const char *k = key; *k && o + 1 < sizeof(out) && frames < 2;) {
		if (*k == '|')
			break;
		if (*k == '+' || *k == '@') {
			while (*k && *k != ' ')
				k++;
			continue;
		}
		if (*k == '<')
			frames++;
		if (frames < 2)
			out[o++] = *k;
		k++;
	}
	while (o && out[o - 1] == ' ')
		o--;
	out[o] = 0;
	return o && strcmp(out, "?") ? out : (function[0] ? function : "?");
}

static void label(const struct ana_dcfg *g, size_t n, char *buf, size_t cap)
{
	struct ana_node nd;

	if (n == ANA_NO_NODE || ana_dcfg_node(g, n, &nd)) {
		snprintf(buf, cap, "-");
		return;
	}
	if (nd.kind == ANA_NODE_START || nd.kind == ANA_NODE_STOP)
		snprintf(buf, cap, "#%zu %s of %s", n, ana_node_kind_name(nd.kind),
		         ana_dcfg_proc_name(g, nd.proc));
	else if (strstr(nd.key, " | after ")) {
		/* split by context: say which site it follows */
		char site[256];
		const char *after = strstr(nd.key, " | after ") + 9;

		snprintf(site, sizeof(site), "%s", where(nd.key, nd.function));
		snprintf(buf, cap, "#%zu %s in %s (%s) after %s", n, ana_node_kind_name(nd.kind), site,
		         ana_dcfg_proc_name(g, nd.proc), strcmp(after, "start") ? where(after, "?") :
		         "its start");
	} else {
		snprintf(buf, cap, "#%zu %s in %s (%s)", n, ana_node_kind_name(nd.kind),
		         where(nd.key, nd.function), ana_dcfg_proc_name(g, nd.proc));
	}
}

static void json_node(const struct ana_dcfg *g, size_t n)
{
	struct ana_node nd;

	if (n == ANA_NO_NODE || ana_dcfg_node(g, n, &nd)) {
		printf("null");
		return;
	}
	printf("{\"id\":%zu,\"process\":", n);
	cli_json_string(stdout, ana_dcfg_proc_name(g, nd.proc));
	printf(",\"kind\":\"%s\",\"function\":", ana_node_kind_name(nd.kind));
	cli_json_string(stdout, nd.function);
	printf(",\"site\":");
	cli_json_string(stdout, nd.key);
	printf("}");
}

static void print_set(const struct ana_dcfg *g, enum ana_set set, size_t n, int json)
{
	int first = 1;

	printf(json ? "[" : "{");
	for (size_t m = 0; m < ana_dcfg_nnodes(g); m++)
		if (ana_dcfg_in(g, set, n, m) == 1) {
			printf(json ? "%s%zu" : "%s#%zu", first ? "" : (json ? "," : ", "), m);
			first = 0;
		}
	printf(json ? "]" : "}");
}

static void print_sets(const struct ana_dcfg *g, int json)
{
	size_t nn = ana_dcfg_nnodes(g);

	if (json) {
		printf("{\"processes\":[");
		for (size_t p = 0; p < ana_dcfg_nprocs(g); p++) {
			printf("%s", p ? "," : "");
			cli_json_string(stdout, ana_dcfg_proc_name(g, p));
		}
		printf("],\"nodes\":[");
	} else {
		printf("DCFG: %zu processes, %zu nodes, %zu message edges\n", ana_dcfg_nprocs(g), nn,
		       ana_dcfg_nmsgs(g));
	}
	for (size_t n = 0; n < nn; n++) {
		struct ana_node nd;
		char buf[512];

		ana_dcfg_node(g, n, &nd);
		if (json) {
			printf("%s{\"id\":%zu,\"process\":", n ? "," : "", n);
			cli_json_string(stdout, ana_dcfg_proc_name(g, nd.proc));
			printf(",\"kind\":\"%s\",\"function\":", ana_node_kind_name(nd.kind));
			cli_json_string(stdout, nd.function);
			printf(",\"site\":");
			cli_json_string(stdout, nd.key);
			printf(",\"seen\":%llu,\"external\":%s,\"unreceived\":%s,\"reach\":",
			       (unsigned long long)nd.seen,
			       nd.flags & ANA_NODE_F_EXTERNAL ? "true" : "false",
			       nd.flags & ANA_NODE_F_UNRECEIVED ? "true" : "false");
			print_set(g, ANA_SET_REACH, n, 1);
			printf(",\"dom\":");
			print_set(g, ANA_SET_DOM, n, 1);
			printf(",\"pdom\":");
			print_set(g, ANA_SET_PDOM, n, 1);
			printf(",\"pre\":");
			print_set(g, ANA_SET_PRE, n, 1);
			printf(",\"post1\":");
			print_set(g, ANA_SET_POST1, n, 1);
			printf(",\"post2\":");
			print_set(g, ANA_SET_POST2, n, 1);
			printf("}");
			continue;
		}
		label(g, n, buf, sizeof(buf));
		printf("\n%s", buf);
		if (nd.kind == ANA_NODE_SEND || nd.kind == ANA_NODE_RECV)
			printf("  seen %llu%s%s\n    site  %s", (unsigned long long)nd.seen,
			       nd.flags & ANA_NODE_F_EXTERNAL ? ", reads from outside" : "",
			       nd.flags & ANA_NODE_F_UNRECEIVED ? ", not always received" : "", nd.key);
		printf("\n    Reach ");
		print_set(g, ANA_SET_REACH, n, 0);
		printf("\n    Dom   ");
		print_set(g, ANA_SET_DOM, n, 0);
		printf("\n    PDom  ");
		print_set(g, ANA_SET_PDOM, n, 0);
		if (nd.kind == ANA_NODE_SEND || nd.kind == ANA_NODE_RECV) {
			printf("\n    PRE   ");
			print_set(g, ANA_SET_PRE, n, 0);
			printf("\n    POST1 ");
			print_set(g, ANA_SET_POST1, n, 0);
			printf("\n    POST2 ");
			print_set(g, ANA_SET_POST2, n, 0);
		}
		printf("\n");
	}
	if (json)
		printf("]}\n");
}

/* 1 if a part reads a program variable: only `encore replay` can evaluate those, so the
 * recorded run is not checked (the recognition points do not need the values). */
static int uses_var(const struct ana_se *se)
{
	for (size_t c = 0; c < ana_se_ncomp(se); c++) {
		const struct trace_pred_term *const *terms;
		size_t n = trace_pred_sp_terms(ana_se_sp(se, c), &terms);

		for (size_t i = 0; i < n; i++)
			if (terms[i]->kind == TRACE_TERM_VAR)
				return 1;
	}
	return 0;
}

static void print_points_text(const struct ana_dcfg *g, const struct ana_se *se,
                              const struct ana_recogs *pts)
{
	char a[512], b[512];

	printf("\nvalid recognition points: %zu%s\n", pts->n,
	       pts->bound_hit ? " (search bound hit: there may be more)" : "");
	for (size_t c = 0; !pts->n && c < ana_se_ncomp(se); c++) {
		const char *proc = trace_pred_sp_proc(ana_se_sp(se, c));

		switch (ana_stable_hint(g, se, c)) {
		case ANA_HINT_NO_PRE:
			printf("  %s: none of its sends reaches another process: nobody can learn LE_%zu\n",
			       proc, c + 1);
			break;
		case ANA_HINT_NO_WAIT:
			printf("  %s: LE_%zu is not monotonic and %s never waits for a single sender after "
			       "sending: nothing can hold it (if it receives every message at one site, "
			       "try --context)\n", proc, c + 1, proc);
			break;
		case ANA_HINT_CHANGES:
			printf("  %s: it waits after sending, but what LE_%zu reads changes on the way\n",
			       proc, c + 1);
			break;
		default:
			break;
		}
	}
	for (size_t i = 0; i < pts->n; i++) {
		const struct ana_recog *r = &pts->v[i];

		label(g, r->node, a, sizeof(a));
		printf("  %zu. %s, just after %s: %s\n", i + 1, ana_dcfg_proc_name(g, r->proc), a,
		       ana_se_class_name(r->cls));
		for (size_t c = 0; c < ana_se_ncomp(se); c++) {
			const struct ana_se_witness *w = &r->w[c];
			const char *proc = trace_pred_sp_proc(ana_se_sp(se, c));

			if (w->cls == ANA_SE_LOCAL) {
				printf("       %-12s local: P itself halts at p\n", proc);
				continue;
			}
			label(g, w->pre_send, a, sizeof(a));
			label(g, w->pre_recv, b, sizeof(b));
			printf("       %-12s %s; pre  %s -> %s\n", proc, ana_se_class_name(w->cls), a, b);
			if (w->post_send == ANA_NO_NODE)
				continue;
			label(g, w->post_send, a, sizeof(a));
			label(g, w->post_recv, b, sizeof(b));
			printf("       %-12s post %s -> %s (the receive waits for the send%s%s)\n", "",
			       a, b, w->post1 ? "; the send guarantees the receive" : "",
			       w->pdom_p ? "; P always reaches the send after p" : "");
		}
	}
}

static void print_run_text(const struct ana_session *s, const struct ana_dcfg *g,
                           const struct ana_se *se, const struct ana_recogs *pts,
                           const struct ana_stable_run *run, const char *dir)
{
	printf("\nrecorded run %s:\n", dir);
	if (uses_var(se)) {
		printf("  not checked: a part reads var.NAME, which only the live processes have "
		       "(use `encore replay DIR --stop` with the conjunction)\n");
		return;
	}
	if (!run->holds) {
		printf("  LE_1 && LE_2 ... never holds in this recording.\n");
		return;
	}
	printf("  Inf cut of the conjunction:");
	for (size_t p = 0; p < run->nprocs; p++)
		printf(" %s=%llu", ana_proc_name(s, p), (unsigned long long)run->cut[p]);
	printf("\n");
	if (run->recognized) {
		char a[512];

		label(g, pts->v[run->recog].node, a, sizeof(a));
		printf("  recognised at point %zu: %s event %llu (%s)\n", run->recog + 1,
		       ana_proc_name(s, run->proc), (unsigned long long)run->event, a);
	} else {
		printf("  no valid recognition point was executed after the cut: each part must "
		       "stay true to the end of its trace\n");
	}
	for (size_t c = 0; c < run->ncomp; c++) {
		const struct ana_stable_comp *sc = &run->comp[c];

		printf("  %-12s state %llu, true through state %llu; must hold over states "
		       "%llu..%llu: %s\n", trace_pred_sp_proc(ana_se_sp(se, c)),
		       (unsigned long long)sc->state, (unsigned long long)sc->true_through,
		       (unsigned long long)sc->lo, (unsigned long long)sc->hi,
		       sc->stable ? "stable" : "NOT stable");
	}
}

static void print_json(const struct ana_session *s, const struct ana_dcfg *g,
                       const struct ana_se *se, const char *text, const struct ana_recogs *pts,
                       const struct ana_stable_run *run, size_t nrec)
{
	printf("{\"event\":");
	cli_json_string(stdout, text);
	printf(",\"components\":[");
	for (size_t c = 0; c < ana_se_ncomp(se); c++) {
		printf("%s{\"text\":", c ? "," : "");
		cli_json_string(stdout, ana_se_text(se, c));
		printf(",\"process\":");
		cli_json_string(stdout, trace_pred_sp_proc(ana_se_sp(se, c)));
		printf(",\"monotonic\":%s}", ana_se_monotonic(se, c) ? "true" : "false");
	}
	printf("],\"dcfg\":{\"processes\":%zu,\"nodes\":%zu,\"messages\":%zu,\"recordings\":%zu},"
	       "\"points\":[", ana_dcfg_nprocs(g), ana_dcfg_nnodes(g), ana_dcfg_nmsgs(g), nrec);
	for (size_t i = 0; i < pts->n; i++) {
		const struct ana_recog *r = &pts->v[i];

		printf("%s{\"process\":", i ? "," : "");
		cli_json_string(stdout, ana_dcfg_proc_name(g, r->proc));
		printf(",\"after\":");
		json_node(g, r->node);
		printf(",\"class\":\"%s\",\"components\":[", ana_se_class_name(r->cls));
		for (size_t c = 0; c < ana_se_ncomp(se); c++) {
			const struct ana_se_witness *w = &r->w[c];

			printf("%s{\"class\":\"%s\",\"pre\":", c ? "," : "", ana_se_class_name(w->cls));
			if (w->pre_send == ANA_NO_NODE) {
				printf("null");
			} else {
				printf("{\"send\":");
				json_node(g, w->pre_send);
				printf(",\"recv\":");
				json_node(g, w->pre_recv);
				printf("}");
			}
			printf(",\"post\":");
			if (w->post_send == ANA_NO_NODE) {
				printf("null");
			} else {
				printf("{\"send\":");
				json_node(g, w->post_send);
				printf(",\"recv\":");
				json_node(g, w->post_recv);
				printf(",\"send_guarantees_recv\":%s,\"send_postdominates_p\":%s}",
				       w->post1 ? "true" : "false", w->pdom_p ? "true" : "false");
			}
			printf("}");
		}
		printf("]}");
	}
	if (uses_var(se)) {
		printf("],\"bound_hit\":%s,\"run\":null}\n", pts->bound_hit ? "true" : "false");
		return;
	}
	printf("],\"bound_hit\":%s,\"run\":{\"holds\":%s", pts->bound_hit ? "true" : "false",
	       run->holds ? "true" : "false");
	if (run->holds) {
		printf(",\"cut\":{");
		for (size_t p = 0; p < run->nprocs; p++) {
			printf("%s", p ? "," : "");
			cli_json_string(stdout, ana_proc_name(s, p));
			printf(":%llu", (unsigned long long)run->cut[p]);
		}
		printf("},\"recognized\":");
		if (run->recognized) {
			printf("{\"point\":%zu,\"process\":", run->recog);
			cli_json_string(stdout, ana_proc_name(s, run->proc));
			printf(",\"event\":%llu}", (unsigned long long)run->event);
		} else {
			printf("null");
		}
		printf(",\"components\":[");
		for (size_t c = 0; c < run->ncomp; c++) {
			const struct ana_stable_comp *sc = &run->comp[c];

			printf("%s{\"process\":", c ? "," : "");
			cli_json_string(stdout, ana_proc_name(s, sc->proc));
			printf(",\"state\":%llu,\"true_through\":%llu,\"lo\":%llu,\"hi\":%llu,"
			       "\"stable\":%s}", (unsigned long long)sc->state,
			       (unsigned long long)sc->true_through, (unsigned long long)sc->lo,
			       (unsigned long long)sc->hi, sc->stable ? "true" : "false");
		}
		printf("]");
	}
	printf("}}\n");
}

/* Load one recording and merge it into g. */
/* A recording added had a damaged trace: the answer is printed, and the exit status is 1. */
static int stable_damaged;

static int add_recording(struct ana_dcfg *g, const char *dir, struct ana_session **out)
{
	struct ana_session *s = NULL;
	struct trace_diag d;

	memset(&d, 0, sizeof(d));
	if (ana_load(dir, &s, &d)) {
		cli_diag("stable", &d);
		return CLI_FAIL;
	}
	memset(&d, 0, sizeof(d));
	if (ana_dcfg_add_session(g, s, dir, &d)) {
		cli_diag("stable", &d);
		ana_free(s);
		return CLI_FAIL;
	}
	for (size_t i = 0; i < ana_nwarnings(s); i++) {
		fprintf(stderr, "encore stable: warning: %s: %s\n", dir, ana_warning(s, i));
		stable_damaged |= cli_is_damage(ana_warning(s, i));
	}
	if (out)
		*out = s;
	else
		ana_free(s);
	return CLI_OK;
}

int cmd_stable(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "sets", no_argument, NULL, 's' },
		{ "also", required_argument, NULL, 'a' },
		{ "by-peer", no_argument, NULL, 'p' },
		{ "context", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ana_session *s = NULL;
	struct ana_dcfg *g = NULL;
	struct ana_se *se = NULL;
	struct ana_recogs pts = {0};
	struct ana_stable_run run = {0};
	struct trace_diag d;
	const char **also = NULL;
	const char *dir, *text = NULL;
	size_t nalso = 0;
	int json = 0, sets = 0, by_peer = 0, by_context = 0, c, ret = CLI_FAIL;

	if (!(also = calloc((size_t)argc + 1, sizeof(*also)))) {
		cli_error("stable", "out of memory");
		return CLI_FAIL;
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 's': sets = 1; break;
		case 'a': also[nalso++] = optarg; break;
		case 'p': by_peer = 1; break;
		case 'c': by_context = 1; break;
		case 'h': usage(stdout); free(also); return CLI_OK;
		default: free(also); return cli_bad_option("stable");
		}
	}
	if (argc - optind != (sets ? 1 : 2)) {
		cli_error("stable", sets ? "--sets takes one session directory: encore stable DIR "
		          "--sets" : "expected a session directory and a simultaneous event, e.g. "
		          "encore stable DIR 'a: sent == received + 1 == b: received == 2' (or DIR "
		          "--sets)");
		free(also);
		return CLI_USAGE;
	}
	dir = argv[optind];
	if (!sets) {
		text = argv[optind + 1];
		memset(&d, 0, sizeof(d));
		if (ana_se_parse(text, &se, &d)) {
			size_t col = (size_t)d.offset;

			cli_error("stable", "bad simultaneous event: %s", d.msg[0] ? d.msg :
			          trace_strerror(d.code));
			fprintf(stderr, "    %s\n    %*s^\n", text,
			        (int)(col < strlen(text) ? col : strlen(text)), "");
			fprintf(stderr, "    (LOCAL grammar: schemas/predicates.md; parts joined by "
			        "` == ` before `PROC:`)\n");
			free(also);
			return CLI_USAGE;
		}
	}
	if (ana_dcfg_new(&g) || ana_dcfg_split_by_peer(g, by_peer) ||
	    ana_dcfg_split_by_context(g, by_context)) {
		cli_error("stable", "out of memory");
		goto out;
	}
	/* the other recordings first: the last one added stays mapped for the run check */
	for (size_t i = 0; i < nalso; i++)
		if (add_recording(g, also[i], NULL))
			goto out;
	if (add_recording(g, dir, &s))
		goto out;
	memset(&d, 0, sizeof(d));
	if (ana_dcfg_solve(g, &d)) {
		cli_diag("stable", &d);
		goto out;
	}
	if (sets) {
		print_sets(g, json);
		ret = CLI_OK;
		goto out;
	}
	memset(&d, 0, sizeof(d));
	if (ana_stable_points(g, se, 0, &pts, &d)) {
		cli_diag("stable", &d);
		goto out;
	}
	memset(&d, 0, sizeof(d));
	if (!uses_var(se) && ana_stable_run(s, g, se, &pts, &run, &d)) {
		cli_diag("stable", &d);
		goto out;
	}
	if (json) {
		print_json(s, g, se, text, &pts, &run, nalso + 1);
	} else {
		printf("simultaneous event %s\n", text);
		for (size_t i = 0; i < ana_se_ncomp(se); i++)
			printf("  LE_%zu  %-40s %s\n", i + 1, ana_se_text(se, i),
			       ana_se_monotonic(se, i) ? "monotonic" : "not monotonic");
		printf("DCFG: %zu processes, %zu nodes, %zu message edges, from %zu recording%s\n",
		       ana_dcfg_nprocs(g), ana_dcfg_nnodes(g), ana_dcfg_nmsgs(g), nalso + 1,
		       nalso ? "s" : "");
		print_points_text(g, se, &pts);
		print_run_text(s, g, se, &pts, &run, dir);
	}
	if (pts.bound_hit)
		cli_error("stable", "the search bound was hit: some recognition points may be "
		          "missing");
	ret = CLI_OK;
out:
	ana_stable_run_free(&run);
	ana_recogs_free(&pts);
	ana_se_free(se);
	ana_dcfg_free(g);
	ana_free(s);
	free(also);
	return ret == CLI_OK && stable_damaged ? CLI_FAIL : ret;
}
