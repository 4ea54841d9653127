/*
 * test_trace_threads.c: the thread of each event through the writer and the reader
 * (schemas/trace-format.md, "Threads"): thread records only where the thread changes, the
 * current thread reset by checkpoints, so that a reader starting after chunks dropped by a
 * disk budget still gives each kept event its thread; a single-threaded trace is the same
 * file as one written without thread numbers at all.  Owned mutexes' counts of acquisitions
 * without events reach the event they were said before, through every writer path and across
 * chunk ends, checkpoints included; the image's flags round-trip.  And the per-process ids of
 * synchronisation objects (interpose/objid.h), which name them in dump and SQL.  And two
 * tails drained by real threads outside their lock, as the recorder does.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "objid.h"
#include "trace.h"
#include "unit.h"
#include "unit_trace.h"

static struct trace_writer *open_writer(const char *path, uint32_t chunk, uint64_t max_bytes)
{
	return unit_writer_open(path, chunk, 0, max_bytes);
}

/* The thread event i (1-based) is given: runs of a few events per thread, up to 6 threads,
 * with large indices now and then (varints of several bytes). */
static uint32_t thread_of(uint64_t i)
{
	uint32_t t = (uint32_t)((i / 3 + i / 7) % 6);

	return t == 5 ? 100000u + (uint32_t)(i % 2) : t;
}

static void sync_event(struct trace_event *ev, uint64_t i)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = TRACE_EV_SYNC;
	ev->call = i % 2 ? TRACE_CALL_MUTEX_LOCK : TRACE_CALL_MUTEX_UNLOCK;
	ev->fd = -1;
	ev->naux = 1;
	ev->aux[0] = (int64_t)(i % 5) + 1;
	ev->thread = thread_of(i);
	/* a send now and then, so that the channel table of a budget is not empty */
	if (i % 11 == 0) {
		ev->kind = TRACE_EV_SEND;
		ev->call = TRACE_CALL_WRITE;
		ev->channel = 1;
		ev->fd = 3;
		ev->result = 10;
		ev->len = 10;
		ev->naux = 0;
	}
}

static uint64_t read_all(const char *path, uint64_t *first, uint64_t *dropped)
{
	struct trace_reader *r = NULL;
	struct trace_diag d;
	struct trace_event ev;
	uint64_t n = 0;
	int rc;

	ck_assert_int_eq(trace_reader_open(path, &r, &d), 0);
	*first = 0;
	while ((rc = trace_reader_next(r, &ev)) == 1) {
		if (!n)
			*first = ev.index;
		ck_assert_msg(ev.thread == thread_of(ev.index), "event %llu: thread %u, written %u",
		              (unsigned long long)ev.index, ev.thread, thread_of(ev.index));
		n++;
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(trace_reader_damage(r, &d), 0);
	*dropped = trace_reader_dropped(r);
	trace_reader_close(r);
	return n;
}

START_TEST(threads_round_trip)
{
	char dir[256], path[300];
	struct trace_writer *w;
	struct trace_event ev;
	uint64_t first, dropped, n = 5000;

	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/a.trace", dir);
	w = open_writer(path, 4096, 0);
	for (uint64_t i = 1; i <= n; i++) {
		sync_event(&ev, i);
		ck_assert_int_eq(trace_writer_event(w, &ev), 0);
	}
	ck_assert_int_eq(trace_writer_close(w), 0);
	ck_assert_uint_eq(read_all(path, &first, &dropped), n);
	ck_assert_uint_eq(first, 1);
	ck_assert_uint_eq(dropped, 0);
	unit_rmdir(dir);
}
END_TEST

/* Under a disk budget the oldest chunks go; the reader starts at a checkpoint and must know
 * the thread from there (the writer says it again after each checkpoint). */
START_TEST(threads_after_dropped_chunks)
{
	char dir[256], path[300];
	struct trace_writer *w;
	struct trace_event ev;
	uint64_t first, dropped, kept, n = 200000;

	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/b.trace", dir);
	w = open_writer(path, 4096, 16384);
	for (uint64_t i = 1; i <= n; i++) {
		sync_event(&ev, i);
		ck_assert_int_eq(trace_writer_event(w, &ev), 0);
	}
	ck_assert_int_eq(trace_writer_close(w), 0);
	kept = read_all(path, &first, &dropped);
	ck_assert_uint_gt(dropped, 0);
	ck_assert_uint_eq(kept + dropped, n);
	ck_assert_uint_eq(first, dropped + 1);
	unit_rmdir(dir);
}
END_TEST

/* The count said before event i (0 for most). */
static uint32_t owned_of(uint64_t i)
{
	return i % 3 == 0 ? (uint32_t)(i % 97) + 1 + (i % 300 == 0 ? 100000u : 0) : 0;
}

/* Event i through one of the writer's paths: the general one, the sync fast paths, the data
 * and clock fast paths (a chunk end, a checkpoint or a thread change falls on each now and
 * then). */
static void write_owned(struct trace_writer *w, uint64_t i)
{
	struct trace_event ev;
	uint8_t clk[16] = { 0 };
	uint32_t t = thread_of(i);

	if (owned_of(i))
		ck_assert_int_eq(trace_writer_elided(w, owned_of(i)), 0);
	switch (i % 5) {
	case 0:
		sync_event(&ev, i);
		ck_assert_int_eq(trace_writer_event(w, &ev), 0);
		break;
	case 1:
		ck_assert_int_eq(trace_writer_sync1(w, t, TRACE_EV_SYNC, TRACE_CALL_MUTEX_LOCK, 7), 0);
		break;
	case 2:
		ck_assert_int_eq(trace_writer_sync(w, t, TRACE_EV_SYNC, TRACE_CALL_MUTEX_TRYLOCK, EBUSY,
		                                   0, 2, 3, 4), 0);
		break;
	case 3:
		memset(&ev, 0, sizeof(ev));
		ev.kind = TRACE_EV_SEND;
		ev.call = TRACE_CALL_WRITE;
		ev.channel = 1;
		ev.fd = 3;
		ev.result = 10;
		ev.len = 10;
		ev.thread = t;
		ck_assert_int_eq(trace_writer_data(w, &ev), 0);
		break;
	default:
		memcpy(clk, &i, sizeof(i));
		ck_assert_int_eq(trace_writer_clock(w, t, 0, TRACE_CALL_CLOCK_GETTIME, 1, 1, 0, clk), 0);
		break;
	}
}

static void owned_round_trip(uint64_t max_bytes)
{
	char dir[256], path[300];
	struct trace_writer *w;
	struct trace_reader *r = NULL;
	struct trace_diag d;
	struct trace_event ev;
	uint64_t n = 60000, seen = 0;
	int rc;

	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/o.trace", dir);
	w = open_writer(path, 4096, max_bytes);
	for (uint64_t i = 1; i <= n; i++)
		write_owned(w, i);
	ck_assert_int_eq(trace_writer_close(w), 0);
	ck_assert_int_eq(trace_reader_open(path, &r, &d), 0);
	while ((rc = trace_reader_next(r, &ev)) == 1) {
		/* (the first event after dropped chunks may have lost its count with them) */
		if (seen++ || !max_bytes)
			ck_assert_msg(ev.elided == owned_of(ev.index), "event %llu: owned %u, said %u",
			              (unsigned long long)ev.index, ev.elided, owned_of(ev.index));
		ck_assert_uint_eq(ev.thread, thread_of(ev.index));
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(trace_reader_damage(r, &d), 0);
	ck_assert_uint_eq(seen + trace_reader_dropped(r), n);
	trace_reader_close(r);
	unit_rmdir(dir);
}

START_TEST(owned_counts_round_trip)
{
	owned_round_trip(0);
}
END_TEST

START_TEST(owned_counts_after_dropped_chunks)
{
	owned_round_trip(16384);
}
END_TEST

/* --- two tails, drained by real threads (schemas/trace-format.md, "Two tails") ---------- */

struct drain_run {
	struct trace_writer *w;
	pthread_mutex_t lock;
	int due;       /* the writer's drain_due */
	uint32_t per;  /* events each thread writes */
	uint32_t thread;
};

/* What a recorded thread does per event: the event under the lock, the drain after it. */
static void drain_event(struct drain_run *d, uint32_t thread, uint32_t k)
{
	int claimed = 0;

	pthread_mutex_lock(&d->lock);
	/* aux0: the thread and its own count, so that the reader can check each thread's
	 * order */
	ck_assert_int_eq(trace_writer_sync1(d->w, thread, TRACE_EV_SYNC, TRACE_CALL_MUTEX_LOCK,
	                                    (int64_t)thread << 32 | k),
	                 0);
	if (d->due) {
		d->due = 0;
		claimed = trace_writer_claim(d->w);
	}
	pthread_mutex_unlock(&d->lock);
	if (claimed)
		trace_writer_drain(d->w);
}

static void *drain_worker(void *arg)
{
	struct drain_run *d = arg;
	uint32_t thread = __atomic_fetch_add(&d->thread, 1, __ATOMIC_RELAXED);

	for (uint32_t k = 0; k < d->per; k++)
		drain_event(d, thread, k);
	return NULL;
}

static struct trace_writer *drain_open(const char *path, struct drain_run *d, int level)
{
	struct trace_process p;
	struct trace_writer_options o = { 4096, level, 0, 0, &d->due, 0 };
	struct trace_diag diag;

	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "t");
	p.pid = 1;
	ck_assert_int_eq(trace_writer_open(AT_FDCWD, path, &p, &o, 0, &d->w, &diag), 0);
	return d->w;
}

/* Every event back, each thread's in its own order, the stream's order the lock's. */
static void drain_check(const char *path, uint32_t threads, uint32_t per)
{
	struct trace_reader *r = NULL;
	struct trace_diag diag;
	struct trace_event ev;
	uint32_t next[8] = { 0 };
	uint64_t n = 0;
	int rc;

	ck_assert_int_eq(trace_reader_open(path, &r, &diag), 0);
	while ((rc = trace_reader_next(r, &ev)) == 1) {
		uint32_t t = (uint32_t)((uint64_t)ev.aux[0] >> 32), k = (uint32_t)ev.aux[0];

		ck_assert_uint_lt(t, threads);
		ck_assert_uint_eq(ev.thread, t);
		ck_assert_msg(k == next[t], "thread %u: event %u after %u", t, k, next[t]);
		next[t]++;
		n++;
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(trace_reader_damage(r, &diag), 0);
	ck_assert_int_eq(trace_reader_closed(r), 1);
	trace_reader_close(r);
	ck_assert_uint_eq(n, (uint64_t)threads * per);
}

/* Four threads write 200 chunks' worth, each draining the tails it left, after its lock. */
START_TEST(tails_drained_by_threads)
{
	char dir[256], path[300];
	struct drain_run d = { .lock = PTHREAD_MUTEX_INITIALIZER, .per = 30000 };
	pthread_t t[4];

	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/d.trace", dir);
	drain_open(path, &d, 1);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, drain_worker, &d), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	ck_assert_int_eq(trace_writer_close(d.w), 0);
	drain_check(path, 4, d.per);
	unit_rmdir(dir);
}
END_TEST

static pthread_barrier_t drain_start;

static void *drain_worker_after_barrier(void *arg)
{
	pthread_barrier_wait(&drain_start);
	return drain_worker(arg);
}

/* A tail claimed and not drained yet while another thread fills the other one: that thread
 * waits (in its lock) for the drain, which the first thread makes meanwhile, concurrently.
 * zstd's slowest level makes the drain take far longer than filling a tail (a writer that
 * did not wait was caught in 5 of 5 runs). */
START_TEST(switch_waits_for_a_claimed_drain)
{
	char dir[256], path[300];
	struct drain_run d = { .lock = PTHREAD_MUTEX_INITIALIZER, .per = 3000 };
	pthread_t t;
	uint32_t k = 0;
	int claimed = 0;

	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/w.trace", dir);
	drain_open(path, &d, 19);
	d.thread = 1; /* the worker is thread 1, this one thread 0 */
	while (!d.due) { /* until the first tail is full */
		ck_assert_int_eq(trace_writer_sync1(d.w, 0, TRACE_EV_SYNC, TRACE_CALL_MUTEX_LOCK,
		                                    (int64_t)k),
		                 0);
		k++;
	}
	d.due = 0;
	claimed = trace_writer_claim(d.w);
	ck_assert_int_eq(claimed, 1);
	/* 3000 events of about 4 bytes fill the second tail: its switch waits for this drain */
	ck_assert_int_eq(pthread_barrier_init(&drain_start, NULL, 2), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, drain_worker_after_barrier, &d), 0);
	pthread_barrier_wait(&drain_start);
	trace_writer_drain(d.w);
	pthread_join(t, NULL);
	pthread_barrier_destroy(&drain_start);
	for (uint32_t j = k; j < d.per; j++)
		drain_event(&d, 0, j);
	ck_assert_int_eq(trace_writer_close(d.w), 0);
	drain_check(path, 2, d.per);
	unit_rmdir(dir);
}
END_TEST

/* The image's flags: absent (0) unless set, then given back. */
START_TEST(process_flags_round_trip)
{
	char dir[256], path[300];
	struct trace_process p;
	struct trace_writer_options o = { 4096, 1, 0, 0, NULL, 0 };
	struct trace_writer *w = NULL;
	struct trace_reader *r = NULL;
	struct trace_diag d;

	unit_tmpdir(dir, sizeof(dir));
	for (uint32_t flags = 0; flags < 2; flags++) {
		snprintf(path, sizeof(path), "%s/f%u.trace", dir, flags);
		memset(&p, 0, sizeof(p));
		snprintf(p.name, sizeof(p.name), "t");
		p.pid = 1;
		p.flags = flags ? TRACE_PROC_OWNED_MUTEXES : 0;
		ck_assert_int_eq(trace_writer_open(AT_FDCWD, path, &p, &o, 0, &w, &d), 0);
		ck_assert_int_eq(trace_writer_close(w), 0);
		ck_assert_int_eq(trace_reader_open(path, &r, &d), 0);
		ck_assert_uint_eq(trace_reader_process(r)->flags, p.flags);
		trace_reader_close(r);
	}
	unit_rmdir(dir);
}
END_TEST

/* Thread 0 throughout writes no thread record: the file is the same as one whose events
 * never had a thread; one event of another thread makes it longer. */
START_TEST(single_thread_costs_nothing)
{
	char dir[256], a[300], b[300];
	struct trace_writer *w;
	struct trace_event ev;
	struct stat sa, sb;

	unit_tmpdir(dir, sizeof(dir));
	snprintf(a, sizeof(a), "%s/a.trace", dir);
	snprintf(b, sizeof(b), "%s/b.trace", dir);
	for (int f = 0; f < 2; f++) {
		w = open_writer(f ? b : a, 0, 0);
		for (uint64_t i = 1; i <= 100; i++) {
			sync_event(&ev, i);
			ev.thread = f && i == 50 ? 1 : 0;
			ck_assert_int_eq(trace_writer_event(w, &ev), 0);
		}
		ck_assert_int_eq(trace_writer_flush(w), 0);
		ck_assert_int_eq(trace_writer_close(w), 0);
	}
	ck_assert_int_eq(stat(a, &sa), 0);
	ck_assert_int_eq(stat(b, &sb), 0);
	/* the thread records of b: to 1 before event 50, back to 0 before event 51 */
	ck_assert_int_gt(sb.st_size, sa.st_size);
	unit_rmdir(dir);
}
END_TEST

/* Ids in order of first use; an address keeps its id; a full table answers 0 (unnamed) and
 * keeps the ids it gave; a reset starts again from 1. */
START_TEST(object_ids)
{
	static struct ip_objtab t;
	static char objs[IP_OBJ_SLOTS];
	uint32_t limit = IP_OBJ_SLOTS / 4 * 3;

	ck_assert_uint_eq(ip_obj_id(&t, NULL), 0);
	ck_assert_uint_eq(ip_obj_id(&t, &objs[8]), 1);
	ck_assert_uint_eq(ip_obj_id(&t, &objs[0]), 2);
	ck_assert_uint_eq(ip_obj_id(&t, &objs[8]), 1);
	for (uint32_t i = 0; i < IP_OBJ_SLOTS; i++) {
		uint32_t id = ip_obj_id(&t, &objs[i]), want;

		want = i == 0 ? 2 : i == 8 ? 1 : i < 8 ? i + 2 : i + 1 <= limit ? i + 1 : 0;
		ck_assert_msg(id == want, "object %u: id %u, expected %u", i, id, want);
	}
	ck_assert_uint_eq(ip_obj_id(&t, &objs[100]), 101);
	ip_obj_reset(&t);
	ck_assert_uint_eq(ip_obj_id(&t, &objs[100]), 1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("trace_threads");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, threads_round_trip);
	tcase_add_test(tc, threads_after_dropped_chunks);
	tcase_add_test(tc, single_thread_costs_nothing);
	tcase_add_test(tc, object_ids);
	tcase_add_test(tc, owned_counts_round_trip);
	tcase_add_test(tc, owned_counts_after_dropped_chunks);
	tcase_add_test(tc, process_flags_round_trip);
	tcase_add_test(tc, tails_drained_by_threads);
	tcase_add_test(tc, switch_waits_for_a_claimed_drain);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(suite)
