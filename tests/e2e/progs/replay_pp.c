/*
 * replay_pp.c: a small multi-process program whose output depends on message order and on
 * time, for the replayer's end-to-end tests (tests/e2e/replay_*.sh).
 *
 *   replay_pp NCHILD NMSG
 *
 * The root ("pp") makes one socketpair per child and forks NCHILD children ("pp.1"...).  Each
 * child sends NMSG messages carrying its number, a clock reading and random bytes, and reads
 * one acknowledgement per message.  The root polls all children and takes whatever arrives
 * first, in whatever pieces, and prints each piece with its own clock reading: its stdout
 * differs from run to run, and a faithful replay reproduces it byte for byte.  Marks
 * ("got", "ack") give the predicates of the halting tests something to name.
 *
 * For the refusal and divergence tests: built with -DREPLAY_PP_VARIANT=2 it is another
 * binary (another build-id) doing the same; with REPLAY_PP_EXTRA set in its environment,
 * child 2 sends one byte more before its second message (a replay run that way diverges);
 * with REPLAY_PP_HANG, child 2 hangs there instead (a replay run that way stalls).
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "encore.h"

#define MAXC 16

/* Pieces the root has read so far, for `var.pp_got` predicates (read live by the replayer);
 * it always equals the last "got" mark, so `pp: var.pp_got >= N` and `pp: mark.got >= N`
 * hold at the same states.  Child k's acks counted the same way in pp_acks. */
long pp_got;
int pp_acks;

static void child(int k, int fd, int nmsg)
{
	char buf[256], ack[8];

	for (int i = 0; i < nmsg; i++) {
		struct timespec ts;
		unsigned char rnd[4];
		int n;

		if (k == 2 && i == 1 && getenv("REPLAY_PP_EXTRA") && write(fd, "x", 1) != 1)
			_exit(3);
		if (k == 2 && i == 1 && getenv("REPLAY_PP_HANG"))
			pause(); /* hangs outside any intercepted call: the replay must say so */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			memset(rnd, 0, sizeof(rnd));
		n = snprintf(buf, sizeof(buf), "[child %d msg %d t=%ld.%09ld r=%02x%02x%02x%02x]", k, i,
		             (long)ts.tv_sec, ts.tv_nsec, rnd[0], rnd[1], rnd[2], rnd[3]);
		if (write(fd, buf, (size_t)n) != n)
			_exit(3);
		if (read(fd, ack, 4) != 4)
			_exit(4);
		encore_mark("ack", i + 1);
		pp_acks = i + 1;
	}
	close(fd);
	_exit(0);
}

int main(int argc, char **argv)
{
	int nchild = argc > 1 ? atoi(argv[1]) : 3, nmsg = argc > 2 ? atoi(argv[2]) : 10;
	struct pollfd pf[MAXC];
	int fds[MAXC][2], open_n, got = 0;
	long pending[MAXC] = {0};

	if (nchild < 1 || nchild > MAXC)
		return 2;
	for (int k = 0; k < nchild; k++) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds[k]) != 0)
			return 1;
		pid_t p = fork();

		if (p == 0) {
			for (int j = 0; j <= k; j++)
				close(fds[j][0]);
			child(k + 1, fds[k][1], nmsg);
		}
		close(fds[k][1]);
		pf[k].fd = fds[k][0];
		pf[k].events = POLLIN;
	}
	open_n = nchild;
	while (open_n > 0) {
		if (poll(pf, (nfds_t)nchild, -1) <= 0)
			return 1;
		for (int k = 0; k < nchild; k++) {
			char buf[512];
			struct timespec ts;
			ssize_t n;

			if (pf[k].fd < 0 || !(pf[k].revents & (POLLIN | POLLHUP)))
				continue;
			n = read(pf[k].fd, buf, sizeof(buf) - 1);
			clock_gettime(CLOCK_REALTIME, &ts);
			if (n <= 0) {
				printf("child %d closed at %ld.%09ld\n", k + 1, (long)ts.tv_sec, ts.tv_nsec);
				close(pf[k].fd);
				pf[k].fd = -1;
				open_n--;
				continue;
			}
			buf[n] = '\0';
			printf("from %d (%zd bytes at %ld.%09ld): %s\n", k + 1, n, (long)ts.tv_sec,
			       ts.tv_nsec, buf);
			encore_mark("got", ++got);
			pp_got = got;
			/* one ack per complete message seen */
			for (char *p = buf; (p = strchr(p, ']')); p++) {
				pending[k]++;
				if (write(pf[k].fd, "ack!", 4) != 4)
					return 1;
			}
		}
	}
	for (int k = 0; k < nchild; k++)
		wait(NULL);
#ifdef REPLAY_PP_VARIANT
	printf("variant %d\n", REPLAY_PP_VARIANT);
#endif
	printf("done: %d pieces, time %ld\n", got, (long)time(NULL));
	return 0;
}
