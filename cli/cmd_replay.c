/* cmd_replay.c: `encore replay` (re-execute a session and halt at Inf(P)).  Not built yet: issue #6. */
#include <stdio.h>

#include "cli.h"
#include "commands.h"

int cmd_replay(int argc, char **argv)
{
	if (argc > 1 && cli_is_help(argv[1])) {
		printf("NAME\n    encore replay - re-execute a session and halt at Inf(P)\n\n"
		       "This command is not built yet (issue #6).\n");
		return CLI_OK;
	}
	return cli_not_built("replay", "the replayer (issue #6)");
}
