/* cmd_inf.c: `encore inf` (compute Inf(P)).  Not built yet: issue #5. */
#include <stdio.h>

#include "cli.h"
#include "commands.h"

int cmd_inf(int argc, char **argv)
{
	if (argc > 1 && cli_is_help(argv[1])) {
		printf("NAME\n    encore inf - compute Inf(P)\n\n"
		       "This command is not built yet (issue #5).\n");
		return CLI_OK;
	}
	return cli_not_built("inf", "the analyzer (issue #5)");
}
