/*
 * signal_bench.c: what a delivered signal costs while recording (recorder/README.md,
 * "Signals").  A worker runs a fixed amount of work twice, without and with a 1 kHz interval
 * timer (setitimer, SIGALRM, a handler counting), and the difference divided by the handler
 * runs is the cost of one delivered signal; the same bare and under `encore record`, so the
 * recorder's added cost per signal is the difference of the two.  Two workloads:
 *   compute  chunks of computation, each ending with a clock read (an event when recorded):
 *            the signal lands in program code and the recorder defers its handler to the
 *            next event;
 *   block    reads of a pipe nobody writes, each ended by the timer (EINTR): the handler
 *            runs inside the call.
 * Both measure the process's CPU time (less sensitive to other load than elapsed time).
 * Ratios and differences in one run, never absolute timings in tests.
 *
 *   signal_bench --encore PATH [--ms N] [--repeat R]
 *   signal_bench worker compute|block TIMER N  (N chunks of computation, or N blocking
 *                                              reads; prints: CPU ns, handler runs)
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t runs;

static void on_alarm(int sig)
{
	(void)sig;
	runs++;
}

static long long cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
}

static int worker(const char *mode, int timer, int ms)
{
	struct sigaction sa;
	struct itimerval it;
	long long t0, t;
	int p[2];

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	if (pipe(p) != 0)
		return 1;
	memset(&it, 0, sizeof(it));
	it.it_interval.tv_usec = 1000;
	it.it_value.tv_usec = 1000;
	if (strcmp(mode, "compute") == 0) {
		/* the same work with or without the timer (ms: the number of chunks here), a
		 * clock read after each chunk */
		long chunks = ms;
		volatile unsigned long x = 0;
		struct timespec ts;

		if (timer)
			setitimer(ITIMER_REAL, &it, NULL);
		t0 = cpu_ns();
		for (long c = 0; c < chunks; c++) {
			for (int k = 0; k < 4000; k++)
				x += (unsigned long)k * 7u;
			clock_gettime(CLOCK_MONOTONIC, &ts);
		}
		t = cpu_ns() - t0;
	} else {
		/* reads ended by the timer (or, without it, by the same number of wake-ups of
		 * a read with a timeout: a poll of 1 ms) */
		int n = ms;
		char c;

		t0 = cpu_ns();
		if (timer) {
			setitimer(ITIMER_REAL, &it, NULL);
			for (int i = 0; i < n; i++)
				if (read(p[0], &c, 1) >= 0 || errno != EINTR)
					return 1;
		} else {
			struct timespec d = { 0, 1000000 };

			for (int i = 0; i < n; i++)
				syscall(SYS_nanosleep, &d, NULL);
		}
		t = cpu_ns() - t0;
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	printf("%lld %d\n", t, (int)runs);
	return 0;
}

/* One worker run, bare or recorded: *ns of work and *n handler runs. */
static int run(const char *self, const char *encore, const char *mode, int timer, int ms,
               long long *ns, int *n)
{
	char cmd[8192], dir[] = "/tmp/encore-sigbench.XXXXXX";
	FILE *f;
	int ok;

	if (encore) {
		if (!mkdtemp(dir))
			return -1;
		snprintf(cmd, sizeof(cmd), "'%s' record -q -o '%s/s' -- '%s' worker %s %d %d", encore,
		         dir, self, mode, timer, ms);
	} else {
		snprintf(cmd, sizeof(cmd), "'%s' worker %s %d %d", self, mode, timer, ms);
	}
	if (!(f = popen(cmd, "r")))
		return -1;
	ok = fscanf(f, "%lld %d", ns, n) == 2;
	if (pclose(f) != 0)
		ok = 0;
	if (encore) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			ok = 0;
	}
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *encore = NULL;
	int ms = 1000, repeat = 3, chunks;
	static const char *const modes[] = { "compute", "block" };

	if (argc == 5 && strcmp(argv[1], "worker") == 0)
		return worker(argv[2], atoi(argv[3]), atoi(argv[4]));
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--encore") == 0 && i + 1 < argc)
			encore = argv[++i];
		else if (strcmp(argv[i], "--ms") == 0 && i + 1 < argc)
			ms = atoi(argv[++i]);
		else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: signal_bench --encore PATH [--ms N] [--repeat R]\n");
			return 2;
		}
	}
	if (!encore) {
		fprintf(stderr, "signal_bench: --encore PATH is required\n");
		return 2;
	}
	{
		/* compute: as many chunks as take ms of CPU bare */
		long long t;
		int k;

		if (run(argv[0], NULL, "compute", 0, 20000, &t, &k) != 0 || t <= 0)
			return 1;
		chunks = (int)((double)ms * 1e6 / ((double)t / 20000));
	}
	printf("1 kHz timer, %d ms of work, fastest of %d runs each\n", ms, repeat);
	fflush(stdout);
	for (size_t m = 0; m < 2; m++) {
		double per[2];

		for (int rec = 0; rec < 2; rec++) {
			long long best[2] = { -1, -1 };
			int n[2] = { 0, 0 };

			for (int r = 0; r < repeat; r++)
				for (int timer = 0; timer < 2; timer++) {
					long long t;
					int k;

					if (run(argv[0], rec ? encore : NULL, modes[m], timer,
					        m == 0 ? chunks : ms, &t, &k) != 0) {
						fprintf(stderr, "signal_bench: a %s run failed\n",
						        rec ? "recorded" : "bare");
						return 1;
					}
					if (best[timer] < 0 || t < best[timer]) {
						best[timer] = t;
						n[timer] = k;
					}
				}
			per[rec] = n[1] > 0 ? (double)(best[1] - best[0]) / n[1] : 0;
			printf("  %-7s %-8s %5d handler runs, %8.0f ns per signal (%s)\n", modes[m],
			       rec ? "recorded" : "bare", n[1], per[rec],
			       m == 0 ? "in computation" : "in a blocking read");
			fflush(stdout);
		}
		printf("  %-7s added by the recorder: %.0f ns per delivered signal\n", modes[m],
		       per[1] - per[0]);
	}
	return 0;
}
