/*
 * gap_stdio.c: stdio on channels (recorder/stdio.c).
 *
 *   gap_stdio pipe    a child writes to a pipe with fprintf, fputs, fputc, fwrite, puts (its
 *                     stdout redirected there) and putc_unlocked; the parent reads it with fgets,
 *                     getline, fgetc and fread, then reads its own stdin (bytes from outside
 *                     the session) with fgets and getchar, and prints everything it got
 *   gap_stdio scanf   the parent reads the pipe with fscanf: the recorder cannot count
 *                     those bytes and says so once (analyze and replay report it)
 *   gap_stdio popen   fgets from popen("seq 1 30000"): a pipe libc made (its bytes are
 *                     INPUT), written by a recorded child that must end as it did in replay
 *                     (more than a pipe holds: not drained, it would block or die of SIGPIPE)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void child(int wfd)
{
	FILE *w = fdopen(wfd, "w");
	char blob[300];

	if (!w)
		exit(2);
	for (int i = 0; i < 5; i++)
		fprintf(w, "line %d from the child\n", i);
	fputs("a line by fputs\n", w);
	fputc('x', w);
	fputc('\n', w);
	memset(blob, 'z', sizeof(blob));
	blob[sizeof(blob) - 1] = '\n';
	fwrite(blob, 1, sizeof(blob), w);
	fflush(w);
	/* stdout on the pipe too: printf and puts */
	dup2(wfd, 1);
	printf("%s %d\n", "printf on the pipe", 42);
	puts("puts on the pipe");
	fflush(stdout);
	/* inline putc_unlocked (optimised builds), flushed by fclose only */
	putc_unlocked('!', w);
	putc_unlocked('\n', w);
	fclose(w);
	exit(0);
}

int main(int argc, char **argv)
{
	int p[2], st, scan = argc > 1 && strcmp(argv[1], "scanf") == 0;
	char buf[512], *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *r;
	pid_t pid;

	if (argc > 1 && strcmp(argv[1], "popen") == 0) {
		long lines = 0, sum = 0;
		FILE *q = popen("seq 1 30000", "r");

		if (!q)
			return 2;
		while (fgets(buf, sizeof(buf), q)) {
			lines++;
			sum += atol(buf);
		}
		printf("popen: %ld lines, sum %ld, status %d\n", lines, sum, pclose(q));
		return 0;
	}
	if (pipe(p))
		return 2;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		child(p[1]);
	}
	close(p[1]);
	r = fdopen(p[0], "r");
	if (!r)
		return 2;
	if (scan) {
		char word[64];
		int k, count = 0;

		while (fscanf(r, "%63s %d", word, &k) == 2)
			count++;
		printf("scanf: %d pairs\n", count);
		while (fgets(buf, sizeof(buf), r))
			;
	} else {
		int c;

		for (int i = 0; i < 3; i++)
			if (fgets(buf, sizeof(buf), r))
				printf("fgets: %s", buf);
		while ((n = getline(&line, &cap, r)) > 0 && line[0] != 'x')
			printf("getline %zd: %s", n, line);
		c = fgetc(r);
		printf("fgetc: %d\n", c);
		n = (ssize_t)fread(buf, 1, 300, r);
		printf("fread: %zd bytes, last %d\n", n, n > 0 ? buf[n - 1] : -1);
		while ((n = getline(&line, &cap, r)) > 0)
			printf("getline %zd: %s", n, line);
		printf("eof: %d\n", feof(r));
	}
	fclose(r);
	waitpid(pid, &st, 0);
	/* stdin: bytes from outside the session */
	if (fgets(buf, 8, stdin))
		printf("stdin fgets: %s\n", buf);
	{
		int c, k = 0;

		while ((c = getchar()) != EOF)
			k += c;
		printf("stdin getchar sum: %d, eof %d\n", k, feof(stdin));
	}
	free(line);
	return 0;
}
