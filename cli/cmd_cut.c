/* cmd_cut.c: `encore cut` (consistent cuts around events).  Not built yet: issue #5. */
#include <stdio.h>

#include "cli.h"
#include "commands.h"

int cmd_cut(int argc, char **argv)
{
	if (argc > 1 && cli_is_help(argv[1])) {
		printf("NAME\n    encore cut - consistent cuts around events\n\n"
		       "This command is not built yet (issue #5).\n");
		return CLI_OK;
	}
	return cli_not_built("cut", "the analyzer (issue #5)");
}
