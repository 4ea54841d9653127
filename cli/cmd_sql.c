/* cmd_sql.c: `encore sql` (query a session with SQL).  Not built yet: issue #7. */
#include <stdio.h>

#include "cli.h"
#include "commands.h"

int cmd_sql(int argc, char **argv)
{
	if (argc > 1 && cli_is_help(argv[1])) {
		printf("NAME\n    encore sql - query a session with SQL\n\n"
		       "This command is not built yet (issue #7).\n");
		return CLI_OK;
	}
	return cli_not_built("sql", "SQL over traces (issue #7)");
}
