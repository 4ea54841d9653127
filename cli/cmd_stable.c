/* cmd_stable.c: `encore stable` (PRE/POST sets and recognition points).  Not built yet: issue #8. */
#include <stdio.h>

#include "cli.h"
#include "commands.h"

int cmd_stable(int argc, char **argv)
{
	if (argc > 1 && cli_is_help(argv[1])) {
		printf("NAME\n    encore stable - PRE/POST sets and recognition points\n\n"
		       "This command is not built yet (issue #8).\n");
		return CLI_OK;
	}
	return cli_not_built("stable", "stability analysis (issue #8)");
}
