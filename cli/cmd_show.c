/* cmd_show.c: `encore show` (draw a space-time diagram).  Not built yet: issue #9. */
#include <stdio.h>

#include "cli.h"
#include "commands.h"

int cmd_show(int argc, char **argv)
{
	if (argc > 1 && cli_is_help(argv[1])) {
		printf("NAME\n    encore show - draw a space-time diagram\n\n"
		       "This command is not built yet (issue #9).\n");
		return CLI_OK;
	}
	return cli_not_built("show", "the diagrams (issue #9)");
}
