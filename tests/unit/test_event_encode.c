/*
 * test_event_encode.c: the writer's event encoding (libtrace/writer.c, encode_event and
 * trace_writer_event's common case) gives back every field of every event, through each
 * varint length (one to ten bytes), negative and zero results, a len that is or is not the
 * result's default, every rare field (errno, flags, hash, 0-4 aux values), data of any
 * length (a chunk's end inside it), clock values in compact form and not, thread changes,
 * and the writer's general path (a disk budget's checkpoints): the same events read back
 * from a file written with a budget and one without; and clock reads written through
 * trace_writer_clock give the same file as through trace_writer_event, and so do sends and
 * receives written through trace_writer_data.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"
#include "unit.h"
#include "unit_trace.h"

#define NEV 40000

static uint8_t pool[70000];

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A value of every varint length, sign and zero. */
static int64_t value(uint64_t *s)
{
	switch (next(s) % 9) {
	case 0: return 0;
	case 1: return (int64_t)(next(s) % 64);
	case 2: return -(int64_t)(next(s) % 64);
	case 3: return (int64_t)(next(s) % 20000);
	case 4: return (int64_t)(next(s) % 3000000);
	case 5: return (int64_t)next(s);
	case 6: return (int64_t)(next(s) % (1ull << 30));
	case 7: /* two channel ids packed, as a readiness result's aux (five or six bytes) */
		return (int64_t)((next(s) % 300) | (next(s) % 8) << 32);
	default: return -(int64_t)(next(s) % 1000000);
	}
}

/* Whether make() gives most sends and receives the recorder's shape (data_path_same_bytes). */
static int data_shapes;

/* Event i (1-based), the same at every call with the same i. */
static void make(struct trace_event *ev, uint64_t i, uint8_t clock[16])
{
	static const uint32_t kinds[] = { TRACE_EV_SEND, TRACE_EV_RECV, TRACE_EV_INPUT,
	                                  TRACE_EV_CLOCK, TRACE_EV_CLOCK, TRACE_EV_READY,
	                                  TRACE_EV_SYNC, TRACE_EV_RANDOM, TRACE_EV_PID };
	uint64_t s = i * 0x9E3779B97F4A7C15ull + 1;

	memset(ev, 0, sizeof(*ev));
	next(&s);
	ev->kind = kinds[next(&s) % (sizeof(kinds) / sizeof(kinds[0]))];
	ev->call = next(&s) % 4 ? (uint32_t)(next(&s) % 140) : 0;
	ev->fd = next(&s) % 3 ? -1 : (int32_t)value(&s);
	ev->channel = next(&s) % 2 ? (uint32_t)(next(&s) % 300) : 0;
	ev->site = next(&s) % 2 ? (uint32_t)(next(&s) % 1000) : 0;
	ev->result = value(&s);
	ev->err = next(&s) % 5 == 0 ? (int32_t)(next(&s) % 200) + 1 : 0;
	ev->len = next(&s) % 3 == 0 ? (uint64_t)value(&s) : ev->result > 0 ? (uint64_t)ev->result : 0;
	/* increasing stamps, as the recorder's (deltas of any size, and 0: none) */
	ev->time_ns = next(&s) % 4 == 0 ? 1000000000ull + i * 7919 + next(&s) % 5000 : 0;
	if (ev->time_ns && i % 50 == 0)
		ev->time_ns += (i / 50) * 150000000ull; /* a delta past four bytes */
	ev->flags = next(&s) % 6 == 0 ? (uint32_t)(next(&s) % 1024) + 1 : 0;
	ev->has_hash = next(&s) % 6 == 0;
	ev->hash = ev->has_hash ? (uint32_t)next(&s) : 0;
	ev->naux = next(&s) % 3 == 0 ? (uint32_t)(next(&s) % (TRACE_AUX_MAX + 1)) : 0;
	for (uint32_t k = 0; k < ev->naux; k++)
		ev->aux[k] = value(&s);
	if (next(&s) % 3 == 0) {
		uint32_t len = next(&s) % 40 == 0 ? (uint32_t)(next(&s) % 66000)
		                                  : (uint32_t)(next(&s) % 200);

		ev->data = pool + next(&s) % 1000;
		ev->data_len = len;
	}
	if (ev->kind == TRACE_EV_CLOCK && next(&s) % 4) {
		/* a clock value: gettimeofday, or clock_gettime of a clock id (compact), a few
		 * out of range (plain data) */
		int tod = next(&s) % 2;
		uint64_t sec = next(&s) % 16 ? 1700000000 + i / 100 : next(&s);
		uint64_t frac = next(&s) % 16 ? (i * 997) % (tod ? 1000000 : 1000000000) : next(&s);

		ev->call = tod ? TRACE_CALL_GETTIMEOFDAY : TRACE_CALL_CLOCK_GETTIME;
		ev->naux = tod ? 0 : 1;
		ev->aux[0] = tod ? 0 : (int64_t)(next(&s) % 3);
		for (int k = 0; k < 8; k++) {
			clock[k] = (uint8_t)(sec >> 8 * k);
			clock[8 + k] = (uint8_t)(frac >> 8 * k);
		}
		ev->data = clock;
		ev->data_len = 16;
		if (next(&s) % 4) {
			/* a read that succeeded, as the recorder logs one (trace_writer_clock's) */
			ev->fd = -1;
			ev->channel = 0;
			ev->result = 0;
			ev->err = 0;
			ev->len = 0;
			ev->flags = 0;
			ev->has_hash = 0;
			ev->hash = 0;
		}
	}
	ev->thread = (uint32_t)((i / 5 + i / 11) % 3);
	if (data_shapes && (ev->kind == TRACE_EV_SEND || ev->kind == TRACE_EV_RECV ||
	                    ev->kind == TRACE_EV_INPUT) && next(&s) % 8) {
		/* a send or receive as the recorder logs one (trace_writer_data's): a channel, a
		 * descriptor, no flags or aux values; the rest as drawn (any result, errno, len,
		 * site, stamp, hash, data) */
		ev->channel = (uint32_t)(next(&s) % 300) + 1;
		ev->fd = next(&s) % 16 ? (int32_t)(next(&s) % 1100) : (int32_t)value(&s);
		if (ev->fd == -1)
			ev->fd = 0;
		ev->flags = 0;
		ev->naux = 0;
	}
}

/* Whether trace_writer_clock can write ev: a clock read that succeeded, with its value. */
static int clock_read(const struct trace_event *ev)
{
	return ev->kind == TRACE_EV_CLOCK && ev->result == 0 && ev->err == 0 && ev->fd == -1 &&
	       ev->channel == 0 && ev->len == 0 && ev->flags == 0 && !ev->has_hash &&
	       ev->data_len == 16 &&
	       ((ev->call == TRACE_CALL_GETTIMEOFDAY && ev->naux == 0) ||
	        (ev->call == TRACE_CALL_CLOCK_GETTIME && ev->naux == 1));
}

/* Whether trace_writer_data takes ev itself (not its fallback to trace_writer_event). */
static int data_event(const struct trace_event *ev)
{
	return (ev->kind == TRACE_EV_SEND || ev->kind == TRACE_EV_RECV ||
	        ev->kind == TRACE_EV_INPUT) && ev->channel && ev->fd != -1 && !ev->flags &&
	       !ev->naux;
}

/* clock_path: clock reads through trace_writer_clock (the recorder's way), the rest through
 * trace_writer_event; 2: sends and receives through trace_writer_data (those it does not
 * take itself too: its fallback), the rest through trace_writer_event.  Returns how many went
 * through the fast path. */
static uint64_t write_all(const char *path, uint32_t chunk, uint64_t max_bytes, int clock_path)
{
	struct trace_writer *w = unit_writer_open(path, chunk, 1, max_bytes);
	struct trace_event ev;
	uint8_t clock[16];
	uint64_t n = 0;

	for (uint64_t i = 1; i <= NEV; i++) {
		make(&ev, i, clock);
		if (clock_path == 2 && (ev.kind == TRACE_EV_SEND || ev.kind == TRACE_EV_RECV ||
		                        ev.kind == TRACE_EV_INPUT)) {
			ck_assert_int_eq(trace_writer_data(w, &ev), 0);
			n += data_event(&ev);
		} else if (clock_path == 1 && clock_read(&ev)) {
			ck_assert_int_eq(trace_writer_clock(w, ev.thread, ev.site, ev.call, ev.naux,
			                                    ev.aux[0], ev.time_ns, ev.data), 0);
			n++;
		} else {
			ck_assert_int_eq(trace_writer_event(w, &ev), 0);
		}
	}
	ck_assert_int_eq(trace_writer_close(w), 0);
	return n;
}

/* The two files hold the same bytes. */
static void same_file(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	long off = 0;
	int ca, cb;

	ck_assert_ptr_nonnull(fa);
	ck_assert_ptr_nonnull(fb);
	do {
		ca = getc(fa);
		cb = getc(fb);
		ck_assert_msg(ca == cb, "%s and %s differ at byte %ld", a, b, off);
		off++;
	} while (ca != EOF);
	fclose(fa);
	fclose(fb);
}

/* Reads path back: every event is the one written.  Returns the last index read. */
static uint64_t check_all(const char *path)
{
	struct trace_reader *r = NULL;
	struct trace_diag d;
	struct trace_event ev, got;
	uint8_t clock[16];
	uint64_t n = 0;
	int rc;

	ck_assert_int_eq(trace_reader_open(path, &r, &d), 0);
	while ((rc = trace_reader_next(r, &got)) == 1) {
		n = got.index;
		make(&ev, n, clock);
		ck_assert_uint_eq(got.kind, ev.kind);
		ck_assert_uint_eq(got.call, ev.call);
		ck_assert_int_eq(got.fd, ev.fd);
		ck_assert_uint_eq(got.channel, ev.channel);
		ck_assert_uint_eq(got.site, ev.site);
		ck_assert_int_eq(got.result, ev.result);
		ck_assert_int_eq(got.err, ev.err);
		ck_assert_uint_eq(got.len, ev.len);
		ck_assert_uint_eq(got.time_ns, ev.time_ns);
		ck_assert_uint_eq(got.flags, ev.flags);
		ck_assert_int_eq(got.has_hash != 0, ev.has_hash != 0);
		if (ev.has_hash)
			ck_assert_uint_eq(got.hash, ev.hash);
		ck_assert_uint_eq(got.naux, ev.naux);
		for (uint32_t k = 0; k < ev.naux; k++)
			ck_assert_int_eq(got.aux[k], ev.aux[k]);
		ck_assert_uint_eq(got.data_len, ev.data_len);
		if (ev.data_len)
			ck_assert_msg(memcmp(got.data, ev.data, ev.data_len) == 0,
			              "event %llu: data differs", (unsigned long long)n);
		ck_assert_uint_eq(got.thread, ev.thread);
	}
	ck_assert_int_eq(rc, 0);
	trace_reader_close(r);
	return n;
}

START_TEST(every_field_back)
{
	char dir[4096], a[4200], b[4200];

	for (size_t i = 0; i < sizeof(pool); i++)
		pool[i] = (uint8_t)(i * 131 + (i >> 8));
	unit_tmpdir(dir, sizeof(dir));
	snprintf(a, sizeof(a), "%s/a.trace", dir);
	snprintf(b, sizeof(b), "%s/b.trace", dir);
	write_all(a, 4096, 0, 0);
	ck_assert_uint_eq(check_all(a), NEV);
	/* with a budget large enough to keep every chunk: the general path for every event,
	 * each chunk opening with a checkpoint */
	write_all(b, 4096, 1ull << 40, 0);
	ck_assert_uint_eq(check_all(b), NEV);
	unit_rmdir(dir);
}
END_TEST

/* Clock reads written through trace_writer_clock give the bytes trace_writer_event gives
 * (compact values, each chunk's first value of a clock whole, values with no compact form,
 * stamps, thread changes, a budget's checkpoints), so the files are the same. */
START_TEST(clock_path_same_bytes)
{
	char dir[4096], a[4200], b[4200];
	static const uint32_t chunks[] = { 4096, 65536 };

	for (size_t i = 0; i < sizeof(pool); i++)
		pool[i] = (uint8_t)(i * 131 + (i >> 8));
	unit_tmpdir(dir, sizeof(dir));
	snprintf(a, sizeof(a), "%s/a.trace", dir);
	snprintf(b, sizeof(b), "%s/b.trace", dir);
	for (int budget = 0; budget < 2; budget++) {
		for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
			uint64_t max = budget ? 1ull << 40 : 0;

			remove(a);
			remove(b);
			write_all(a, chunks[c], max, 0);
			ck_assert_uint_gt(write_all(b, chunks[c], max, 1), NEV / 20);
			same_file(a, b);
			ck_assert_uint_eq(check_all(b), NEV);
		}
	}
	unit_rmdir(dir);
}
END_TEST

/* Sends and receives written through trace_writer_data give the bytes trace_writer_event
 * gives (results, lengths and sites of every size, errno, stamps, hashes, data across a
 * chunk's end, thread changes, a budget's checkpoints), so the files are the same. */
START_TEST(data_path_same_bytes)
{
	char dir[4096], a[4200], b[4200];
	static const uint32_t chunks[] = { 4096, 65536 };

	for (size_t i = 0; i < sizeof(pool); i++)
		pool[i] = (uint8_t)(i * 131 + (i >> 8));
	data_shapes = 1;
	unit_tmpdir(dir, sizeof(dir));
	snprintf(a, sizeof(a), "%s/a.trace", dir);
	snprintf(b, sizeof(b), "%s/b.trace", dir);
	for (int budget = 0; budget < 2; budget++) {
		for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
			uint64_t max = budget ? 1ull << 40 : 0;

			remove(a);
			remove(b);
			write_all(a, chunks[c], max, 0);
			ck_assert_uint_gt(write_all(b, chunks[c], max, 2), NEV / 5);
			same_file(a, b);
			ck_assert_uint_eq(check_all(b), NEV);
		}
	}
	data_shapes = 0;
	unit_rmdir(dir);
}
END_TEST

static Suite *event_encode_suite(void)
{
	Suite *s = suite_create("event_encode");
	TCase *tc = tcase_create("writer");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, every_field_back);
	tcase_add_test(tc, clock_path_same_bytes);
	tcase_add_test(tc, data_path_same_bytes);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(event_encode_suite)
