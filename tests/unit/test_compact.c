/*
 * test_compact.c: chunks stored by the writer (TRACE_LEVEL_STORE) and compressed afterwards
 * by trace_compact_file (libtrace/compact.c): a stored file reads back as any other; the
 * compacted file gives the same events, tail and closed mark, and is smaller; a file a
 * writer still has open, a damaged one and one with nothing stored are left byte for byte as
 * they were.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "trace.h"
#include "unit.h"
#include "unit_trace.h"

#define NEVENTS 3000

/* Two tails (trace_writer_options.drain_due), set by the loop tests from their iteration: 0
 * one tail; 1 each full tail drained at once, as the recorder does; 2 never drained by the
 * caller (the next switch or the close drains it; a killed writer leaves one waiting). */
static int tails_mode;
static int drain_due;

static struct trace_writer *open_writer(const char *path, int level, uint64_t max_bytes)
{
	struct trace_process p;
	struct trace_writer_options o = { 4096, level, max_bytes, 0,
	                                  tails_mode ? &drain_due : NULL, 0 };
	struct trace_writer *w = NULL;
	struct trace_diag d;

	if (!tails_mode)
		return unit_writer_open(path, 4096, level, max_bytes);
	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "t");
	p.pid = 1;
	p.start_realtime_ns = 1;
	ck_assert_msg(trace_writer_open(AT_FDCWD, path, &p, &o, 0, &w, &d) == 0, "%s", d.msg);
	return w;
}

/* Event i (1-based): receives of text a server would get, clock reads, and now and then
 * bytes that do not compress. */
static void make_event(struct trace_event *ev, uint64_t i, uint8_t *buf)
{
	memset(ev, 0, sizeof(*ev));
	ev->fd = -1;
	if (i % 3 == 0) {
		ev->kind = TRACE_EV_CLOCK;
		ev->call = TRACE_CALL_GETTIMEOFDAY;
		return;
	}
	ev->kind = TRACE_EV_RECV;
	ev->call = TRACE_CALL_READ;
	ev->fd = 5;
	ev->channel = 2;
	if (i % 17 == 0) {
		struct unit_rng r;

		unit_rng_seed(&r, i);
		for (int k = 0; k < 200; k++)
			buf[k] = (uint8_t)unit_rng_next(&r);
		ev->result = 200;
	} else {
		ev->result = snprintf((char *)buf, 256,
		                      "GET /index-%llu.html HTTP/1.1\r\nHost: x\r\n\r\n",
		                      (unsigned long long)(i % 50));
	}
	ev->len = (uint64_t)ev->result;
	ev->data = buf;
	ev->data_len = (uint32_t)ev->result;
}

static void write_events(struct trace_writer *w, uint64_t from, uint64_t to)
{
	uint8_t buf[256];
	struct trace_event ev;

	for (uint64_t i = from; i <= to; i++) {
		make_event(&ev, i, buf);
		ck_assert_int_eq(trace_writer_event(w, &ev), 0);
		if (drain_due && tails_mode == 1 && trace_writer_claim(w))
			trace_writer_drain(w);
		drain_due = 0;
	}
}

/* Every event of the file is the one written, n of them; returns the closed mark. */
static int check_events(const char *path, uint64_t n)
{
	struct trace_reader *r = NULL;
	struct trace_diag d;
	struct trace_event ev, want;
	uint8_t buf[256];
	uint64_t got = 0;
	int rc, closed;

	ck_assert_int_eq(trace_reader_open(path, &r, &d), 0);
	while ((rc = trace_reader_next(r, &ev)) == 1) {
		got++;
		make_event(&want, got, buf);
		ck_assert_uint_eq(ev.index, got);
		ck_assert_uint_eq(ev.kind, want.kind);
		ck_assert_int_eq(ev.result, want.result);
		ck_assert_uint_eq(ev.data_len, want.data_len);
		if (want.data_len)
			ck_assert(memcmp(ev.data, want.data, want.data_len) == 0);
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(got, n);
	ck_assert_int_eq(trace_reader_damage(r, &d), 0);
	closed = trace_reader_closed(r);
	trace_reader_close(r);
	return closed;
}

static uint8_t *slurp(const char *path, size_t *n)
{
	struct stat st;
	uint8_t *p;
	FILE *f = fopen(path, "rb");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fstat(fileno(f), &st), 0);
	p = malloc((size_t)st.st_size + 1);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(fread(p, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	*n = (size_t)st.st_size;
	return p;
}

static int compact(const char *dir, const char *name, struct trace_compact_stats *st)
{
	struct trace_diag d;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY), rc;

	ck_assert_int_ge(dfd, 0);
	memset(&d, 0, sizeof(d));
	rc = trace_compact_file(dfd, name, 3, st, &d);
	ck_assert_msg(rc >= 0, "compact %s: %s", name, d.msg);
	close(dfd);
	return rc;
}

/* The file compact leaves alone is the same bytes afterwards. */
static void assert_untouched(const char *dir, const char *name, int want_busy)
{
	char path[1200];
	struct trace_compact_stats st;
	uint8_t *a, *b;
	size_t na, nb;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	a = slurp(path, &na);
	ck_assert_int_eq(compact(dir, name, &st), 0);
	ck_assert_int_eq(st.busy, want_busy);
	b = slurp(path, &nb);
	ck_assert_uint_eq(na, nb);
	ck_assert(memcmp(a, b, na) == 0);
	free(a);
	free(b);
}

START_TEST(stored_then_compacted)
{
	char dir[1024], path[1200], tmp[1300];
	struct trace_compact_stats st;
	struct trace_writer *w;
	struct stat s1;

	tails_mode = _i;
	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/t.trace", dir);
	w = open_writer(path, TRACE_LEVEL_STORE, 0);
	write_events(w, 1, NEVENTS);
	ck_assert_int_eq(trace_writer_close(w), 0);
	ck_assert_int_eq(stat(path, &s1), 0);
	/* stored: about the raw bytes (40 per receive), far more than compressed */
	ck_assert_int_gt(s1.st_size, 4096 + NEVENTS * 20);
	ck_assert_int_eq(check_events(path, NEVENTS), 1);

	/* a temporary file a killed compaction left does not stop the next */
	snprintf(tmp, sizeof(tmp), "%s/.t.trace.compact", dir);
	close(open(tmp, O_WRONLY | O_CREAT, 0600));
	ck_assert_int_eq(compact(dir, "t.trace", &st), 1);
	ck_assert_uint_eq(st.before, (uint64_t)s1.st_size);
	ck_assert_uint_gt(st.chunks, 10);
	ck_assert_int_eq(access(tmp, F_OK), -1);
	ck_assert_int_eq(stat(path, &s1), 0);
	ck_assert_uint_eq(st.after, (uint64_t)s1.st_size);
	ck_assert_uint_lt(st.after, st.before / 2);
	ck_assert_int_eq(s1.st_mode & 0777, 0600);
	ck_assert_int_eq(check_events(path, NEVENTS), 1);
	/* nothing stored is left: a second pass changes nothing */
	assert_untouched(dir, "t.trace", 0);
	unit_rmdir(dir);
}
END_TEST

START_TEST(open_writer_left_alone)
{
	char dir[1024], path[1200];
	struct trace_writer *w;
	struct trace_compact_stats st;

	tails_mode = _i;
	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/t.trace", dir);
	w = open_writer(path, TRACE_LEVEL_STORE, 0);
	write_events(w, 1, NEVENTS);
	ck_assert_int_eq(trace_writer_flush(w), 0);
	assert_untouched(dir, "t.trace", 1);
	/* the writer goes on where it was, and once it is closed the file is compacted */
	write_events(w, NEVENTS + 1, NEVENTS + 100);
	ck_assert_int_eq(trace_writer_close(w), 0);
	ck_assert_int_eq(compact(dir, "t.trace", &st), 1);
	ck_assert_int_eq(check_events(path, NEVENTS + 100), 1);
	unit_rmdir(dir);
}
END_TEST

/* A writer killed in the middle: the events in its tail survive the compaction, and the file
 * still says it was not closed. */
START_TEST(killed_writer)
{
	char dir[1024], path[1200];
	struct trace_compact_stats st;
	int status;
	pid_t pid;

	tails_mode = _i;
	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/t.trace", dir);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct trace_writer *w = open_writer(path, TRACE_LEVEL_STORE, 0);

		write_events(w, 1, NEVENTS + 7);
		_exit(0); /* no close: the last events are in the tail only */
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(status, 0);
	ck_assert_int_eq(check_events(path, NEVENTS + 7), 0);
	ck_assert_int_eq(compact(dir, "t.trace", &st), 1);
	ck_assert_int_eq(check_events(path, NEVENTS + 7), 0);
	unit_rmdir(dir);
}
END_TEST

START_TEST(damaged_left_alone)
{
	char dir[1024], path[1200];
	struct trace_writer *w;
	struct stat s;
	int fd;

	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/t.trace", dir);
	w = open_writer(path, TRACE_LEVEL_STORE, 0);
	write_events(w, 1, NEVENTS);
	ck_assert_int_eq(trace_writer_close(w), 0);
	ck_assert_int_eq(stat(path, &s), 0);
	/* one byte flipped in the middle of the chunks */
	fd = open(path, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "\xff", 1, s.st_size / 2 + 4096), 1);
	close(fd);
	assert_untouched(dir, "t.trace", 0);
	unit_rmdir(dir);
}
END_TEST

/* Compressed by the writer (a level, or any level with a budget): nothing to do. */
START_TEST(compressed_left_alone)
{
	char dir[1024], path[1200];
	struct trace_writer *w;

	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/a.trace", dir);
	w = open_writer(path, 1, 0);
	write_events(w, 1, NEVENTS);
	ck_assert_int_eq(trace_writer_close(w), 0);
	assert_untouched(dir, "a.trace", 0);
	snprintf(path, sizeof(path), "%s/b.trace", dir);
	w = open_writer(path, TRACE_LEVEL_STORE, 1u << 20);
	write_events(w, 1, NEVENTS);
	ck_assert_int_eq(trace_writer_close(w), 0);
	assert_untouched(dir, "b.trace", 0);
	ck_assert_int_eq(check_events(path, NEVENTS), 1);
	unit_rmdir(dir);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("compact");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, stored_then_compacted, 0, 3);
	tcase_add_loop_test(tc, open_writer_left_alone, 0, 3);
	tcase_add_loop_test(tc, killed_writer, 0, 3);
	tcase_add_test(tc, damaged_left_alone);
	tcase_add_test(tc, compressed_left_alone);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(suite)
