/*
 * e2e_robust.c: a program that is rude to the recorder.  The root ("robust") closes every
 * descriptor it does not use (a loop over 3..1099 and closefrom), dup2s a socket over
 * stdin, starts a thread, queries the fatal-signal dispositions, and daemonizes a child
 * (fork, setsid, fork, the middle process exits); the daemon ("robust.1.1") closes every
 * descriptor again and execs without forking.  The recording must survive all of it:
 * every event is reported and checked (report format: tests/e2e/check_trace.c).  Last, a
 * blocking recv interrupted by a signal returns EINTR, and a non-blocking send moves part of
 * its bytes then fails with EAGAIN, recorded or not.
 *
 *   e2e_robust REPORTDIR
 *   e2e_robust REPORTDIR stage2 FD H   (the daemon after its exec; H its send hash so far)
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
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

static void rep_open(const char *dir, const char *name, const char *mode)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s.report", dir, name);
	if (!(rep = fopen(path, mode))) {
		perror(path);
		exit(99);
	}
	setvbuf(rep, NULL, _IOLBF, 0);
}

/* K = 1: every data event carries the running hash of its direction. */
static uint32_t hs, hr;

static void sent(const char *call, int fd, int ch, ssize_t r, const void *b, size_t n)
{
	if (r > 0)
		hs = trace_hash(hs, b, (size_t)r);
	fprintf(rep, "send %s %d %d %zd 0 n=%zu%s", call, fd, ch, r, n, r > 0 ? "" : "\n");
	if (r > 0)
		fprintf(rep, " h=%08x\n", hs);
}

static void received(int fd, int ch, ssize_t r, const void *b, size_t n)
{
	if (r > 0)
		hr = trace_hash(hr, b, (size_t)r);
	fprintf(rep, "recv recv %d %d %zd 0 n=%zu%s", fd, ch, r, n, r > 0 ? "" : "\n");
	if (r > 0)
		fprintf(rep, " h=%08x\n", hr);
}

static void close_all_but(int keep1, int keep2)
{
	int fd;

	/* 0, 1 and 2 stay: the output is compared with an unrecorded run, and a report
	 * reopened after this must not land on 0, which main() dup2s over. */
	for (fd = 3; fd < 1100; fd++)
		if (fd != keep1 && fd != keep2)
			close(fd);
}

static void *thread_main(void *arg)
{
	return arg;
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* A blocking recv that a signal interrupts (no SA_RESTART) returns -1 EINTR, recorded or
 * not.  Nothing ever arrives on the pair; a periodic timer makes sure one expiry lands while
 * recv waits, however late the process gets there. */
static void interrupted_recv(void)
{
	struct sigaction sa;
	struct itimerval it;
	int es[2];
	ssize_t r;
	char c;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, es) != 0)
		exit(99);
	fprintf(rep, "pipe socketpair %d 3 0 0 a=3,4\n", es[0]);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm; /* no SA_RESTART */
	sigaction(SIGALRM, &sa, NULL);
	memset(&it, 0, sizeof(it));
	it.it_interval.tv_usec = 20000;
	it.it_value.tv_usec = 20000;
	setitimer(ITIMER_REAL, &it, NULL);
	fprintf(rep, "timer setitimer -1 0 0 0 a=%d\n", ITIMER_REAL);
	r = recv(es[0], &c, 1, 0);
	fprintf(rep, "recv recv %d 3 %zd %d n=1\n", es[0], r, r < 0 ? errno : 0);
	printf("blocking recv: %zd %s\n", r, r < 0 ? strerror(errno) : "");
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	fprintf(rep, "timer setitimer -1 0 0 0 a=%d\n", ITIMER_REAL);
	r = close(es[0]);
	fprintf(rep, "close close %d 3 %zd 0\n", es[0], r);
	r = close(es[1]);
	fprintf(rep, "close close %d 4 %zd 0\n", es[1], r);
}

/* A non-blocking send bigger than the socket buffer moves part of the bytes, the next one
 * none (EAGAIN), recorded or not; the hash covers exactly the bytes that moved. */
static void partial_send(void)
{
	static char big[1 << 20];
	uint32_t h;
	ssize_t r;
	int ps[2];

	memset(big, 'p', sizeof(big));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, ps) != 0)
		exit(99);
	fprintf(rep, "pipe socketpair %d 5 0 0 a=5,6\n", ps[0]);
	r = send(ps[0], big, sizeof(big), 0);
	h = r > 0 ? trace_hash(0, big, (size_t)r) : 0;
	fprintf(rep, "send send %d 5 %zd %d n=%zu h=%08x vary=1\n", ps[0], r, r < 0 ? errno : 0,
	        sizeof(big), h);
	printf("non-blocking send of %zu bytes: %s\n", sizeof(big),
	       r > 0 && (size_t)r < sizeof(big) ? "partial" : "not partial");
	r = send(ps[0], big, sizeof(big), 0);
	fprintf(rep, "send send %d 5 %zd %d n=%zu f=%u\n", ps[0], r, r < 0 ? errno : 0,
	        sizeof(big), r < 0 && errno == EAGAIN ? TRACE_FL_NONBLOCK : 0u);
	printf("then: %s\n", r < 0 ? strerror(errno) : "sent");
	r = close(ps[0]);
	fprintf(rep, "close close %d 5 %zd 0\n", ps[0], r);
	r = close(ps[1]);
	fprintf(rep, "close close %d 6 %zd 0\n", ps[1], r);
}

static int stage2(char **argv)
{
	int fd = atoi(argv[3]);
	ssize_t r;

	hs = (uint32_t)strtoul(argv[4], NULL, 16);
	rep_open(argv[1], "robust.1.1", "a");
	r = send(fd, "after-exec", 10, 0);
	sent("send", fd, 2, r, "after-exec", 10);
	fprintf(rep, "exit exit -1 0 0 0\n");
	fclose(rep);
	exit(0);
}

int main(int argc, char **argv)
{
	char buf[64], hbuf[16];
	struct sigaction old;
	pthread_t t;
	int sv[2], status;
	pid_t pid;
	ssize_t r;

	if (argc == 5 && !strcmp(argv[2], "stage2"))
		return stage2(argv);
	if (argc != 2)
		return 2;
	rep_open(argv[1], "robust", "w");
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 99;
	fprintf(rep, "pipe socketpair %d 1 0 0 a=1,2\n", sv[0]);

	/* Close everything else, twice over: the trace descriptor must survive. */
	close_all_but(sv[0], sv[1]);
	rep_open(argv[1], "robust", "a");
	closefrom(sv[1] + 1 > fileno(rep) + 1 ? sv[1] + 1 : fileno(rep) + 1);
	r = send(sv[0], "alive", 5, 0);
	sent("send", sv[0], 1, r, "alive", 5);

	/* A socket over stdin, used through its new number. */
	r = dup2(sv[0], 0);
	fprintf(rep, "dup dup2 %d 1 %zd 0 a=0\n", sv[0], r);
	r = write(0, "x", 1);
	sent("write", 0, 1, r, "x", 1);
	close(0); /* the channel still has sv[0]: no event */

	/* The recorder's own handlers must not show. */
	sigaction(SIGSEGV, NULL, &old);
	printf("SIGSEGV handler is %s\n", old.sa_handler == SIG_DFL ? "SIG_DFL" : "something else");
	printf("SIGTERM handler was %s\n", signal(SIGTERM, SIG_IGN) == SIG_DFL ? "SIG_DFL" : "set");

	/* the new thread's index (1), its end, then the join naming it (schemas/trace-format.md) */
	r = pthread_create(&t, NULL, thread_main, NULL);
	fprintf(rep, "thread pthread_create -1 0 %zd 0\n", r == 0 ? (ssize_t)1 : -r);
	r = pthread_join(t, NULL);
	fprintf(rep, "thread thread_exit -1 0 0 0\n");
	fprintf(rep, "thread pthread_join -1 0 %zd 0 a=1\n", r);

	fflush(rep);
	pid = fork();
	if (pid == 0) {
		/* robust.1: the daemonizing middle process. */
		fclose(rep);
		rep_open(argv[1], "robust.1", "w");
		setsid();
		pid = fork();
		if (pid == 0) {
			/* robust.1.1: the daemon. */
			fclose(rep);
			rep_open(argv[1], "robust.1.1", "w");
			hs = hr = 0; /* its own channel end: fresh running hashes */
			/* Inherited: sv[0] as channel 1, sv[1] as channel 2. */
			close_all_but(sv[1], fileno(rep));
			fprintf(rep, "close close %d 1 0 0\n", sv[0]);
			r = recv(sv[1], buf, 6, MSG_WAITALL);
			received(sv[1], 2, r, buf, 6);
			r = send(sv[1], "daemon", 6, 0);
			sent("send", sv[1], 2, r, "daemon", 6);
			fprintf(rep, "exec execve -1 0 0 0 v=2f70726f632f73656c662f657865\n");
			fflush(rep);
			snprintf(buf, sizeof(buf), "%d", sv[1]);
			snprintf(hbuf, sizeof(hbuf), "%08x", hs);
			execl("/proc/self/exe", "e2e_robust", argv[1], "stage2", buf, hbuf, (char *)NULL);
			_exit(98);
		}
		fprintf(rep, "fork fork -1 0 %d 0 a=1\n", pid);
		fprintf(rep, "exit exit -1 0 0 0\n");
		fclose(rep);
		_exit(0);
	}
	fprintf(rep, "fork fork -1 0 %d 0 a=1\n", pid);
	r = close(sv[1]);
	fprintf(rep, "close close %d 2 %zd 0\n", sv[1], r);
	r = recv(sv[0], buf, 6, MSG_WAITALL);
	received(sv[0], 1, r, buf, 6);
	r = recv(sv[0], buf, 10, MSG_WAITALL);
	received(sv[0], 1, r, buf, 10);
	printf("from the daemon after its exec: '%.*s'\n", (int)r, buf);
	r = recv(sv[0], buf, sizeof(buf), 0);
	received(sv[0], 1, r, buf, sizeof(buf));
	r = close(sv[0]);
	fprintf(rep, "close close %d 1 %zd 0\n", sv[0], r);
	wait_report(pid, &status);
	printf("middle process exit %d\n", WEXITSTATUS(status));
	interrupted_recv();
	partial_send();
	/* the report's own fclose: with a thread started, a number no channel's freed */
	fprintf(rep, "fdnum close %d 0 0 0 a=2\n", fileno(rep));
	fprintf(rep, "exit exit -1 0 0 0\n");
	fclose(rep);
	return 0;
}
