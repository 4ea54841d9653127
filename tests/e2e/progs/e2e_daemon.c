/*
 * e2e_daemon.c: daemon(3) forks inside libc, past the recorder's fork interposer; the
 * recorder's atfork handlers must still give the daemon its own trace ("daemon.1") and log
 * the fork in the parent, whose trace then ends (daemon's parent leaves with libc's internal
 * _exit, which the recorder does not see: its trace is complete but not closed).
 * Report format: tests/e2e/check_trace.c.
 *
 *   e2e_daemon REPORTDIR     (prints "daemon done" from the daemon when it is finished)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "trace.h"

int main(int argc, char **argv)
{
	char path[4096], c;
	int sv[2];
	ssize_t r;
	FILE *rep;

	if (argc != 2)
		return 2;
	snprintf(path, sizeof(path), "%s/daemon.report", argv[1]);
	if (!(rep = fopen(path, "w")) || socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 99;
	fprintf(rep, "pipe socketpair %d 1 0 0 a=1,2\n", sv[0]);
	/* The parent never returns from daemon(): report its last event first. */
	fprintf(rep, "fork fork -1 0 0 0 a=1\n");
	fclose(rep);
	if (daemon(1, 1) != 0)
		return 99;
	snprintf(path, sizeof(path), "%s/daemon.1.report", argv[1]);
	if (!(rep = fopen(path, "w")))
		return 99;
	r = send(sv[0], "x", 1, 0);
	fprintf(rep, "send send %d 1 %zd 0 n=1 h=%08x\n", sv[0], r, trace_hash(0, "x", 1));
	r = recv(sv[1], &c, 1, 0);
	fprintf(rep, "recv recv %d 2 %zd 0 n=1 h=%08x\n", sv[1], r, trace_hash(0, "x", 1));
	fprintf(rep, "exit exit -1 0 0 0\n");
	fclose(rep);
	printf("daemon done\n");
	return 0;
}
