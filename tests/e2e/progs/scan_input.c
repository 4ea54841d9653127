/*
 * scan_input.c: scanf over input from outside the session, for replay_scan_input.sh: the
 * JVM's scan of /proc/meminfo (fscanf of a literal that fails on every line but one, fgetc to
 * the end of each line, fgets after the match) and numbers read from stdin with scanf until
 * its end.  What scanf consumed is in the trace (recorder/stdio.c, scan_after): the replay
 * runs the same scans over the same characters.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	int x = 0, lines = 0, v;
	long sum = 0, count = 0;
	char buf[16] = "";

	if (!f)
		return 77;
	while (!feof(f)) {
		if (fscanf(f, "Hugepagesize: %d", &x) == 1) {
			if (!fgets(buf, sizeof(buf), f))
				buf[0] = '\0';
			break;
		}
		for (;;) {
			int ch = fgetc(f);

			if (ch == EOF || ch == '\n')
				break;
		}
		lines++;
	}
	fclose(f);
	printf("meminfo: %d lines before Hugepagesize, %d%s", lines, x, buf[0] ? buf : "\n");
	errno = 0;
	while (scanf("%d", &v) == 1) {
		if (count == 0) /* (what the recorder did around the scan is not the program's) */
			printf("errno after the first scan: %s\n", errno ? strerror(errno) : "0");
		sum += v;
		count++;
	}
	printf("stdin: %ld numbers, sum %ld, end %s\n", count, sum, feof(stdin) ? "yes" : "no");
	return 0;
}
