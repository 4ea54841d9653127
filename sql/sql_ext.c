/*
 * sql_ext.c: encore_sql.so, a loadable SQLite extension with encore's causality functions
 * (hb, concurrent, causal_past, causal_future: sql_func.c), so that a database written by
 * `encore db` answers causal questions in any SQLite client:
 *
 *     sqlite3 trace.db
 *     sqlite> .load /path/to/encore_sql
 *     sqlite> SELECT count(*) FROM message_race WHERE concurrent(send, rival);
 *
 * SQLite derives the entry point from the file name: sqlite3_encoresql_init.
 */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#define ANA_SQL_EXTENSION 1
#include "sql_func.c"

int sqlite3_encoresql_init(sqlite3 *db, char **err, const sqlite3_api_routines *api);

__attribute__((visibility("default")))
int sqlite3_encoresql_init(sqlite3 *db, char **err, const sqlite3_api_routines *api)
{
	int rc;

	SQLITE_EXTENSION_INIT2(api);
	rc = register_all(db);
	if (rc != SQLITE_OK && err)
		*err = sqlite3_mprintf("encore_sql: registering the causality functions failed (%d)",
		                       rc);
	return rc;
}
