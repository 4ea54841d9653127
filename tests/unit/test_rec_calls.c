/*
 * test_rec_calls.c: interpose/calls.def is the one list of intercepted calls
 * (interpose/README.md), so check that it is well formed and that libencore-record.so
 * interposes exactly what it lists: each row is exported by the library, and the library's
 * internals are not.
 */
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#include "trace.h"
#include "unit.h"

struct row {
	const char *name;
	const char *params;
	uint32_t kind, call, flags;
};

static const struct row rows[] = {
#define ENCORE_CALL(name, ret, params, args, kind, call, flags, shape) \
	{ #name, #params, kind, call, flags },
#include "calls.def"
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

START_TEST(rows_are_well_formed)
{
	size_t i, j;

	ck_assert_uint_gt(NROWS, 50);
	for (i = 0; i < NROWS; i++) {
		int variadic = strstr(rows[i].params, "...") != NULL;

		ck_assert_msg(rows[i].kind <= TRACE_EV_KIND_MAX, "%s: bad kind", rows[i].name);
		ck_assert_msg(rows[i].call < TRACE_CALL_MAX, "%s: bad call", rows[i].name);
		ck_assert_msg((rows[i].flags & ~0x7fu) == 0, "%s: unknown flags", rows[i].name);
		ck_assert_msg(variadic == !!(rows[i].flags & ENCORE_CF_VARIADIC),
		              "%s: ENCORE_CF_VARIADIC must match the parameter list", rows[i].name);
		ck_assert_msg(!(rows[i].flags & ENCORE_CF_OUT) || rows[i].kind == TRACE_EV_SEND,
		              "%s: moves bytes out but is not a send", rows[i].name);
		ck_assert_msg(!(rows[i].flags & ENCORE_CF_IN) || rows[i].kind == TRACE_EV_RECV,
		              "%s: moves bytes in but is not a receive", rows[i].name);
		for (j = 0; j < i; j++)
			ck_assert_msg(strcmp(rows[i].name, rows[j].name), "%s listed twice", rows[i].name);
	}
}
END_TEST

/* Every call in enum trace_call that names a libc function is produced by some row. */
START_TEST(every_call_attribute_has_a_row)
{
	uint32_t c;
	size_t i;

	for (c = 1; c < TRACE_CALL_MAX; c++) {
		int found = 0;

		if (c == TRACE_CALL_MARK || c == TRACE_CALL_HANDLER ||
		    strcmp(trace_call_name(c), "unknown") == 0)
			continue; /* encore_mark, a handler run: ours, not libc's; free numbers */
		if (c == TRACE_CALL_COND_WAKE || c == TRACE_CALL_BARRIER_LEAVE)
			continue; /* the second event of a cond or barrier wait's row */
		if (c == TRACE_CALL_FUTEX_WAIT || c == TRACE_CALL_FUTEX_WAKE ||
		    c == TRACE_CALL_CLONE || c == TRACE_CALL_CLONE3)
			continue; /* syscall(SYS_futex), a clone made as a fork: the syscall row's */
		if (c == TRACE_CALL_EARLY_RANDOM)
			continue; /* the random rows' calls before the recorder started */
		for (i = 0; i < NROWS; i++)
			found |= rows[i].call == c;
		ck_assert_msg(found, "no row produces call %s", trace_call_name(c));
	}
}
END_TEST

START_TEST(library_exports_exactly_the_interposers)
{
	static const char *const hidden[] = { "rec_enter", "rec_log", "rec", "real_write",
		                              "trace_writer_open", "trace_hash" };
	void *h = dlopen(REC_SO, RTLD_NOW | RTLD_LOCAL);
	size_t i;

	ck_assert_msg(h != NULL, "dlopen %s: %s", REC_SO, dlerror());
	for (i = 0; i < NROWS; i++) {
		void *p;
		Dl_info info;

		/* exit() is observed through on_exit (it runs after the program's atexit
		 * handlers and knows the status); the row is there for the replayer. */
		if (!strcmp(rows[i].name, "exit"))
			continue;
		p = dlsym(h, rows[i].name);
		ck_assert_msg(p != NULL, "%s is not exported", rows[i].name);
		ck_assert_msg(dladdr(p, &info) && strstr(info.dli_fname, "libencore-record"),
		              "%s resolves outside the recorder", rows[i].name);
	}
	ck_assert_ptr_nonnull(dlsym(h, "encore_mark"));
	for (i = 0; i < sizeof(hidden) / sizeof(hidden[0]); i++)
		ck_assert_msg(dlsym(h, hidden[i]) == NULL, "%s must not be exported", hidden[i]);
	dlclose(h);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("rec_calls");
	TCase *tc = tcase_create("calls");

	tcase_add_test(tc, rows_are_well_formed);
	tcase_add_test(tc, every_call_attribute_has_a_row);
	tcase_add_test(tc, library_exports_exactly_the_interposers);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(suite)
