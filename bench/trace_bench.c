/*
 * trace_bench.c: the trace format's cost.  Writes 1e6 send/recv events shaped like a
 * ping-pong between two processes (alternating send and recv on one channel, a few call
 * sites, a content check every 64 events per direction), then reads them back.  Prints
 * compressed bytes per event (the recorder's disk cost) and the ratio to a naive fixed-size
 * record, and the writer's and reader's speed.
 *
 *   trace_bench [EVENTS]      (default 1000000)
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"

/* The baseline: an uncompressed fixed record (kind, call, fd, channel, site, result, len,
 * time, hash), what a naive binary log would write per event. */
#define FIXED ((size_t)48)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* One run: returns compressed file size; fills write/read seconds. */
static uint64_t run(const char *dir, const char *label, uint64_t n, int stamp, double *tw,
                    double *tr)
{
	char path[4096];
	struct trace_process p;
	struct trace_writer *w;
	struct trace_reader *r;
	struct trace_diag d;
	struct trace_event ev;
	struct stat st;
	uint64_t i, t = 1000000000ull, got = 0, sum = 0;
	double t0;

	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "bench");
	snprintf(path, sizeof(path), "%s/%s.trace", dir, label);
	if (trace_writer_open(AT_FDCWD, path, &p, NULL, 0, &w, &d) != 0) {
		fprintf(stderr, "trace_bench: %s: %s\n", path, d.msg);
		exit(1);
	}
	t0 = now();
	for (i = 0; i < n; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.kind = (i & 1) ? TRACE_EV_RECV : TRACE_EV_SEND;
		ev.call = (i & 1) ? TRACE_CALL_RECV : TRACE_CALL_SEND;
		ev.fd = 3;
		ev.channel = 1;
		ev.site = 1 + (uint32_t)(i & 1);
		ev.result = 1024;
		ev.len = (i & 1) ? 4096 : 1024;
		if (stamp) {
			t += 8000 + next() % 4000; /* a round trip every ~10 us, with jitter */
			ev.time_ns = t / 1000 * 1000; /* the recorder stamps to the microsecond */
		}
		if ((i >> 1) % 64 == 63) {
			ev.has_hash = 1;
			ev.hash = (uint32_t)next();
		}
		if (trace_writer_event(w, &ev) != 0) {
			fprintf(stderr, "trace_bench: write failed\n");
			exit(1);
		}
	}
	if (trace_writer_close(w) != 0)
		exit(1);
	*tw = now() - t0;
	stat(path, &st);

	t0 = now();
	if (trace_reader_open(path, &r, &d) != 0) {
		fprintf(stderr, "trace_bench: %s: %s\n", path, d.msg);
		exit(1);
	}
	while (trace_reader_next(r, &ev) > 0) {
		got++;
		sum += ev.offset;
	}
	trace_reader_close(r);
	*tr = now() - t0;
	if (got != n || sum == 0) {
		fprintf(stderr, "trace_bench: read %" PRIu64 " of %" PRIu64 " events\n", got, n);
		exit(1);
	}
	unlink(path);
	return (uint64_t)st.st_size;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	char dir[] = "/tmp/encore-trace-bench-XXXXXX";
	double tw, tr;
	uint64_t size;
	int stamp;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	printf("trace format, %" PRIu64 " send/recv events (ping-pong, 1 KiB messages)\n", n);
	for (stamp = 0; stamp <= 1; stamp++) {
		size = run(dir, stamp ? "stamped" : "plain", n, stamp, &tw, &tr);
		printf("  %-26s %6.2f bytes/event (file %" PRIu64 " bytes, %.0fx smaller than a "
		       "fixed %zu-byte record)  write %5.1f Mev/s  read %5.1f Mev/s\n",
		       stamp ? "timestamp on every event:" : "no timestamps:",
		       (double)size / (double)n, size, (double)(n * FIXED) / (double)size, FIXED,
		       (double)n / tw / 1e6, (double)n / tr / 1e6);
	}
	rmdir(dir);
	return 0;
}
