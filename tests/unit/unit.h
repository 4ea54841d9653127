/*
 * unit.h: what the Check unit tests share: a main() that runs one suite, a fresh temporary
 * directory per test, and a seeded pseudo-random generator (tests are reproducible: the
 * seed comes from ENCORE_TEST_SEED or is fixed, and a failing test prints it).
 */
#ifndef ENCORE_TESTS_UNIT_H
#define ENCORE_TESTS_UNIT_H

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* xorshift64*: small, fast, good enough to generate test traces. */
struct unit_rng {
	uint64_t s;
};

static inline void unit_rng_seed(struct unit_rng *r, uint64_t seed)
{
	r->s = seed ? seed : 0x9E3779B97F4A7C15ull;
}

static inline uint64_t unit_rng_next(struct unit_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [0, n). */
static inline uint64_t unit_rng_below(struct unit_rng *r, uint64_t n)
{
	return n ? unit_rng_next(r) % n : 0;
}

static inline uint64_t unit_seed(void)
{
	const char *s = getenv("ENCORE_TEST_SEED");

	return s ? strtoull(s, NULL, 0) : 20261122u;
}

/* A fresh directory under the build dir (or /tmp); removed by unit_rmdir. */
static inline void unit_tmpdir(char *out, size_t cap)
{
	const char *base = getenv("ENCORE_TEST_TMPDIR");

	snprintf(out, cap, "%s/unit-XXXXXX", base ? base : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(out));
}

static inline void unit_rmdir(const char *dir)
{
	char cmd[4200];

	/* Only ever a directory unit_tmpdir made: it ends in "/unit-XXXXXX". */
	if (!strstr(dir, "/unit-"))
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "warning: could not remove %s\n", dir);
}

#define UNIT_MAIN(suite_fn)                                                    \
	int main(void)                                                             \
	{                                                                          \
		SRunner *sr = srunner_create(suite_fn());                              \
		int failed;                                                            \
		srunner_run_all(sr, CK_NORMAL);                                        \
		failed = srunner_ntests_failed(sr);                                    \
		srunner_free(sr);                                                      \
		return failed ? EXIT_FAILURE : EXIT_SUCCESS;                           \
	}

#endif
