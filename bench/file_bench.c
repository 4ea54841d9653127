/*
 * file_bench.c: what noting file inputs costs (recorder/files.c, schemas/trace-format.md
 * "File inputs").  A loop opens a regular file, reads it to the end and closes it, bare and
 * recorded by `encore record`, for a small file (4 KiB), one as large as the recorder hashes
 * (64 KiB: the hash reads it once more when it is opened) and a larger one (1 MiB: only its
 * first 64 KiB are hashed).  Printed per size: ns per
 * file bare and recorded (the fastest chunk of 200 files of any run), the ratio, and the ns
 * the recorder adds per file opened.  Ratios and differences in one run, never absolute
 * timings in tests.
 *
 *   file_bench --encore PATH [--files N] [--repeat R]
 *   file_bench loop FILE N       (prints the fastest chunk's ns per file)
 *
 * Timing inside the loop uses the clock system call made with the instruction itself, which
 * the recorder does not see (so timing adds no events).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHUNK 200

static long raw_clock(struct timespec *ts)
{
#if defined(__x86_64__)
	long r;

	__asm__ volatile("syscall"
	                 : "=a"(r)
	                 : "a"((long)SYS_clock_gettime), "D"((long)CLOCK_MONOTONIC), "S"(ts)
	                 : "rcx", "r11", "memory");
	return r;
#else
	return syscall(SYS_clock_gettime, CLOCK_MONOTONIC, ts);
#endif
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	raw_clock(&ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int loop(const char *path, long n)
{
	static char buf[64 * 1024];
	uint64_t best = UINT64_MAX;
	long i, k;

	for (i = 0; i < n; i += CHUNK) {
		uint64_t t0 = now_ns(), t;

		for (k = 0; k < CHUNK; k++) {
			int fd = open(path, O_RDONLY);
			ssize_t r;

			if (fd < 0) {
				perror(path);
				return 1;
			}
			while ((r = read(fd, buf, sizeof(buf))) > 0)
				;
			close(fd);
		}
		t = now_ns() - t0;
		if (t < best)
			best = t;
	}
	printf("%.1f\n", (double)best / CHUNK);
	return 0;
}

/* Run argv, its stdout into out (one number).  0 or -1. */
static int run(char *const argv[], double *out)
{
	int p[2], status;
	char text[64] = "";
	pid_t pid;
	ssize_t n;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	n = read(p[0], text, sizeof(text) - 1);
	close(p[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) || n <= 0)
		return -1;
	text[n] = '\0';
	*out = strtod(text, NULL);
	return 0;
}

static int make_file(const char *path, size_t size)
{
	char block[4096];
	FILE *f = fopen(path, "w");
	size_t i;

	if (!f)
		return -1;
	for (i = 0; i < sizeof(block); i++)
		block[i] = (char)('a' + i % 26);
	for (i = 0; i < size; i += sizeof(block))
		fwrite(block, 1, size - i < sizeof(block) ? size - i : sizeof(block), f);
	return fclose(f);
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 4096, 64 << 10, 1 << 20 };
	const char *encore = NULL;
	char self[4096], dir[4096], file[4200], sess[4200], nbuf[32];
	long files = 20000, repeat = 3;
	ssize_t sl;
	int i;

	if (argc == 4 && strcmp(argv[1], "loop") == 0)
		return loop(argv[2], atol(argv[3]));
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--encore") && i + 1 < argc)
			encore = argv[++i];
		else if (!strcmp(argv[i], "--files") && i + 1 < argc)
			files = atol(argv[++i]);
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = atol(argv[++i]);
		else
			encore = NULL, i = argc;
	}
	if (!encore || files < CHUNK || repeat < 1) {
		fprintf(stderr, "usage: file_bench --encore PATH [--files N] [--repeat R]\n");
		return 2;
	}
	sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sl <= 0)
		return 1;
	self[sl] = '\0';
	snprintf(dir, sizeof(dir), "%s/encore-file-bench.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		perror(dir);
		return 1;
	}
	snprintf(nbuf, sizeof(nbuf), "%ld", files);
	printf("file inputs: open + read to the end + close of one file, %ld files per run, "
	       "best of %ld runs\n", files, repeat);
	printf("%10s %12s %12s %8s %14s\n", "size", "bare ns", "recorded ns", "ratio", "added ns/file");
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		double bare = 1e300, rec = 1e300, v;
		long r;

		snprintf(file, sizeof(file), "%s/input.%zu", dir, sizes[s]);
		if (make_file(file, sizes[s]) != 0) {
			perror(file);
			return 1;
		}
		for (r = 0; r < repeat; r++) {
			char *bare_argv[] = { self, "loop", file, nbuf, NULL };
			char *rec_argv[] = { (char *)encore, "record", "-q", "-o", sess, "--name", "fb",
			                     "--", self, "loop", file, nbuf, NULL };
			char cmd[8600];

			if (run(bare_argv, &v) == 0 && v < bare)
				bare = v;
			snprintf(sess, sizeof(sess), "%s/s%zu.%ld", dir, s, r);
			if (run(rec_argv, &v) == 0 && v < rec)
				rec = v;
			snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sess);
			if (system(cmd) != 0)
				fprintf(stderr, "cannot remove %s\n", sess);
		}
		if (bare > 1e299 || rec > 1e299) {
			fprintf(stderr, "a run failed (is ENCORE_RECORD_LIB set?)\n");
			return 1;
		}
		printf("%10zu %12.0f %12.0f %8.2f %14.0f\n", sizes[s], bare, rec, rec / bare, rec - bare);
		unlink(file);
	}
	rmdir(dir);
	return 0;
}
