/*
 * fuzz_driver.c: runs fuzz targets without libFuzzer, on deterministic mutations of valid
 * inputs, so that every build (gcc included, sanitizers when configured) exercises them in the
 * 'fuzz' test suite.  The seed inputs are real traces made with the writer: one of every event
 * kind with stacks and inherit records, a stream with records spanning chunks, and that stream
 * in a file with two tails whose writer died with a full tail waiting for its drain
 * (schemas/trace-format.md, "Two tails").
 *
 *   fuzz_driver [ITERATIONS] [SEED]
 *   fuzz_driver --seeds DIR      write the seed inputs into DIR (a libFuzzer corpus)
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t s;

static uint64_t rnd(void)
{
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return s;
}

static uint8_t *make_seed(const char *path, int spanning, int two_tails, size_t *n)
{
	struct trace_process p;
	static int due;
	struct trace_writer_options o = { 4096, 0, 0, 0, two_tails ? &due : NULL, 0 };
	struct trace_writer *w;
	struct trace_diag d;
	struct trace_frame f[2] = { { 0x401000, 16, "main", "prog" }, { 0x7f00, 0, "start", "libc" } };
	static uint8_t big[9000];
	struct trace_endpoint ep;
	uint8_t epbuf[TRACE_ENDPOINT_MAX];
	struct stat st;
	uint8_t *buf;
	uint32_t k;
	FILE *fp;
	int i;

	memset(&p, 0, sizeof(p));
	strcpy(p.name, "seed");
	strcpy(p.exe, "/bin/prog");
	unlink(path);
	if (trace_writer_open(AT_FDCWD, path, &p, &o, 0, &w, &d) != 0) {
		fprintf(stderr, "fuzz_driver: %s\n", d.msg);
		exit(1);
	}
	trace_writer_inherit(w, 2, 10, 20);
	trace_writer_stack(w, 1, f, 2);
	{
		/* a file input record (schemas/trace-format.md, "File inputs") */
		struct trace_file_input fi;

		memset(&fi, 0, sizeof(fi));
		fi.kind = TRACE_FILE_LIB;
		fi.size = 1234;
		fi.mtime_ns = 1700000000000000000ll;
		fi.build_id_len = 20;
		fi.path = "/lib/libseed.so";
		fi.resolved = "/usr/lib/libseed.so.1";
		trace_writer_file(w, &fi);
	}
	{
		/* an environment record (schemas/trace-format.md, "Environment") */
		char *env[] = { "PATH=/usr/bin", "", "A=b=c" };

		trace_writer_env(w, env, 3);
	}
	/* a path record (schemas/trace-format.md, "Paths created") */
	trace_writer_path(w, TRACE_PATH_FILE, 1700000000000000000ll, "/tmp/seed/created",
	                  "/tmp/seed/old");
	memset(&ep, 0, sizeof(ep));
	ep.type = TRACE_CHAN_UNIX;
	ep.inode = 77;
	ep.local_len = 10;
	memcpy(ep.local, "\x01\x00/tmp/sock", 10);
	for (i = 0; i < (spanning ? 40 : 2); i++)
		for (k = 1; k <= TRACE_EV_KIND_MAX; k++) {
			struct trace_event ev;

			memset(&ev, 0, sizeof(ev));
			ev.kind = k;
			ev.fd = 3;
			ev.channel = 2;
			ev.site = 1;
			ev.result = (int64_t)k * 3;
			ev.time_ns = 1000u * k;
			ev.naux = 1;
			ev.aux[0] = k;
			if (k == TRACE_EV_SOCKET) {
				ev.data = epbuf;
				ev.data_len = (uint32_t)trace_endpoint_encode(&ep, epbuf, sizeof(epbuf));
			} else if (spanning && k == TRACE_EV_INPUT) {
				ev.data = big;
				ev.data_len = sizeof(big);
			}
			trace_writer_event(w, &ev);
		}
	if (two_tails)
		trace_writer_abandon(w); /* dead: never drained, never closed */
	else
		trace_writer_close(w);
	stat(path, &st);
	*n = (size_t)st.st_size;
	buf = malloc(*n + 1);
	fp = fopen(path, "rb");
	if (!fp || fread(buf + 1, 1, *n, fp) != *n)
		exit(1);
	fclose(fp);
	buf[0] = 0; /* whole-file mode */
	(*n)++;
	unlink(path);
	return buf;
}

static void write_seeds(const char *dir, uint8_t *const *seeds, const size_t *sizes)
{
	int k;

	for (k = 0; k < 3; k++) {
		char path[4096];
		FILE *f;

		snprintf(path, sizeof(path), "%s/seed-%d", dir, k);
		f = fopen(path, "wb");
		if (!f || fwrite(seeds[k], 1, sizes[k], f) != sizes[k]) {
			perror(path);
			exit(1);
		}
		fclose(f);
	}
}

int main(int argc, char **argv)
{
	int seed_mode = argc > 2 && strcmp(argv[1], "--seeds") == 0;
	long iters = argc > 1 && !seed_mode ? atol(argv[1]) : 20000, i;
	char path[64];
	uint8_t *seeds[3], *m;
	size_t sizes[3], j;

	s = argc > 2 && !seed_mode ? strtoull(argv[2], NULL, 0) : 0x2545F4914F6CDD1Dull;
	snprintf(path, sizeof(path), "/tmp/encore-fuzz-seed-%d.trace", (int)getpid());
	seeds[0] = make_seed(path, 0, 0, &sizes[0]);
	seeds[1] = make_seed(path, 1, 0, &sizes[1]);
	seeds[2] = make_seed(path, 1, 1, &sizes[2]);
	if (seed_mode) {
		write_seeds(argv[2], seeds, sizes);
		return 0;
	}
	m = malloc((sizes[1] > sizes[2] ? sizes[1] : sizes[2]) + 64);
	for (i = 0; i < iters; i++) {
		int which = (int)(rnd() % 3);
		size_t n = sizes[which], flips = 1 + rnd() % 8;

		memcpy(m, seeds[which], n);
		switch (rnd() % 4) {
		case 0: /* flips anywhere */
			for (j = 0; j < flips; j++)
				m[1 + rnd() % (n - 1)] ^= (uint8_t)(1u << (rnd() % 8));
			break;
		case 1: /* truncation */
			n = 1 + rnd() % (n - 1);
			break;
		case 2: /* a random raw record stream into the tail */
			m[0] = 1;
			n = 1 + rnd() % 2048;
			for (j = 1; j < n; j++)
				m[j] = (uint8_t)rnd();
			for (j = 1; j < n; j++) /* bias toward small tags and varints */
				if (rnd() % 3 == 0)
					m[j] &= 0x1f;
			break;
		default: /* a field of the header or a chunk header set to an extreme */
			for (j = 0; j < flips; j++)
				m[1 + rnd() % (n < 200 ? n - 1 : 200)] = (uint8_t)(rnd() % 2 ? 0xff : 0);
			break;
		}
		LLVMFuzzerTestOneInput(m, n);
	}
	printf("fuzz_driver: %ld inputs, no crash\n", iters);
	free(m);
	free(seeds[0]);
	free(seeds[1]);
	free(seeds[2]);
	return 0;
}
