/* cmd_db.c: `encore db` (write a session as an SQLite database).  Not built yet: issue #7. */
#include <stdio.h>

#include "cli.h"
#include "commands.h"

int cmd_db(int argc, char **argv)
{
	if (argc > 1 && cli_is_help(argv[1])) {
		printf("NAME\n    encore db - write a session as an SQLite database\n\n"
		       "This command is not built yet (issue #7).\n");
		return CLI_OK;
	}
	return cli_not_built("db", "SQL over traces (issue #7)");
}
