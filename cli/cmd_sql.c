/*
 * cmd_sql.c: `encore sql DIR ['QUERY']`: answer SQL over a recorded session (schemas/sql.md).
 * The session is loaded once into a database cached inside DIR (rebuilt when its traces
 * change) and opened read-only; results are printed as aligned columns, CSV or JSON.  With
 * no query it reads statements from stdin (an interactive shell on a terminal).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "sqldb.h"
#include "cli.h"
#include "cmd_sql.h"
#include "commands.h"

/* ---------------------------------------------------------------------------------------
 * Progress (shared with cmd_db.c).
 */
static char alarm_msg[512];
static size_t alarm_len;

static void on_alarm(int sig)
{
	(void)sig;
	if (write(STDERR_FILENO, alarm_msg, alarm_len) < 0) {
		/* nothing to do: the message is only a courtesy */
	}
}

void cli_progress_start(struct cli_progress *p, const char *cmd, const char *dir, int quiet)
{
	memset(p, 0, sizeof(*p));
	p->cmd = cmd;
	p->quiet = quiet;
	p->tty = isatty(STDERR_FILENO);
	p->last_pct = -1;
	clock_gettime(CLOCK_MONOTONIC, &p->t0);
	if (quiet)
		return;
	snprintf(alarm_msg, sizeof(alarm_msg), "encore %s: loading %s into SQLite...\n", cmd, dir);
	alarm_len = strlen(alarm_msg);
	signal(SIGALRM, on_alarm);
	alarm(1);
}

void cli_progress_fn(void *ctx, uint64_t done, uint64_t total)
{
	struct cli_progress *p = ctx;
	struct timespec t;
	int pct;

	if (p->quiet || !total)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t);
	if ((t.tv_sec - p->t0.tv_sec) * 1000000000L + (t.tv_nsec - p->t0.tv_nsec) < 1000000000L)
		return;
	pct = (int)(done * 100 / total);
	if (p->tty) {
		fprintf(stderr, "\rencore %s: %llu of %llu events written (%d%%)", p->cmd,
		        (unsigned long long)done, (unsigned long long)total, pct);
		p->shown = 1;
	} else if (pct / 25 != p->last_pct / 25) {
		fprintf(stderr, "encore %s: %llu of %llu events written (%d%%)\n", p->cmd,
		        (unsigned long long)done, (unsigned long long)total, pct);
	}
	p->last_pct = pct;
}

void cli_progress_end(struct cli_progress *p)
{
	if (!p->quiet) {
		alarm(0);
		signal(SIGALRM, SIG_DFL);
	}
	if (p->shown)
		fputc('\n', stderr);
	p->shown = 0;
}

/* ---------------------------------------------------------------------------------------
 * Output.
 */
enum mode { MODE_TABLE, MODE_CSV, MODE_JSON };

static void usage(FILE *out)
{
	fprintf(out,
	        "NAME\n"
	        "    encore sql - query a recorded session with SQL\n\n"
	        "SYNOPSIS\n"
	        "    encore sql [--csv | --json] [--rebuild] DIR ['QUERY']\n"
	        "    encore sql [--csv | --json] FILE.db ['QUERY']\n\n"
	        "DESCRIPTION\n"
	        "    Loads the session DIR into SQLite (schemas/trace.sql, documented with a\n"
	        "    cookbook in schemas/sql.md) and runs QUERY, one or more statements separated\n"
	        "    by ';'.  The database is cached in DIR/.encore.db and rebuilt when the traces\n"
	        "    change (their names, sizes or modification times); when DIR is not writable it\n"
	        "    is built in memory.  It is always opened read-only: a query never changes\n"
	        "    the trace.  The cache is created with mode 0600 (it holds the recorded\n"
	        "    input bytes) without following symbolic links.  FILE.db, a database\n"
	        "    written by `encore db`, is queried as is.\n\n"
	        "    Tables: process, event, channel, message, connection, dependency, stack,\n"
	        "    frame, mark, input, race, warning, meta, site_node, pre_set, post_set.\n"
	        "    Views: edge, message_race, external_input, process_summary.\n"
	        "    Causality (event ids as in event.id):\n"
	        "      hb(a, b)            1 if event a happened before event b, else 0\n"
	        "      concurrent(a, b)    1 if neither happened before the other (a != b)\n"
	        "      causal_past(id)     table (event, proc, idx) of the events before id\n"
	        "      causal_future(id)   table (event, proc, idx) of the events after id\n\n"
	        "    With no QUERY, statements are read from standard input (with a prompt on a\n"
	        "    terminal) and run when complete; .tables, .schema [NAME], .mode\n"
	        "    table|csv|json, .help and .quit are understood there.\n\n"
	        "OPTIONS\n"
	        "    --csv       comma-separated values with a header row (RFC 4180 quoting)\n"
	        "    --json      one JSON array of objects per statement\n"
	        "    --rebuild   rebuild the cached database even if it looks current\n"
	        "    --trust     query DIR even if another user owns it or others may write\n"
	        "                into it (refused by default: its cache could be anyone's\n"
	        "                database; docs/security.md).  Such a session is built in\n"
	        "                memory, never cached in DIR\n"
	        "    -q, --quiet no progress on stderr while loading\n"
	        "    -h, --help  this text\n\n"
	        "    The default output is aligned columns with a header; numbers are right\n"
	        "    aligned, NULL is shown as NULL, blobs as x'hex'.\n\n"
	        "EXAMPLES\n"
	        "    encore sql rec 'SELECT * FROM process_summary'\n"
	        "    encore sql --csv rec 'SELECT * FROM message_race'\n"
	        "    encore sql rec \"SELECT count(*) FROM causal_past(42)\"\n\n"
	        "EXIT STATUS\n"
	        "    0 every statement ran; 1 the session cannot be loaded, a statement failed\n"
	        "    (SQLite's message is printed), or a trace is damaged (the statements run on\n"
	        "    what could be read; the damage is named on stderr first); 2 usage error.\n");
	fprintf(out, "\nSee encore-sql(1).\n");
}

struct cell {
	char *text;     /* NULL for SQL NULL */
	int type;
};

static char *hex(const unsigned char *b, int n, int quoted)
{
	char *s = malloc((size_t)n * 2 + 4), *o = s;

	if (!s)
		return NULL;
	if (quoted) {
		*o++ = 'x';
		*o++ = '\'';
	}
	for (int i = 0; i < n; i++)
		o += sprintf(o, "%02x", b[i]);
	if (quoted)
		*o++ = '\'';
	*o = '\0';
	return s;
}

static char *cell_text(sqlite3_stmt *st, int i, int type, enum mode mode)
{
	if (type == SQLITE_NULL)
		return NULL;
	if (type == SQLITE_BLOB)
		return hex(sqlite3_column_blob(st, i), sqlite3_column_bytes(st, i),
		           mode == MODE_TABLE);
	return strdup((const char *)sqlite3_column_text(st, i));
}

static void csv_field(const char *s)
{
	if (!s)
		return;
	if (strpbrk(s, ",\"\r\n")) {
		putchar('"');
		for (; *s; s++) {
			if (*s == '"')
				putchar('"');
			putchar(*s);
		}
		putchar('"');
	} else {
		fputs(s, stdout);
	}
}

/* Display width of UTF-8 text: code points (good enough for names and numbers). */
static size_t width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

/* Run one prepared statement and print its rows.  Returns 0 or -1 (message printed). */
/* One row as CSV (RFC 4180 quoting). */
static void print_csv_row(sqlite3_stmt *st, int ncol)
{
	for (int i = 0; i < ncol; i++) {
		char *s = cell_text(st, i, sqlite3_column_type(st, i), MODE_CSV);

		if (i)
			putchar(',');
		csv_field(s);
		free(s);
	}
	putchar('\n');
}

/* One row as a JSON object, after a comma unless it is the first. */
static void print_json_row(sqlite3_stmt *st, int ncol, int first)
{
	printf(first ? "{" : ",\n{");
	for (int i = 0; i < ncol; i++) {
		int t = sqlite3_column_type(st, i);
		char *s = cell_text(st, i, t, MODE_JSON);

		if (i)
			putchar(',');
		cli_json_string(stdout, sqlite3_column_name(st, i));
		putchar(':');
		if (!s)
			fputs("null", stdout);
		else if (t == SQLITE_INTEGER || t == SQLITE_FLOAT)
			fputs(s, stdout);
		else
			cli_json_string(stdout, s);
		free(s);
	}
	putchar('}');
}

/* One line of the aligned table: the cells right-aligned where right[i], the last column
 * unpadded. */
static void print_table_line(const char *const *text, const size_t *w, const int *right,
                             int ncol)
{
	for (int i = 0; i < ncol; i++) {
		size_t pad = w[i] - width(text[i]);

		if (i)
			fputs("  ", stdout);
		if (right[i])
			printf("%*s%s", (int)pad, "", text[i]);
		else
			printf("%s%*s", text[i], i == ncol - 1 ? 0 : (int)pad, "");
	}
	putchar('\n');
}

/* The rows held in cells, aligned under a header: numbers (and NULL) right-aligned.
 * 0, or -1 out of memory. */
static int print_table(sqlite3_stmt *st, const struct cell *cells, size_t nrows, int ncol)
{
	size_t *w = calloc((size_t)ncol, sizeof(*w));
	int *right = calloc((size_t)ncol, sizeof(*right));
	const char **text = calloc((size_t)ncol, sizeof(*text));
	int rc = -1;

	if (!w || !right || !text)
		goto out;
	for (int i = 0; i < ncol; i++) {
		w[i] = width(sqlite3_column_name(st, i));
		right[i] = nrows > 0;
	}
	for (size_t r = 0; r < nrows; r++)
		for (int i = 0; i < ncol; i++) {
			const struct cell *c = &cells[r * (size_t)ncol + (size_t)i];
			size_t cw = c->text ? width(c->text) : 4;

			if (cw > w[i])
				w[i] = cw;
			if (c->type != SQLITE_INTEGER && c->type != SQLITE_FLOAT &&
			    c->type != SQLITE_NULL)
				right[i] = 0;
		}
	for (int i = 0; i < ncol; i++)
		text[i] = sqlite3_column_name(st, i);
	print_table_line(text, w, right, ncol);
	for (int i = 0; i < ncol; i++) {
		if (i)
			fputs("  ", stdout);
		for (size_t k = 0; k < w[i]; k++)
			putchar('-');
	}
	putchar('\n');
	for (size_t r = 0; r < nrows; r++) {
		for (int i = 0; i < ncol; i++) {
			const struct cell *c = &cells[r * (size_t)ncol + (size_t)i];

			text[i] = c->text ? c->text : "NULL";
		}
		print_table_line(text, w, right, ncol);
	}
	rc = 0;
out:
	free(w);
	free(right);
	free(text);
	return rc;
}

static int print_result(sqlite3 *db, sqlite3_stmt *st, enum mode mode)
{
	int ncol = sqlite3_column_count(st), rc;
	struct cell *cells = NULL;
	size_t nrows = 0, cap = 0;
	int first = 1;

	if (ncol == 0) {
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			;
		goto done;
	}
	if (mode == MODE_CSV) {
		for (int i = 0; i < ncol; i++) {
			if (i)
				putchar(',');
			csv_field(sqlite3_column_name(st, i));
		}
		putchar('\n');
	} else if (mode == MODE_JSON) {
		putchar('[');
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (mode == MODE_CSV) {
			print_csv_row(st, ncol);
			continue;
		}
		if (mode == MODE_JSON) {
			print_json_row(st, ncol, first);
			first = 0;
			continue;
		}
		if (nrows == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct cell *n = realloc(cells, nc * (size_t)ncol * sizeof(*n));

			if (!n) {
				cli_error("sql", "out of memory holding the result");
				rc = SQLITE_NOMEM;
				break;
			}
			cells = n;
			cap = nc;
		}
		for (int i = 0; i < ncol; i++) {
			struct cell *c = &cells[nrows * (size_t)ncol + (size_t)i];

			c->type = sqlite3_column_type(st, i);
			c->text = cell_text(st, i, c->type, mode);
		}
		nrows++;
	}
	if (mode == MODE_JSON)
		printf("]\n");
	if (mode == MODE_TABLE && rc == SQLITE_DONE && print_table(st, cells, nrows, ncol) != 0) {
		cli_error("sql", "out of memory holding the result");
		rc = SQLITE_NOMEM;
	}
done:
	for (size_t k = 0; k < nrows * (size_t)ncol; k++)
		free(cells[k].text);
	free(cells);
	fflush(stdout);
	if (rc != SQLITE_DONE) {
		if (rc != SQLITE_NOMEM)
			cli_error("sql", "%s", sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

/* Every statement of sql in turn; stops at the first failure. */
static int run(sqlite3 *db, const char *sql, enum mode mode)
{
	const char *tail = sql;

	while (tail && *tail) {
		sqlite3_stmt *st = NULL;
		const char *next = NULL;
		int rc = sqlite3_prepare_v2(db, tail, -1, &st, &next);

		if (rc != SQLITE_OK) {
			cli_error("sql", "%s", sqlite3_errmsg(db));
			return -1;
		}
		tail = next;
		if (!st)
			continue; /* whitespace or a comment */
		rc = print_result(db, st, mode);
		sqlite3_finalize(st);
		if (rc)
			return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * The shell.
 */
static int dot_command(sqlite3 *db, char *line, enum mode *mode)
{
	char *arg, *end;

	for (end = line + strlen(line); end > line && (end[-1] == '\n' || end[-1] == ' ' ||
	                                               end[-1] == '\r' || end[-1] == ';');)
		*--end = '\0';
	arg = strchr(line, ' ');
	if (arg) {
		*arg++ = '\0';
		while (*arg == ' ')
			arg++;
	}
	if (!strcmp(line, ".quit") || !strcmp(line, ".exit"))
		return 1;
	if (!strcmp(line, ".tables")) {
		run(db, "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view') "
		        "ORDER BY type, name", *mode);
	} else if (!strcmp(line, ".schema")) {
		char *q = sqlite3_mprintf("SELECT sql || ';' AS sql FROM sqlite_master WHERE sql "
		                          "NOT NULL AND (%Q IS NULL OR name = %Q) ORDER BY rowid",
		                          arg, arg);

		if (q)
			run(db, q, MODE_CSV == *mode ? MODE_CSV : MODE_TABLE);
		sqlite3_free(q);
	} else if (!strcmp(line, ".mode") && arg) {
		if (!strcmp(arg, "csv"))
			*mode = MODE_CSV;
		else if (!strcmp(arg, "json"))
			*mode = MODE_JSON;
		else if (!strcmp(arg, "table"))
			*mode = MODE_TABLE;
		else
			cli_error("sql", ".mode: expected table, csv or json, not '%s'", arg);
	} else if (!strcmp(line, ".help")) {
		printf(".tables            tables and views\n"
		       ".schema [NAME]     the CREATE statements\n"
		       ".mode table|csv|json\n"
		       ".quit              leave (also end of input)\n"
		       "Statements end with ';'.  See schemas/sql.md for the schema and a cookbook.\n");
	} else {
		cli_error("sql", "unknown command '%s' (try .help)", line);
	}
	return 0;
}

static int shell(sqlite3 *db, enum mode mode)
{
	int tty = isatty(STDIN_FILENO), failed = 0;
	char *line = NULL, *buf = NULL;
	size_t lcap = 0, blen = 0;
	ssize_t n;

	if (tty)
		printf("encore sql: enter SQL statements ending with ';', .help for help, .quit to "
		       "leave\n");
	for (;;) {
		if (tty) {
			fputs(blen ? "   ...> " : "encore> ", stdout);
			fflush(stdout);
		}
		if ((n = getline(&line, &lcap, stdin)) < 0)
			break;
		if (!blen && line[0] == '.') {
			if (dot_command(db, line, &mode))
				break;
			continue;
		}
		{
			char *nb = realloc(buf, blen + (size_t)n + 1);

			if (!nb) {
				cli_error("sql", "out of memory reading the statement");
				failed = 1;
				break;
			}
			buf = nb;
			memcpy(buf + blen, line, (size_t)n + 1);
			blen += (size_t)n;
		}
		if (sqlite3_complete(buf)) {
			if (run(db, buf, mode))
				failed = 1;
			blen = 0;
		}
	}
	if (blen && strspn(buf, " \t\r\n") != blen && run(db, buf, mode))
		failed = 1;
	if (tty)
		putchar('\n');
	free(line);
	free(buf);
	/* interactive: errors were shown as they came; a script fails if a statement did */
	return tty ? CLI_OK : failed ? CLI_FAIL : CLI_OK;
}

/* A session loaded from damaged traces (the analyzer's warnings, kept in the warning table):
 * named on stderr before the answers, and the command exits 1 after them, as dump does.  A
 * database without that table (not made by encore) has nothing to say. */
int cli_sql_damage(sqlite3 *db, const char *cmd)
{
	sqlite3_stmt *st = NULL;
	int bad = 0;

	if (sqlite3_prepare_v2(db, "SELECT message FROM warning ORDER BY id", -1, &st, NULL))
		return 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *w = (const char *)sqlite3_column_text(st, 0);

		if (w && cli_is_damage(w)) {
			cli_error(cmd, "%s", w);
			bad = 1;
		}
	}
	sqlite3_finalize(st);
	return bad;
}

int cmd_sql(int argc, char **argv)
{
	static const struct option opts[] = {
		{"csv", no_argument, NULL, 'c'},
		{"json", no_argument, NULL, 'j'},
		{"rebuild", no_argument, NULL, 'r'},
		{"trust", no_argument, NULL, 'T'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	enum mode mode = MODE_TABLE;
	struct trace_diag d;
	sqlite3 *db = NULL;
	const char *target;
	struct stat sb;
	int c, rebuild = 0, quiet = 0, trust = 0, rc, damaged;

	optind = 1;
	while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
		case 'j':
			if (mode != MODE_TABLE && mode != (c == 'c' ? MODE_CSV : MODE_JSON)) {
				cli_error("sql", "--csv and --json: one output format at a time");
				return CLI_USAGE;
			}
			mode = c == 'c' ? MODE_CSV : MODE_JSON;
			break;
		case 'r': rebuild = 1; break;
		case 'T': trust = 1; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return CLI_OK;
		default: return cli_bad_option("sql");
		}
	}
	if (optind >= argc || argc - optind > 2) {
		cli_error("sql", "expected a session directory (or FILE.db) and at most one query "
		          "(see encore sql --help)");
		return CLI_USAGE;
	}
	target = argv[optind];
	if (stat(target, &sb)) {
		cli_error("sql", "%s: %s", target, strerror(errno));
		return CLI_FAIL;
	}
	if (S_ISDIR(sb.st_mode)) {
		struct cli_progress pr;
		struct ana_db_progress dp = {cli_progress_fn, &pr};

		if (cli_session_trusted("sql", target, trust))
			return CLI_FAIL;
		if (rebuild) {
			char path[4096];

			if (ana_db_cache_path(target, path, sizeof(path)) == 0 && unlink(path) &&
			    errno != ENOENT) {
				cli_error("sql", "%s: cannot remove the cached database: %s", path,
				          strerror(errno));
				return CLI_FAIL;
			}
		}
		cli_progress_start(&pr, "sql", target, quiet);
		rc = ana_db_open(target, &db, NULL, &dp, &d);
		cli_progress_end(&pr);
		if (rc) {
			cli_diag("sql", &d);
			return CLI_FAIL;
		}
	} else {
		size_t tl = strlen(target);

		if (tl > 6 && strcmp(target + tl - 6, ".trace") == 0) {
			cli_error("sql", "%s is a trace file: give its session directory (encore sql "
			          "DIR), which is read whole", target);
			return CLI_USAGE;
		}
		/* (opening is lazy: a file that is no database is found out by a first read) */
		if (sqlite3_open_v2(target, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
		    sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL) != SQLITE_OK ||
		    ana_sql_register(db)) {
			cli_error("sql", "%s: cannot open as an SQLite database: %s (a database "
			          "encore db made, or a session directory)", target,
			          db ? sqlite3_errmsg(db) : "out of memory");
			sqlite3_close(db);
			return CLI_FAIL;
		}
	}
	damaged = cli_sql_damage(db, "sql");
	if (optind + 1 < argc)
		rc = run(db, argv[optind + 1], mode) ? CLI_FAIL : CLI_OK;
	else
		rc = shell(db, mode);
	sqlite3_close(db);
	return damaged ? CLI_FAIL : rc;
}
