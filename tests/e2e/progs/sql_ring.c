/*
 * sql_ring.c: a small token ring recorded by the `encore sql` tests, with the
 * kinds of facts the cookbook in schemas/sql.md asks about.  Its trace is the same in every
 * run (each read asks for exactly one whole message), so query results can be diffed.
 *
 *   ring (root) reads the number of rounds from stdin (external input), reads the clock,
 *   forks ring.1, ring.2, ring.3; the token goes ring -> ring.1 -> ring.2 -> ring.3 -> ring
 *   over pipes, each worker marking `token` with the value it forwards.  After the last
 *   round each worker reports to the root over its own socketpair; the root reads the token
 *   and then the reports in order 1, 2, 3 (message races: they could have come in another
 *   order), polls ring.1's socket once more without blocking (EAGAIN, a failed call), then
 *   acknowledges each worker, and writes a last token that nobody reads.  ring.2 is the buggy
 *   one: it exits with status 3.
 *
 *   echo 2 | sql_ring
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "encore.h"

#define NW 3

__attribute__((noinline)) static void xwrite(int fd, const void *buf, size_t len)
{
	if (write(fd, buf, len) != (ssize_t)len) {
		perror("sql_ring: write");
		exit(2);
	}
}

__attribute__((noinline)) static void xread(int fd, void *buf, size_t len)
{
	if (read(fd, buf, len) != (ssize_t)len) {
		perror("sql_ring: read");
		exit(2);
	}
}

__attribute__((noinline)) static int worker(int i, int in, int out, int rep, int rounds)
{
	long token = 0, ack;

	for (int r = 0; r < rounds; r++) {
		xread(in, &token, sizeof(token));
		token++;
		encore_mark("token", token);
		xwrite(out, &token, sizeof(token));
	}
	{
		long report[2] = {i, token};

		if (send(rep, report, sizeof(report), 0) != (ssize_t)sizeof(report)) {
			perror("sql_ring: send");
			return 2;
		}
	}
	if (recv(rep, &ack, sizeof(ack), 0) != (ssize_t)sizeof(ack)) {
		perror("sql_ring: recv");
		return 2;
	}
	return i == 2 ? 3 : 0;
}

int main(void)
{
	int ring[NW + 1][2], rep[NW + 1][2], rounds = 0, status, failed = 0;
	char line[32];
	ssize_t n;
	long token = 0;
	struct timespec ts;
	pid_t pid[NW + 1];

	n = read(0, line, sizeof(line) - 1);
	if (n > 0) {
		line[n] = '\0';
		rounds = atoi(line);
	}
	if (rounds < 1 || rounds > 100)
		rounds = 2;
	clock_gettime(CLOCK_REALTIME, &ts);
	for (int i = 0; i <= NW; i++)
		if (pipe(ring[i])) {
			perror("sql_ring: pipe");
			return 2;
		}
	for (int i = 1; i <= NW; i++)
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, rep[i])) {
			perror("sql_ring: socketpair");
			return 2;
		}
	for (int i = 1; i <= NW; i++) {
		pid[i] = fork();
		if (pid[i] < 0) {
			perror("sql_ring: fork");
			return 2;
		}
		if (pid[i] == 0) {
			int in = ring[i][0], out = ring[(i + 1) % (NW + 1)][1];

			for (int j = 0; j <= NW; j++) {
				if (ring[j][0] != in)
					close(ring[j][0]);
				if (ring[j][1] != out)
					close(ring[j][1]);
			}
			for (int j = 1; j <= NW; j++) {
				close(rep[j][0]);
				if (j != i)
					close(rep[j][1]);
			}
			_exit(worker(i, in, out, rep[i][1], rounds));
		}
	}
	for (int j = 1; j <= NW; j++)
		close(rep[j][1]);
	for (int r = 0; r < rounds; r++) {
		encore_mark("round", r + 1);
		xwrite(ring[1][1], &token, sizeof(token));
		xread(ring[0][0], &token, sizeof(token));
		token++;
	}
	for (int i = 1; i <= NW; i++) {
		long report[2];

		if (recv(rep[i][0], report, sizeof(report), 0) != (ssize_t)sizeof(report)) {
			perror("sql_ring: recv");
			return 2;
		}
		printf("ring.%ld forwarded the token up to %ld\n", report[0], report[1]);
	}
	{
		long more;

		if (recv(rep[1][0], &more, sizeof(more), MSG_DONTWAIT) >= 0 || errno != EAGAIN) {
			fprintf(stderr, "sql_ring: expected EAGAIN from ring.1\n");
			return 2;
		}
	}
	for (int i = 1; i <= NW; i++) {
		long ack = i;

		xwrite(rep[i][0], &ack, sizeof(ack));
	}
	/* a last token nobody reads (ring.1 is done): bytes sent and never received */
	xwrite(ring[1][1], &token, sizeof(token));
	for (int i = 1; i <= NW; i++)
		if (waitpid(pid[i], &status, 0) == pid[i] && (!WIFEXITED(status) ||
		                                                WEXITSTATUS(status) != 0)) {
			printf("ring.%d failed with status %d\n", i, WEXITSTATUS(status));
			failed = 1;
		}
	printf("token %ld after %d rounds\n", token, rounds);
	return failed;
}
