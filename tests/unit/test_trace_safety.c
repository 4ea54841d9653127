/*
 * test_trace_safety.c: libtrace's part in never harming the recorded program.  A writer
 * whose writes start failing (here past RLIMIT_FSIZE: EFBIG, and a SIGXFSZ that would kill
 * the process) stops, and the file says after which event and why; a writer that cannot
 * start leaves no file; frames stored as object path + address are named offline from the
 * object's symbol table, frames stored with names keep them (schemas/trace-format.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "trace.h"
#include "unit.h"

static void fill_process(struct trace_process *p, const char *name)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->session, sizeof(p->session), "sess-1");
	p->pid = 42;
	p->first_index = 10;
}

static void limit_file_size(rlim_t bytes)
{
	struct rlimit rl = { bytes, bytes };

	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
}

START_TEST(writer_stops_at_file_size_limit)
{
	char dir[4096], path[4200];
	struct trace_process p;
	struct trace_writer *w;
	struct trace_reader *r;
	struct trace_diag d;
	struct trace_event ev;
	struct unit_rng rng;
	uint8_t data[3000];
	uint64_t n = 0, last = 0, got = 0;
	struct stat st;
	int rc;

	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/p.trace", dir);
	fill_process(&p, "p");
	limit_file_size(300 * 1024);
	ck_assert_int_eq(trace_writer_open(AT_FDCWD, path, &p, NULL, 0, &w, &d), 0);
	unit_rng_seed(&rng, unit_seed());
	/* incompressible data: the file outgrows the limit after a few chunks */
	for (;;) {
		size_t i;

		for (i = 0; i < sizeof(data); i++)
			data[i] = (uint8_t)unit_rng_next(&rng);
		memset(&ev, 0, sizeof(ev));
		ev.kind = TRACE_EV_RECV;
		ev.call = 1;
		ev.fd = 3;
		ev.channel = 1;
		ev.result = (int64_t)sizeof(data);
		ev.data = data;
		ev.data_len = sizeof(data);
		rc = trace_writer_event(w, &ev);
		if (rc != 0)
			break;
		n++;
		ck_assert_uint_lt(n, 100000);
	}
	/* still alive: no SIGXFSZ reached us */
	ck_assert_int_eq(rc, TRACE_EIO);
	ck_assert_int_eq(trace_writer_event(w, &ev), TRACE_EIO); /* sticky */
	trace_writer_abandon(w);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_le(st.st_size, 300 * 1024);

	ck_assert_int_eq(trace_reader_open(path, &r, &d), 0);
	ck_assert_int_eq(trace_reader_stopped(r, &last), EFBIG);
	ck_assert_uint_eq(last, p.first_index + n);
	while ((rc = trace_reader_next(r, &ev)) > 0)
		got++;
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(got, n);
	ck_assert_int_eq(trace_reader_damage(r, &d), 0);
	ck_assert_int_eq(trace_reader_closed(r), 0);
	trace_reader_close(r);
	unit_rmdir(dir);
}
END_TEST

START_TEST(whole_trace_is_not_stopped)
{
	char dir[4096], path[4200];
	struct trace_process p;
	struct trace_writer *w;
	struct trace_reader *r;
	struct trace_diag d;
	struct trace_event ev;
	uint64_t last = 99;

	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/p.trace", dir);
	fill_process(&p, "p");
	ck_assert_int_eq(trace_writer_open(AT_FDCWD, path, &p, NULL, 0, &w, &d), 0);
	memset(&ev, 0, sizeof(ev));
	ev.kind = TRACE_EV_EXIT;
	ev.fd = -1;
	ck_assert_int_eq(trace_writer_event(w, &ev), 0);
	ck_assert_int_eq(trace_writer_close(w), 0);
	ck_assert_int_eq(trace_reader_open(path, &r, &d), 0);
	ck_assert_int_eq(trace_reader_stopped(r, &last), 0);
	ck_assert_uint_eq(last, 0);
	trace_reader_close(r);
	unit_rmdir(dir);
}
END_TEST

START_TEST(failed_start_leaves_no_file)
{
	char dir[4096], path[4200];
	struct trace_process p;
	struct trace_writer *w = NULL;
	struct trace_diag d;
	struct stat st;

	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/p.trace", dir);
	fill_process(&p, "p");
	limit_file_size(4096); /* less than the header and the tail */
	ck_assert_int_eq(trace_writer_open(AT_FDCWD, path, &p, NULL, 0, &w, &d), TRACE_EIO);
	ck_assert_ptr_null(w);
	ck_assert_int_eq(d.sys_errno, EFBIG);
	ck_assert_ptr_nonnull(strstr(d.file, "p.trace"));
	ck_assert_ptr_nonnull(strstr(d.msg, strerror(EFBIG)));
	ck_assert_int_eq(stat(path, &st), -1);
	ck_assert_int_eq(errno, ENOENT);
	unit_rmdir(dir);
}
END_TEST

/* --- offline names ------------------------------------------------------------------------ */

__attribute__((noinline)) int unit_named_function(int x);
__attribute__((noinline)) int unit_named_function(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3 + 1;
}

static int main_bias_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uintptr_t *)arg = info->dlpi_addr;
	return 1; /* the first object is the executable */
}

START_TEST(frames_named_offline)
{
	char dir[4096], path[4200], exe[4096];
	struct trace_process p;
	struct trace_writer *w;
	struct trace_reader *r;
	struct trace_diag d;
	struct trace_event ev;
	struct trace_frame fr[4];
	const struct trace_stack *st;
	uintptr_t bias = 0;
	ssize_t n;

	ck_assert_int_eq(unit_named_function(1), 4);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ck_assert_int_gt(n, 0);
	exe[n] = '\0';
	dl_iterate_phdr(main_bias_cb, &bias);

	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/p.trace", dir);
	fill_process(&p, "p");
	ck_assert_int_eq(trace_writer_open(AT_FDCWD, path, &p, NULL, 0, &w, &d), 0);
	memset(fr, 0, sizeof(fr));
	/* as the recorder stores them: object path + address in it, no name */
	fr[0] = (struct trace_frame){ (uintptr_t)unit_named_function + 5 - bias, 0, "", exe };
	/* an object that is gone: stays unnamed */
	fr[1] = (struct trace_frame){ 0x1234, 0, "", "/nonexistent/libgone.so" };
	/* as older recorders stored them: kept as they are */
	fr[2] = (struct trace_frame){ 0x99, 7, "old_name", "libold.so" };
	/* an address outside every object */
	fr[3] = (struct trace_frame){ 0x7fff0000, 0, "", "" };
	ck_assert_int_eq(trace_writer_stack(w, 1, fr, 4), 0);
	memset(&ev, 0, sizeof(ev));
	ev.kind = TRACE_EV_EXIT;
	ev.fd = -1;
	ev.site = 1;
	ck_assert_int_eq(trace_writer_event(w, &ev), 0);
	ck_assert_int_eq(trace_writer_close(w), 0);

	ck_assert_int_eq(trace_reader_open(path, &r, &d), 0);
	ck_assert_int_eq(trace_reader_next(r, &ev), 1);
	st = trace_reader_stack(r, ev.site);
	ck_assert_ptr_nonnull(st);
	ck_assert_uint_eq(st->nframes, 4);
	ck_assert_str_eq(st->frames[0].function, "unit_named_function");
	ck_assert_uint_eq(st->frames[0].offset, 5);
	ck_assert_str_eq(st->frames[0].object, exe);
	ck_assert_str_eq(st->frames[1].function, "");
	ck_assert_str_eq(st->frames[2].function, "old_name");
	ck_assert_uint_eq(st->frames[2].offset, 7);
	ck_assert_str_eq(st->frames[2].object, "libold.so");
	ck_assert_str_eq(st->frames[3].function, "");
	trace_reader_close(r);
	unit_rmdir(dir);
}
END_TEST

static Suite *safety_suite(void)
{
	Suite *s = suite_create("trace_safety");
	TCase *stop = tcase_create("stop"), *names = tcase_create("names");

	tcase_add_test(stop, writer_stops_at_file_size_limit);
	tcase_add_test(stop, whole_trace_is_not_stopped);
	tcase_add_test(stop, failed_start_leaves_no_file);
	tcase_add_test(names, frames_named_offline);
	suite_add_tcase(s, stop);
	suite_add_tcase(s, names);
	return s;
}

UNIT_MAIN(safety_suite)
