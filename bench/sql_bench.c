/*
 * sql_bench.c: SQL over traces (issue #7).  A synthetic session of 1e6 events (ENCORE_BENCH_
 * EVENTS overrides) over 16 processes exchanging messages on random stream channels, built
 * with the analyzer's builder, then:
 *   load    ana_db_fill into a database file (schema, every row, the indexes, commit):
 *           events per second (target >= 1e6/s);
 *   hb      SELECT sum(hb(a, b)) over 1e5 random pairs of event ids from a table: ns per
 *           pair, amortised over the first query (which reads the process and message
 *           tables and builds the reachability columns it needs), and again warm
 *           (target < 1000 ns amortised);
 *   past    causal_past(id) of 100 random events (rows per second).
 * Printed in one run, never asserted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "ana.h"

#define NPROC 16
#define NCHAN 48

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of the whole process (all threads): what the machine spent, whatever else runs */
static double cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

static int build(struct ana_session **out, uint64_t target)
{
	struct ana_session *s = NULL;
	int cha[NCHAN], chb[NCHAN];
	uint64_t inflight[NCHAN][2];
	struct trace_diag d;
	char name[32];

	if (ana_new(&s))
		return -1;
	for (int p = 0; p < NPROC; p++) {
		snprintf(name, sizeof(name), "p%d", p);
		if (ana_add_process(s, name, NULL, 0) != p)
			goto fail;
	}
	for (int c = 0; c < NCHAN; c++) {
		cha[c] = (int)(rnd() % NPROC);
		chb[c] = (cha[c] + 1 + (int)(rnd() % (NPROC - 1))) % NPROC;
		inflight[c][0] = inflight[c][1] = 0;
		if (ana_add_channel(s, cha[c], chb[c]) != c)
			goto fail;
	}
	for (uint64_t i = 0; i < target; i++) {
		int c = (int)(rnd() % NCHAN), dir = (int)(rnd() & 1);
		int from = dir ? chb[c] : cha[c], to = dir ? cha[c] : chb[c];
		uint64_t r = rnd() % 10;
		int64_t k;

		if (r < 4) {
			uint64_t len = 1 + rnd() % 512;

			k = ana_add_send(s, from, c, len);
			inflight[c][dir] += len;
		} else if (r < 8 && inflight[c][dir]) {
			uint64_t len = inflight[c][dir];

			if (len > 1 && (rnd() & 3) == 0)
				len /= 2;
			k = ana_add_recv(s, to, c, len);
			inflight[c][dir] -= len;
		} else if (r == 9) {
			k = ana_add_mark(s, from, "step", (int64_t)i);
		} else {
			k = ana_add_simple(s, from, TRACE_EV_CLOCK, 0);
		}
		if (k < 0)
			goto fail;
	}
	if (ana_finish(s, &d)) {
		fprintf(stderr, "sql_bench: finish: %s\n", d.msg);
		goto fail;
	}
	*out = s;
	return 0;
fail:
	ana_free(s);
	return -1;
}

int main(void)
{
	const char *env = getenv("ENCORE_BENCH_EVENTS");
	uint64_t target = env ? strtoull(env, NULL, 10) : 1000000, total;
	const char *tmpdir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char path[4096];
	struct ana_session *s = NULL;
	struct trace_diag d;
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	double t0, t1, t2, t3, c0, c1;
	int64_t sum = 0, rows = 0;
	int rc = 1;
	const int npairs = 100000;

	if (target < 1000)
		target = 1000;
	if (build(&s, target))
		return 1;
	total = ana_total_events(s);
	snprintf(path, sizeof(path), "%s/sql_bench.%ld.db", tmpdir, (long)getpid());
	unlink(path);
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
	                    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
		goto out;
	t0 = now();
	c0 = cpu();
	if (ana_db_fill(db, s, NULL, NULL, &d)) {
		fprintf(stderr, "sql_bench: fill: %s\n", d.msg);
		goto out;
	}
	t1 = now();
	c1 = cpu();
	printf("sql_bench: %llu events, %d processes\n", (unsigned long long)total, NPROC);
	printf("  load   %8.3f s  %12.0f events/s   (target >= 1e6 events/s; %.3f s of CPU in "
	       "all threads)\n", t1 - t0, (double)total / (t1 - t0), c1 - c0);

	{
		sqlite3_stmt *c = NULL;

		if (sqlite3_prepare_v2(db, "SELECT (SELECT count(*) FROM message), "
		                       "(SELECT count(*) FROM race)", -1, &c, NULL) == SQLITE_OK &&
		    sqlite3_step(c) == SQLITE_ROW)
			printf("         (rows besides events: %lld messages, %lld races)\n",
			       (long long)sqlite3_column_int64(c, 0), (long long)sqlite3_column_int64(c, 1));
		sqlite3_finalize(c);
	}
	if (ana_sql_register(db) ||
	    sqlite3_exec(db, "CREATE TEMP TABLE pairs (a INTEGER, b INTEGER)", NULL, NULL, NULL) ||
	    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) ||
	    sqlite3_prepare_v2(db, "INSERT INTO pairs VALUES (?, ?)", -1, &st, NULL))
		goto sqlerr;
	for (int i = 0; i < npairs; i++) {
		sqlite3_bind_int64(st, 1, (int64_t)(1 + rnd() % total));
		sqlite3_bind_int64(st, 2, (int64_t)(1 + rnd() % total));
		if (sqlite3_step(st) != SQLITE_DONE)
			goto sqlerr;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) ||
	    sqlite3_prepare_v2(db, "SELECT sum(hb(a, b)) FROM pairs", -1, &st, NULL))
		goto sqlerr;
	for (int pass = 0; pass < 2; pass++) {
		double c2 = cpu();

		t2 = now();
		if (sqlite3_step(st) != SQLITE_ROW)
			goto sqlerr;
		sum = sqlite3_column_int64(st, 0);
		t3 = now();
		sqlite3_reset(st);
		printf("  hb     %8.3f s  %12.1f ns/pair   (%d random pairs, %lld ordered, %.1f ns of "
		       "CPU each; %s)\n", t3 - t2, (t3 - t2) * 1e9 / npairs, npairs, (long long)sum,
		       (cpu() - c2) * 1e9 / npairs,
		       pass ? "warm" : "cold: includes reading the tables and the index build");
	}
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM causal_past(?)", -1, &st, NULL))
		goto sqlerr;
	t2 = now();
	for (int i = 0; i < 100; i++) {
		sqlite3_bind_int64(st, 1, (int64_t)(1 + rnd() % total));
		if (sqlite3_step(st) != SQLITE_ROW)
			goto sqlerr;
		rows += sqlite3_column_int64(st, 0);
		sqlite3_reset(st);
	}
	t3 = now();
	printf("  past   %8.3f s  %12.0f rows/s     (causal_past of 100 random events, %lld rows)\n",
	       t3 - t2, (double)rows / (t3 - t2), (long long)rows);
	rc = 0;
	goto out;
sqlerr:
	fprintf(stderr, "sql_bench: %s\n", sqlite3_errmsg(db));
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	unlink(path);
	ana_free(s);
	return rc;
}
