/*
 * test_trace_env.c: the environment record of a trace (schemas/trace-format.md,
 * "Environment"): the strings read back in order, whatever bytes they hold, taking no event
 * index, spanning a chunk's end; a second record replaces the first; an environment over the
 * limits is refused by the writer and leaves no record.
 */
#include <fcntl.h>

#include "trace.h"
#include "unit.h"

/* A trace at `path`: a mark, the records (each a list of n strings), another mark.  Small
 * chunks, so that a large record spans several. */
static void write_trace(const char *path, char *const *const *lists, const uint32_t *n,
                        size_t nlists, int *rcs)
{
	struct trace_writer_options opt;
	struct trace_process proc;
	struct trace_writer *w;
	struct trace_event ev;
	struct trace_diag d;

	memset(&proc, 0, sizeof(proc));
	snprintf(proc.name, sizeof(proc.name), "p");
	memset(&opt, 0, sizeof(opt));
	opt.chunk_size = 4096;
	ck_assert_int_eq(trace_writer_open(AT_FDCWD, path, &proc, &opt, 0, &w, &d), 0);
	memset(&ev, 0, sizeof(ev));
	ev.kind = TRACE_EV_MARK;
	ck_assert_int_eq(trace_writer_event(w, &ev), 0);
	for (size_t i = 0; i < nlists; i++)
		rcs[i] = trace_writer_env(w, lists[i], n[i]);
	ck_assert_int_eq(trace_writer_event(w, &ev), 0);
	ck_assert_int_eq(trace_writer_close(w), 0);
}

static void read_back(const char *path, uint32_t *envc, char *const **envp,
                      struct trace_reader **r, int want_env)
{
	struct trace_event ev;
	struct trace_diag d;

	ck_assert_int_eq(trace_reader_open(path, r, &d), 0);
	ck_assert_int_eq(trace_reader_next(*r, &ev), 1);
	ck_assert_int_eq(trace_reader_next(*r, &ev), 1);
	ck_assert_uint_eq(ev.index, 2); /* the record takes no index */
	ck_assert_int_eq(trace_reader_next(*r, &ev), 0);
	ck_assert_int_eq(trace_reader_damage(*r, &d), 0);
	ck_assert_int_eq(trace_reader_env(*r, envc, envp), want_env);
}

START_TEST(test_round_trip)
{
	static char big[20000];
	char *first[] = { "PATH=/usr/bin:/bin", "", "EMPTY=", "A=b=c", "UTF8=\xc3\xa9\xe2\x82\xac",
		          "CTL=\x01\x7f\xff", big };
	char *second[] = { "ONLY=this", "LD_PRELOAD=/x/libencore-record.so" };
	char *const *lists[] = { first, second };
	uint32_t n[] = { 7, 2 }, envc = 0;
	char *const *envp = NULL;
	char dir[4096], path[4200];
	struct trace_reader *r;
	int rcs[2];

	memset(big, 'v', sizeof(big) - 1);
	memcpy(big, "BIG=", 4);
	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/one.trace", dir);
	write_trace(path, lists, n, 1, rcs);
	ck_assert_int_eq(rcs[0], 0);
	read_back(path, &envc, &envp, &r, 1);
	ck_assert_uint_eq(envc, 7);
	for (uint32_t i = 0; i < 7; i++)
		ck_assert_str_eq(envp[i], first[i]);
	ck_assert_ptr_null(envp[7]);
	trace_reader_close(r);

	snprintf(path, sizeof(path), "%s/two.trace", dir);
	write_trace(path, lists, n, 2, rcs);
	read_back(path, &envc, &envp, &r, 1);
	ck_assert_uint_eq(envc, 2); /* the second replaces the first */
	ck_assert_str_eq(envp[0], "ONLY=this");
	ck_assert_str_eq(envp[1], "LD_PRELOAD=/x/libencore-record.so");
	trace_reader_close(r);

	/* an empty environment is a record too (env -i) */
	snprintf(path, sizeof(path), "%s/empty.trace", dir);
	n[0] = 0;
	write_trace(path, lists, n, 1, rcs);
	ck_assert_int_eq(rcs[0], 0);
	read_back(path, &envc, &envp, &r, 1);
	ck_assert_uint_eq(envc, 0);
	trace_reader_close(r);
	unit_rmdir(dir);
}
END_TEST

/* Over TRACE_ENV_MAX_STRINGS strings or TRACE_ENV_MAX_BYTES in all: refused, nothing written. */
START_TEST(test_limits)
{
	static char huge[TRACE_ENV_MAX_BYTES + 16];
	static char *many[TRACE_ENV_MAX_STRINGS + 1], *one[1];
	char *const *lists[] = { many, one };
	uint32_t n[] = { TRACE_ENV_MAX_STRINGS + 1, 1 }, envc;
	char *const *envp;
	char dir[4096], path[4200];
	struct trace_reader *r;
	int rcs[2];

	for (size_t i = 0; i < TRACE_ENV_MAX_STRINGS + 1; i++)
		many[i] = "K=v";
	memset(huge, 'h', sizeof(huge) - 1);
	one[0] = huge;
	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/p.trace", dir);
	write_trace(path, lists, n, 2, rcs);
	ck_assert_int_eq(rcs[0], TRACE_EINVAL);
	ck_assert_int_eq(rcs[1], TRACE_EINVAL);
	read_back(path, &envc, &envp, &r, 0);
	trace_reader_close(r);

	n[0] = TRACE_ENV_MAX_STRINGS; /* the most it takes */
	snprintf(path, sizeof(path), "%s/q.trace", dir);
	write_trace(path, lists, n, 1, rcs);
	ck_assert_int_eq(rcs[0], 0);
	read_back(path, &envc, &envp, &r, 1);
	ck_assert_uint_eq(envc, TRACE_ENV_MAX_STRINGS);
	trace_reader_close(r);
	unit_rmdir(dir);
}
END_TEST

static Suite *env_suite(void)
{
	Suite *s = suite_create("trace_env");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_limits);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(env_suite)
