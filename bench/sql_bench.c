/*
 * sql_bench.c: SQL over traces.  A synthetic session of 1e6 events (ENCORE_BENCH_
 * EVENTS overrides) over 16 processes exchanging messages on random stream channels, built
 * with the analyzer's builder, then:
 *   load    ana_db_fill into a database file (schema, every row, the indexes, commit):
 *           events per second (target >= 1e6/s);
 *   hb      SELECT sum(hb(a, b)) over 1e5 random pairs of event ids from a table: ns per
 *           pair, amortised over the first query (which reads the process, message and
 *           connection tables and builds the index), and again warm (target < 1000 ns
 *           amortised), with the build's share and SQLite's own share of a pair;
 *   past    causal_past(id) of 100 random events (rows per second);
 *   files   the same session written as trace files (TCP endpoints, matched as recorded
 *           ones are), then ana_db_write end to end, as `encore db` does: ana_load, a second
 *           read of the files for the columns the model does not keep, the fill, the rename.
 * Printed in one run, never asserted.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "sqldb.h"

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

/* The session as trace files too (NULL: not written). */
struct files {
	char dir[256];
	struct trace_writer *w[NPROC];
};

static int files_open(struct files *f)
{
	struct trace_diag d;

	snprintf(f->dir, sizeof(f->dir), "%s/sql-bench-XXXXXX",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(f->dir))
		return -1;
	for (int p = 0; p < NPROC; p++) {
		struct trace_process tp;
		char file[128], path[512];

		memset(&tp, 0, sizeof(tp));
		snprintf(tp.name, sizeof(tp.name), "p%d", p);
		snprintf(tp.host_id, sizeof(tp.host_id), "bench");
		if (trace_file_name(tp.name, 0, file, sizeof(file)))
			return -1;
		snprintf(path, sizeof(path), "%s/%s", f->dir, file);
		if (trace_writer_open(AT_FDCWD, path, &tp, NULL, 0, &f->w[p], &d)) {
			fprintf(stderr, "sql_bench: %s\n", d.msg);
			return -1;
		}
	}
	return 0;
}

static int files_event(struct files *f, int p, uint32_t kind, uint32_t chan, int64_t result,
                       const struct trace_endpoint *ep, const char *key)
{
	struct trace_event ev;
	uint8_t buf[TRACE_ENDPOINT_MAX];
	int n;

	if (!f)
		return 0;
	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.fd = -1;
	ev.channel = chan;
	ev.result = result;
	ev.len = result > 0 ? (uint64_t)result : 0;
	if (ep) {
		if ((n = trace_endpoint_encode(ep, buf, sizeof(buf))) < 0)
			return -1;
		ev.data = buf;
		ev.data_len = (uint32_t)n;
	}
	if (key) {
		ev.data = (const uint8_t *)key;
		ev.data_len = (uint32_t)strlen(key);
		ev.naux = 1;
		ev.aux[0] = result;
		ev.result = 0;
	}
	return trace_writer_event(f->w[p], &ev);
}

static void files_close(struct files *f)
{
	for (int p = 0; p < NPROC; p++)
		trace_writer_close(f->w[p]);
}

static void files_remove(struct files *f)
{
	char cmd[600];

	if (strstr(f->dir, "/sql-bench-")) {
		snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", f->dir);
		if (system(cmd) != 0)
			fprintf(stderr, "sql_bench: could not remove %s\n", f->dir);
	}
}

static void tcp_end(struct trace_endpoint *ep, uint16_t lport, uint16_t pport)
{
	struct sockaddr_in a;

	memset(ep, 0, sizeof(*ep));
	ep->type = TRACE_CHAN_TCP;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(lport);
	memcpy(ep->local, &a, sizeof(a));
	ep->local_len = sizeof(a);
	a.sin_port = htons(pport);
	memcpy(ep->peer, &a, sizeof(a));
	ep->peer_len = sizeof(a);
}

static int build(struct ana_session **out, uint64_t target, struct files *f)
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
		if (ana_add_channel(s, cha[c], chb[c]) != c ||
		    ana_add_connect(s, cha[c], c) < 0 || ana_add_accept(s, chb[c], c) < 0)
			goto fail;
		if (f) {
			/* both ends log the TCP 4-tuple; channel id c+1 in both processes */
			struct trace_endpoint ep;

			tcp_end(&ep, (uint16_t)(20000 + 2 * c), (uint16_t)(20001 + 2 * c));
			if (files_event(f, cha[c], TRACE_EV_CONNECT, (uint32_t)c + 1, 0, &ep, NULL))
				goto fail;
			tcp_end(&ep, (uint16_t)(20001 + 2 * c), (uint16_t)(20000 + 2 * c));
			if (files_event(f, chb[c], TRACE_EV_ACCEPT, (uint32_t)c + 1, 0, &ep, NULL))
				goto fail;
		}
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
			if (files_event(f, from, TRACE_EV_SEND, (uint32_t)c + 1, (int64_t)len, NULL, NULL))
				goto fail;
		} else if (r < 8 && inflight[c][dir]) {
			uint64_t len = inflight[c][dir];

			if (len > 1 && (rnd() & 3) == 0)
				len /= 2;
			k = ana_add_recv(s, to, c, len);
			inflight[c][dir] -= len;
			if (files_event(f, to, TRACE_EV_RECV, (uint32_t)c + 1, (int64_t)len, NULL, NULL))
				goto fail;
		} else if (r == 9) {
			k = ana_add_mark(s, from, "step", (int64_t)i);
			if (files_event(f, from, TRACE_EV_MARK, 0, (int64_t)i, NULL, "step"))
				goto fail;
		} else {
			k = ana_add_simple(s, from, TRACE_EV_CLOCK, 0);
			if (files_event(f, from, TRACE_EV_CLOCK, 0, 0, NULL, NULL))
				goto fail;
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
	struct files fs;
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	double t0, t1, t2, t3, c0, c1;
	int64_t sum = 0, rows = 0;
	int rc = 1;
	const int npairs = 100000;

	if (target < 1000)
		target = 1000;
	if (files_open(&fs)) {
		fprintf(stderr, "sql_bench: cannot write trace files\n");
		return 1;
	}
	if (build(&s, target, &fs)) {
		files_close(&fs);
		files_remove(&fs);
		return 1;
	}
	files_close(&fs);
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
	{
		/* cold: the first query of the connection reads the process, message and connection
		 * tables and builds the index; warm: the same query again.  "Amortised" is the cold
		 * query's time over its 1e5 pairs (the build paid once per connection, by the first
		 * query), which is what a user's first query costs; the build alone is cold - warm.
		 * The scan of the pairs with a built-in expression instead of hb() is SQLite's own
		 * share of each pair. */
		double cold = 0, warm = 0, ccold = 0, cwarm = 0, base;

		for (int pass = 0; pass < 2; pass++) {
			double c2 = cpu();

			t2 = now();
			if (sqlite3_step(st) != SQLITE_ROW)
				goto sqlerr;
			sum = sqlite3_column_int64(st, 0);
			t3 = now();
			sqlite3_reset(st);
			*(pass ? &warm : &cold) = t3 - t2;
			*(pass ? &cwarm : &ccold) = cpu() - c2;
		}
		sqlite3_finalize(st);
		st = NULL;
		if (sqlite3_prepare_v2(db, "SELECT sum(a < b) FROM pairs", -1, &st, NULL))
			goto sqlerr;
		t2 = now();
		if (sqlite3_step(st) != SQLITE_ROW)
			goto sqlerr;
		base = now() - t2;
		printf("  hb     %8.3f s  %12.1f ns/pair   cold, amortised over %d random pairs "
		       "(target < 1000; %.1f ns of CPU; %lld ordered): the first query, index build "
		       "included\n", cold, cold * 1e9 / npairs, npairs, ccold * 1e9 / npairs,
		       (long long)sum);
		printf("  hb     %8.3f s  %12.1f ns/pair   warm (%.1f ns of CPU; of which SQLite's own "
		       "scan of the pairs ~%.1f ns)\n", warm, warm * 1e9 / npairs, cwarm * 1e9 / npairs,
		       base * 1e9 / npairs);
		if (warm * 1e9 / npairs < 1000)
			printf("         index build ~%.1f ms once per connection (cold - warm), so hb "
			       "stays under 1 us amortised from ~%.0f pairs on\n", (cold - warm) * 1e3,
			       (cold - warm) * 1e9 / (1000 - warm * 1e9 / npairs));
		else
			printf("         index build ~%.1f ms once per connection (cold - warm); warm "
			       "pairs alone cost 1 us or more here (a loaded machine?)\n",
			       (cold - warm) * 1e3);
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
	sqlite3_finalize(st);
	st = NULL;
	{
		char dbpath[600];

		snprintf(dbpath, sizeof(dbpath), "%s/bench.db", fs.dir);
		t2 = now();
		c0 = cpu();
		if (ana_db_write(fs.dir, dbpath, NULL, &d)) {
			fprintf(stderr, "sql_bench: ana_db_write: %s\n", d.msg);
			goto out;
		}
		t3 = now();
		printf("  files  %8.3f s  %12.0f events/s   (trace files -> database file, as `encore db`; "
		       "%.3f s of CPU)\n", t3 - t2, (double)total / (t3 - t2), cpu() - c0);
	}
	rc = 0;
	goto out;
sqlerr:
	fprintf(stderr, "sql_bench: %s\n", sqlite3_errmsg(db));
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	unlink(path);
	ana_free(s);
	files_remove(&fs);
	return rc;
}
