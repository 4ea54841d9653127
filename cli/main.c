/*
 * main.c: the `encore` command.  It only dispatches: each subcommand lives in its own
 * cmd_<name>.c and parses its own options.
 */
#include <string.h>

#include "cli.h"
#include "commands.h"

static const struct cli_command commands[] = {
	{ "record",  "run a program and record every process it starts", cmd_record },
	{ "replay",  "re-execute a recorded session and halt at a global state", cmd_replay },
	{ "debug",   "an interactive global debugger over a replay", cmd_debug },
	{ "pack",    "add the files a replay elsewhere needs to a session", cmd_pack },
	{ "dump",    "print the processes and events of a session or trace file", cmd_dump },
	{ "check",   "verify trace files: headers, chunk checksums, damage", cmd_check },
	{ "analyze", "summarise a session: channels, messages, races", cmd_analyze },
	{ "inf",     "compute Inf(P), the first consistent cut where P holds", cmd_inf },
	{ "cut",     "consistent cuts just after or just before events", cmd_cut },
	{ "sql",     "query a session with SQL (SQLite), causality included", cmd_sql },
	{ "db",      "write a session as a standalone SQLite database", cmd_db },
	{ "stable",  "PRE/POST sets and valid recognition points (Spezialetti & Gupta)", cmd_stable },
	{ "show",    "draw a space-time diagram as SVG", cmd_show },
	{ "export",  "export a session for Perfetto/Chrome or ShiViz", cmd_export },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
	size_t i;

	fprintf(out,
	        "NAME\n"
	        "    encore - record and replay distributed programs, halt at global states\n\n"
	        "SYNOPSIS\n"
	        "    encore COMMAND [OPTIONS] [ARGS]\n"
	        "    encore COMMAND --help\n"
	        "    encore --version\n\n"
	        "COMMANDS\n");
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(out, "    %-8s  %s\n", commands[i].name, commands[i].summary);
	fprintf(out,
	        "\nOPTIONS\n"
	        "    A command's options may come before or after its arguments, and -- ends\n"
	        "    them (record is the exception: its options end where CMD starts).\n"
	        "    --version   print \"encore VERSION\" (also: encore version)\n"
	        "    -h, --help  this text (encore help COMMAND: that command's)\n"
	        "\nEXIT STATUS\n"
	        "    0 success, 1 failure (bad trace, divergence...), 2 usage error.\n\n"
	        "SEE ALSO\n"
	        "    encore-COMMAND(1) for each command (also `encore COMMAND --help`),\n"
	        "    schemas/trace-format.md, schemas/predicates.md, schemas/sql.md,\n"
	        "    schemas/stability.md (installed under share/doc/encore)\n\n"
	        "See encore(1).\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return CLI_USAGE;
	}
	if (strcmp(argv[1], "help") == 0 && argc == 3) {
		/* `encore help inf` is `encore inf --help`, as in git */
		char *help[] = { argv[2], "--help", NULL };

		for (i = 0; i < NCOMMANDS; i++)
			if (strcmp(argv[2], commands[i].name) == 0)
				return commands[i].run(2, help);
		fprintf(stderr, "encore: no command '%s'; run 'encore --help' for the list\n", argv[2]);
		return CLI_USAGE;
	}
	if (cli_is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return CLI_OK;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("encore %s\n", ENCORE_VERSION);
		return CLI_OK;
	}
	for (i = 0; i < NCOMMANDS; i++)
		if (strcmp(argv[1], commands[i].name) == 0) {
			/* getopt names the program in its messages: "encore CMD: unrecognized ..." */
			static char prog[64];

			snprintf(prog, sizeof(prog), "encore %s", commands[i].name);
			argv[1] = prog;
			return commands[i].run(argc - 1, argv + 1);
		}
	fprintf(stderr, "encore: unknown command '%s'; run 'encore --help' for the list\n", argv[1]);
	return CLI_USAGE;
}
