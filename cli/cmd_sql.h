/* cmd_sql.h: what `encore sql` and `encore db` share: progress on stderr while a session
 * is loaded into SQLite, shown only once loading has taken more than a second. */
#ifndef ENCORE_CLI_CMD_SQL_H
#define ENCORE_CLI_CMD_SQL_H

#include <stdint.h>
#include <time.h>

struct cli_progress {
	const char *cmd;
	struct timespec t0;
	int quiet;
	int shown;       /* something was printed: end the line at the end */
	int tty;
	int last_pct;
};

/* Arms a one-second timer that says "loading DIR..." if loading is still going on. */
void cli_progress_start(struct cli_progress *p, const char *cmd, const char *dir, int quiet);
/* For struct ana_db_progress.fn (ctx = the struct cli_progress). */
void cli_progress_fn(void *ctx, uint64_t done, uint64_t total);
/* Disarms the timer; ends the progress line. */
void cli_progress_end(struct cli_progress *p);

struct sqlite3;
/* A database made from a session with damaged traces (its warning table): each damage named
 * on stderr as "encore CMD: ...", and 1; else 0. */
int cli_sql_damage(struct sqlite3 *db, const char *cmd);

#endif
