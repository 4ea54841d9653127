/*
 * cmd_db.c: `encore db DIR -o FILE.db`: write a recorded session as a standalone SQLite
 * database (schemas/trace.sql).  Thin: parses options, calls ana_db_write, reports.
 */
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sqldb.h"
#include <sqlite3.h>

#include "cli.h"
#include "commands.h"
#include "cmd_sql.h"

static void usage(FILE *out)
{
	fprintf(out,
	        "NAME\n"
	        "    encore db - write a session as an SQLite database\n\n"
	        "SYNOPSIS\n"
	        "    encore db [-q] DIR -o FILE.db\n\n"
	        "DESCRIPTION\n"
	        "    Loads the recorded session DIR, matches its channels and messages, and writes\n"
	        "    everything as one SQLite database that any SQLite client can open: processes,\n"
	        "    events, channels, messages, connections, stacks and frames, marks, recorded\n"
	        "    external inputs, message races, and the views edge, message_race,\n"
	        "    external_input and process_summary (schemas/sql.md documents every column).\n"
	        "    The file is built beside FILE.db under a temporary name and renamed only\n"
	        "    when whole, so FILE.db is never left half written; it is created with mode\n"
	        "    0600 (it holds the recorded input bytes).\n\n"
	        "    The causality functions hb(a, b), concurrent(a, b), causal_past(id) and\n"
	        "    causal_future(id) are available in `encore sql FILE.db`, or in the sqlite3\n"
	        "    shell after `.load LIBDIR/encore/encore_sql` (the extension is installed\n"
	        "    beside the preload libraries).\n\n"
	        "OPTIONS\n"
	        "    -o, --output FILE.db  where to write (replaced if it exists)\n"
	        "    -q, --quiet           no progress on stderr\n"
	        "    --trust               load DIR even if another user owns it or others may\n"
	        "                          write into it (refused by default; docs/security.md)\n"
	        "    -h, --help            this text\n\n"
	        "EXIT STATUS\n"
	        "    0 written; 1 the session cannot be loaded or the file cannot be written;\n"
	        "    2 usage error.\n"
	        "    A damaged trace: the answer from what could be read, the damage named on\n"
	        "    stderr, and 1.\n");
	fprintf(out, "\nSee encore-db(1).\n");
}

int cmd_db(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},
		{"quiet", no_argument, NULL, 'q'},
		{"trust", no_argument, NULL, 'T'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct cli_progress pr;
	struct ana_db_progress dp;
	struct trace_diag d;
	const char *out = NULL, *dir;
	int c, quiet = 0, trust = 0, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'q': quiet = 1; break;
		case 'T': trust = 1; break;
		case 'h': usage(stdout); return CLI_OK;
		default: return cli_bad_option("db");
		}
	}
	if (optind + 1 != argc || !out) {
		cli_error("db", "expected a session directory and -o FILE.db (see encore db --help)");
		return CLI_USAGE;
	}
	dir = argv[optind];
	if (cli_session_trusted("db", dir, trust))
		return CLI_FAIL;
	cli_progress_start(&pr, "db", dir, quiet);
	dp.fn = cli_progress_fn;
	dp.ctx = &pr;
	rc = ana_db_write(dir, out, &dp, &d);
	cli_progress_end(&pr);
	if (rc) {
		cli_diag("db", &d);
		return CLI_FAIL;
	}
	{
		/* written from damaged traces: what could be read is in it; say so, and exit 1 */
		sqlite3 *db = NULL;
		int damaged = 0;

		if (sqlite3_open_v2(out, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK)
			damaged = cli_sql_damage(db, "db");
		sqlite3_close(db);
		return damaged ? CLI_FAIL : CLI_OK;
	}
}
