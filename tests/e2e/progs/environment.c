/* environment.c: prints its whole environment in order, then sets a variable and starts
 * children behind the interposers' back (system, popen) that print it with one the
 * recording had: for replay_environment.sh. */
#include <stdio.h>
#include <stdlib.h>

extern char **environ;

int main(void)
{
	char line[512];
	FILE *p;

	for (char **e = environ; *e; e++)
		printf("%s\n", *e);
	if (setenv("ENVT_LATER", "set-by-program", 1) != 0)
		return 1;
	fflush(stdout);
	if (system("echo system: \"$ENVT_LATER\" \"$ENVT_X\" \"$HOME\"") != 0)
		return 1;
	if (!(p = popen("echo popen: \"$ENVT_LATER\" \"$ENVT_X\"; env | grep -c '^ENCORE_REPLAY=' || true", "r")))
		return 1;
	while (fgets(line, sizeof(line), p))
		fputs(line, stdout);
	return pclose(p) == 0 ? 0 : 1;
}
