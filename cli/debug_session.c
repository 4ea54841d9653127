/*
 * debug_session.c: the replay behind `encore debug` (cmd_debug.c): opening it halted at
 * the start, moving to a cut (forward in the same execution with rep_goto, backward by a new
 * execution from the start, Manabe & Imase section 5.2), running the online protocol from
 * the current halt for predicates on the program's memory (var.), and printing the global
 * state as
 * `encore replay` does (text, or the members of one JSON object, schemas/json.md).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cli.h"
#include "debug.h"

int dbg_proc(struct dbg *g, const char *name)
{
	for (size_t i = 0; i < g->n; i++)
		if (strcmp(rep_proc_name(g->r, i), name) == 0)
			return (int)i;
	return -1;
}

void dbg_to_ana(struct dbg *g, const uint64_t *cut, uint64_t *acut)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->amap[i] >= 0)
			acut[g->amap[i]] = cut[i];
}

void dbg_from_ana(struct dbg *g, const uint64_t *acut, uint64_t *cut)
{
	for (size_t i = 0; i < g->n; i++)
		cut[i] = g->amap[i] >= 0 ? acut[g->amap[i]] : 0;
}

/* A process that ended before the end of its trace (killed while halted, a crash): 1 and
 * err says which and how; the GD counts it as ended, the replay cannot go on. */
static int ended_early(struct dbg *g, char *err, size_t cap)
{
	for (size_t i = 0; i < g->n; i++) {
		struct rep_proc_info in;

		struct ana_event last;

		rep_proc_info(g->r, i, &in);
		if (in.state != REP_P_EXITED || in.index >= in.nevents)
			continue;
		/* a trace that ends in death by a signal: that event is the death itself */
		if (in.index + 1 == in.nevents && g->amap[i] >= 0 &&
		    ana_event_get(rep_analysis(g->r), (size_t)g->amap[i], in.nevents, &last) == 0 &&
		    last.kind == TRACE_EV_SIGNAL)
			continue;
		if (in.wait_status >= 0 && WIFSIGNALED(in.wait_status))
			snprintf(err, cap, "process %s ended at state %llu of %llu, killed by signal %d "
			         "(%s)", in.name, (unsigned long long)in.index,
			         (unsigned long long)in.nevents, WTERMSIG(in.wait_status),
			         strsignal(WTERMSIG(in.wait_status)));
		else
			snprintf(err, cap, "process %s ended at state %llu of %llu, before the end of "
			         "its trace", in.name, (unsigned long long)in.index,
			         (unsigned long long)in.nevents);
		return 1;
	}
	return 0;
}

/* Run to the targets set.  0 when halted or at the end, -1 with err otherwise (the
 * processes are ended then). */
static int run(struct dbg *g, char *err, size_t cap)
{
	int rc = rep_run(g->r), at_end = 1;

	g->live = 0;
	if (rc == REP_HALTED) {
		rep_current_cut(g->r, g->cur);
		for (size_t i = 0; i < g->n; i++)
			if (g->cur[i] < rep_proc_nevents(g->r, i))
				at_end = 0;
		/* every process at its end: let them end (exit flushes their output) */
		if (at_end && rep_continue(g->r) == 0)
			rc = rep_run(g->r);
	}
	if ((rc == REP_HALTED || rc == REP_END) && ended_early(g, err, cap))
		rc = REP_FAILED;
	switch (rc) {
	case REP_FAILED:
		break;
	case REP_HALTED:
		g->live = 1;
		/* fall through */
	case REP_END:
		rep_current_cut(g->r, g->cur);
		return 0;
	case REP_INTERRUPTED:
		snprintf(err, cap, "interrupted");
		break;
	default:
		snprintf(err, cap, "%s", rc < 0 ? trace_strerror(rc) : rep_message(g->r));
	}
	g->failed = 1;
	rep_kill(g->r);
	rep_current_cut(g->r, g->cur);
	return -1;
}

/* A new execution halted at cut[] (NULL: the start).  0, or -1 with err. */
static int execute(struct dbg *g, const uint64_t *cut, char *err, size_t cap)
{
	struct trace_diag d;

	g->live = 0;
	g->failed = 0;
	memset(&d, 0, sizeof(d));
	if (g->fresh) { /* opened and not started yet: the first execution */
		g->fresh = 0;
	} else if (rep_close(g->r), g->r = NULL, rep_open(g->dir, &g->ro, &g->r, &d) != 0) {
		snprintf(err, cap, "%s%s%s", d.file[0] ? d.file : "", d.file[0] ? ": " : "", d.msg);
		return -1;
	}
	for (size_t i = 0; i < rep_nprocs(g->r); i++)
		rep_set_target(g->r, i, cut ? cut[i] : 0);
	for (size_t i = 0; i < g->ntr; i++) /* live trace points on the new execution too */
		if (g->trs[i].live &&
		    rep_trace_add(g->r, g->trs[i].id, rep_proc_name(g->r, g->trs[i].proc),
		                  g->trs[i].cond, g->trs[i].etext, &d) != 0) {
			snprintf(err, cap, "trace %d: %s", g->trs[i].id, d.msg);
			return -1;
		}
	memset(&d, 0, sizeof(d));
	if (rep_start(g->r, &d) != 0) {
		snprintf(err, cap, "%s", d.msg);
		rep_kill(g->r);
		return -1;
	}
	return run(g, err, cap);
}

int dbg_open(struct dbg *g)
{
	struct trace_diag d;
	struct ana_session *a;
	char err[8192];

	memset(&d, 0, sizeof(d));
	if (rep_open(g->dir, &g->ro, &g->r, &d) != 0) {
		cli_diag("debug", &d);
		cli_error("debug", "refusing to replay %s", g->dir);
		return CLI_FAIL;
	}
	g->n = rep_nprocs(g->r);
	a = rep_analysis(g->r);
	g->amap = calloc(g->n ? g->n : 1, sizeof(*g->amap));
	g->cur = calloc(g->n ? g->n : 1, sizeof(*g->cur));
	g->hist = calloc((g->n ? g->n : 1) * DBG_MAX_HIST, sizeof(*g->hist));
	if (!g->amap || !g->cur || !g->hist) {
		cli_error("debug", "out of memory");
		return CLI_FAIL;
	}
	for (size_t i = 0; i < g->n; i++)
		g->amap[i] = ana_proc_find(a, rep_proc_name(g->r, i));
	g->fresh = 1;
	if (execute(g, NULL, err, sizeof(err)) != 0) {
		cli_error("debug", "%s", err);
		return CLI_FAIL;
	}
	if (rep_unisolated(g->r)) { /* ENCORE_NO_ISOLATE=auto: decided once for every execution */
		fprintf(stderr, "encore debug: warning: not isolated, the replayed programs write to "
		        "this machine's files (%s; ENCORE_NO_ISOLATE=auto)\n", rep_unisolated(g->r));
		g->ro.no_isolate = 1;
	}
	return 0;
}

void dbg_free(struct dbg *g)
{
	rep_close(g->r);
	g->r = NULL;
	for (size_t i = 0; i < g->nbp; i++) {
		free(g->bps[i].text);
		trace_pred_free(g->bps[i].pred);
	}
	for (size_t i = 0; i < g->ntr; i++) {
		free(g->trs[i].cond);
		free(g->trs[i].expr);
		free(g->trs[i].arg);
		free(g->trs[i].etext);
		free(g->trs[i].bits);
		trace_pred_free(g->trs[i].pred);
	}
	free(g->amap);
	free(g->cur);
	free(g->hist);
}

/* Remember the state left (for back), the oldest forgotten when full. */
static void remember(struct dbg *g)
{
	if (g->moving_back)
		return;
	if (g->nhist == DBG_MAX_HIST) {
		memmove(g->hist, g->hist + g->n, (DBG_MAX_HIST - 1) * g->n * sizeof(*g->hist));
		g->nhist--;
	}
	memcpy(g->hist + g->nhist++ * g->n, g->cur, g->n * sizeof(*g->cur));
}

int dbg_online(struct dbg *g, const char *text, int strict, char *err, size_t cap)
{
	struct trace_diag d;
	int rc;

	memset(&d, 0, sizeof(d));
	if (rep_online_here(g->r, text, strict, &d) != 0) {
		snprintf(err, cap, "%s", d.msg);
		return -2;
	}
	if (!strict)
		remember(g);
	rc = rep_run(g->r);
	if ((rc == REP_HALTED || (rc == REP_FAILED && rep_never_held(g->r))) &&
	    !ended_early(g, err, cap)) {
		int at_end = 1;

		rep_current_cut(g->r, g->cur);
		for (size_t i = 0; i < g->n; i++)
			if (g->cur[i] < rep_proc_nevents(g->r, i))
				at_end = 0;
		g->live = !at_end;
		if (at_end && rep_continue(g->r) == 0) /* let them end, as run() does */
			rep_run(g->r);
		return rc == REP_HALTED;
	}
	if (rc == REP_INTERRUPTED)
		snprintf(err, cap, "interrupted");
	else if (rc != REP_HALTED && rc != REP_FAILED)
		snprintf(err, cap, "%s", rc < 0 ? trace_strerror(rc) : rep_message(g->r));
	else if (rc == REP_FAILED)
		snprintf(err, cap, "%s", rep_message(g->r));
	g->live = 0;
	g->failed = 1;
	rep_kill(g->r);
	rep_current_cut(g->r, g->cur);
	return -1;
}

int dbg_move(struct dbg *g, const uint64_t *cut, char *err, size_t cap)
{
	struct trace_diag d;
	int forward = g->live, same = 1;

	for (size_t i = 0; i < g->n; i++) {
		if (cut[i] < g->cur[i])
			forward = 0;
		if (cut[i] != g->cur[i])
			same = 0;
	}
	if (same && (g->live || !g->failed)) /* there already (at the end: nothing runs) */
		return 0;
	remember(g);
	if (forward) {
		memset(&d, 0, sizeof(d));
		if (rep_goto(g->r, cut, &d) != 0) {
			snprintf(err, cap, "%s", d.msg);
			return -1;
		}
		return run(g, err, cap);
	}
	return execute(g, cut, err, cap);
}

void dbg_print_state_text(struct dbg *g)
{
	printf("Global state (state k = after its event k):\n");
	for (size_t i = 0; i < g->n; i++) {
		struct rep_proc_info in;

		rep_proc_info(g->r, i, &in);
		printf("  %-16s pid %-7ld state %llu of %llu, %s\n", in.name, in.pid,
		       (unsigned long long)g->cur[i], (unsigned long long)in.nevents,
		       cli_pstate_name(in.state));
		printf("      last: %s\n      next: %s\n", in.last, in.next);
	}
}

void dbg_print_state_json(struct dbg *g)
{
	printf("\"cuts\":[{");
	for (size_t i = 0; i < g->n; i++) {
		printf("%s", i ? "," : "");
		cli_json_string(stdout, rep_proc_name(g->r, i));
		printf(":%llu", (unsigned long long)g->cur[i]);
	}
	printf("}],\"processes\":[");
	for (size_t i = 0; i < g->n; i++) {
		struct rep_proc_info in;

		rep_proc_info(g->r, i, &in);
		printf("%s{\"name\":", i ? "," : "");
		cli_json_string(stdout, in.name);
		printf(",\"pid\":%ld,\"state\":%llu,\"events\":%llu,\"status\":\"%s\",\"last\":",
		       in.pid, (unsigned long long)g->cur[i], (unsigned long long)in.nevents,
		       cli_pstate_name(in.state));
		cli_json_string(stdout, in.last);
		printf(",\"next\":");
		cli_json_string(stdout, in.next);
		printf("}");
	}
	printf("]");
}
