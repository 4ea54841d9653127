/* cmd_export.c: `encore export` (export for Perfetto or ShiViz).  Not built yet: issue #9. */
#include <stdio.h>

#include "cli.h"
#include "commands.h"

int cmd_export(int argc, char **argv)
{
	if (argc > 1 && cli_is_help(argv[1])) {
		printf("NAME\n    encore export - export for Perfetto or ShiViz\n\n"
		       "This command is not built yet (issue #9).\n");
		return CLI_OK;
	}
	return cli_not_built("export", "the exporters (issue #9)");
}
