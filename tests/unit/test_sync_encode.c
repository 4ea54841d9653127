/*
 * test_sync_encode.c: trace_writer_sync, the writer's fast path for the recorder's
 * synchronisation events (recorder/sync.c), writes the same bytes as trace_writer_event for
 * the same events (schemas/trace-format.md: no new record), through thread changes, chunk
 * ends, results of every sign, errors and 0-2 aux values; so does trace_writer_sync1 for the
 * events of its shape (result 0, no errno, one aux value); and a reader gives them back.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace.h"
#include "unit.h"
#include "unit_trace.h"

#define NEV 30000

static struct trace_writer *open_writer(const char *path, uint32_t chunk)
{
	return unit_writer_open(path, chunk, 0, 0);
}

/* Event i (1-based): runs of a few events per thread, every shape a sync event takes. */
static void make(struct trace_event *ev, uint64_t i)
{
	static const int64_t results[] = { 0, 0, 0, 1, -1, 16, 300, -70000, 2 };

	memset(ev, 0, sizeof(*ev));
	ev->kind = TRACE_EV_SYNC;
	ev->call = i % 23 == 0 ? 0 : (uint32_t)(TRACE_CALL_MUTEX_LOCK + i % 7); /* (0: no field) */
	ev->fd = -1;
	ev->result = results[i % 9];
	ev->err = i % 13 == 0 ? 110 : 0;
	ev->naux = (uint32_t)(i % 3);
	ev->aux[0] = i % 17 == 0 ? (int64_t)i * 100003 : (int64_t)(i % 200) + 1;
	ev->aux[1] = i % 4 == 0 ? (int64_t)i * 1000 : 3;
	ev->thread = (uint32_t)((i / 3 + i / 7) % 5);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	struct stat st;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fstat(fileno(f), &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	ck_assert_ptr_nonnull(buf);
	*len = fread(buf, 1, (size_t)st.st_size, f);
	ck_assert_uint_eq(*len, (size_t)st.st_size);
	fclose(f);
	return buf;
}

START_TEST(same_bytes)
{
	char dir[4096], a[4200], b[4200];
	struct trace_writer *wa, *wb;
	struct trace_reader *r = NULL;
	struct trace_diag d;
	struct trace_event ev, got;
	size_t la, lb;
	char *ba, *bb;
	uint64_t n = 0, n1 = 0;
	int rc;

	unit_tmpdir(dir, sizeof(dir));
	snprintf(a, sizeof(a), "%s/a.trace", dir);
	snprintf(b, sizeof(b), "%s/b.trace", dir);
	/* a small chunk: many chunk ends, each with its checkpoint and thread record */
	wa = open_writer(a, 4096);
	wb = open_writer(b, 4096);
	for (uint64_t i = 1; i <= NEV; i++) {
		make(&ev, i);
		ck_assert_int_eq(trace_writer_event(wa, &ev), 0);
		if (ev.result == 0 && ev.err == 0 && ev.naux == 1) {
			/* the recorder's lock and unlock: through trace_writer_sync1 */
			ck_assert_int_eq(trace_writer_sync1(wb, ev.thread, ev.kind, ev.call, ev.aux[0]), 0);
			n1++;
		} else {
			ck_assert_int_eq(trace_writer_sync(wb, ev.thread, ev.kind, ev.call, ev.result,
			                                   ev.err, ev.naux, ev.aux[0], ev.aux[1]), 0);
		}
	}
	ck_assert_uint_gt(n1, NEV / 20);
	ck_assert_int_eq(trace_writer_close(wa), 0);
	ck_assert_int_eq(trace_writer_close(wb), 0);
	ba = slurp(a, &la);
	bb = slurp(b, &lb);
	ck_assert_uint_eq(la, lb);
	ck_assert_msg(memcmp(ba, bb, la) == 0, "the two files differ");
	free(ba);
	free(bb);

	ck_assert_int_eq(trace_reader_open(b, &r, &d), 0);
	while ((rc = trace_reader_next(r, &got)) == 1) {
		n++;
		make(&ev, n);
		ck_assert_uint_eq(got.index, n);
		ck_assert_uint_eq(got.kind, ev.kind);
		ck_assert_uint_eq(got.call, ev.call);
		ck_assert_int_eq(got.fd, -1);
		ck_assert_int_eq(got.result, ev.result);
		ck_assert_int_eq(got.err, ev.err);
		ck_assert_uint_eq(got.len, 0);
		ck_assert_uint_eq(got.naux, ev.naux);
		for (uint32_t k = 0; k < ev.naux; k++)
			ck_assert_int_eq(got.aux[k], ev.aux[k]);
		ck_assert_uint_eq(got.thread, ev.thread);
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(n, NEV);
	trace_reader_close(r);
	unit_rmdir(dir);
}
END_TEST

static Suite *sync_encode_suite(void)
{
	Suite *s = suite_create("sync_encode");
	TCase *tc = tcase_create("writer");

	tcase_add_test(tc, same_bytes);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(sync_encode_suite)
