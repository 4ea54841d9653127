/*
 * test_dlnext.c: the pure parts of the thread and allocator rules the preloads share
 * (interpose/dlnext.h) and of ENCORE_REPLAY's rpid= and t0= (interpose/env.c): the
 * allocator's address range test (none with glibc's malloc, libasan's under ASan), and the
 * recorded pid and start time carried to an LC whose library constructors run first.
 */
#include "dlnext.h"
#include "interpose.h"
#include "unit.h"

START_TEST(alloc_range_bounds)
{
	ck_assert(ip_in_range((void *)0x1000, 0x1000, 0x2000));
	ck_assert(ip_in_range((void *)0x1fff, 0x1000, 0x2000));
	ck_assert(!ip_in_range((void *)0x2000, 0x1000, 0x2000));
	ck_assert(!ip_in_range((void *)0xfff, 0x1000, 0x2000));
	ck_assert(!ip_in_range((void *)0, 0, 0));
	ck_assert(!ip_in_range((void *)UINTPTR_MAX, 0, 0));
}
END_TEST

/* The test program allocates with glibc's malloc (no range: nothing passed through), or,
 * built with AddressSanitizer, with libasan's (a library of its own: its range). */
START_TEST(alloc_range_is_the_malloc_library)
{
	void *mp = dlsym(RTLD_DEFAULT, "malloc"), *cp = dlsym(RTLD_DEFAULT, "gnu_get_libc_version");
	struct dl_find_object m, c;
	uintptr_t lo = 1, hi = 2;

	ck_assert(mp && cp && _dl_find_object(mp, &m) == 0 && _dl_find_object(cp, &c) == 0);
	ip_alloc_range(&lo, &hi);
	if (m.dlfo_link_map == c.dlfo_link_map) {
		ck_assert(lo == 0 && hi == 0);
		ck_assert(!ip_in_range(mp, lo, hi));
	} else {
		ck_assert(ip_in_range(mp, lo, hi));
		ck_assert(!ip_in_range(cp, lo, hi));
		ck_assert(!ip_in_range((void *)ip_in_range, lo, hi)); /* the program's own */
	}
}
END_TEST

START_TEST(replay_env_carries_rpid_and_t0)
{
	struct ip_rep_env e = { .dir = "/s" }, d;
	char buf[512];

	strcpy(e.name, "dig");
	e.rpid = 4321;
	e.t0 = 1795499607123456789ll;
	ck_assert_int_eq(ip_rep_env_encode(buf, sizeof(buf), &e, NULL, NULL), 0);
	ck_assert_str_eq(buf, "v=1;name=dig;pid=0;seg=0;rpid=4321;t0=1795499607123456789;dir=/s");
	ck_assert_int_eq(ip_rep_env_decode(buf, &d), 0);
	ck_assert(d.rpid == 4321 && d.t0 == 1795499607123456789ll && d.pid == 0);
	/* not given: not written, and 0 when read */
	e.rpid = 0;
	e.t0 = 0;
	ck_assert_int_eq(ip_rep_env_encode(buf, sizeof(buf), &e, NULL, NULL), 0);
	ck_assert_str_eq(buf, "v=1;name=dig;pid=0;seg=0;dir=/s");
	ck_assert_int_eq(ip_rep_env_decode(buf, &d), 0);
	ck_assert(d.rpid == 0 && d.t0 == 0);
	ck_assert_int_eq(ip_rep_env_decode("v=1;name=a;rpid=x;dir=/d", &d), -1);
	ck_assert_int_eq(ip_rep_env_decode("v=1;name=a;t0=;dir=/d", &d), -1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("dlnext");
	TCase *t = tcase_create("dlnext");

	tcase_add_test(t, alloc_range_bounds);
	tcase_add_test(t, alloc_range_is_the_malloc_library);
	tcase_add_test(t, replay_env_carries_rpid_and_t0);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)
