/*
 * replay_pipefull.c: a writer that fills a pipe, for the replayer's tests: a write into a
 * full pipe returns only once the reader has made room (the analyzer orders it after that
 * receive), so a halt with the writer past such a write needs the reader that far, online
 * too (the writer's LC asks before the write, as before a receive).
 *
 *   replay_pipefull N     the root ("pf") writes N blocks of 16 KiB into a pipe (four fill
 *                         it), its child ("pf.1") reads them all and prints how many bytes
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char block[16384];
	int n = argc > 1 ? atoi(argv[1]) : 16, p[2];
	pid_t kid;

	if (pipe(p) != 0)
		return 1;
	kid = fork();
	if (kid < 0)
		return 1;
	if (kid == 0) {
		long total = 0;
		ssize_t r;

		close(p[1]);
		while ((r = read(p[0], block, sizeof(block))) > 0)
			total += r;
		printf("pf.1: read %ld bytes\n", total);
		return 0;
	}
	close(p[0]);
	for (int i = 0; i < n; i++) {
		memset(block, 'a' + i % 26, sizeof(block));
		if (write(p[1], block, sizeof(block)) != (ssize_t)sizeof(block))
			return 1;
	}
	close(p[1]);
	waitpid(kid, NULL, 0);
	printf("pf: wrote %d blocks\n", n);
	return 0;
}
