/*
 * test_rep_calls.c: libencore-replay.so, the local controller, interposes exactly the calls
 * of interpose/calls.def (the list it shares with the recorder, interpose/README.md): each
 * row is exported by the library and resolves inside it, encore_mark too, and its internals (the
 * LC's state and helpers, libtrace, the real_* pointers) are not exported.  Loading it
 * without ENCORE_REPLAY leaves it inactive: the calls pass through.
 */
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

#include "trace.h"
#include "unit.h"

static const char *const names[] = {
#define ENCORE_CALL(name, ret, params, args, kind, call, flags, shape) #name,
#include "calls.def"
};

#define NROWS (sizeof(names) / sizeof(names[0]))

START_TEST(library_exports_exactly_the_interposers)
{
	static const char *const hidden[] = { "lc", "lc_expect", "lc_commit", "lc_diverge",
		                              "lc_fd", "real_write", "real_recv", "trace_reader_open",
		                              "trace_hash", "rep_open", "lc_online_setup" };
	void *h = dlopen(REP_SO, RTLD_NOW | RTLD_LOCAL);

	ck_assert_msg(h != NULL, "dlopen %s: %s", REP_SO, dlerror());
	for (size_t i = 0; i < NROWS; i++) {
		Dl_info info;
		void *p = dlsym(h, names[i]);

		ck_assert_msg(p != NULL, "%s is not exported", names[i]);
		ck_assert_msg(dladdr(p, &info) && strstr(info.dli_fname, "libencore-replay"),
		              "%s resolves outside the replayer", names[i]);
	}
	ck_assert_ptr_nonnull(dlsym(h, "encore_mark"));
	for (size_t i = 0; i < sizeof(hidden) / sizeof(hidden[0]); i++)
		ck_assert_msg(dlsym(h, hidden[i]) == NULL, "%s must not be exported", hidden[i]);
	dlclose(h);
}
END_TEST

/* Without ENCORE_REPLAY the controller is inactive: its interposers are the real calls. */
START_TEST(inactive_without_configuration)
{
	void *h = dlopen(REP_SO, RTLD_NOW | RTLD_LOCAL);
	ssize_t (*w)(int, const void *, size_t);
	int (*pp)(int[2]);
	pid_t (*gp)(void);
	int fds[2];
	char c = 0;

	unsetenv("ENCORE_REPLAY");
	ck_assert_ptr_nonnull(h);
	w = (ssize_t (*)(int, const void *, size_t))dlsym(h, "write");
	pp = (int (*)(int[2]))dlsym(h, "pipe");
	gp = (pid_t (*)(void))dlsym(h, "getpid");
	ck_assert_int_eq(pp(fds), 0);
	ck_assert_int_eq(w(fds[1], "x", 1), 1);
	ck_assert_int_eq(read(fds[0], &c, 1), 1);
	ck_assert_int_eq(c, 'x');
	ck_assert_int_eq(gp(), getpid());
	close(fds[0]);
	close(fds[1]);
	dlclose(h);
}
END_TEST

/* The pid interposers (kill, waitpid...) translate only in a replayed process: without
 * ENCORE_REPLAY they are the real calls. */
START_TEST(pids_pass_through_without_configuration)
{
	void *h = dlopen(REP_SO, RTLD_NOW | RTLD_LOCAL);
	int (*k)(pid_t, int);
	pid_t (*wp)(pid_t, int *, int);
	pid_t child;
	int st = 0;

	unsetenv("ENCORE_REPLAY");
	ck_assert_ptr_nonnull(h);
	k = (int (*)(pid_t, int))dlsym(h, "kill");
	wp = (pid_t (*)(pid_t, int *, int))dlsym(h, "waitpid");
	ck_assert_ptr_nonnull(k);
	ck_assert_ptr_nonnull(wp);
	ck_assert_int_eq(k(getpid(), 0), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0)
		_exit(7);
	ck_assert_int_eq(wp(child, &st, 0), child);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 7);
	ck_assert_int_eq(wp(child, &st, WNOHANG), -1);
	dlclose(h);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("rep_calls");
	TCase *tc = tcase_create("calls");

	tcase_add_test(tc, library_exports_exactly_the_interposers);
	tcase_add_test(tc, inactive_without_configuration);
	tcase_add_test(tc, pids_pass_through_without_configuration);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(suite)
