/*
 * busy_then_wait.c: N clock reads (N events), then a file FILE made, then a wait for a
 * signal it leaves at the default action (SIGTERM kills it), for replay_kill_early.sh.
 *
 *   busy_then_wait N FILE
 */
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec ts;
	long n = argc > 2 ? atol(argv[1]) : 1000;
	int fd;

	if (argc < 3)
		return 2;
	for (long i = 0; i < n; i++)
		clock_gettime(CLOCK_MONOTONIC, &ts);
	fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return 1;
	close(fd);
	for (;;)
		pause();
}
