/*
 * test_trace_reserve.c: a writer that reserved its space ahead (trace_writer_reserve: what
 * the recorder does before a seccomp filter forbids its writes) makes no write any more (a
 * filter that kills on them is installed in the test), yet
 * its file reads back whole: chunks stored into the mapped reserve, an end marker after the
 * last (schemas/trace-format.md, "Reserved space"); a reserve used up stops the writer with
 * TRACE_STOP_RESERVE, every event before kept; a stop in that mode keeps them too.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "trace.h"
#include "unit.h"

static void fill_process(struct trace_process *p)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "p");
	snprintf(p->session, sizeof(p->session), "sess-1");
	p->pid = 42;
	p->first_index = 5;
}

#define KILL_ON(nr) \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)

/* From here this (forked) test process dies on any write of a file's size or contents
 * through a descriptor (Check's own reports, plain writes to its pipe, pass).  0, or -1
 * where seccomp is not available. */
static int forbid_file_writes(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		KILL_ON(SYS_pwrite64),
		KILL_ON(SYS_pwritev),
		KILL_ON(SYS_pwritev2),
		KILL_ON(SYS_ftruncate),
		KILL_ON(SYS_fallocate),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

/* One receive event of n bytes, random (incompressible) or not. */
static int put(struct trace_writer *w, struct unit_rng *rng, size_t n, int random)
{
	static uint8_t data[4000];
	struct trace_event ev;
	size_t i;

	for (i = 0; i < n; i++)
		data[i] = random ? (uint8_t)unit_rng_next(rng) : (uint8_t)(i % 7);
	memset(&ev, 0, sizeof(ev));
	ev.kind = TRACE_EV_RECV;
	ev.call = 1;
	ev.fd = 3;
	ev.channel = 1;
	ev.result = (int64_t)n;
	ev.data = data;
	ev.data_len = (uint32_t)n;
	return trace_writer_event(w, &ev);
}

/* Read the file back: the number of events, with no damage; *stop and *last as the reader
 * sees the stop. */
static uint64_t read_back(const char *path, int *stop, uint64_t *last, int *closed)
{
	struct trace_reader *r;
	struct trace_diag d;
	struct trace_event ev;
	uint64_t got = 0;
	int rc;

	ck_assert_int_eq(trace_reader_open(path, &r, &d), 0);
	*stop = trace_reader_stopped(r, last);
	while ((rc = trace_reader_next(r, &ev)) > 0) {
		ck_assert_int_eq(ev.kind, TRACE_EV_RECV);
		got++;
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_msg(trace_reader_damage(r, &d) == 0, "damage: %s", d.msg);
	*closed = trace_reader_closed(r);
	trace_reader_close(r);
	return got;
}

START_TEST(reserve_then_no_writes)
{
	char dir[4096], path[4200];
	struct trace_process p;
	struct trace_writer *w;
	struct trace_diag d;
	struct unit_rng rng;
	uint64_t n, last = 0;
	struct stat st;
	int stop, closed;

	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/p.trace", dir);
	fill_process(&p);
	unit_rng_seed(&rng, unit_seed());
	ck_assert_int_eq(trace_writer_open(AT_FDCWD, path, &p, NULL, 0, &w, &d), 0);
	for (n = 0; n < 100; n++) /* a few chunks written the usual way first */
		ck_assert_int_eq(put(w, &rng, 3000, 1), 0);
	ck_assert_int_eq(trace_writer_reserve(w, 4u << 20), 0);
	/* a write of the writer from here kills the test */
	if (forbid_file_writes() != 0) {
		trace_writer_abandon(w);
		unit_rmdir(dir);
		return; /* no seccomp here: the other tests stand */
	}
	for (; n < 1100; n++)
		ck_assert_int_eq(put(w, &rng, 1000 + n % 500, n % 3 == 0), 0);
	ck_assert_int_eq(trace_writer_close(w), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_ge(st.st_size, 4 << 20); /* the reserve stays in the file */
	ck_assert_uint_eq(read_back(path, &stop, &last, &closed), n);
	ck_assert_int_eq(stop, 0);
	ck_assert_int_eq(closed, 1);
	unit_rmdir(dir);
}
END_TEST

START_TEST(reserve_used_up)
{
	char dir[4096], path[4200];
	struct trace_process p;
	struct trace_writer *w;
	struct trace_diag d;
	struct unit_rng rng;
	uint64_t n = 0, last = 0;
	int rc, stop, closed;

	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/p.trace", dir);
	fill_process(&p);
	unit_rng_seed(&rng, unit_seed());
	ck_assert_int_eq(trace_writer_open(AT_FDCWD, path, &p, NULL, 0, &w, &d), 0);
	ck_assert_int_eq(trace_writer_reserve(w, 256u << 10), 0);
	while ((rc = put(w, &rng, 3000, 1)) == 0) {
		n++;
		ck_assert_uint_lt(n, 10000);
	}
	ck_assert_int_eq(rc, TRACE_EIO);
	trace_writer_abandon(w);
	ck_assert_uint_eq(read_back(path, &stop, &last, &closed), n);
	ck_assert_int_eq(stop, TRACE_STOP_RESERVE);
	ck_assert_uint_eq(last, p.first_index + n);
	ck_assert_int_eq(closed, 0);
	ck_assert_ptr_nonnull(strstr(trace_stop_reason(TRACE_STOP_RESERVE), "reserved"));
	unit_rmdir(dir);
}
END_TEST

START_TEST(stop_in_reserve_mode)
{
	char dir[4096], path[4200];
	struct trace_process p;
	struct trace_writer *w;
	struct trace_diag d;
	struct unit_rng rng;
	uint64_t n, last = 0;
	int stop, closed;

	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/p.trace", dir);
	fill_process(&p);
	unit_rng_seed(&rng, unit_seed());
	ck_assert_int_eq(trace_writer_open(AT_FDCWD, path, &p, NULL, 0, &w, &d), 0);
	ck_assert_int_eq(trace_writer_reserve(w, 1u << 20), 0);
	for (n = 0; n < 150; n++)
		ck_assert_int_eq(put(w, &rng, 2000, 1), 0);
	ck_assert_int_eq(trace_writer_stop(w, TRACE_STOP_SECCOMP), 0);
	ck_assert_uint_eq(read_back(path, &stop, &last, &closed), n);
	ck_assert_int_eq(stop, TRACE_STOP_SECCOMP);
	ck_assert_uint_eq(last, p.first_index + n);
	unit_rmdir(dir);
}
END_TEST

static Suite *reserve_suite(void)
{
	Suite *s = suite_create("trace_reserve");
	TCase *tc = tcase_create("reserve");

	tcase_add_test(tc, reserve_then_no_writes);
	tcase_add_test(tc, reserve_used_up);
	tcase_add_test(tc, stop_in_reserve_mode);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(reserve_suite)
