/* cmd_record.c: `encore record` (record every process of a program).  Not built yet: issue #4. */
#include <stdio.h>

#include "cli.h"
#include "commands.h"

int cmd_record(int argc, char **argv)
{
	if (argc > 1 && cli_is_help(argv[1])) {
		printf("NAME\n    encore record - record every process of a program\n\n"
		       "This command is not built yet (issue #4).\n");
		return CLI_OK;
	}
	return cli_not_built("record", "the recorder (issue #4)");
}
