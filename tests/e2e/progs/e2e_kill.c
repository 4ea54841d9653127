/*
 * e2e_kill.c: processes that die.  The root ("kill") forks three children on socketpairs:
 *   kill.1  sends N messages (N <= 100: nobody reads them, and a Unix socket's buffer
 *           holds a limited number of messages), tells the root it is done (a signal: not an intercepted call,
 *           so its trace ends exactly at its last reported event), and is SIGKILLed;
 *   kill.2  sends one message and dies of SIGSEGV;
 *   kill.3  sends one message and calls abort().
 * Each reports its events as e2e_calls does (report format: tests/e2e/check_trace.c).
 *
 *   e2e_kill REPORTDIR N
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace.h"

static FILE *rep;

/* waitpid(pid, status, 0), reported as its WAIT event (schemas/trace-format.md, kind 23):
 * the child, its status and si_code. */
static void wait_report(pid_t pid, int *status)
{
	pid_t r = waitpid(pid, status, 0);

	fprintf(rep, "wait waitpid -1 0 %d 0 a=%d,%d\n", (int)r, *status,
	        WIFEXITED(*status) ? 1 : WCOREDUMP(*status) ? 3 : 2);
}
static const char *dir;

static void rep_open(const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s.report", dir, name);
	if (!(rep = fopen(path, "w"))) {
		perror(path);
		exit(99);
	}
	setvbuf(rep, NULL, _IOLBF, 0);
}

/* K is 1 in this test: every data event carries the running hash. */
static uint32_t h;

static void sent(int fd, int ch, ssize_t r, const char *msg, size_t n)
{
	if (r > 0)
		h = trace_hash(h, msg, (size_t)r);
	fprintf(rep, "send send %d %d %zd 0 n=%zu h=%08x\n", fd, ch, r, n, h);
}

int main(int argc, char **argv)
{
	int sv[3][2], i, n, status;
	pid_t pid[3];
	sigset_t set;
	char msg[16];
	volatile int *volatile bad = NULL; /* a real fault the optimiser must keep */
	ssize_t r;

	if (argc != 3)
		return 2;
	dir = argv[1];
	n = atoi(argv[2]);
	/* The done-signal is received with sigwait: blocked, so no handler runs. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	rep_open("kill");
	for (i = 0; i < 3; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv[i]) != 0)
			return 99;
		fprintf(rep, "pipe socketpair %d %d 0 0 a=%d,%d\n", sv[i][0], 2 * i + 1, 2 * i + 1,
		        2 * i + 2);
	}
	fflush(rep);
	for (i = 0; i < 3; i++) {
		pid[i] = fork();
		if (pid[i] < 0)
			return 99;
		if (pid[i] == 0) {
			char name[32];
			int k;

			fclose(rep);
			snprintf(name, sizeof(name), "kill.%d", i + 1);
			rep_open(name);
			if (i == 0) {
				for (k = 0; k < n; k++) {
					snprintf(msg, sizeof(msg), "msg%06d", k);
					r = send(sv[i][1], msg, 9, 0);
					sent(sv[i][1], 2 * i + 2, r, msg, 9);
				}
				r = getppid();
				fprintf(rep, "pid getppid -1 0 %zd 0\n", r);
				/* (the parent's SIGKILL may come before the event is logged) */
				fprintf(rep, "kill kill -1 0 0 0 a=%zd,%d,0,0 maybe=1\n", r, SIGUSR1);
				fflush(rep);
				kill((pid_t)r, SIGUSR1);
				for (;;)
					pause();
			}
			r = send(sv[i][1], "last words", 10, 0);
			sent(sv[i][1], 2 * i + 2, r, "last words", 10);
			if (i == 1) {
				fprintf(rep, "signal signal -1 0 %d 0 a=1\n", SIGSEGV);
				fflush(rep);
				*bad = 1;
			}
			fprintf(rep, "signal signal -1 0 %d 0 a=1\n", SIGABRT);
			fflush(rep);
			abort();
		}
		fprintf(rep, "fork fork -1 0 %d 0 a=%d\n", pid[i], i + 1);
	}
	{
		int sig;

		sigwait(&set, &sig);
	}
	kill(pid[0], SIGKILL);
	fprintf(rep, "kill kill -1 0 0 0 a=%d,%d,0,0\n", (int)pid[0], SIGKILL);
	for (i = 0; i < 3; i++) {
		wait_report(pid[i], &status);
		printf("kill.%d: %s %d\n", i + 1, WIFSIGNALED(status) ? "signal" : "exit",
		       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	}
	fprintf(rep, "exit exit -1 0 0 0\n");
	fclose(rep);
	return 0;
}
