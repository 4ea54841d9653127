/*
 * sqldb.h: SQL over traces, encore's part that puts a session into SQLite.
 *
 * The schema is schemas/trace.sql, documented in schemas/sql.md.  Event ids in the database
 * are global: event.id = process.first_event + idx - 1.  `struct sqlite3` is SQLite's
 * connection.  Built on the analyzer (ana.h) for the model and on stability (stab.h) for the
 * graph tables; the only part that links SQLite.  Conventions are the analyzer's: 0 or a
 * negative TRACE_E* code, a struct trace_diag where one is taken, nothing printed.  The names
 * keep the analyzer's ana_ prefix they had before SQL became a part of its own.
 */
#ifndef ENCORE_SQLDB_H
#define ENCORE_SQLDB_H

#include <stddef.h>
#include <stdint.h>

#include "ana.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sqlite3;

#define ANA_SQL_SCHEMA_VERSION 3   /* PRAGMA user_version of a database this code writes */

/* The text of schemas/trace.sql (tables, views, indexes), as the loader runs it. */
const char *ana_sql_schema(void);

/* Called now and then while a database is filled: `done` of `total` events written. */
struct ana_db_progress {
	void (*fn)(void *ctx, uint64_t done, uint64_t total);
	void *ctx;
};

/* Create the schema in the empty database `db` and fill it from the finished session s.
 * When `dir` is the session directory s was loaded from, the trace files are read again
 * for what the model does not keep (times, errno, fds, calls, values, frames, process
 * metadata); with dir NULL (a session built in memory) those columns are NULL.  Runs in
 * one transaction; on failure the database holds nothing of it.  It sets, on db, what makes
 * a bulk load fast: 16 KiB pages, journal_mode=MEMORY, synchronous=OFF, an 8 MiB page cache.
 * Message races and the stability graph are computed in a second thread meanwhile (it only
 * reads s).  `progress` may be NULL. */
int ana_db_fill(struct sqlite3 *db, struct ana_session *s, const char *dir,
                const struct ana_db_progress *progress, struct trace_diag *diag);

/* Load the session `dir` and write it as a standalone database at `path`: built in a
 * temporary file beside it (created exclusively, mode 0600, never through a link) and
 * renamed over `path` only when whole. */
int ana_db_write(const char *dir, const char *path, const struct ana_db_progress *progress,
                 struct trace_diag *diag);

/* A stamp of the session's trace files (names, sizes, modification times), of this
 * build's schema and of its analyzer's model (ANA_MODEL_VERSION, ana.h): it changes
 * whenever a trace, the schema or what the analyzer matches and links changes.  Written
 * into `out` (at least 17 bytes). */
int ana_db_stamp(const char *dir, char *out, size_t cap, struct trace_diag *diag);
/* The same stamp as an encore of model version `model` makes it (for the tests). */
int ana_db_stamp_model(const char *dir, int model, char *out, size_t cap,
                       struct trace_diag *diag);

/* The path of the cached database inside a session directory ("DIR/.encore.db"). */
int ana_db_cache_path(const char *dir, char *out, size_t cap);

/* Open the session's cached database read-only, (re)building it first when it is missing,
 * of another schema version, or stamped for other traces.  *rebuilt (may be NULL) says 1
 * when it was rebuilt, 2 when it was built in memory: the cache is kept only in a directory
 * we own, may write, and nobody else may write (docs/security.md); it is a regular file of
 * mode 0600, and anything else found at its name (a link, wider permissions) is replaced.
 * The causality functions are registered on the connection.  Close with sqlite3_close. */
int ana_db_open(const char *dir, struct sqlite3 **db, int *rebuilt,
                const struct ana_db_progress *progress, struct trace_diag *diag);

/* Register on db: hb(a, b) and concurrent(a, b) over event ids, and the table-valued
 * functions causal_past(id) and causal_future(id) (columns event, proc, idx).  They read
 * the process and message tables once, on first use, and answer as ana_hb does. */
int ana_sql_register(struct sqlite3 *db);

#ifdef __cplusplus
}
#endif

#endif
