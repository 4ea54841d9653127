/*
 * record_pingpong.c: what recording costs (recorder/README.md, "What it costs").  Two
 * processes play
 * ping-pong over TCP loopback and over a Unix socketpair with 1-byte and 1 KiB messages,
 * bare, recorded by `encore record`, and under `strace -f -e trace=network` when strace is
 * installed, all in the same run.  Printed: round trips per second, the throughput ratio
 * recorded/bare (and strace/bare), and the bytes of trace per message between recorded
 * processes; then a microbenchmark of recv on a socketpair with data waiting, as ns added
 * per intercepted call.  Ratios in one run, never absolute timings in tests.
 *
 *   record_pingpong --encore PATH [--rounds N] [--repeat R] [--pin same|split]
 *   record_pingpong worker tcp|pair SIZE ROUNDS [PIN] (one ping-pong; prints elapsed ns and
 *                                                    the fastest block's ns per round trip)
 *   record_pingpong mixed tcp|pair SIZE ROUNDS [PIN] (blocks through libc and through raw
 *                                                    system calls, alternating; prints the
 *                                                    median raw/libc time of adjacent blocks)
 *   record_pingpong recvloop CALLS                  (prints ns per recv, fastest chunk)
 *   record_pingpong timeloop CALLS                  (prints ns per time(): no syscall)
 *   record_pingpong cacheloop CALLS                 (prints ns per gettimeofday() between
 *                                                    which 32 random lines of 8 MiB are
 *                                                    touched, a server's work in between: the
 *                                                    fastest chunk of 20,000)
 *   record_pingpong inputloop CALLS                 (the same with a read of up to 128 bytes
 *                                                    from stdin instead of the clock: fed by
 *                                                    an unrecorded writer, every byte is
 *                                                    external input, logged whole)
 *
 * Each configuration runs R times (default 3), bare and recorded runs alternating, and the
 * fastest run of each counts, to damp noise from the machine.  Timing inside the workers
 * uses the clock system call made with the instruction itself, which the recorder does not
 * see (so timing adds no events).
 *
 * Three ratios per configuration, from the least to the most robust to other load on the
 * machine (on a busy 2-core machine the first moves by tens of percent from run to run):
 *   ratio   whole runs: bare elapsed / recorded elapsed, the fastest run of each;
 *   block   the same from the fastest block of ROUNDS/100 round trips of any run (load only
 *           ever slows a block down; the recorder's chunk flushes, one per ~6000 round trips
 *           per process, are ~0.1% of the time, so a block without one flatters it little);
 *   in-run  one pair of processes alternating blocks of 500 round trips that call send/recv
 *           through libc (logged when recorded) with blocks that make the same system calls
 *           raw (never logged): the median over adjacent pairs of raw time / libc time, the
 *           median of the R runs; recorded divided by bare (libc's wrappers and syscall(2)
 *           differ a little even bare).  Both blocks of a pair run a few ms apart in the same
 *           processes, placement and load: only the logging differs.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity */
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <ftw.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A system call made with the instruction itself: libc's syscall(3) is an exported function
 * the recorder may interpose (it does, to see syscall(SYS_getrandom)), so going through it
 * would put the recorder's pass-through into the "raw" side of the comparisons. */
static long raw_syscall(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
#if defined(__x86_64__)
	long r;
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;

	__asm__ volatile("syscall"
	                 : "=a"(r)
	                 : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
	                 : "rcx", "r11", "memory");
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return r;
#else
	return syscall(n, a1, a2, a3, a4, a5, a6);
#endif
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	raw_syscall(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&ts, 0, 0, 0, 0);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int xfer(int fd, char *buf, size_t n, int out)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = out ? send(fd, buf + done, n - done, 0) : recv(fd, buf + done, n - done, 0);

		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return -1;
		}
		done += (size_t)r;
	}
	return 0;
}

/* --- the measured program ------------------------------------------------------------------ */

/* One message each way through raw system calls: the recorder does not see them. */
static int xfer_raw(int fd, char *buf, size_t n, int out)
{
	size_t done = 0;

	while (done < n) {
		long r = raw_syscall(out ? SYS_sendto : SYS_recvfrom, fd, (long)(buf + done),
		                     (long)(n - done), 0, 0, 0);

		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return -1;
		}
		done += (size_t)r;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of n values (sorts them). */
static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define MAX_BLOCKS 4096

/* mixed 0: every round trip through libc (send/recv: intercepted when recorded); prints the
 * elapsed ns and the fastest block's ns per round trip (blocks of ROUNDS/100).
 * mixed 1: blocks of WORKER_PAIR round trips alternate between libc and raw system calls
 * (both processes switch at the same round trip); each libc block is paired with the raw
 * block that follows it, and the median of raw/libc over the pairs is printed: the two
 * blocks of a pair run a few ms apart in the same processes, so load from elsewhere hits
 * both alike, and the median ignores the pairs a burst of load split. */
/* --pin: the two processes on one CPU ("same") or on CPUs 0 and 1 ("split"), else where the
 * scheduler puts them.  Placement is decided early in a run and rarely changes (a few
 * migrations per run), and on this VM a round trip costs ~25 us on one CPU and ~32 us split,
 * so unpinned whole-run ratios are bimodal; pinning takes placement out of the comparison.
 * sched_setaffinity is not intercepted. */
static const char *pin_mode = "";

static void pin_self(int child)
{
	cpu_set_t set;

	if (strcmp(pin_mode, "same") && strcmp(pin_mode, "split"))
		return;
	CPU_ZERO(&set);
	CPU_SET(!strcmp(pin_mode, "split") && child ? 1 : 0, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

#define WORKER_PAIR 500
static int worker(const char *transport, size_t size, long rounds, int mixed)
{
	int fds[2], lfd = -1, one = 1, status, nb = 0;
	char buf[65536];
	static double blk[2][MAX_BLOCKS];
	uint64_t t0, t1, tb;
	long block, i;
	double best = -1;
	pid_t pid;

	block = mixed ? WORKER_PAIR : rounds / 100;
	if (block < 1)
		block = 1;
	if (rounds / block > 2 * MAX_BLOCKS)
		block = rounds / (2 * MAX_BLOCKS) + 1;
	memset(buf, 'x', sizeof(buf));
	if (!strcmp(transport, "pair")) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0)
			return 1;
	} else {
		struct sockaddr_in sa;
		socklen_t len = sizeof(sa);

		lfd = socket(AF_INET, SOCK_STREAM, 0);
		memset(&sa, 0, sizeof(sa));
		sa.sin_family = AF_INET;
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1) ||
		    getsockname(lfd, (struct sockaddr *)&sa, &len))
			return 1;
		fds[0] = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(fds[0], (struct sockaddr *)&sa, sizeof(sa)) != 0)
			return 1;
		fds[1] = accept(lfd, NULL, NULL);
		close(lfd);
		setsockopt(fds[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		setsockopt(fds[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	pid = fork();
	if (pid == 0) {
		pin_self(1);
		close(fds[0]);
		for (i = 0; i < rounds; i++) {
			int raw = mixed && (i / block) % 2 == 1;

			if (raw ? xfer_raw(fds[1], buf, size, 0) || xfer_raw(fds[1], buf, size, 1)
			        : xfer(fds[1], buf, size, 0) || xfer(fds[1], buf, size, 1))
				_exit(1);
		}
		_exit(0);
	}
	pin_self(0);
	close(fds[1]);
	t0 = tb = now_ns();
	for (i = 0; i < rounds; i++) {
		int raw = mixed && (i / block) % 2 == 1;

		if (raw ? xfer_raw(fds[0], buf, size, 1) || xfer_raw(fds[0], buf, size, 0)
		        : xfer(fds[0], buf, size, 1) || xfer(fds[0], buf, size, 0))
			return 1;
		if ((i + 1) % block == 0) {
			uint64_t t = now_ns();
			double per = (double)(t - tb) / (double)block;

			if (!raw && (best < 0 || per < best))
				best = per;
			if (nb / 2 < MAX_BLOCKS)
				blk[raw][nb / 2] = per;
			nb++;
			tb = t;
		}
	}
	t1 = now_ns();
	close(fds[0]);
	waitpid(pid, &status, 0);
	if (mixed) {
		int k, pairs = nb / 2 < MAX_BLOCKS ? nb / 2 : MAX_BLOCKS;

		if (pairs == 0)
			return 1;
		for (k = 0; k < pairs; k++)
			blk[0][k] = blk[1][k] / blk[0][k];
		printf("%.4f\n", median(blk[0], pairs));
	} else {
		printf("%llu %.1f\n", (unsigned long long)(t1 - t0), best);
	}
	return 0;
}

/* recv of 1 byte on a socketpair that always has data waiting: the cost of one call.  The
 * calls run in chunks (the socket buffer is refilled between them, untimed); the fastest
 * chunk's ns per call is printed, as load from other processes only slows a chunk down.
 * (Chunks alternating with raw recvfrom calls, as the ping-pong's in-run column does, were
 * tried: the libc - raw difference of a pair moved from 2 to 1000 ns between bare runs on
 * this VM, so that comparison is not printed.) */
#define RECV_CHUNK 4096
static int recvloop(long calls)
{
	static char fill[RECV_CHUNK];
	int sv[2];
	double best = -1;
	long done = 0;
	char c;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 1;
	while (done + RECV_CHUNK <= calls) {
		uint64_t t0;
		double per;
		long k;

		if (xfer_raw(sv[0], fill, RECV_CHUNK, 1))
			return 1;
		t0 = now_ns();
		for (k = 0; k < RECV_CHUNK; k++)
			if (recv(sv[1], &c, 1, 0) != 1)
				return 1;
		per = (double)(now_ns() - t0) / RECV_CHUNK;
		if (best < 0 || per < best)
			best = per;
		done += RECV_CHUNK;
	}
	if (best < 0)
		return 1;
	printf("%.1f\n", best);
	return 0;
}

/* time() is answered by the vDSO without entering the kernel: bare it costs a few ns, so
 * recorded it measures the recorder's logging path alone (one CLOCK event per call). */
static int timeloop(long calls)
{
	volatile long sink = 0;
	uint64_t t0 = now_ns();
	long i;

	for (i = 0; i < calls; i++)
		sink += (long)time(NULL);
	printf("%.1f\n", (double)(now_ns() - t0) / (double)calls);
	return sink == 42; /* never: keeps the loop */
}

/* A server reads the clock between pieces of its own work, which evict what the recorder
 * touched the time before: each gettimeofday here is preceded by 32 reads and writes of random
 * lines of an 8 MiB buffer, so recorded minus bare is the logging path with cold caches
 * (bench/README.md, "Third round"). */
static int cacheloop(long calls, int input)
{
	const size_t size = 8u << 20, chunk = 20000;
	uint8_t *buf = malloc(size);
	uint64_t x = 88172645463325252ull;
	volatile long sink = 0;
	double best = -1;
	long i = 0;

	if (!buf)
		return 1;
	memset(buf, 1, size);
	while (i < calls) {
		uint64_t t0 = now_ns();
		size_t k;

		for (k = 0; k < chunk; k++, i++) {
			struct timeval tv;

			for (int j = 0; j < 32; j++) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				sink += buf[(x % (size / 64)) * 64]++;
			}
			if (input) {
				char b[128];

				if (read(0, b, sizeof(b)) <= 0)
					return 1;
				sink += b[0];
			} else {
				gettimeofday(&tv, NULL);
				sink += tv.tv_usec;
			}
		}
		{
			double ns = (double)(now_ns() - t0) / (double)chunk;

			if (best < 0 || ns < best)
				best = ns;
		}
	}
	printf("%.1f\n", best);
	free(buf);
	return sink == 42; /* never: keeps the loop */
}

/* --- the driver ---------------------------------------------------------------------------- */

static char self[4096];
static const char *encore;

/* Run argv, return the first number of its stdout's first line, or -1; the second number
 * goes to *second when asked (-1 when absent). */
static double run2(char *const argv[], double *second)
{
	int p[2], status;
	char out[256] = "";
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe(p) != 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(p[1], 1);
		dup2(null, 2);
		close(p[0]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], out + got, sizeof(out) - 1 - (size_t)got)) > 0)
		got += n;
	close(p[0]);
	waitpid(pid, &status, 0);
	if (second)
		*second = -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got == 0)
		return -1;
	{
		char *end;
		double first = strtod(out, &end);

		if (second && end != out)
			*second = strtod(end, NULL);
		return first;
	}
}

static double run(char *const argv[])
{
	return run2(argv, NULL);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static long long dir_trace_bytes(const char *dir)
{
	char cmd[8192];
	long long total = 0;
	FILE *f;
	char line[4096];

	/* Sizes of the trace files only (not the registry). */
	snprintf(cmd, sizeof(cmd), "find '%s' -maxdepth 1 -name '*.trace' -printf '%%s\\n'", dir);
	if (!(f = popen(cmd, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		total += atoll(line);
	pclose(f);
	return total;
}

enum { BARE, RECORDED, STRACE };

/* One run of a configuration: `what` is "worker" or "mixed".  Returns the first number the
 * worker printed (elapsed ns, or the fastest libc block), the second in *second; for
 * RECORDED, the trace size in *trace_bytes when asked. */
static double measure(int how, const char *what, const char *transport, size_t size,
                      long rounds, long long *trace_bytes, double *second)
{
	char sz[32], rn[32], dir[4200], tmpl[4096];
	double t;

	snprintf(sz, sizeof(sz), "%zu", size);
	snprintf(rn, sizeof(rn), "%ld", rounds);
	if (how == BARE) {
		char *argv[] = { self, (char *)what, (char *)transport, sz, rn, (char *)pin_mode,
			         NULL };

		return run2(argv, second);
	}
	if (how == STRACE) {
		char *argv[] = { "strace", "-f", "-qq", "-e", "trace=network", "-o", "/dev/null",
			         self, (char *)what, (char *)transport, sz, rn, (char *)pin_mode, NULL };

		return run2(argv, second);
	}
	snprintf(tmpl, sizeof(tmpl), "%s/encore-bench.XXXXXX",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpl))
		return -1;
	snprintf(dir, sizeof(dir), "%s/s", tmpl);
	{
		char *argv[] = { (char *)encore, "record", "-q", "-o", dir, "--name", "pp",
			         "--", self, (char *)what, (char *)transport, sz, rn, (char *)pin_mode,
			         NULL };

		t = run2(argv, second);
	}
	if (trace_bytes)
		*trace_bytes = dir_trace_bytes(dir);
	nftw(tmpl, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return t;
}

static void keep_min(double *best, double x)
{
	if (x > 0 && (*best < 0 || x < *best))
		*best = x;
}

int main(int argc, char **argv)
{
	static const char *const transports[] = { "tcp", "pair" };
	static const size_t sizes[] = { 1, 1024 };
	long rounds = 100000;
	int repeat = 3, have_strace, i, t, s;
	ssize_t n;

	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "worker")) {
		pin_mode = argc == 6 ? argv[5] : "";
		return worker(argv[2], (size_t)atol(argv[3]), atol(argv[4]), 0);
	}
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "mixed")) {
		pin_mode = argc == 6 ? argv[5] : "";
		return worker(argv[2], (size_t)atol(argv[3]), atol(argv[4]), 1);
	}
	if (argc == 3 && !strcmp(argv[1], "recvloop"))
		return recvloop(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "timeloop"))
		return timeloop(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "cacheloop"))
		return cacheloop(atol(argv[2]), 0);
	if (argc == 3 && !strcmp(argv[1], "inputloop"))
		return cacheloop(atol(argv[2]), 1);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--encore") && i + 1 < argc)
			encore = argv[++i];
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atol(argv[++i]);
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--pin") && i + 1 < argc &&
		         (!strcmp(argv[i + 1], "same") || !strcmp(argv[i + 1], "split")))
			pin_mode = argv[++i];
		else {
			fprintf(stderr, "usage: record_pingpong --encore PATH [--rounds N] [--repeat R] [--pin same|split]\n");
			return 2;
		}
	}
	if (!encore || rounds <= 0 || repeat <= 0) {
		fprintf(stderr, "usage: record_pingpong --encore PATH [--rounds N] [--repeat R] [--pin same|split]\n");
		return 2;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = '\0';
	have_strace = system("strace -V >/dev/null 2>&1") == 0;

	printf("ping-pong, %ld round trips, best of %d runs, %s (targets: recorded/bare >= 0.97 "
	       "for tcp 1024, >= 0.90 worst case; <= 4 trace bytes per message)\n",
	       rounds, repeat,
	       !strcmp(pin_mode, "same")    ? "both processes on CPU 0"
	       : !strcmp(pin_mode, "split") ? "processes on CPUs 0 and 1"
	                                    : "placed by the scheduler");
	printf("%-5s %6s %12s %12s %7s %7s %7s %10s %8s\n", "chan", "size", "bare rt/s",
	       "rec rt/s", "ratio", "block", "in-run", "B/message", have_strace ? "strace" : "");
	for (t = 0; t < 2; t++) {
		for (s = 0; s < 2; s++) {
			long long bytes = -1, bytes0 = -1;
			double bare = -1, rec = -1, bare_blk = -1, rec_blk = -1, x, y;
			double inrun[64], inbare[64];
			int k, nin = 0, nib = 0;

			/* Bare and recorded runs alternate, so that a change in the machine's load
			 * during the benchmark hits both alike; the fastest of each counts. */
			for (k = 0; k < repeat; k++) {
				x = measure(BARE, "worker", transports[t], sizes[s], rounds, NULL, &y);
				keep_min(&bare, x);
				keep_min(&bare_blk, y);
				x = measure(RECORDED, "worker", transports[t], sizes[s], rounds,
				            k ? NULL : &bytes, &y);
				keep_min(&rec, x);
				keep_min(&rec_blk, y);
				/* libc and raw blocks alternating (in-run), bare then recorded: libc's
				 * wrappers and syscall(2) differ a little even bare. */
				x = measure(BARE, "mixed", transports[t], sizes[s], rounds, NULL, NULL);
				if (x > 0 && nib < 64)
					inbare[nib++] = x;
				x = measure(RECORDED, "mixed", transports[t], sizes[s], rounds, NULL, NULL);
				if (x > 0 && nin < 64)
					inrun[nin++] = x;
			}
			double st = have_strace ? measure(STRACE, "worker", transports[t], sizes[s],
			                                  rounds / 10, NULL, NULL) * 10
			                        : -1;

			/* The fixed cost of a trace file (header, tail region): a run with no rounds. */
			measure(RECORDED, "worker", transports[t], sizes[s], 0, &bytes0, NULL);
			if (bare <= 0 || rec <= 0) {
				printf("%-5s %6zu  failed to run\n", transports[t], sizes[s]);
				continue;
			}
			printf("%-5s %6zu %12.0f %12.0f %7.3f %7.3f %7.3f %10.2f", transports[t], sizes[s],
			       rounds / (bare / 1e9), rounds / (rec / 1e9), bare / rec,
			       bare_blk > 0 && rec_blk > 0 ? bare_blk / rec_blk : -1.0,
			       nin && nib ? median(inrun, nin) / median(inbare, nib) : -1.0,
			       bytes >= 0 && bytes0 >= 0 ? (double)(bytes - bytes0) / (2.0 * rounds) : -1.0);
			if (st > 0)
				printf(" %8.3f", bare / st);
			printf("\n");
		}
	}
	printf("(ratio: whole runs; block: fastest blocks of %ld round trips; in-run: raw/libc "
	       "time of alternating blocks of %d round trips, median, recorded over bare)\n",
	       rounds >= 100 ? rounds / 100 : 1, WORKER_PAIR);
	if (have_strace)
		printf("(strace column: strace/bare throughput ratio, from a run of %ld round trips)\n",
		       rounds / 10);

	{
		char calls[32];
		char *bare_argv[] = { self, "recvloop", calls, NULL };
		char *rec_argv[] = { (char *)encore, "record", "-q", "-o", NULL, "--name", "loop", "--",
			             self, "recvloop", calls, NULL };
		char tmpl[4096], dir[4200];
		double b = -1, r = -1, x;

		snprintf(calls, sizeof(calls), "%ld", rounds * 10);
		for (i = 0; i < repeat; i++) {
			keep_min(&b, run(bare_argv));
			snprintf(tmpl, sizeof(tmpl), "%s/encore-bench.XXXXXX",
			         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
			if (!mkdtemp(tmpl))
				break;
			snprintf(dir, sizeof(dir), "%s/s", tmpl);
			rec_argv[4] = dir;
			keep_min(&r, run(rec_argv));
			nftw(tmpl, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		}
		printf("recv of 1 byte on a socketpair with data waiting (%s calls, fastest chunk of "
		       "%d): bare %.1f ns, recorded %.1f ns, added %.1f ns per call (target <= 150)\n",
		       calls, RECV_CHUNK, b, r, r - b);

		/* The same without the system call's noise: the logging path alone. */
		bare_argv[1] = "timeloop";
		rec_argv[9] = "timeloop";
		b = r = -1;
		for (i = 0; i < repeat; i++) {
			x = run(bare_argv);
			if (x > 0 && (b < 0 || x < b))
				b = x;
			snprintf(tmpl, sizeof(tmpl), "%s/encore-bench.XXXXXX",
			         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
			if (!mkdtemp(tmpl))
				break;
			snprintf(dir, sizeof(dir), "%s/s", tmpl);
			rec_argv[4] = dir;
			x = run(rec_argv);
			if (x > 0 && (r < 0 || x < r))
				r = x;
			nftw(tmpl, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		}
		printf("time() through the vDSO, one CLOCK event per call (%s calls): bare %.1f ns, "
		       "recorded %.1f ns: the logging path costs %.1f ns\n",
		       calls, b, r, r - b);
	}
	return 0;
}
