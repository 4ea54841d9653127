/*
 * e2e_stress.c: the recorder under signals and threads, checked by reading the traces back.
 *
 *   stress.1  ping-pongs N bytes over a socketpair with itself while an interval timer fires
 *             a SIGALRM handler that write()s to a self-pipe: some handler calls land while
 *             the recorder is mid-event (they must pass through unrecorded, without deadlock
 *             or damage), the others are logged like any call;
 *   stress.2  four threads, each ping-pongs M bytes over its own socketpair: the writer is
 *             serialised, every event of every thread is in the trace.
 * The root waits for both, then (given the session directory) reads their traces and checks
 * counts, order and integrity; it prints a summary and exits 1 on any failure.
 *
 *   e2e_stress N M TMPPREFIX [SESSIONDIR]     (TMPPREFIX.counts: stress.1's tallies)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace.h"

static int selfpipe[2];
static volatile sig_atomic_t handled;

static void on_alarm(int sig)
{
	int e = errno;

	(void)sig;
	if (write(selfpipe[1], "s", 1) == 1)
		handled++;
	errno = e;
}

struct counts {
	long n, handled, drained;
};

static int signals_child(long n, const char *out)
{
	struct sigaction sa;
	struct itimerval it;
	int sv[2];
	long i, drained = 0;
	char c, buf[4096];
	ssize_t r;
	FILE *f;

	/* channels: selfpipe 1 (read) and 2 (write), sv 3 and 4 */
	if (pipe2(selfpipe, O_NONBLOCK) || socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	it.it_interval.tv_sec = 0;
	it.it_interval.tv_usec = 50;
	it.it_value = it.it_interval;
	setitimer(ITIMER_REAL, &it, NULL);
	for (i = 0; i < n; i++) {
		if (send(sv[0], "p", 1, 0) != 1 || recv(sv[1], &c, 1, 0) != 1)
			return 1;
		if (i % 1000 == 999)
			while ((r = read(selfpipe[0], buf, sizeof(buf))) > 0)
				drained += r;
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	while ((r = read(selfpipe[0], buf, sizeof(buf))) > 0)
		drained += r;
	f = fopen(out, "w");
	if (!f)
		return 1;
	fprintf(f, "%ld %ld %ld\n", n, (long)handled, drained);
	fclose(f);
	return 0;
}

struct thr {
	int sv[2];
	long m;
	int ok;
};

static void *thread_main(void *arg)
{
	struct thr *t = arg;
	long i;
	char c;

	for (i = 0; i < t->m; i++)
		if (send(t->sv[0], "t", 1, 0) != 1 || recv(t->sv[1], &c, 1, 0) != 1)
			return NULL;
	t->ok = 1;
	return NULL;
}

static int threads_child(long m)
{
	struct thr t[4];
	pthread_t id[4];
	int i;

	/* channels: thread i's pair is 2i+1 (send end) and 2i+2 (receive end) */
	for (i = 0; i < 4; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, t[i].sv))
			return 1;
		t[i].m = m;
		t[i].ok = 0;
	}
	for (i = 0; i < 4; i++)
		if (pthread_create(&id[i], NULL, thread_main, &t[i]))
			return 1;
	for (i = 0; i < 4; i++) {
		pthread_join(id[i], NULL);
		if (!t[i].ok)
			return 1;
	}
	return 0;
}

static int failures;

#define FAIL(...) \
	do { \
		printf("FAIL: " __VA_ARGS__); \
		putchar('\n'); \
		failures++; \
	} while (0)

/* Per-channel counts of one trace: sends and receives with a positive result, bytes. */
struct tally {
	uint64_t send[16], recv[16], recv_bytes[16], threads, events, unlogged;
	int in_order;
};

static void read_trace(const char *dir, const char *name, struct tally *t)
{
	char path[4096];
	struct trace_reader *r = NULL;
	struct trace_diag diag;
	struct trace_event ev;
	int rc;

	memset(t, 0, sizeof(*t));
	t->in_order = 1;
	snprintf(path, sizeof(path), "%s/%s.trace", dir, name);
	if (trace_reader_open(path, &r, &diag) != 0) {
		FAIL("%s: %s", path, diag.msg);
		return;
	}
	while ((rc = trace_reader_next(r, &ev)) == 1) {
		t->events++;
		if (ev.index != t->events)
			t->in_order = 0;
		if (ev.kind == TRACE_EV_THREAD && ev.call == TRACE_CALL_PTHREAD_CREATE)
			t->threads++; /* (thread ends and joins are THREAD events too) */
		if (ev.kind == TRACE_EV_EXIT && ev.naux == 1)
			t->unlogged = (uint64_t)ev.aux[0];
		if (ev.channel >= 16 || ev.result <= 0)
			continue;
		if (ev.kind == TRACE_EV_SEND)
			t->send[ev.channel]++;
		if (ev.kind == TRACE_EV_RECV) {
			t->recv[ev.channel]++;
			t->recv_bytes[ev.channel] += (uint64_t)ev.result;
		}
	}
	if (rc < 0)
		FAIL("%s: read error %d", path, rc);
	if (trace_reader_damage(r, &diag) != 0)
		FAIL("%s: damaged: %s", path, diag.msg);
	if (!trace_reader_closed(r))
		FAIL("%s: not closed", path);
	if (!t->in_order)
		FAIL("%s: event indexes are not 1, 2, 3...", path);
	trace_reader_close(r);
}

int main(int argc, char **argv)
{
	char out[4200];
	struct tally t;
	long n, m, cn = 0, ch = 0, cd = 0;
	int status, i;
	pid_t p1, p2;
	FILE *f;

	if (argc < 4)
		return 2;
	n = atol(argv[1]);
	m = atol(argv[2]);
	snprintf(out, sizeof(out), "%s.counts", argv[3]);
	if ((p1 = fork()) == 0)
		_exit(signals_child(n, out));
	if ((p2 = fork()) == 0)
		_exit(threads_child(m));
	waitpid(p1, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		FAIL("stress.1 did not finish cleanly");
	waitpid(p2, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		FAIL("stress.2 did not finish cleanly");
	f = fopen(out, "r");
	if (!f || fscanf(f, "%ld %ld %ld", &cn, &ch, &cd) != 3)
		FAIL("no counts from stress.1");
	if (f)
		fclose(f);
	unlink(out);
	if (cd != ch)
		FAIL("the self-pipe gave %ld bytes for %ld handler writes", cd, ch);
	printf("stress.1: %ld round trips, %ld handler writes\n", cn, ch);
	if (argc < 5) /* not recorded: nothing more to check */
		return failures ? 1 : 0;

	read_trace(argv[4], "stress.1", &t);
	if (t.send[3] != (uint64_t)n || t.recv[4] != (uint64_t)n)
		FAIL("stress.1: %" PRIu64 " sends and %" PRIu64 " receives logged, %ld of each made",
		     t.send[3], t.recv[4], n);
	if (t.send[2] > (uint64_t)ch)
		FAIL("stress.1: %" PRIu64 " handler writes logged, only %ld made", t.send[2], ch);
	/* Every handler write is either logged or counted as passed through (a failed write,
	 * on a full pipe, is logged but not counted by the program: hence <=). */
	if (t.send[2] + t.unlogged < (uint64_t)ch)
		FAIL("stress.1: %" PRIu64 " handler writes logged + %" PRIu64 " passed through < %ld "
		     "made", t.send[2], t.unlogged, ch);
	if (t.recv_bytes[1] != (uint64_t)cd)
		FAIL("stress.1: self-pipe reads logged %" PRIu64 " bytes, %ld read", t.recv_bytes[1],
		     cd);
	printf("stress.1 trace: %" PRIu64 " events; handler writes logged %" PRIu64 " of %ld (the "
	       "rest interrupted the recorder)\n",
	       t.events, t.send[2], ch);
	read_trace(argv[4], "stress.2", &t);
	for (i = 0; i < 4; i++)
		if (t.send[2 * i + 1] != (uint64_t)m || t.recv[2 * i + 2] != (uint64_t)m)
			FAIL("stress.2 thread %d: %" PRIu64 " sends, %" PRIu64 " receives logged, %ld made",
			     i, t.send[2 * i + 1], t.recv[2 * i + 2], m);
	if (t.threads != 4)
		FAIL("stress.2: %" PRIu64 " THREAD events, 4 threads made", t.threads);
	printf("stress.2 trace: %" PRIu64 " events from 4 threads\n", t.events);
	return failures ? 1 : 0;
}
