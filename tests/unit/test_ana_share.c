/*
 * test_ana_share.c: pipe ends and semaphores several processes share (recorder/share.c,
 * schemas/trace-format.md "Shared pipe ends"): the reader derives a shared end's offsets from
 * the offsets its events carry; the analyzer links each worker's receive to the send of its
 * bytes (no overlap, no warning), and orders each acquisition of a process-shared semaphore
 * after the one before it and after the release before it (analyzer/edges.c).
 */
#include <fcntl.h>

#include "unit.h"

#include "ana.h"

/* --- the reader --------------------------------------------------------------------------- */

static void fill_process(struct trace_process *p, const char *name)
{
	static char *argv[] = { "prog" };

	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->host, sizeof(p->host), "hostA");
	snprintf(p->host_id, sizeof(p->host_id), "0123456789abcdef");
	snprintf(p->session, sizeof(p->session), "sess-1");
	p->pid = 4242;
	p->ppid = 1;
	snprintf(p->exe, sizeof(p->exe), "/usr/bin/prog");
	snprintf(p->cwd, sizeof(p->cwd), "/tmp");
	p->argc = 1;
	p->argv = argv;
}

/* A process reads 5 bytes of its own, then its end becomes shared: its receives carry the
 * shared offset (20, then 30 after another reader took 3), and a receive of it without the
 * flag (an older recorder) continues from there. */
START_TEST(reader_takes_shared_offsets)
{
	char dir[4096], path[4200];
	struct trace_process p;
	struct trace_writer_options o = { 0, 0, 0, 0, NULL, 0 };
	struct trace_writer *w = NULL;
	struct trace_reader *r = NULL;
	struct trace_diag d;
	struct trace_event e, out;
	/* kind, result, flags, aux[0] (shared offset), the offset read back */
	const int64_t plan[][5] = {
		{ TRACE_EV_RECV, 5, 0, 0, 0 },
		{ TRACE_EV_RECV, 7, TRACE_FL_SHARED, 20, 20 },
		{ TRACE_EV_RECV, 3, TRACE_FL_SHARED, 30, 30 },
		{ TRACE_EV_RECV, 2, 0, 0, 33 },
		{ TRACE_EV_SEND, 4, TRACE_FL_SHARED, 100, 100 },
		{ TRACE_EV_SEND, 4, 0, 0, 104 },
	};

	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/w.trace", dir);
	fill_process(&p, "w");
	ck_assert_int_eq(trace_writer_open(AT_FDCWD, path, &p, &o, 0, &w, &d), 0);
	for (size_t i = 0; i < sizeof(plan) / sizeof(plan[0]); i++) {
		memset(&e, 0, sizeof(e));
		e.kind = (uint32_t)plan[i][0];
		e.channel = 1;
		e.fd = 3;
		e.result = plan[i][1];
		e.len = (uint64_t)plan[i][1];
		e.flags = (uint32_t)plan[i][2];
		if (e.flags & TRACE_FL_SHARED) {
			e.naux = 3;
			e.aux[0] = plan[i][3];
			e.aux[1] = 1234;
			e.aux[2] = 5;
		}
		ck_assert_int_eq(trace_writer_event(w, &e), 0);
	}
	ck_assert_int_eq(trace_writer_close(w), 0);
	ck_assert_int_eq(trace_reader_open(path, &r, &d), 0);
	for (size_t i = 0; i < sizeof(plan) / sizeof(plan[0]); i++) {
		ck_assert_int_eq(trace_reader_next(r, &out), 1);
		ck_assert_msg(out.offset == (uint64_t)plan[i][4], "event %zu: offset %llu, want %lld",
		              i + 1, (unsigned long long)out.offset, (long long)plan[i][4]);
	}
	trace_reader_close(r);
	unit_rmdir(dir);
}
END_TEST

/* --- the analyzer ------------------------------------------------------------------------- */

static int64_t ev_add(struct ana_session *s, int p, uint32_t kind, uint32_t call, uint32_t chan,
                      int64_t result, uint64_t offset, uint32_t naux, const int64_t *aux,
                      const struct trace_endpoint *ep)
{
	struct trace_event ev;
	uint8_t buf[TRACE_ENDPOINT_MAX];

	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.call = call;
	ev.fd = -1;
	ev.channel = chan;
	ev.result = result;
	ev.len = result > 0 ? (uint64_t)result : 1;
	ev.offset = offset; /* as the reader derives it */
	ev.naux = naux;
	for (uint32_t i = 0; i < naux; i++)
		ev.aux[i] = aux[i];
	if (ep) {
		int n = trace_endpoint_encode(ep, buf, sizeof(buf));

		ck_assert_int_gt(n, 0);
		ev.data = buf;
		ev.data_len = (uint32_t)n;
	}
	return ana_add_trace_event(s, p, &ev);
}

static void src_is(struct ana_session *s, int p, uint64_t k, uint32_t sp, uint64_t sk)
{
	struct ana_event ev;

	ck_assert_int_eq(ana_event_get(s, (size_t)p, k, &ev), 0);
	ck_assert_msg(ev.src_proc == sp && (sp == ANA_NO_PROC || ev.src_index == sk),
	              "event %d:%llu: source %u:%llu, expected %u:%llu", p,
	              (unsigned long long)k, ev.src_proc, (unsigned long long)ev.src_index, sp,
	              (unsigned long long)sk);
}

/* A parent makes a pipe, forks two workers and writes three 10-byte tasks; worker 1 took
 * the first and the third, worker 2 the second.  With their shared offsets each receive is
 * linked to its task; with per-process offsets (shared 0) the workers' ranges overlap and
 * nothing is linked (the analyzer cannot tell who got what). */
static void workers(int shared)
{
	struct ana_session *s;
	struct trace_endpoint ep;
	int64_t pair[2] = { 1, 2 };

	ck_assert_int_eq(ana_new(&s), 0);
	ck_assert_int_eq(ana_add_process(s, "m", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(s, "m.1", "m", 2), 1);
	ck_assert_int_eq(ana_add_process(s, "m.2", "m", 3), 2);
	for (int c = 1; c <= 2; c++)
		for (uint32_t ch = 1; ch <= 2; ch++)
			ck_assert_int_eq(ana_add_inherited(s, c, ch), 0);
	memset(&ep, 0, sizeof(ep));
	ep.type = TRACE_CHAN_PIPE;
	ep.inode = 77;
	ck_assert_int_eq(ev_add(s, 0, TRACE_EV_PIPE, TRACE_CALL_PIPE, 1, 0, 0, 2, pair, &ep), 1);
	ck_assert_int_eq(ev_add(s, 0, TRACE_EV_FORK, TRACE_CALL_FORK, 0, 11, 0, 0, NULL, NULL), 2);
	ck_assert_int_eq(ev_add(s, 0, TRACE_EV_FORK, TRACE_CALL_FORK, 0, 12, 0, 0, NULL, NULL), 3);
	for (int t = 0; t < 3; t++)
		ck_assert_int_eq(ev_add(s, 0, TRACE_EV_SEND, TRACE_CALL_WRITE, 2, 10,
		                        (uint64_t)(10 * t), 0, NULL, NULL), 4 + t);
	ck_assert_int_eq(ev_add(s, 1, TRACE_EV_RECV, TRACE_CALL_READ, 1, 10, 0, 0, NULL, NULL), 1);
	ck_assert_int_eq(ev_add(s, 1, TRACE_EV_RECV, TRACE_CALL_READ, 1, 10, shared ? 20 : 10, 0,
	                        NULL, NULL), 2);
	ck_assert_int_eq(ev_add(s, 2, TRACE_EV_RECV, TRACE_CALL_READ, 1, 10, shared ? 10 : 0, 0,
	                        NULL, NULL), 1);
	ck_assert_int_eq(ana_finish(s, NULL), 0);
	if (shared) {
		src_is(s, 1, 1, 0, 4);
		src_is(s, 1, 2, 0, 6);
		src_is(s, 2, 1, 0, 5);
		ck_assert_uint_eq(ana_nwarnings(s), 0);
	} else {
		src_is(s, 1, 1, ANA_NO_PROC, 0);
		src_is(s, 1, 2, ANA_NO_PROC, 0);
		src_is(s, 2, 1, ANA_NO_PROC, 0);
		ck_assert_uint_gt(ana_nwarnings(s), 0);
	}
	ana_free(s);
}

START_TEST(shared_offsets_link_every_worker)
{
	workers(1);
}
END_TEST

START_TEST(own_offsets_link_nothing)
{
	workers(0);
}
END_TEST

static int64_t order(struct ana_session *s, int p, uint32_t call, int64_t ticket, int64_t key,
                     int64_t result)
{
	int64_t aux[3] = { ticket, key, 0 };

	return ev_add(s, p, TRACE_EV_ORDER, call, 0, result, 0, 3, aux, NULL);
}

/* Three processes take one lock (key 9) in ticket order 0 (a), 1 (b), 2 (c), each releasing it
 * before the next takes it; b's sem_trywait failed once first (no ticket); another semaphore
 * (key 8) orders nothing against this one. */
START_TEST(semaphore_tickets_order_processes)
{
	struct ana_session *s;
	uint64_t cut[3];

	ck_assert_int_eq(ana_new(&s), 0);
	ck_assert_int_eq(ana_add_process(s, "a", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(s, "b", NULL, 0), 1);
	ck_assert_int_eq(ana_add_process(s, "c", NULL, 0), 2);
	ck_assert_int_eq(order(s, 0, TRACE_CALL_SEM_WAIT, 0, 9, 0), 1);
	ck_assert_int_eq(ana_add_simple(s, 0, TRACE_EV_CLOCK, 0), 2);
	ck_assert_int_eq(order(s, 0, TRACE_CALL_SEM_POST, 1, 9, 0), 3);
	ck_assert_int_eq(order(s, 1, TRACE_CALL_SEM_TRYWAIT, -1, 9, -1), 1);
	ck_assert_int_eq(order(s, 1, TRACE_CALL_SEM_WAIT, 1, 9, 0), 2);
	ck_assert_int_eq(order(s, 1, TRACE_CALL_SEM_POST, 2, 9, 0), 3);
	ck_assert_int_eq(order(s, 2, TRACE_CALL_SEM_WAIT, 0, 8, 0), 1);
	ck_assert_int_eq(order(s, 2, TRACE_CALL_SEM_TRYWAIT, 2, 9, 0), 2);
	ck_assert_int_eq(ana_finish(s, NULL), 0);
	/* a's release before b's acquisition, b's acquisition before c's */
	ck_assert_int_eq(ana_hb(s, 0, 3, 1, 2), 1);
	ck_assert_int_eq(ana_hb(s, 0, 1, 1, 2), 1);
	ck_assert_int_eq(ana_hb(s, 1, 2, 2, 2), 1);
	ck_assert_int_eq(ana_hb(s, 1, 3, 2, 2), 1);
	ck_assert_int_eq(ana_hb(s, 0, 3, 2, 2), 1);
	/* never the other way, and neither the failed attempt nor the other semaphore */
	ck_assert_int_eq(ana_hb(s, 1, 2, 0, 3), 0);
	ck_assert_int_eq(ana_hb(s, 0, 1, 1, 1), 0);
	ck_assert_int_eq(ana_hb(s, 0, 1, 2, 1), 0);
	ck_assert_int_eq(ana_hb(s, 2, 1, 0, 1), 0);
	/* a cut with b's acquisition and not a's release is not consistent: replay could not
	 * reach it (a would hold the lock) */
	cut[0] = 2;
	cut[1] = 2;
	cut[2] = 0;
	ck_assert_int_eq(ana_consistent(s, cut), 0);
	cut[0] = 3;
	ck_assert_int_eq(ana_consistent(s, cut), 1);
	ana_free(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ana_share");
	TCase *t = tcase_create("share");

	tcase_add_test(t, reader_takes_shared_offsets);
	tcase_add_test(t, shared_offsets_link_every_worker);
	tcase_add_test(t, own_offsets_link_nothing);
	tcase_add_test(t, semaphore_tickets_order_processes);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)
