/*
 * test_trace_paths.c: the path records of a trace (schemas/trace-format.md, "Paths
 * created"): what the writer appends reads back in order, between events, taking no event
 * index; a path the format cannot hold is refused by the writer.
 */
#include <fcntl.h>

#include "trace.h"
#include "unit.h"

/* A trace at `path` with a mark, the path records `ops`/`paths` (n of them; each odd one from
 * the name before it, as a rename's), another mark. */
static void write_trace(const char *path, const uint32_t *ops, const char *const *paths,
                        size_t n)
{
	struct trace_process proc;
	struct trace_writer *w;
	struct trace_event ev;
	struct trace_diag d;

	memset(&proc, 0, sizeof(proc));
	snprintf(proc.name, sizeof(proc.name), "p");
	ck_assert_int_eq(trace_writer_open(AT_FDCWD, path, &proc, NULL, 0, &w, &d), 0);
	memset(&ev, 0, sizeof(ev));
	ev.kind = TRACE_EV_MARK;
	ck_assert_int_eq(trace_writer_event(w, &ev), 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(trace_writer_path(w, ops[i], 1700000000000000000ll + (int64_t)i * 7,
		                                   paths[i], i % 2 ? paths[i - 1] : NULL), 0);
	ck_assert_int_eq(trace_writer_event(w, &ev), 0);
	ck_assert_int_eq(trace_writer_close(w), 0);
}

START_TEST(test_round_trip)
{
	static const uint32_t ops[] = { TRACE_PATH_FILE, TRACE_PATH_DIR, TRACE_PATH_LINK,
	                                TRACE_PATH_REMOVED, 77 };
	static char longest[TRACE_FILE_PATH_MAX + 1];
	const char *paths[] = { "/tmp/a b/out.o", "/tmp/a b", "/srv/x\xc3\xa9", "/tmp/a b/out.o",
	                        longest };
	char dir[4096], path[4200];
	const struct trace_path_change *list;
	struct trace_reader *r;
	struct trace_event ev;
	struct trace_diag d;

	memset(longest, 'x', TRACE_FILE_PATH_MAX);
	longest[0] = '/';
	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/p.trace", dir);
	write_trace(path, ops, paths, 5);
	ck_assert_int_eq(trace_reader_open(path, &r, &d), 0);
	ck_assert_int_eq(trace_reader_next(r, &ev), 1);
	ck_assert_int_eq(trace_reader_next(r, &ev), 1);
	ck_assert_uint_eq(ev.index, 2); /* the path records take no index */
	ck_assert_int_eq(trace_reader_next(r, &ev), 0);
	ck_assert_int_eq(trace_reader_damage(r, &d), 0);
	ck_assert_uint_eq(trace_reader_paths(r, &list), 5);
	for (size_t i = 0; i < 5; i++) {
		ck_assert_uint_eq(list[i].op, ops[i]);
		ck_assert_int_eq(list[i].time_ns, 1700000000000000000ll + (int64_t)i * 7);
		ck_assert_str_eq(list[i].path, paths[i]);
		ck_assert_str_eq(list[i].from, i % 2 ? paths[i - 1] : "");
	}
	ck_assert_str_eq(trace_path_op_name(list[0].op), "file");
	ck_assert_str_eq(trace_path_op_name(list[1].op), "dir");
	ck_assert_str_eq(trace_path_op_name(list[2].op), "link");
	ck_assert_str_eq(trace_path_op_name(list[3].op), "removed");
	ck_assert_str_eq(trace_path_op_name(list[4].op), "unknown");
	trace_reader_close(r);
	unit_rmdir(dir);
}
END_TEST

START_TEST(test_refused_paths)
{
	static char toolong[TRACE_FILE_PATH_MAX + 2];
	struct trace_process proc;
	struct trace_writer *w;
	struct trace_diag d;
	const struct trace_path_change *list;
	struct trace_reader *r;
	struct trace_event ev;
	char dir[4096], path[4200];

	memset(toolong, 'y', TRACE_FILE_PATH_MAX + 1);
	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/p.trace", dir);
	memset(&proc, 0, sizeof(proc));
	snprintf(proc.name, sizeof(proc.name), "p");
	ck_assert_int_eq(trace_writer_open(AT_FDCWD, path, &proc, NULL, 0, &w, &d), 0);
	ck_assert_int_eq(trace_writer_path(w, TRACE_PATH_FILE, 1, "", NULL), TRACE_EINVAL);
	ck_assert_int_eq(trace_writer_path(w, TRACE_PATH_FILE, 1, NULL, NULL), TRACE_EINVAL);
	ck_assert_int_eq(trace_writer_path(w, TRACE_PATH_FILE, 1, toolong, NULL), TRACE_EINVAL);
	ck_assert_int_eq(trace_writer_path(w, TRACE_PATH_LINK, 1, "/n", toolong), TRACE_EINVAL);
	ck_assert_int_eq(trace_writer_path(w, TRACE_PATH_DIR, -5, "/d", ""), 0);
	ck_assert_int_eq(trace_writer_close(w), 0);
	ck_assert_int_eq(trace_reader_open(path, &r, &d), 0);
	ck_assert_int_eq(trace_reader_next(r, &ev), 0);
	ck_assert_int_eq(trace_reader_damage(r, &d), 0);
	ck_assert_uint_eq(trace_reader_paths(r, &list), 1); /* the refused ones wrote nothing */
	ck_assert_int_eq(list[0].time_ns, -5);
	ck_assert_str_eq(list[0].path, "/d");
	ck_assert_str_eq(list[0].from, "");
	trace_reader_close(r);
	unit_rmdir(dir);
}
END_TEST

/* Many records across chunk ends read back whole and in order. */
START_TEST(test_many)
{
	enum { N = 5000 };
	static char names[N][64];
	static uint32_t ops[N];
	const char *paths[N];
	const struct trace_path_change *list;
	struct trace_reader *r;
	struct trace_event ev;
	struct trace_diag d;
	char dir[4096], path[4200];
	struct unit_rng rng;

	unit_rng_seed(&rng, unit_seed());
	for (size_t i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "/tmp/dir%llu/f%zu",
		         (unsigned long long)unit_rng_below(&rng, 1000000), i);
		ops[i] = 1 + (uint32_t)unit_rng_below(&rng, 4);
		paths[i] = names[i];
	}
	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/p.trace", dir);
	write_trace(path, ops, paths, N);
	ck_assert_int_eq(trace_reader_open(path, &r, &d), 0);
	while (trace_reader_next(r, &ev) == 1)
		;
	ck_assert_int_eq(trace_reader_damage(r, &d), 0);
	ck_assert_uint_eq(trace_reader_paths(r, &list), N);
	for (size_t i = 0; i < N; i++) {
		ck_assert_uint_eq(list[i].op, ops[i]);
		ck_assert_str_eq(list[i].path, names[i]);
		ck_assert_str_eq(list[i].from, i % 2 ? names[i - 1] : "");
	}
	trace_reader_close(r);
	unit_rmdir(dir);
}
END_TEST

static Suite *paths_suite(void)
{
	Suite *s = suite_create("trace_paths");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_refused_paths);
	tcase_add_test(tc, test_many);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(paths_suite)
