/*
 * test_sql.c: SQL over traces.
 *
 *   - the schema the loader runs is schemas/trace.sql, byte for byte;
 *   - hb(), concurrent(), causal_past() and causal_future() agree with ana_hb on every pair
 *     of events of random executions built with the analyzer's builder (forks, external
 *     channels, partial receives, connections whose accept follows its connect), and on
 *     random pairs of a larger one, both with vector clocks and with columns built one at a
 *     time (ENCORE_SQL_MEMORY);
 *   - the rows: messages are the analyzer's receive -> send links, connections its accept ->
 *     connect links, races are ana_races, marks and process_summary count what was built;
 *   - real trace files: ana_db_write (temporary file renamed into place, nothing left on
 *     failure), the columns only the files carry (times, errno, values, frames), and the
 *     cache of ana_db_open (reused while the traces are unchanged, rebuilt when one changes
 *     or when it was made by another model version of the analyzer, read-only);
 *   - damaged databases: a cycle of messages or connections, an event with two incoming
 *     edges, unknown ids and a database without the connection table are reported as errors.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include "sqldb.h"
#include "unit.h"

#ifndef SCHEMA_SQL
#error "SCHEMA_SQL (the path of schemas/trace.sql) must be defined by the build"
#endif

/* For hot loops: Check records every ck_assert it passes (a write each), so the inner loops
 * only call into Check when something is wrong. */
#define REQUIRE(cond, ...) do { if (!(cond)) ck_abort_msg(__VA_ARGS__); } while (0)

#define MAXP 6
#define MAXCH 8

static sqlite3 *mem_db(struct ana_session *s)
{
	sqlite3 *db;
	struct trace_diag d;
	int rc;

	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	rc = ana_db_fill(db, s, NULL, NULL, &d);
	ck_assert_msg(rc == 0, "ana_db_fill: %d %s", rc, d.msg);
	ck_assert_int_eq(ana_sql_register(db), 0);
	return db;
}

static int64_t one_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v;

	ck_assert_msg(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql,
	              sqlite3_errmsg(db));
	ck_assert_msg(sqlite3_step(st) == SQLITE_ROW, "%s: %s", sql, sqlite3_errmsg(db));
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* The error message of a statement expected to fail, "" if it did not fail. */
static void expect_error(sqlite3 *db, const char *sql, const char *part)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

	if (rc == SQLITE_OK) {
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			;
	}
	ck_assert_msg(rc != SQLITE_DONE && rc != SQLITE_OK, "%s did not fail", sql);
	ck_assert_msg(strstr(sqlite3_errmsg(db), part), "%s: '%s' does not say '%s'", sql,
	              sqlite3_errmsg(db), part);
	sqlite3_finalize(st);
}

/* ---------------------------------------------------------------------------------------
 * The schema file is the schema.
 */
START_TEST(schema_is_the_file)
{
	FILE *f = fopen(SCHEMA_SQL, "r");
	char *text;
	long n;
	sqlite3 *db;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)n + 1);
	ck_assert_ptr_nonnull(text);
	ck_assert_uint_eq(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	ck_assert_msg(strcmp(text, ana_sql_schema()) == 0,
	              "schemas/trace.sql and the generated sql_schema.h differ");
	free(text);
	/* and it runs, giving the version and every documented object */
	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, ana_sql_schema(), NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(one_int(db, "PRAGMA user_version"), ANA_SQL_SCHEMA_VERSION);
	ck_assert_int_eq(one_int(db, "SELECT count(*) FROM sqlite_master WHERE name IN ('process',"
	                             "'event','channel','message','stack','frame','mark','input',"
	                             "'message_race','external_input','process_summary')"), 11);
	sqlite3_close(db);
}
END_TEST

/* ---------------------------------------------------------------------------------------
 * Random executions, simulated step by step so that every receive gets bytes really sent.
 */
struct gen {
	struct ana_session *s;
	int np, nch;
	int cha[MAXCH], chb[MAXCH];
	uint64_t inflight[MAXCH][2];
	int fparent[MAXP];
	uint64_t fidx[MAXP];
	uint64_t n[MAXP];
	uint64_t marks, sends, recvs, conns;
	/* connection channels: cha connects, then chb accepts; neither talks on it before */
	int conn[MAXCH], cstate[MAXCH];   /* cstate 0 idle, 1 connected, 2 accepted */
	uint64_t cap[MAXCH];              /* bytes a direction holds (0: unbounded) */
	int closed[MAXCH][2], eofread[MAXCH][2]; /* side a (0) / b (1) closed, read its end */
	uint64_t closes, eofs, readies;
	int ended[MAXP], reaped[MAXP];    /* a child ended (exit, or killed), its parent reaped it */
	uint64_t waits;
};

/* A child of p that ended and that p has not reaped yet; -1 when none. */
static int gen_reapable(const struct gen *g, int p)
{
	for (int c = 0; c < g->np; c++)
		if (g->fparent[c] == p && g->ended[c] && !g->reaped[c])
			return c;
	return -1;
}

/* p is a forked child with events that has forked every child it will: it may end. */
static int gen_may_end(const struct gen *g, int p)
{
	if (g->fparent[p] < 0 || !g->n[p])
		return 0;
	for (int o = 0; o < g->np; o++)
		if (g->fparent[o] == p && g->fidx[o] > g->n[p])
			return 0;
	return 1;
}

/* p may move bytes on channel c now. */
static int gen_ready(const struct gen *g, int c, int p)
{
	if (g->closed[c][g->cha[c] == p ? 0 : 1])
		return 0;
	if (!g->conn[c])
		return 1;
	return g->cha[c] == p ? g->cstate[c] >= 1 : g->cstate[c] == 2;
}

/* A channel whose end of file p reads (*eof set: the other side closed and every byte it
 * sent was read), else a channel side p closes.  At random; -1 when none. */
static int gen_close_step(const struct gen *g, struct unit_rng *r, int p, int *eof)
{
	int cand[MAXCH], eofs[MAXCH], n = 0, ne = 0, c;

	for (c = 0; c < g->nch; c++) {
		int side = g->cha[c] == p ? 0 : 1;

		if (g->chb[c] < 0 || (g->cha[c] != p && g->chb[c] != p) || !gen_ready(g, c, p))
			continue;
		cand[n++] = c;
		if (g->closed[c][1 - side] && !g->eofread[c][side] && !g->inflight[c][1 - side])
			eofs[ne++] = c;
	}
	*eof = ne > 0;
	if (ne)
		return eofs[unit_rng_below(r, (uint64_t)ne)];
	return n ? cand[unit_rng_below(r, (uint64_t)n)] : -1;
}

/* A channel on which bytes wait for p, at random; -1 when none. */
static int gen_readable(const struct gen *g, struct unit_rng *r, int p)
{
	int cand[MAXCH], n = 0;

	for (int c = 0; c < g->nch; c++)
		if (g->chb[c] >= 0 && (g->cha[c] == p || g->chb[c] == p) && gen_ready(g, c, p) &&
		    g->inflight[c][g->cha[c] == p ? 1 : 0])
			cand[n++] = c;
	return n ? cand[unit_rng_below(r, (uint64_t)n)] : -1;
}

/* What a send of p on c may move now: 0 when the direction is full. */
static uint64_t gen_room(const struct gen *g, int c, int p, uint64_t want)
{
	int dir = g->cha[c] == p ? 0 : 1;

	if (!g->cap[c])
		return want;
	if (g->inflight[c][dir] >= g->cap[c])
		return 0;
	return want < g->cap[c] - g->inflight[c][dir] ? want : g->cap[c] - g->inflight[c][dir];
}

/* A connection channel on which p connects or accepts next, at random; -1 when none. */
static int gen_conn_step(const struct gen *g, struct unit_rng *r, int p)
{
	int cand[MAXCH], n = 0;

	for (int c = 0; c < g->nch; c++)
		if (g->conn[c] && ((g->cha[c] == p && g->cstate[c] == 0) ||
		                   (g->chb[c] == p && g->cstate[c] == 1)))
			cand[n++] = c;
	return n ? cand[unit_rng_below(r, (uint64_t)n)] : -1;
}

static void gen_build(struct gen *g, struct unit_rng *r, int np, int steps, int maxe)
{
	char name[16], parent[16];

	memset(g, 0, sizeof(*g));
	ck_assert_int_eq(ana_new(&g->s), 0);
	g->np = np;
	for (int p = 0; p < np; p++) {
		g->fparent[p] = -1;
		if (p > 0 && unit_rng_below(r, 2)) {
			int q = (int)unit_rng_below(r, (uint64_t)p);
			uint64_t f = 1 + unit_rng_below(r, 3);

			for (int o = 0; o < p; o++)
				if (g->fparent[o] == q && g->fidx[o] == f)
					q = -1;
			if (q >= 0) {
				g->fparent[p] = q;
				g->fidx[p] = f;
			}
		}
		snprintf(name, sizeof(name), "p%d", p);
		snprintf(parent, sizeof(parent), "p%d", g->fparent[p]);
		ck_assert_int_eq(ana_add_process(g->s, name, g->fparent[p] >= 0 ? parent : NULL,
		                                 g->fparent[p] >= 0 ? g->fidx[p] : 0), p);
	}
	g->nch = 1 + (int)unit_rng_below(r, MAXCH);
	for (int c = 0; c < g->nch; c++) {
		int a = (int)unit_rng_below(r, (uint64_t)np), b = (int)unit_rng_below(r, (uint64_t)np);

		if (a == b)
			b = (a + 1) % np;
		if (unit_rng_below(r, 6) == 0)
			b = -1; /* the peer is not recorded: external input */
		g->cha[c] = a;
		g->chb[c] = b;
		g->conn[c] = b >= 0 && unit_rng_below(r, 2);
		ck_assert_int_eq(ana_add_channel(g->s, a, b), c);
		/* some hold only a few bytes: a send into a full direction waits for room */
		if (b >= 0 && unit_rng_below(r, 2) == 0) {
			g->cap[c] = 2 + unit_rng_below(r, 4);
			ck_assert_int_eq(ana_set_capacity(g->s, c, g->cap[c]), 0);
		}
	}
	for (int t = 0; t < steps; t++) {
		int p = (int)unit_rng_below(r, (uint64_t)np), act = (int)unit_rng_below(r, 10), forks = 0;
		int c = (int)unit_rng_below(r, (uint64_t)g->nch), cc, eof = 0;
		uint64_t len = 1 + unit_rng_below(r, 9);
		int64_t k;

		if (g->n[p] >= (uint64_t)maxe)
			continue;
		if ((g->fparent[p] >= 0 && g->n[g->fparent[p]] < g->fidx[p]) || g->ended[p])
			continue; /* not forked yet, or ended */
		for (int o = 0; o < np; o++)
			forks |= g->fparent[o] == p && g->fidx[o] == g->n[p] + 1;
		if (forks) {
			k = ana_add_simple(g->s, p, TRACE_EV_FORK, 0);
		} else if (act == 5 && 3 * g->n[p] >= (uint64_t)maxe && unit_rng_below(r, 4) == 0 &&
		           gen_may_end(g, p)) {
			/* a child ends (once it did a third of its events: the others keep it busy):
			 * it exits, or is killed after its last event (no event) */
			g->ended[p] = 1;
			if (unit_rng_below(r, 3) == 0)
				continue;
			k = ana_add_simple(g->s, p, TRACE_EV_EXIT, 0);
		} else if ((act == 4 || act == 5) && (cc = gen_reapable(g, p)) >= 0) {
			/* its parent waits for it: after its end */
			k = ana_add_wait(g->s, p, cc);
			g->reaped[cc] = 1;
			g->waits++;
		} else if (act == 9 && (cc = gen_conn_step(g, r, p)) >= 0) {
			if (g->cstate[cc] == 0) {
				k = ana_add_connect(g->s, p, cc);
			} else {
				k = ana_add_accept(g->s, p, cc);
				g->conns++;
			}
			g->cstate[cc]++;
		} else if (act == 7 && unit_rng_below(r, 2) == 0 &&
		           (cc = gen_close_step(g, r, p, &eof)) >= 0) {
			/* now and then: a closed side carries nothing more */
			int side = g->cha[cc] == p ? 0 : 1;

			if (eof) {
				k = ana_add_eof(g->s, p, cc);
				g->eofread[cc][side] = 1;
				g->eofs++;
			} else {
				k = ana_add_close(g->s, p, cc);
				g->closed[cc][side] = 1;
				g->closes++;
			}
		} else if (act == 6 && unit_rng_below(r, 2) == 0 &&
		           (cc = gen_readable(g, r, p)) >= 0) {
			/* a poll that found cc readable: bytes wait for p there */
			k = ana_add_ready(g->s, p, cc);
			g->readies++;
		} else if (!gen_ready(g, c, p) && act < 8) {
			k = ana_add_simple(g->s, p, TRACE_EV_CLOCK, 0);
		} else if (act < 4 && (g->cha[c] == p || g->chb[c] == p) && g->chb[c] >= 0 &&
		           !(len = gen_room(g, c, p, len))) {
			k = ana_add_simple(g->s, p, TRACE_EV_CLOCK, 0); /* full: it would block */
		} else if (act < 4 && g->cha[c] == p && g->chb[c] >= 0) {
			k = ana_add_send(g->s, p, c, len);
			g->inflight[c][0] += len;
			g->sends++;
		} else if (act < 4 && g->chb[c] == p) {
			k = ana_add_send(g->s, p, c, len);
			g->inflight[c][1] += len;
			g->sends++;
		} else if (act < 8 && g->chb[c] == p && g->inflight[c][0]) {
			len = 1 + unit_rng_below(r, g->inflight[c][0]);
			k = ana_add_recv(g->s, p, c, len);
			g->inflight[c][0] -= len;
			g->recvs++;
		} else if (act < 8 && g->cha[c] == p && (g->chb[c] < 0 || g->inflight[c][1])) {
			len = g->chb[c] < 0 ? 1 + unit_rng_below(r, 5)
			                    : 1 + unit_rng_below(r, g->inflight[c][1]);
			k = ana_add_recv(g->s, p, c, len);
			if (g->chb[c] >= 0)
				g->inflight[c][1] -= len;
			g->recvs++;
		} else if (act == 8) {
			k = ana_add_mark(g->s, p, unit_rng_below(r, 2) ? "x" : "y",
			                 (int64_t)unit_rng_below(r, 5));
			g->marks++;
		} else {
			k = ana_add_simple(g->s, p, TRACE_EV_CLOCK, 0);
		}
		REQUIRE(k == (int64_t)g->n[p] + 1, "builder numbered event %lld", (long long)k);
		g->n[p]++;
	}
	/* a parent that never reached its fork event: fork now so the child's edge exists */
	for (int o = 0; o < np; o++)
		while (g->fparent[o] >= 0 && g->n[g->fparent[o]] < g->fidx[o]) {
			int q = g->fparent[o];
			int forks = 0;

			for (int x = 0; x < np; x++)
				forks |= g->fparent[x] == q && g->fidx[x] == g->n[q] + 1;
			ck_assert_int_eq(ana_add_simple(g->s, q, forks ? TRACE_EV_FORK : TRACE_EV_CLOCK, 0),
			                 (int64_t)g->n[q] + 1);
			g->n[q]++;
		}
	{
		struct trace_diag d;

		ck_assert_msg(ana_finish(g->s, &d) == 0, "finish: %s", d.msg);
	}
}

/* (proc, idx) of event id, from the builder's counts. */
static void locate(const struct gen *g, int64_t id, size_t *p, uint64_t *k)
{
	uint64_t b = 0;

	for (size_t q = 0; q < (size_t)g->np; q++) {
		if ((uint64_t)id <= b + g->n[q]) {
			*p = q;
			*k = (uint64_t)id - b;
			return;
		}
		b += g->n[q];
	}
	ck_abort_msg("event id %lld out of range", (long long)id);
}

static uint64_t id_of(const struct gen *g, size_t p, uint64_t k)
{
	uint64_t b = 0;

	for (size_t q = 0; q < p; q++)
		b += g->n[q];
	return b + k;
}

/* The edge view lists exactly the analyzer's edges into each event (ana_event_deps). */
static void check_edges(struct gen *g, sqlite3 *db, uint64_t seed)
{
	sqlite3_stmt *st;
	struct ana_ref dep[64];
	uint64_t total = ana_total_events(g->s), n = 0;

	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT count(*) FROM edge WHERE dst = ?1 AND "
	                                        "src = ?2", -1, &st, NULL), SQLITE_OK);
	for (uint64_t id = 1; id <= total; id++) {
		size_t p;
		uint64_t k;
		int64_t nd;

		locate(g, (int64_t)id, &p, &k);
		nd = ana_event_deps(g->s, p, k, dep, 64);
		REQUIRE(nd >= 0 && nd <= 64, "ana_event_deps: %lld", (long long)nd);
		for (int64_t i = 0; i < nd; i++) {
			sqlite3_bind_int64(st, 1, (int64_t)id);
			sqlite3_bind_int64(st, 2, (int64_t)id_of(g, dep[i].proc, dep[i].index));
			REQUIRE(sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 1,
			        "seed %llu: the edge p%zu:%llu -> p%zu:%llu is not in the edge view",
			        (unsigned long long)seed, dep[i].proc, (unsigned long long)dep[i].index,
			        p, (unsigned long long)k);
			sqlite3_reset(st);
		}
		n += (uint64_t)nd;
	}
	sqlite3_finalize(st);
	ck_assert_int_eq(one_int(db, "SELECT count(*) FROM edge"), (int64_t)n);
}

static void check_all_pairs(struct gen *g, sqlite3 *db, uint64_t seed)
{
	sqlite3_stmt *st;
	uint64_t total = ana_total_events(g->s), rows = 0;
	uint8_t *seen;

	ck_assert_int_eq(one_int(db, "SELECT count(*) FROM event"), (int64_t)total);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT a.id, b.id, a.proc, a.idx, b.proc, b.idx, "
	                                        "hb(a.id, b.id), concurrent(a.id, b.id) "
	                                        "FROM event a, event b", -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		size_t p = (size_t)sqlite3_column_int64(st, 2), q = (size_t)sqlite3_column_int64(st, 4);
		uint64_t i = (uint64_t)sqlite3_column_int64(st, 3), j = (uint64_t)sqlite3_column_int64(st, 5);
		int want = ana_hb(g->s, p, i, q, j), back = ana_hb(g->s, q, j, p, i);

		REQUIRE(want >= 0, "ana_hb failed");
		REQUIRE(sqlite3_column_int(st, 6) == want,
		              "seed %llu: hb(p%zu:%llu, p%zu:%llu) = %d in SQL, %d in ana_hb",
		              (unsigned long long)seed, p, (unsigned long long)i, q,
		              (unsigned long long)j, sqlite3_column_int(st, 6), want);
		REQUIRE(sqlite3_column_int(st, 7) == (!want && !back && !(p == q && i == j)),
		        "seed %llu: concurrent() disagrees", (unsigned long long)seed);
		REQUIRE((uint64_t)sqlite3_column_int64(st, 0) == id_of(g, p, i), "event id numbering");
		rows++;
	}
	ck_assert_msg(sqlite3_errcode(db) == SQLITE_DONE || sqlite3_errcode(db) == SQLITE_OK,
	              "%s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	ck_assert_uint_eq(rows, total * total);

	/* causal_past(b) is {a : hb(a, b)}, causal_future(a) is {b : hb(a, b)} */
	seen = malloc(total + 1);
	ck_assert_ptr_nonnull(seen);
	for (int fut = 0; fut < 2; fut++) {
		ck_assert_int_eq(sqlite3_prepare_v2(db, fut ? "SELECT event, proc, idx FROM "
		                                              "causal_future(?)"
		                                            : "SELECT event, proc, idx FROM "
		                                              "causal_past(?)", -1, &st, NULL),
		                 SQLITE_OK);
		for (uint64_t id = 1; id <= total; id++) {
			size_t p, x;
			uint64_t k, y;

			locate(g, (int64_t)id, &p, &k);
			memset(seen, 0, total + 1);
			sqlite3_bind_int64(st, 1, (int64_t)id);
			while (sqlite3_step(st) == SQLITE_ROW) {
				int64_t e = sqlite3_column_int64(st, 0);

				REQUIRE(e >= 1 && e <= (int64_t)total, "event %lld out of range", (long long)e);
				REQUIRE(!seen[e], "event %lld listed twice", (long long)e);
				seen[e] = 1;
				locate(g, e, &x, &y);
				REQUIRE(sqlite3_column_int64(st, 1) == (int64_t)x &&
				        sqlite3_column_int64(st, 2) == (int64_t)y, "proc/idx of event %lld",
				        (long long)e);
			}
			sqlite3_reset(st);
			for (uint64_t e = 1; e <= total; e++) {
				int want;

				locate(g, (int64_t)e, &x, &y);
				want = fut ? ana_hb(g->s, p, k, x, y) : ana_hb(g->s, x, y, p, k);
				REQUIRE(seen[e] == want, "seed %llu: causal_%s(p%zu:%llu) %s p%zu:%llu",
				              (unsigned long long)seed, fut ? "future" : "past", p,
				              (unsigned long long)k, want ? "misses" : "wrongly has", x,
				              (unsigned long long)y);
			}
		}
		sqlite3_finalize(st);
	}
	free(seen);
}

START_TEST(random_hb_agrees)
{
	struct unit_rng r;
	uint64_t seed = unit_seed() + (uint64_t)_i * 7919u;

	unit_rng_seed(&r, seed);
	/* odd runs: a memory budget too small for vector clocks, so reachability columns are
	 * built one at a time (4 kept, least recently used out) */
	if (_i & 1)
		setenv("ENCORE_SQL_MEMORY", "64", 1);
	else
		unsetenv("ENCORE_SQL_MEMORY");
	uint64_t conns = 0, eofs = 0, rooms = 0, readies = 0, waits = 0;

	for (int round = 0; round < 25; round++) {
		struct gen g;
		sqlite3 *db;

		gen_build(&g, &r, 2 + (int)unit_rng_below(&r, MAXP - 1), 120, 24);
		db = mem_db(g.s);
		/* every accept of a recorded connect is a connection row (an edge) */
		ck_assert_int_eq(one_int(db, "SELECT count(*) FROM connection"), (int64_t)g.conns);
		ck_assert_int_eq(one_int(db, "SELECT count(*) FROM connection c JOIN event a ON "
		                             "a.id = c.accept JOIN event k ON k.id = c.connect WHERE "
		                             "a.kind = 'accept' AND k.kind = 'connect'"),
		                 (int64_t)g.conns);
		conns += g.conns;
		eofs += (uint64_t)one_int(db, "SELECT count(DISTINCT dst) FROM dependency "
		                              "WHERE kind = 'eof'");
		rooms += (uint64_t)one_int(db, "SELECT count(*) FROM dependency WHERE kind = 'room'");
		readies += (uint64_t)one_int(db, "SELECT count(*) FROM dependency WHERE kind = 'ready'");
		/* every wait (for a child with events) is one edge from the child's end */
		waits += (uint64_t)one_int(db, "SELECT count(*) FROM dependency WHERE kind = 'wait'");
		ck_assert_int_eq(one_int(db, "SELECT count(*) FROM dependency WHERE kind = 'wait'"),
		                 (int64_t)g.waits);
		check_edges(&g, db, seed);
		check_all_pairs(&g, db, seed);
		sqlite3_close(db);
		ana_free(g.s);
	}
	ck_assert_msg(conns > 0, "seed %llu: only %llu connections in 25 executions",
	              (unsigned long long)seed, (unsigned long long)conns);
	ck_assert_msg(eofs > 0 && rooms > 0 && readies > 0 && waits > 0, "seed %llu: only %llu "
	              "ends of file, %llu sends that waited for room, %llu readiness edges and %llu "
	              "waits in 25 executions", (unsigned long long)seed, (unsigned long long)eofs,
	              (unsigned long long)rooms, (unsigned long long)readies,
	              (unsigned long long)waits);
}
END_TEST

/* A larger execution: random pairs, against ana_hb. */
START_TEST(random_pairs_large)
{
	struct unit_rng r;
	struct gen g;
	sqlite3 *db;
	sqlite3_stmt *st;
	uint64_t total, seed = unit_seed();

	unit_rng_seed(&r, seed + (uint64_t)_i);
	/* run 1: columns one at a time; run 2: processes of more than 65535 events (4-byte
	 * clock entries instead of 2) */
	if (_i == 1)
		setenv("ENCORE_SQL_MEMORY", "64", 1);
	else
		unsetenv("ENCORE_SQL_MEMORY");
	gen_build(&g, &r, _i == 2 ? 2 : MAXP, _i == 2 ? 150000 : 10000, 1 << 20);
	if (_i == 2)
		ck_assert_uint_gt(g.n[0] > g.n[1] ? g.n[0] : g.n[1], 65535);
	db = mem_db(g.s);
	total = ana_total_events(g.s);
	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT hb(?, ?), concurrent(?, ?)", -1, &st, NULL),
	                 SQLITE_OK);
	for (int t = 0; t < (_i ? 2000 : 10000); t++) {
		int64_t a = 1 + (int64_t)unit_rng_below(&r, total), b = 1 + (int64_t)unit_rng_below(&r, total);
		size_t p, q;
		uint64_t i, j;
		int want, back;

		locate(&g, a, &p, &i);
		locate(&g, b, &q, &j);
		want = ana_hb(g.s, p, i, q, j);
		back = ana_hb(g.s, q, j, p, i);
		sqlite3_bind_int64(st, 1, a);
		sqlite3_bind_int64(st, 2, b);
		sqlite3_bind_int64(st, 3, a);
		sqlite3_bind_int64(st, 4, b);
		REQUIRE(sqlite3_step(st) == SQLITE_ROW, "%s", sqlite3_errmsg(db));
		REQUIRE(sqlite3_column_int(st, 0) == want, "seed %llu: hb(%lld, %lld) = %d, ana_hb %d",
		        (unsigned long long)seed, (long long)a, (long long)b, sqlite3_column_int(st, 0),
		        want);
		REQUIRE(sqlite3_column_int(st, 1) == (a != b && !want && !back), "concurrent()");
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	ana_free(g.s);
}
END_TEST

/* ---------------------------------------------------------------------------------------
 * Rows from the model.
 */
START_TEST(rows_match_the_model)
{
	struct unit_rng r;

	unit_rng_seed(&r, unit_seed() + 17);
	for (int round = 0; round < 20; round++) {
		struct gen g;
		sqlite3 *db;
		sqlite3_stmt *st;
		struct ana_race *races;
		size_t nraces;
		struct ana_stats stats;
		uint64_t linked = 0;

		gen_build(&g, &r, 2 + (int)unit_rng_below(&r, MAXP - 1), 200, 40);
		db = mem_db(g.s);
		ck_assert_int_eq(ana_stats(g.s, &stats), 0);
		ck_assert_int_eq(one_int(db, "SELECT count(*) FROM process"), g.np);
		ck_assert_int_eq(one_int(db, "SELECT count(*) FROM mark"), (int64_t)g.marks);
		ck_assert_int_eq(one_int(db, "SELECT count(*) FROM event WHERE kind = 'mark'"),
		                 (int64_t)g.marks);
		ck_assert_int_eq(one_int(db, "SELECT sum(sends) FROM process_summary"), (int64_t)g.sends);
		ck_assert_int_eq(one_int(db, "SELECT sum(recvs) FROM process_summary"), (int64_t)g.recvs);
		ck_assert_int_eq(one_int(db, "SELECT count(*) FROM event WHERE external = 1"),
		                 (int64_t)stats.external_recvs);
		/* every message is the analyzer's link of its receive */
		ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT r.proc, r.idx, s.proc, s.idx, m.bytes "
		                                        "FROM message m JOIN event r ON r.id = m.recv "
		                                        "JOIN event s ON s.id = m.send", -1, &st, NULL),
		                 SQLITE_OK);
		while (sqlite3_step(st) == SQLITE_ROW) {
			struct ana_event ev;

			ck_assert_int_eq(ana_event_get(g.s, (size_t)sqlite3_column_int64(st, 0),
			                               (uint64_t)sqlite3_column_int64(st, 1), &ev), 0);
			ck_assert_uint_eq(ev.kind, TRACE_EV_RECV);
			ck_assert_uint_eq(ev.src_proc, (uint32_t)sqlite3_column_int64(st, 2));
			ck_assert_uint_eq(ev.src_index, (uint64_t)sqlite3_column_int64(st, 3));
			ck_assert_int_eq(ev.result, sqlite3_column_int64(st, 4));
			linked++;
		}
		sqlite3_finalize(st);
		ck_assert_uint_eq(linked, stats.messages);
		/* races are ana_races */
		ck_assert_int_eq(ana_races(g.s, &races, &nraces), 0);
		ck_assert_int_eq(one_int(db, "SELECT count(*) FROM message_race"), (int64_t)nraces);
		for (size_t i = 0; i < nraces; i++) {
			char *q = sqlite3_mprintf("SELECT count(*) FROM race WHERE recv = %llu AND send = "
			                          "%llu AND rival = %llu",
			                          (unsigned long long)id_of(&g, races[i].proc, races[i].recv),
			                          (unsigned long long)id_of(&g, races[i].src_proc,
			                                                    races[i].src_send),
			                          (unsigned long long)id_of(&g, races[i].rival_proc,
			                                                    races[i].rival_send));

			ck_assert_int_eq(one_int(db, q), 1);
			sqlite3_free(q);
		}
		free(races);
		sqlite3_close(db);
		ana_free(g.s);
	}
}
END_TEST

/* Progress reports grow and end with every event written. */
struct progress_log {
	uint64_t calls, last_done, total;
	int regressed;
};

static void progress_cb(void *ctx, uint64_t done, uint64_t total)
{
	struct progress_log *l = ctx;

	l->regressed |= done < l->last_done || done > total;
	l->calls++;
	l->last_done = done;
	l->total = total;
}

START_TEST(progress_reported)
{
	struct unit_rng r;
	struct gen g;
	struct progress_log log;
	struct ana_db_progress pr = {progress_cb, &log};
	struct trace_diag d;
	sqlite3 *db;

	unit_rng_seed(&r, unit_seed() + 5);
	gen_build(&g, &r, 3, 200000, 1 << 20);
	memset(&log, 0, sizeof(log));
	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(ana_db_fill(db, g.s, NULL, &pr, &d), 0);
	ck_assert_uint_ge(log.calls, 2); /* at least one on the way (> 65536 events) and the end */
	ck_assert_int_eq(log.regressed, 0);
	ck_assert_uint_eq(log.total, ana_total_events(g.s));
	ck_assert_uint_eq(log.last_done, log.total);
	sqlite3_close(db);
	ana_free(g.s);
}
END_TEST

/* A fill that fails leaves the database as it found it. */
START_TEST(failed_fill_leaves_nothing)
{
	struct ana_session *s;
	struct trace_diag d;
	sqlite3 *db;

	ck_assert_int_eq(ana_new(&s), 0);
	ck_assert_int_eq(ana_add_process(s, "a", NULL, 0), 0);
	ck_assert_int_gt(ana_add_simple(s, 0, TRACE_EV_CLOCK, 0), 0);
	ck_assert_int_eq(ana_finish(s, &d), 0);
	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "CREATE TABLE message (x)", NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_ne(ana_db_fill(db, s, NULL, NULL, &d), 0);
	ck_assert_msg(strstr(d.msg, "message"), "diag names the clash: %s", d.msg);
	ck_assert_int_eq(one_int(db, "SELECT count(*) FROM sqlite_master"), 1);
	sqlite3_close(db);
	ana_free(s);
}
END_TEST

/* ---------------------------------------------------------------------------------------
 * Databases the functions must refuse.
 */
START_TEST(damaged_database_errors)
{
	sqlite3 *db;

	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, ana_sql_schema(), NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(ana_sql_register(db), 0);
	/* two processes of two events; a1 -> b2 and b1 -> a1... and b2 -> a1: a cycle */
	ck_assert_int_eq(sqlite3_exec(db,
	    "INSERT INTO process (id, name, images, first_event, nevents, threads) VALUES "
	    "  (0, 'a', 1, 1, 2, 0), (1, 'b', 1, 3, 2, 0);"
	    "INSERT INTO message (send, recv, peek) VALUES (1, 4, 0), (4, 1, 0);",
	    NULL, NULL, NULL), SQLITE_OK);
	expect_error(db, "SELECT hb(1, 3)", "contradict program order");
	sqlite3_close(db);

	/* the same cycle closed by a connection: b1 -> a2 (message), a2 -> b1 (connect -> accept) */
	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, ana_sql_schema(), NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(ana_sql_register(db), 0);
	ck_assert_int_eq(sqlite3_exec(db,
	    "INSERT INTO process (id, name, images, first_event, nevents, threads) VALUES "
	    "  (0, 'a', 1, 1, 2, 0), (1, 'b', 1, 3, 2, 0);"
	    "INSERT INTO message (send, recv, peek) VALUES (3, 2, 0);"
	    "INSERT INTO connection (connect, accept) VALUES (2, 3);", NULL, NULL, NULL), SQLITE_OK);
	expect_error(db, "SELECT concurrent(1, 4)", "contradict program order");
	sqlite3_close(db);

	/* an event with several incoming edges (an end of file after two releases); a
	 * connection naming no event */
	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, ana_sql_schema(), NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(ana_sql_register(db), 0);
	ck_assert_int_eq(sqlite3_exec(db,
	    "INSERT INTO process (id, name, images, first_event, nevents, threads) VALUES "
	    "  (0, 'a', 1, 1, 2, 0), (1, 'b', 1, 3, 2, 0), (2, 'c', 1, 5, 2, 0);"
	    "INSERT INTO dependency (dst, src, kind) VALUES (4, 1, 'eof'), (4, 6, 'eof');",
	    NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(one_int(db, "SELECT hb(1, 4) + hb(5, 4) + hb(6, 4)"), 3);
	ck_assert_int_eq(one_int(db, "SELECT hb(2, 4) + hb(1, 3) + hb(4, 6)"), 0);
	ck_assert_int_eq(one_int(db, "SELECT count(*) FROM causal_past(4)"), 4);    /* 1, 3, 5, 6 */
	ck_assert_int_eq(one_int(db, "SELECT count(*) FROM causal_future(5)"), 2);  /* 6, 4 */
	sqlite3_close(db);
	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, ana_sql_schema(), NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(ana_sql_register(db), 0);
	ck_assert_int_eq(sqlite3_exec(db,
	    "INSERT INTO process (id, name, images, first_event, nevents, threads) VALUES "
	    "  (0, 'a', 1, 1, 2, 0), (1, 'b', 1, 3, 2, 0);"
	    "INSERT INTO connection (connect, accept) VALUES (9, 4);", NULL, NULL, NULL), SQLITE_OK);
	expect_error(db, "SELECT hb(1, 4)", "connection names an event that does not exist");
	sqlite3_close(db);

	/* a database of schema version 2 (no connection table): said, not guessed */
	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, ana_sql_schema(), NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(ana_sql_register(db), 0);
	ck_assert_int_eq(sqlite3_exec(db,
	    "INSERT INTO process (id, name, images, first_event, nevents, threads) VALUES "
	    "  (0, 'a', 1, 1, 2, 0), (1, 'b', 1, 3, 2, 0);"
	    "DROP VIEW edge; DROP TABLE connection;", NULL, NULL, NULL), SQLITE_OK);
	expect_error(db, "SELECT hb(1, 4)", "rebuild it with encore db");
	sqlite3_close(db);

	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, ana_sql_schema(), NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(ana_sql_register(db), 0);
	ck_assert_int_eq(sqlite3_exec(db,
	    "INSERT INTO process (id, name, images, first_event, nevents, threads) VALUES "
	    "  (0, 'a', 1, 1, 2, 0), (1, 'b', 1, 3, 2, 0);"
	    "INSERT INTO message (send, recv, peek) VALUES (1, 4, 0);", NULL, NULL, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(one_int(db, "SELECT hb(1, 4)"), 1);
	ck_assert_int_eq(one_int(db, "SELECT hb(2, 4)"), 0);
	ck_assert_int_eq(one_int(db, "SELECT concurrent(2, 3)"), 1);
	ck_assert_int_eq(one_int(db, "SELECT hb(NULL, 4) IS NULL"), 1);
	expect_error(db, "SELECT hb(1, 5)", "no event with id 5");
	expect_error(db, "SELECT * FROM causal_past(0)", "no event with id 0");
	expect_error(db, "SELECT * FROM causal_future", "needs an event id");
	ck_assert_int_eq(one_int(db, "SELECT group_concat(event) FROM causal_future(1)") != 0, 1);
	ck_assert_int_eq(one_int(db, "SELECT count(*) FROM causal_future(1)"), 2); /* 2 and 4 */
	ck_assert_int_eq(one_int(db, "SELECT count(*) FROM causal_past(4)"), 2);   /* 1 and 3 */
	sqlite3_close(db);
	/* a connection is an edge: a2 -> b1 (connect -> accept) */
	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, ana_sql_schema(), NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(ana_sql_register(db), 0);
	ck_assert_int_eq(sqlite3_exec(db,
	    "INSERT INTO process (id, name, images, first_event, nevents, threads) VALUES "
	    "  (0, 'a', 1, 1, 2, 0), (1, 'b', 1, 3, 2, 0);"
	    "INSERT INTO connection (connect, accept) VALUES (2, 3);", NULL, NULL, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(one_int(db, "SELECT hb(2, 3)"), 1);
	ck_assert_int_eq(one_int(db, "SELECT hb(1, 4)"), 1);
	ck_assert_int_eq(one_int(db, "SELECT hb(3, 2)"), 0);
	ck_assert_int_eq(one_int(db, "SELECT concurrent(1, 2)"), 0);
	ck_assert_int_eq(one_int(db, "SELECT count(*) FROM causal_past(3)"), 2);   /* 1 and 2 */
	ck_assert_int_eq(one_int(db, "SELECT count(*) FROM causal_future(2)"), 2); /* 3 and 4 */
	ck_assert_int_eq(one_int(db, "SELECT count(*) FROM edge WHERE kind = 'connection' AND "
	                             "src = 2 AND dst = 3"), 1);
	sqlite3_close(db);
}
END_TEST

/* ---------------------------------------------------------------------------------------
 * Real trace files: ana_db_write and the cache.
 */
static void write_trace(const char *dir, const char *name, const char *parent,
                        uint64_t fork_index, const struct trace_event *evs, size_t n,
                        const uint32_t *inherit, size_t ninherit)
{
	struct trace_process p;
	struct trace_writer *w;
	struct trace_diag d;
	struct trace_frame fr[2];
	char file[256], path[4400];
	char *argv[] = {"prog", "say \"hi\""};

	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "%s", name);
	snprintf(p.parent, sizeof(p.parent), "%s", parent);
	snprintf(p.host, sizeof(p.host), "testhost");
	snprintf(p.host_id, sizeof(p.host_id), "h1");
	snprintf(p.exe, sizeof(p.exe), "/bin/prog");
	p.pid = 4242;
	p.fork_index = fork_index;
	p.argc = 2;
	p.argv = argv;
	ck_assert_int_eq(trace_file_name(name, 0, file, sizeof(file)), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	ck_assert_int_eq(trace_writer_open(AT_FDCWD, path, &p, NULL, 0, &w, &d), 0);
	for (size_t i = 0; i < ninherit; i++)
		ck_assert_int_eq(trace_writer_inherit(w, inherit[i], 0, 0), 0);
	memset(fr, 0, sizeof(fr));
	fr[0].pc = 0x1234;
	fr[0].offset = 0x10;
	fr[0].function = "send_reply";
	fr[0].object = "prog";
	fr[1].pc = 0x2000;
	fr[1].function = "main";
	fr[1].object = "prog";
	ck_assert_int_eq(trace_writer_stack(w, 7, fr, 2), 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(trace_writer_event(w, &evs[i]), 0);
	ck_assert_int_eq(trace_writer_close(w), 0);
}

static struct trace_event mkev(uint32_t kind, uint32_t chan, int64_t result)
{
	struct trace_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.fd = -1;
	ev.channel = chan;
	ev.result = result;
	ev.len = result > 0 ? (uint64_t)result : 0;
	return ev;
}

static void make_session(const char *dir)
{
	struct trace_event pe[6], ce[4];
	uint32_t inh[] = {1, 2};
	uint8_t epbuf[TRACE_ENDPOINT_MAX];
	struct trace_endpoint ep;
	int64_t clock[2] = {3, 500};
	int n;

	memset(&ep, 0, sizeof(ep));
	ep.type = TRACE_CHAN_SOCKETPAIR;
	ep.inode = 11;
	ep.peer_inode = 12;
	n = trace_endpoint_encode(&ep, epbuf, sizeof(epbuf));
	ck_assert_int_gt(n, 0);
	pe[0] = mkev(TRACE_EV_PIPE, 1, 0);
	pe[0].call = TRACE_CALL_SOCKETPAIR;
	pe[0].naux = 2;
	pe[0].aux[0] = 1;
	pe[0].aux[1] = 2;
	pe[0].data = epbuf;
	pe[0].data_len = (uint32_t)n;
	pe[1] = mkev(TRACE_EV_FORK, 0, 42);
	pe[1].naux = 1;
	pe[1].aux[0] = 1;
	pe[2] = mkev(TRACE_EV_SEND, 1, 5);
	pe[2].call = TRACE_CALL_SEND;
	pe[2].fd = 3;
	pe[2].site = 7;
	pe[2].time_ns = 1000;
	pe[3] = mkev(TRACE_EV_CLOCK, 0, 0);
	pe[3].call = TRACE_CALL_CLOCK_GETTIME;
	pe[3].data = (const uint8_t *)clock;
	pe[3].data_len = sizeof(clock);
	pe[4] = mkev(TRACE_EV_RECV, 1, -1);
	pe[4].err = 11; /* EAGAIN */
	pe[4].len = 8;
	pe[5] = mkev(TRACE_EV_EXIT, 0, 3);
	write_trace(dir, "par", "", 0, pe, 6, NULL, 0);
	ce[0] = mkev(TRACE_EV_RECV, 2, 5);
	ce[1] = mkev(TRACE_EV_MARK, 0, 0);
	ce[1].data = (const uint8_t *)"phase";
	ce[1].data_len = 5;
	ce[1].naux = 1;
	ce[1].aux[0] = 2;
	ce[2] = mkev(TRACE_EV_SEND, 2, 2);
	ce[3] = mkev(TRACE_EV_EXIT, 0, 0);
	write_trace(dir, "par.1", "par", 2, ce, 4, inh, 2);
}

START_TEST(db_from_files)
{
	char dir[1024], path[1200], bad[1200];
	struct trace_diag d;
	sqlite3 *db;
	int rc;

	unit_tmpdir(dir, sizeof(dir));
	make_session(dir);
	snprintf(path, sizeof(path), "%s/out.db", dir);
	rc = ana_db_write(dir, path, NULL, &d);
	ck_assert_msg(rc == 0, "ana_db_write: %s", d.msg);
	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	ck_assert_int_eq(ana_sql_register(db), 0);
	ck_assert_int_eq(one_int(db, "PRAGMA user_version"), ANA_SQL_SCHEMA_VERSION);
	ck_assert_int_eq(one_int(db, "SELECT count(*) FROM event"), 10);
	ck_assert_int_eq(one_int(db, "SELECT pid FROM process WHERE name = 'par'"), 4242);
	ck_assert_int_eq(one_int(db, "SELECT argv = '[\"prog\",\"say \\\"hi\\\"\"]' FROM process "
	                             "WHERE name = 'par'"), 1);
	ck_assert_int_eq(one_int(db, "SELECT fork_event FROM process WHERE name = 'par.1'"), 2);
	ck_assert_int_eq(one_int(db, "SELECT time_ns FROM event WHERE id = 3"), 1000);
	ck_assert_int_eq(one_int(db, "SELECT fd FROM event WHERE id = 3"), 3);
	ck_assert_int_eq(one_int(db, "SELECT call = 'send' FROM event WHERE id = 3"), 1);
	ck_assert_int_eq(one_int(db, "SELECT errno FROM event WHERE id = 5"), 11);
	ck_assert_int_eq(one_int(db, "SELECT number FROM input WHERE event = 4"), 3000000500);
	ck_assert_int_eq(one_int(db, "SELECT size FROM input WHERE event = 4"), 16);
	ck_assert_int_eq(one_int(db, "SELECT count(*) FROM frame f JOIN event e ON e.site = f.stack "
	                             "WHERE e.id = 3 AND f.function IN ('send_reply', 'main')"), 2);
	ck_assert_int_eq(one_int(db, "SELECT value FROM mark WHERE key = 'phase'"), 2);
	ck_assert_int_eq(one_int(db, "SELECT exit_status FROM process_summary WHERE name = 'par'"), 3);
	/* the fork and the message */
	ck_assert_int_eq(one_int(db, "SELECT hb(2, 7)"), 1);  /* fork -> child's first event */
	ck_assert_int_eq(one_int(db, "SELECT hb(3, 7)"), 1);  /* send -> receive */
	ck_assert_int_eq(one_int(db, "SELECT hb(4, 7)"), 0);
	ck_assert_int_eq(one_int(db, "SELECT concurrent(4, 9)"), 1);
	ck_assert_int_eq(one_int(db, "SELECT count(*) FROM message WHERE send = 3 AND recv = 7"), 1);
	sqlite3_close(db);
	/* no partial file: a failing write leaves nothing behind, not even its temporary */
	snprintf(bad, sizeof(bad), "%s/nosuchdir/out.db", dir);
	ck_assert_int_ne(ana_db_write(dir, bad, NULL, &d), 0);
	ck_assert_ptr_nonnull(strstr(d.msg, "nosuchdir"));
	ck_assert_int_ne(access(bad, F_OK), 0);
	snprintf(bad, sizeof(bad), "%s/empty", dir);
	ck_assert_int_eq(mkdir(bad, 0700), 0);
	snprintf(path, sizeof(path), "%s/empty.db", dir);
	ck_assert_int_ne(ana_db_write(bad, path, NULL, &d), 0);
	ck_assert_int_ne(access(path, F_OK), 0);
	unit_rmdir(dir);
}
END_TEST

/* One process's trace with the given events, logged on host "h1". */
static void write_simple(const char *dir, const char *name, const struct trace_event *evs,
                         size_t n)
{
	struct trace_process p;
	struct trace_writer *w;
	struct trace_diag d;
	char file[256], path[1600];

	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "%s", name);
	snprintf(p.host_id, sizeof(p.host_id), "h1");
	ck_assert_int_eq(trace_file_name(name, 0, file, sizeof(file)), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	ck_assert_int_eq(trace_writer_open(AT_FDCWD, path, &p, NULL, 0, &w, &d), 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(trace_writer_event(w, &evs[i]), 0);
	ck_assert_int_eq(trace_writer_close(w), 0);
}

/* A TCP connection on loopback, both ends in the session: local and peer port. */
static struct trace_event tcp_ev(uint32_t kind, uint16_t lport, uint16_t pport, uint8_t *buf)
{
	struct trace_event ev = mkev(kind, 1, kind == TRACE_EV_ACCEPT ? 4 : 0);
	struct trace_endpoint ep;
	struct sockaddr_in a;
	int n;

	memset(&ep, 0, sizeof(ep));
	ep.type = TRACE_CHAN_TCP;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(lport);
	memcpy(ep.local, &a, sizeof(a));
	ep.local_len = sizeof(a);
	a.sin_port = htons(pport);
	memcpy(ep.peer, &a, sizeof(a));
	ep.peer_len = sizeof(a);
	n = trace_endpoint_encode(&ep, buf, TRACE_ENDPOINT_MAX);
	ck_assert_int_gt(n, 0);
	ev.data = buf;
	ev.data_len = (uint32_t)n;
	return ev;
}

/* Recorded connect and accept (trace files, matched by their TCP 4-tuples): a connection
 * row, an edge, and happened-before through it, where no message leads. */
START_TEST(connections_from_files)
{
	char dir[1024], path[1200];
	uint8_t b1[TRACE_ENDPOINT_MAX], b2[TRACE_ENDPOINT_MAX];
	struct trace_event srv[3], cli[3];
	struct trace_diag d;
	sqlite3 *db;
	int rc;

	unit_tmpdir(dir, sizeof(dir));
	/* cli: 1 mark, 2 connect, 3 send;  srv: 1 clock, 2 accept, 3 recv */
	cli[0] = mkev(TRACE_EV_MARK, 0, 0);
	cli[0].data = (const uint8_t *)"before";
	cli[0].data_len = 6;
	cli[0].naux = 1;
	cli[0].aux[0] = 1;
	cli[1] = tcp_ev(TRACE_EV_CONNECT, 5000, 4000, b1);
	cli[2] = mkev(TRACE_EV_SEND, 1, 8);
	srv[0] = mkev(TRACE_EV_CLOCK, 0, 0);
	srv[1] = tcp_ev(TRACE_EV_ACCEPT, 4000, 5000, b2);
	srv[2] = mkev(TRACE_EV_RECV, 1, 8);
	write_simple(dir, "cli", cli, 3);
	write_simple(dir, "srv", srv, 3);
	snprintf(path, sizeof(path), "%s/out.db", dir);
	rc = ana_db_write(dir, path, NULL, &d);
	ck_assert_msg(rc == 0, "ana_db_write: %s", d.msg);
	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	ck_assert_int_eq(ana_sql_register(db), 0);
	/* ids: cli 1..3, srv 4..6 */
	ck_assert_int_eq(one_int(db, "SELECT count(*) FROM connection"), 1);
	ck_assert_int_eq(one_int(db, "SELECT connect FROM connection WHERE accept = 5"), 2);
	ck_assert_int_eq(one_int(db, "SELECT count(*) FROM connection c JOIN channel h ON "
	                             "h.id = c.channel WHERE h.type = 'tcp' AND "
	                             "h.status = 'matched'"), 1);
	ck_assert_int_eq(one_int(db, "SELECT count(*) FROM edge WHERE kind = 'connection' AND "
	                             "src = 2 AND dst = 5"), 1);
	ck_assert_int_eq(one_int(db, "SELECT count(*) FROM message WHERE send = 3 AND recv = 6"), 1);
	ck_assert_int_eq(one_int(db, "SELECT hb(1, 5)"), 1); /* only through the connection */
	ck_assert_int_eq(one_int(db, "SELECT hb(2, 5)"), 1);
	ck_assert_int_eq(one_int(db, "SELECT hb(3, 5)"), 0);
	ck_assert_int_eq(one_int(db, "SELECT concurrent(3, 5)"), 1);
	ck_assert_int_eq(one_int(db, "SELECT concurrent(4, 2)"), 1);
	ck_assert_int_eq(one_int(db, "SELECT count(*) FROM causal_past(5)"), 3);   /* 1, 2, 4 */
	ck_assert_int_eq(one_int(db, "SELECT count(*) FROM causal_future(1)"), 4); /* 2, 3, 5, 6 */
	sqlite3_close(db);
	unit_rmdir(dir);
}
END_TEST

/* A trace whose first events were dropped by the disk budget: the rows keep the events'
 * numbers (id = first_event + idx - 1), none for the dropped ones, and the loader's
 * appended ids (given only after a gap) land on the right rows. */
START_TEST(ids_after_dropped_events)
{
	char dir[1024], path[1600], file[256];
	struct trace_process p;
	struct trace_writer_options o = { 4096, 0, 64 * 1024, 0, NULL, 0 };
	struct trace_writer *w;
	struct trace_diag d;
	struct trace_event e;
	struct unit_rng g;
	uint8_t noise[64];
	const int n = 20000;
	sqlite3 *db;
	int64_t first_idx;
	int rc;

	unit_tmpdir(dir, sizeof(dir));
	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "big");
	ck_assert_int_eq(trace_file_name(p.name, 0, file, sizeof(file)), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	ck_assert_int_eq(trace_writer_open(AT_FDCWD, path, &p, &o, 0, &w, &d), 0);
	unit_rng_seed(&g, unit_seed());
	for (int i = 0; i < n; i++) {
		for (size_t j = 0; j < sizeof(noise); j++)
			noise[j] = (uint8_t)unit_rng_next(&g); /* incompressible: many chunks */
		e = mkev(TRACE_EV_INPUT, 0, i);
		e.fd = 0;
		e.data = noise;
		e.data_len = sizeof(noise);
		ck_assert_int_eq(trace_writer_event(w, &e), 0);
	}
	ck_assert_int_eq(trace_writer_close(w), 0);
	snprintf(path, sizeof(path), "%s/out.db", dir);
	rc = ana_db_write(dir, path, NULL, &d);
	ck_assert_msg(rc == 0, "ana_db_write: %s", d.msg);
	ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	first_idx = one_int(db, "SELECT min(idx) FROM event");
	ck_assert_int_gt(first_idx, 1);
	ck_assert_int_eq(one_int(db, "SELECT max(idx) FROM event"), n);
	ck_assert_int_eq(one_int(db, "SELECT count(*) FROM event"), n - first_idx + 1);
	ck_assert_int_eq(one_int(db, "SELECT count(*) FROM event e JOIN process p ON p.id = e.proc "
	                             "WHERE e.id <> p.first_event + e.idx - 1"), 0);
	ck_assert_int_eq(one_int(db, "SELECT count(*) FROM event WHERE result <> idx - 1"), 0);
	ck_assert_int_eq(one_int(db, "SELECT min(id) FROM event"), first_idx);
	sqlite3_close(db);
	unit_rmdir(dir);
}
END_TEST

START_TEST(cache_rebuilt_when_traces_change)
{
	char dir[1024], path[1200], trace[1200];
	struct trace_diag d;
	struct timespec times[2];
	sqlite3 *db;
	int rebuilt, rc;

	unit_tmpdir(dir, sizeof(dir));
	make_session(dir);
	rc = ana_db_open(dir, &db, &rebuilt, NULL, &d);
	ck_assert_msg(rc == 0, "ana_db_open: %s", d.msg);
	ck_assert_int_eq(rebuilt, 1);
	ck_assert_int_eq(one_int(db, "SELECT count(*) FROM event"), 10);
	/* read-only: the trace is never modified by a query */
	expect_error(db, "DELETE FROM event", "readonly");
	sqlite3_close(db);
	ck_assert_int_eq(ana_db_cache_path(dir, path, sizeof(path)), 0);
	ck_assert_int_eq(access(path, R_OK), 0);

	ck_assert_int_eq(ana_db_open(dir, &db, &rebuilt, NULL, &d), 0);
	ck_assert_int_eq(rebuilt, 0);
	sqlite3_close(db);

	/* a trace that changes (here only its modification time) makes it stale */
	snprintf(trace, sizeof(trace), "%s/par.1.trace", dir);
	times[0].tv_sec = times[1].tv_sec = 1000000000;
	times[0].tv_nsec = times[1].tv_nsec = 0;
	ck_assert_int_eq(utimensat(AT_FDCWD, trace, times, 0), 0);
	ck_assert_int_eq(ana_db_open(dir, &db, &rebuilt, NULL, &d), 0);
	ck_assert_int_eq(rebuilt, 1);
	sqlite3_close(db);
	/* as does a cache of another schema version */
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "PRAGMA user_version = 999", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	ck_assert_int_eq(ana_db_open(dir, &db, &rebuilt, NULL, &d), 0);
	ck_assert_int_eq(rebuilt, 1);
	ck_assert_int_eq(one_int(db, "PRAGMA user_version"), ANA_SQL_SCHEMA_VERSION);
	sqlite3_close(db);
	unit_rmdir(dir);
}
END_TEST

/* A cache that an encore of another model version made (it matched fewer channels, added
 * fewer edges) is stale though the traces and the schema are the same. */
START_TEST(cache_rebuilt_for_another_model)
{
	char dir[1024], path[1200], now[32], old[32], *sql;
	struct trace_diag d;
	sqlite3 *db;
	int rebuilt;

	unit_tmpdir(dir, sizeof(dir));
	make_session(dir);
	ck_assert_int_eq(ana_db_stamp(dir, now, sizeof(now), &d), 0);
	ck_assert_int_eq(ana_db_stamp_model(dir, ANA_MODEL_VERSION, old, sizeof(old), &d), 0);
	ck_assert_str_eq(now, old);
	ck_assert_int_eq(ana_db_stamp_model(dir, ANA_MODEL_VERSION - 1, old, sizeof(old), &d), 0);
	ck_assert_str_ne(now, old);
	ck_assert_int_eq(ana_db_open(dir, &db, &rebuilt, NULL, &d), 0);
	ck_assert_int_eq(rebuilt, 1);
	sqlite3_close(db);
	/* the cache as the older encore left it: its stamp, one event fewer */
	ck_assert_int_eq(ana_db_cache_path(dir, path, sizeof(path)), 0);
	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	sql = sqlite3_mprintf("UPDATE meta SET value = %Q WHERE key = 'stamp'; "
	                      "DELETE FROM event WHERE id = (SELECT max(id) FROM event)", old);
	ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_free(sql);
	sqlite3_close(db);
	ck_assert_int_eq(ana_db_open(dir, &db, &rebuilt, NULL, &d), 0);
	ck_assert_int_eq(rebuilt, 1);
	ck_assert_int_eq(one_int(db, "SELECT count(*) FROM event"), 10);
	sqlite3_close(db);
	/* and the rebuilt one is fresh */
	ck_assert_int_eq(ana_db_open(dir, &db, &rebuilt, NULL, &d), 0);
	ck_assert_int_eq(rebuilt, 0);
	sqlite3_close(db);
	unit_rmdir(dir);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("sql");
	TCase *tc = tcase_create("sql");

	tcase_add_test(tc, schema_is_the_file);
	tcase_add_loop_test(tc, random_hb_agrees, 0, 5);
	tcase_add_loop_test(tc, random_pairs_large, 0, 3);
	tcase_add_test(tc, rows_match_the_model);
	tcase_add_test(tc, progress_reported);
	tcase_add_test(tc, failed_fill_leaves_nothing);
	tcase_add_test(tc, damaged_database_errors);
	tcase_add_test(tc, db_from_files);
	tcase_add_test(tc, cache_rebuilt_when_traces_change);
	tcase_add_test(tc, cache_rebuilt_for_another_model);
	tcase_add_test(tc, ids_after_dropped_events);
	tcase_add_test(tc, connections_from_files);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(suite)
