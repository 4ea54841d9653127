/*
 * pack_demo.c: tests/e2e/pack.sh's program: linked against a library of its own
 * (pack_demo_lib.c), it reads the configuration file named by argv[1] with stdio and prints
 * each line through the library.
 */
#include <stdio.h>

int pack_demo_shout(char *s);

int main(int argc, char **argv)
{
	char line[256];
	FILE *f;

	if (argc != 2)
		return 2;
	f = fopen(argv[1], "r");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		pack_demo_shout(line);
		fputs(line, stdout);
	}
	fclose(f);
	return 0;
}
