/* cmd_analyze.c: `encore analyze` (summarise a session).  Not built yet: issue #5. */
#include <stdio.h>

#include "cli.h"
#include "commands.h"

int cmd_analyze(int argc, char **argv)
{
	if (argc > 1 && cli_is_help(argv[1])) {
		printf("NAME\n    encore analyze - summarise a session\n\n"
		       "This command is not built yet (issue #5).\n");
		return CLI_OK;
	}
	return cli_not_built("analyze", "the analyzer (issue #5)");
}
