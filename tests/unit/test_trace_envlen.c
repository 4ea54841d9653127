/*
 * test_trace_envlen.c: the environment lengths record (schemas/trace-format.md, "Environment
 * lengths") reads back what the writer appended, takes no event index, and is absent from a
 * trace without it; ENCORE_REPLAY's pad= makes the value longer by exactly its length and
 * leaves what decodes from it as it was (replayer/lc.c gives the program its entries at the
 * recorded lengths so).
 */
#include <fcntl.h>
#include <unistd.h>

#include "interpose.h"
#include "trace.h"
#include "unit.h"

static void write_trace(const char *path, int with, uint32_t cfg, uint32_t pre)
{
	struct trace_process proc;
	struct trace_writer *w;
	struct trace_event ev;
	struct trace_diag d;

	unlink(path); /* the writer makes a new file */
	memset(&proc, 0, sizeof(proc));
	snprintf(proc.name, sizeof(proc.name), "p");
	ck_assert_int_eq(trace_writer_open(AT_FDCWD, path, &proc, NULL, 0, &w, &d), 0);
	memset(&ev, 0, sizeof(ev));
	ev.kind = TRACE_EV_MARK;
	ck_assert_int_eq(trace_writer_event(w, &ev), 0);
	if (with)
		ck_assert_int_eq(trace_writer_envlen(w, cfg, pre), 0);
	ck_assert_int_eq(trace_writer_event(w, &ev), 0);
	ck_assert_int_eq(trace_writer_close(w), 0);
}

START_TEST(test_round_trip)
{
	static const uint32_t v[][2] = { { 143, 57 }, { 0, 0 }, { 70000, 0 }, { UINT32_MAX, 1 } };
	char dir[4096], path[4200];
	struct trace_reader *r;
	struct trace_event ev;
	struct trace_diag d;
	uint32_t cfg = 1, pre = 1;

	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/p.trace", dir);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		write_trace(path, 1, v[i][0], v[i][1]);
		ck_assert_int_eq(trace_reader_open(path, &r, &d), 0);
		ck_assert_int_eq(trace_reader_next(r, &ev), 1);
		ck_assert_int_eq(trace_reader_next(r, &ev), 1);
		ck_assert_uint_eq(ev.index, 2); /* the record takes no index */
		ck_assert_int_eq(trace_reader_next(r, &ev), 0);
		ck_assert_int_eq(trace_reader_damage(r, &d), 0);
		ck_assert_int_eq(trace_reader_envlen(r, &cfg, &pre), 1);
		ck_assert_uint_eq(cfg, v[i][0]);
		ck_assert_uint_eq(pre, v[i][1]);
		trace_reader_close(r);
	}
	/* a trace without it (older recorders): none, the lengths untouched */
	write_trace(path, 0, 0, 0);
	ck_assert_int_eq(trace_reader_open(path, &r, &d), 0);
	while (trace_reader_next(r, &ev) == 1)
		;
	cfg = pre = 7;
	ck_assert_int_eq(trace_reader_envlen(r, &cfg, &pre), 0);
	ck_assert_uint_eq(cfg, 7);
	ck_assert_uint_eq(pre, 7);
	trace_reader_close(r);
	unit_rmdir(dir);
}
END_TEST

START_TEST(test_replay_env_pad)
{
	struct ip_rep_env e = { .dir = "/s", .pid = 42, .seg = 1 }, d;
	char buf[512], padded[512];

	strcpy(e.name, "tclsh");
	ck_assert_int_eq(ip_rep_env_encode(buf, sizeof(buf), &e, NULL, NULL), 0);
	e.pad = 9;
	ck_assert_int_eq(ip_rep_env_encode(padded, sizeof(padded), &e, NULL, NULL), 0);
	ck_assert_str_eq(padded, "v=1;name=tclsh;pid=42;seg=1;pad=xxxxxxxxx;dir=/s");
	ck_assert_uint_eq(strlen(padded), strlen(buf) + 9 + 5);
	ck_assert_int_eq(ip_rep_env_decode(padded, &d), 0);
	ck_assert_str_eq(d.name, "tclsh");
	ck_assert(d.pid == 42 && d.seg == 1);
	ck_assert_str_eq(d.dir, "/s");
	/* too small a buffer for the padding: refused, not cut */
	ck_assert_int_eq(ip_rep_env_encode(padded, strlen(buf) + 9, &e, NULL, NULL), -1);
}
END_TEST

static Suite *envlen_suite(void)
{
	Suite *s = suite_create("trace_envlen");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_replay_env_pad);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(envlen_suite)
