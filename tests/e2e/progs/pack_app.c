/*
 * pack_app.c: a program that needs files of its own to run: a shared library (libgreet.so,
 * pack_greet.c, found through its rpath) and a configuration file (argv[1]).  The pack test
 * (tests/e2e/replay_pack.sh) installs it in a temporary prefix, records it, packs the
 * session, removes the prefix and replays: the output must be the recorded one.
 */
#include <stdio.h>
#include <string.h>

const char *greet(const char *who);

int main(int argc, char **argv)
{
	char line[256];
	FILE *f;

	if (argc < 2 || !(f = fopen(argv[1], "r"))) {
		perror(argc < 2 ? "usage: pack_app CONFIG" : argv[1]);
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		printf("%s (%s)\n", greet(line), VARIANT);
	}
	fclose(f);
	return 0;
}
