/*
 * sync_bench.c: what recording pthread synchronisation costs (recorder/README.md, "Threads"):
 * the time an uncontended mutex lock/unlock pair takes bare and under `encore record` (in a
 * process that started a thread, so that both calls are SYNC events), and the trace bytes
 * (compressed, in the file) per event.  Bare and recorded runs alternate; each run's time is
 * its fastest chunk of 20,000 pairs in the thread's CPU time; medians of the runs are printed.
 * Targets (issue "Threads"): <= 40 ns added per pair, <= 2 bytes per event.
 *
 *   sync_bench --encore PATH [--pairs N] [--repeat R]
 *   sync_bench --child N     (what is timed: prints "ns_per_pair X")
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t idle_m = PTHREAD_MUTEX_INITIALIZER;

/* The raw system call: clock_gettime is interposed (a recorded clock read is an event).  The
 * thread's CPU time, not the wall clock: on a machine where other work runs, the time the
 * thread spent descheduled is not the recorder's. */
static double now_ns(void)
{
	struct timespec ts;

	syscall(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

#define CHUNK 20000 /* pairs timed together; the fastest chunk is what is printed */

static void *idle(void *arg)
{
	return arg;
}

static int child(long n)
{
	pthread_t t;
	double best = -1;

	(void)idle_m;
	/* a second thread exists (and ended): from here the recorder logs synchronisation */
	if (pthread_create(&t, NULL, idle, NULL) != 0 || pthread_join(t, NULL) != 0)
		return 1;
	for (long i = 0; i < n / 10; i++) { /* warm up */
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
	/* the fastest chunk: preemption and the machine's other load only ever slow a chunk
	 * down; each chunk still holds its share of the writer's compression (one 64 KiB chunk
	 * of the trace per about 5,000 pairs) */
	for (long done = 0; done < n; done += CHUNK) {
		long k = n - done < CHUNK ? n - done : CHUNK;
		double t0 = now_ns(), t1;

		for (long i = 0; i < k; i++) {
			pthread_mutex_lock(&m);
			pthread_mutex_unlock(&m);
		}
		t1 = now_ns();
		if (best < 0 || (t1 - t0) / (double)k < best)
			best = (t1 - t0) / (double)k;
	}
	printf("ns_per_pair %.2f\n", best);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Run argv, read "ns_per_pair X" from its output. */
static double run(char *const argv[])
{
	int p[2];
	pid_t pid;
	char buf[256];
	ssize_t n, got = 0;
	double v = -1;

	if (pipe(p) != 0 || (pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	close(p[0]);
	buf[got] = '\0';
	waitpid(pid, NULL, 0);
	if (sscanf(buf, "ns_per_pair %lf", &v) != 1)
		return -1;
	return v;
}

int main(int argc, char **argv)
{
	const char *encore = NULL;
	long pairs = 2000000, repeat = 5;
	char self[4096], npairs[32], dir[] = "/tmp/sync_bench.XXXXXX", trace[4200];
	double bare[64], rec[64], bytes = 0;
	ssize_t n;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--child") && i + 1 < argc)
			return child(atol(argv[i + 1]));
		if (!strcmp(argv[i], "--encore") && i + 1 < argc)
			encore = argv[++i];
		else if (!strcmp(argv[i], "--pairs") && i + 1 < argc)
			pairs = atol(argv[++i]);
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = atol(argv[++i]);
	}
	if (!encore || repeat < 1 || repeat > 64 || pairs < 1) {
		fprintf(stderr, "usage: sync_bench --encore PATH [--pairs N] [--repeat R]\n");
		return 2;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = '\0';
	snprintf(npairs, sizeof(npairs), "%ld", pairs);
	if (!mkdtemp(dir))
		return 1;
	for (long r = 0; r < repeat; r++) {
		char *b[] = { self, "--child", npairs, NULL };
		char out[sizeof(dir) + 8];
		char *e[] = { (char *)encore, "record", "-q", "-o", out, "--name", "sb", "--", self,
			      "--child", npairs, NULL };
		struct stat st;

		snprintf(out, sizeof(out), "%s/%ld", dir, r);
		bare[r] = run(b);
		rec[r] = run(e);
		snprintf(trace, sizeof(trace), "%s/sb.trace", out);
		if (bare[r] < 0 || rec[r] < 0 || stat(trace, &st) != 0) {
			fprintf(stderr, "sync_bench: a run failed\n");
			return 1;
		}
		/* 2 events per pair (plus a few: creation, end, join, exit) */
		bytes = (double)st.st_size / (double)(2 * pairs + 2 * (pairs / 10));
	}
	qsort(bare, (size_t)repeat, sizeof(double), cmp_double);
	qsort(rec, (size_t)repeat, sizeof(double), cmp_double);
	printf("uncontended mutex lock/unlock pair: bare %.1f ns, recorded %.1f ns, added %.1f ns "
	       "(ratio %.2f; target <= 40 ns added)\n", bare[repeat / 2], rec[repeat / 2],
	       rec[repeat / 2] - bare[repeat / 2], rec[repeat / 2] / bare[repeat / 2]);
	printf("trace bytes per sync event (file size / events): %.3f (target <= 2)\n", bytes);
	{
		char cmd[sizeof(dir) + 32];

		snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "sync_bench: could not remove %s\n", dir);
	}
	return 0;
}
