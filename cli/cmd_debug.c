/*
 * cmd_debug.c: `encore debug [--json] DIR`, an interactive global debugger over a replay
 * (Manabe & Imase sections 4 and 5; docs/man/encore-debug.1.scd).
 *
 * The session is replayed under the global debugger (rep.h) with every process halted
 * before its first event; then commands are read, one per line.  Halting predicates are
 * evaluated offline by the analyzer (ana_inf_next: the next consistent cut at or after the
 * current one where a predicate holds) and the replay is driven there with rep_goto, which
 * only moves forward; a state behind the current one (back, restart, goto) is reached by a
 * new execution from the start (section 5.2).  The programs' output goes to files in
 * DIR/.encore-replay/ (rep_options.roots_output) and is shown by `output`, so that it never
 * interleaves with the console's.  With --json every command answers exactly one JSON line
 * (schemas/json.md).  Whatever ends the console (quit, end of input, a signal) ends every
 * replayed process (rep_close).  The commands are in debug_cmds.c and the files debug.h
 * lists.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "debug.h"

#ifdef HAVE_LIBEDIT
#include <editline/readline.h>
#endif

#define LIB_NAME "libencore-replay.so"

volatile sig_atomic_t dbg_interrupted;

static void on_signal(int sig)
{
	dbg_interrupted = sig;
}

static void usage(FILE *out)
{
	fprintf(out,
	        "NAME\n"
	        "    encore debug - an interactive global debugger over a replay\n\n"
	        "SYNOPSIS\n"
	        "    encore debug [--json] [--stall-timeout S] [--trust] DIR\n\n"
	        "DESCRIPTION\n"
	        "    Replays the recorded session DIR as `encore replay` does, with every process\n"
	        "    halted before its first event, and reads commands: one per line from stdin\n"
	        "    (on a terminal with a prompt, line editing and history).  `continue` runs to\n"
	        "    the next consistent global state where a halting predicate holds, `step` and\n"
	        "    `next` advance one process, `back` and `restart` return by re-executing from\n"
	        "    the start.  The programs' own output is collected per root process and shown\n"
	        "    by `output PROC`.  `help` lists the commands.\n\n"
	        "OPTIONS\n"
	        "    --json              no prompt; every command answers one JSON object on one\n"
	        "                        line of stdout (schemas/json.md)\n"
	        "    --stall-timeout S   a move that makes no progress for S seconds stops and says\n"
	        "                        which process waits for what (default 10)\n"
	        "    --no-isolate, --no-pack\n"
	        "                        as for encore replay: let the programs write to this\n"
	        "                        machine's files; ignore DIR/pack (encore-replay(1))\n"
	        "    --trust             replay DIR even if another user owns it or others may\n"
	        "                        write into it (refused by default, as by encore replay;\n"
	        "                        docs/security.md)\n"
	        "    -h, --help          this text\n\n"
	        "ENVIRONMENT\n"
	        "    ENCORE_NO_ISOLATE   1 or auto, as for encore replay (encore-replay(1))\n\n"
	        "EXIT STATUS\n"
	        "    0 after quit or the end of input; 1 the session cannot be replayed; 2 usage;\n"
	        "    128 + the signal for SIGINT, SIGTERM or SIGHUP.  Whatever ends it, every\n"
	        "    replayed process is ended first.\n\n"
	        "EXAMPLES\n"
	        "    encore debug /tmp/ring\n"
	        "    printf 'stop ring.1: received >= 2\\ncontinue\\n' | encore debug --json /tmp/ring\n");
	fprintf(out, "\nSee encore-debug(1).\n");
}

/* One line of input without its newline, NULL at the end of input or on a signal. */
static char *read_line(struct dbg *g)
{
#ifdef HAVE_LIBEDIT
	if (g->tty) {
		char *l = readline("(encore) ");

		if (l && *l)
			add_history(l);
		return l;
	}
#endif
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (g->tty) {
		fputs("(encore) ", stdout);
		fflush(stdout);
	}
	n = getline(&line, &cap, stdin);
	if (n < 0) {
		free(line);
		return NULL;
	}
	if (n > 0 && line[n - 1] == '\n')
		line[n - 1] = '\0';
	return line;
}

/* Parse the options; -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct dbg *g, double *stall, int *trust)
{
	int i;

	*stall = 10;
	int dashdash = 0;

	for (i = 1; i < argc; i++) {
		if (!dashdash && strcmp(argv[i], "--") == 0) {
			dashdash = 1;
		} else if (dashdash) {
			if (g->dir) {
				cli_error("debug", "expected one session directory, e.g. encore debug /tmp/ring");
				return CLI_USAGE;
			}
			g->dir = argv[i];
		} else if (strcmp(argv[i], "--json") == 0) {
			g->json = 1;
		} else if (strcmp(argv[i], "--stall-timeout") == 0 && i + 1 < argc) {
			if (cli_parse_seconds(argv[++i], stall) != 0) {
				cli_error("debug", "--stall-timeout wants a positive number of seconds");
				return CLI_USAGE;
			}
		} else if (strcmp(argv[i], "--no-isolate") == 0) { /* see encore-replay(1) */
			g->ro.no_isolate = 1;
		} else if (strcmp(argv[i], "--no-pack") == 0) {
			g->ro.no_pack = 1;
		} else if (strcmp(argv[i], "--trust") == 0) { /* see encore-replay(1) */
			*trust = 1;
		} else if (cli_is_help(argv[i])) {
			usage(stdout);
			return CLI_OK;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("debug", "unknown option %s (encore debug --help lists them)", argv[i]);
			return CLI_USAGE;
		} else if (!g->dir) {
			g->dir = argv[i];
		} else {
			cli_error("debug", "expected one session directory, e.g. encore debug /tmp/ring");
			return CLI_USAGE;
		}
	}
	if (!g->dir) {
		cli_error("debug", "expected one session directory, e.g. encore debug /tmp/ring");
		return CLI_USAGE;
	}
	return -1;
}

int cmd_debug(int argc, char **argv)
{
	struct dbg g;
	double stall;
	int ret, trust = 0;

	memset(&g, 0, sizeof(g));
	if ((ret = parse_args(argc, argv, &g, &stall, &trust)) >= 0)
		return ret;
	/* it replays the session, with our privileges: only sessions of our own */
	if (cli_session_trusted("debug", g.dir, trust))
		return CLI_FAIL;
#ifndef ENCORE_REPLAY_SO_BUILD
#define ENCORE_REPLAY_SO_BUILD NULL
#endif
	if (cli_find_lib(LIB_NAME, "ENCORE_REPLAY_LIB", ENCORE_REPLAY_SO_BUILD, g.lib,
	                 sizeof(g.lib))) {
		cli_error("debug", "cannot read the replayer library %s; reinstall encore, or set "
		          "ENCORE_REPLAY_LIB to its path", g.lib);
		return CLI_FAIL;
	}
	g.tty = !g.json && isatty(0) && isatty(1);
	if (cli_no_isolate_env("debug", 0, &g.ro.no_isolate) != 0)
		return CLI_USAGE;
	g.ro.lib = g.lib;
	g.ro.stall_ms = (unsigned)(stall * 1000);
	g.ro.interrupted = &dbg_interrupted;
	g.ro.roots_output = 1;
	g.ro.live_terms = 1; /* var. predicates start the online protocol at any halt */
	cli_catch_signals(on_signal);
	if ((ret = dbg_open(&g)) != 0) {
		dbg_free(&g);
		return dbg_interrupted ? 128 + dbg_interrupted : ret;
	}
	while (!g.quit && !dbg_interrupted) {
		char *line = read_line(&g);

		if (!line)
			break;
		dbg_command(&g, line);
		free(line);
	}
	dbg_free(&g); /* ends every replayed process */
	if (dbg_interrupted) {
		cli_error("debug", "interrupted by %s; every replayed process was ended",
		          dbg_interrupted == SIGTERM ? "SIGTERM" :
		          dbg_interrupted == SIGHUP ? "SIGHUP" : "SIGINT");
		return 128 + dbg_interrupted;
	}
	return CLI_OK;
}
