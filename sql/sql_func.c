/*
 * sql_func.c: causality inside SQLite: hb(a, b), concurrent(a, b) and the
 * table-valued functions causal_past(id) / causal_future(id) over event ids.
 *
 * They need nothing but the database: on first use they read the process table (event id
 * ranges, fork edges), the message table (send -> receive edges), the connection table
 * (connect -> accept edges) and the dependency table (releases -> an end of file, the
 * receive that made room -> a send into a full pipe), the same edges as the analyzer's
 * happened-before.
 *
 * The index is built on *joins*, the events with incoming edges (receives linked to a
 * send, accepts linked to a connect, ends of file, sends that waited for room, the first
 * event of a forked process; an event may have several): between two joins of a process
 * nothing new arrives, so the vector clock of any event is the clock of the last join at or
 * before it in its process (jrow[id]) with its own entry set to its index.  The joins are
 * ordered topologically and, when their clocks fit in ANA_SQL_COLUMN_BYTES, the clocks are
 * built in one pass (2 or 4 bytes per join per process: a fraction of one per event);
 * hb(a, b) is then two memory reads, vc[jrow[b]][proc(a)] >= index(a), and causal_past a
 * row copy.  Otherwise one column per process asked about (4 bytes per join, one pass over
 * the joins), as many as fit kept, least recently used out.  The order, the clocks and the
 * columns are the analyzer's engine (ana_hbg_*, analyzer/hbgraph.c) run on the joins: this
 * file reads the database and keeps the memory.
 *
 * Compiled twice: into libsql (ana_sql_register) and, with ANA_SQL_EXTENSION defined,
 * into the loadable extension encore_sql.so (sql_ext.c) for any SQLite client.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifndef ANA_SQL_EXTENSION
#include <sqlite3.h>

#include "sqldb.h"
#else
#include "ana.h"
#endif

#define ANA_SQL_COLUMN_BYTES (512ull << 20)

struct graph;

struct causal_aux {
	struct graph *g;
	int future;
};

/* An event with an incoming edge (8 bytes: the index's memory is what a cold query pays
 * for first, page by page).  Its sources are srcs[first .. next join's first); a forked
 * process's first event also depends on the parent's fork event, process.fork_event
 * (jfsrc). */
struct join {
	uint32_t id;               /* its event id */
	uint32_t first;            /* its first source in srcs */
};

/* An edge read from the database: dst happened after src. */
struct edge {
	uint32_t dst, src;
};

struct graph {
	int refs;
	int loaded;                /* 1 loaded, -1 failed (err says why) */
	char err[512];
	size_t np;
	uint64_t total;            /* event ids are 1..total */
	uint64_t *base;            /* per process: id of its event 1, minus one */
	uint64_t *n;               /* per process: events */
	uint32_t *fsrc;            /* per process: id of the parent's fork event, 0 none */
	uint64_t nj;               /* joins, numbered 1..nj in id order */
	struct join *j;            /* j[1..nj]; j[0] unused, j[nj + 1].first ends srcs */
	uint32_t *srcs;            /* the joins' sources (sends, connects, releases...), by join */
	uint32_t *jfirst;          /* per process: its first join (np + 1 entries) */
	uint32_t *jrow;            /* per event id: the last join at or before it in its process,
	                              0 when none */
	uint32_t *topo;            /* the joins in a linear extension of happened-before */
	struct ana_hbg hbg;        /* the joins as the analyzer's clock engine reads them */
	/* reachability columns over joins: col_p[k] = the last event of p before join k */
	uint32_t **col;            /* per process, NULL when not built */
	uint64_t *used;
	uint64_t tick;
	size_t ncols, maxcols;
	uint32_t *vc;              /* when all columns fit: vc[k * np + p] = col_p[k]; row 0 is 0 */
	uint16_t *vc16;            /* the same with 2-byte entries (vc NULL then) */
	/* out-edges for causal_future, built on first use (CSR) */
	uint32_t *ostart, *oedge;
	struct causal_aux past, future;
};

/* Large index arrays: mapped on their own, on huge pages where the kernel allows, and
 * populated in one call, because first touches of 4 KiB pages cost more than the pass that
 * fills them (64 MiB is 16k page faults; in a VM each is dear).  Every step past mmap is a
 * hint: without it the memory is ordinary, lazily faulted pages.  Release with big_free. */
#define BIG_HUGE ((size_t)2 << 20)

static void *big_alloc(size_t size)
{
	size_t len = size + 2 * BIG_HUGE;
	uint8_t *m, *a;

	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	/* aligned start, with room below it for the mapping's base and length */
	a = (uint8_t *)(((uintptr_t)m + 64 + BIG_HUGE - 1) & ~(uintptr_t)(BIG_HUGE - 1));
	memcpy(a - 64, &m, sizeof(m));
	memcpy(a - 64 + sizeof(m), &len, sizeof(len));
#ifdef MADV_HUGEPAGE
	madvise(a, size, MADV_HUGEPAGE);
#endif
#ifdef MADV_POPULATE_WRITE
	madvise(a, size, MADV_POPULATE_WRITE);
#endif
	return a;
}

static void big_free(void *p)
{
	uint8_t *m;
	size_t len;

	if (!p)
		return;
	memcpy(&m, (uint8_t *)p - 64, sizeof(m));
	memcpy(&len, (uint8_t *)p - 64 + sizeof(m), sizeof(len));
	munmap(m, len);
}

static void graph_unload(struct graph *g)
{
	free(g->base);
	free(g->n);
	free(g->fsrc);
	free(g->j);
	free(g->srcs);
	free(g->jfirst);
	big_free(g->jrow);
	free(g->topo);
	if (g->col)
		for (size_t p = 0; p < g->np; p++)
			big_free(g->col[p]);
	free(g->col);
	free(g->used);
	free(g->ostart);
	free(g->oedge);
	big_free(g->vc);
	big_free(g->vc16);
	g->vc = g->jrow = NULL;
	g->vc16 = NULL;
	g->base = g->n = g->used = NULL;
	g->j = NULL;
	g->srcs = NULL;
	g->fsrc = g->jfirst = g->topo = g->ostart = g->oedge = NULL;
	g->col = NULL;
	g->np = 0;
	g->total = 0;
	g->nj = 0;
	g->ncols = 0;
}

static void graph_release(void *p)
{
	struct graph *g = p;

	if (g && --g->refs == 0) {
		graph_unload(g);
		free(g);
	}
}

/* The modules' client data is a struct causal_aux inside the graph. */
static void aux_release(void *p)
{
	graph_release(p ? ((struct causal_aux *)p)->g : NULL);
}

/* The process holding event id (1..total): binary search over the id ranges. */
static size_t proc_of(const struct graph *g, uint64_t id)
{
	size_t lo = 0, hi = g->np;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (g->base[mid] < id)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* The process of join k. */
static uint32_t jproc(const struct graph *g, uint32_t k)
{
	return (uint32_t)proc_of(g, g->j[k].id);
}

/* The fork event join k (of process p) depends on, 0 none. */
static uint32_t jfsrc(const struct graph *g, uint32_t k, uint32_t p)
{
	return g->j[k].id == g->base[p] + 1 ? g->fsrc[p] : 0;
}

/* Join k's sources are jsrc(g, k, p, e) for e in 0 .. nsrcs(g, k) - 1 (0: none). */
static uint32_t nsrcs(const struct graph *g, uint32_t k)
{
	return g->j[k + 1].first - g->j[k].first + 1;
}

static uint32_t jsrc(const struct graph *g, uint32_t k, uint32_t p, uint32_t e)
{
	return e < g->j[k + 1].first - g->j[k].first ? g->srcs[g->j[k].first + e]
	                                             : jfsrc(g, k, p);
}

static int fail(struct graph *g, const char *msg, const char *detail)
{
	snprintf(g->err, sizeof(g->err), "%s%s%s", msg, detail ? ": " : "", detail ? detail : "");
	g->loaded = -1;
	graph_unload(g);
	return -1;
}

/* The joins as an ana_hbg (ana.h): join k of process p stands for event j[k].id; its
 * sources are its in-edges, each carried by the last join at or before it (jrow). */
static uint32_t hbg_index(const void *ctx, uint32_t k, uint32_t p)
{
	const struct graph *g = ctx;

	return (uint32_t)(g->j[k].id - g->base[p]);
}

static uint32_t hbg_nsrcs(const void *ctx, uint32_t k, uint32_t p)
{
	(void)p;
	return nsrcs(ctx, k);
}

static int hbg_src(const void *ctx, uint32_t k, uint32_t p, uint32_t e, struct ana_hbg_src *out)
{
	const struct graph *g = ctx;
	uint32_t s = jsrc(g, k, p, e);

	if (!s)
		return 0;
	out->proc = (uint32_t)proc_of(g, s);
	out->index = (uint32_t)(s - g->base[out->proc]);
	out->node = g->jrow[s];
	return 1;
}

/* A linear extension of happened-before over the joins (ana_hbg_order). */
static int order(struct graph *g)
{
	int rc;

	g->hbg.nprocs = g->np;
	g->hbg.nnodes = g->nj;
	g->hbg.first = g->jfirst;
	g->hbg.ctx = g;
	g->hbg.index = hbg_index;
	g->hbg.nsrcs = hbg_nsrcs;
	g->hbg.src = hbg_src;
	if (!(g->topo = malloc((g->nj ? g->nj : 1) * sizeof(*g->topo))))
		return fail(g, "out of memory ordering the events", NULL);
	rc = ana_hbg_order(&g->hbg, g->topo);
	if (rc == TRACE_ECORRUPT)
		return fail(g, "the message and connection tables contradict program order (a cycle)",
		            NULL);
	if (rc)
		return fail(g, "out of memory ordering the events", NULL);
	return 0;
}

/* Every join's clock at once (ana_hbg_vclocks), when they fit: entries are event indices,
 * 2 bytes each when every process has fewer than 65536 events (half the memory, and a cold
 * build pays for memory first), else 4.  Out of memory leaves the columns. */
static void vclocks(struct graph *g)
{
	uint64_t most = 0, cells = (g->nj + 1) * g->np;

	for (size_t p = 0; p < g->np; p++)
		if (g->n[p] > most)
			most = g->n[p];
	if (most < 65536) {
		if ((g->vc16 = big_alloc(cells * sizeof(*g->vc16))))
			ana_hbg_vclocks16(&g->hbg, g->topo, g->vc16);
	} else if ((g->vc = big_alloc(cells * sizeof(*g->vc)))) {
		ana_hbg_vclocks32(&g->hbg, g->topo, g->vc);
	}
}

/* Entry p of the clock of join k (the last event of p that happened before it). */
static uint32_t vc_get(const struct graph *g, uint64_t k, size_t p)
{
	return g->vc16 ? g->vc16[k * g->np + p] : g->vc[k * g->np + p];
}

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	return x->src < y->src ? -1 : x->src > y->src;
}

/* Append the rows of `sql` (two event ids: source, destination) to *v. */
static int read_edges(struct graph *g, sqlite3 *db, const char *sql, const char *table,
                      struct edge **v, size_t *n, size_t *cap)
{
	sqlite3_stmt *st = NULL;
	char what[96];
	int rc;

	snprintf(what, sizeof(what), "reading the %s table", table);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		char detail[200];

		snprintf(detail, sizeof(detail), "%s (a database of an older schema? rebuild it with "
		         "encore db)", sqlite3_errmsg(db));
		return fail(g, what, detail);
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t s = sqlite3_column_int64(st, 0), r = sqlite3_column_int64(st, 1);

		if (s < 1 || r < 1 || (uint64_t)s > g->total || (uint64_t)r > g->total) {
			sqlite3_finalize(st);
			snprintf(what, sizeof(what), "%s names an event that does not exist", table);
			return fail(g, what, NULL);
		}
		if (*n == *cap) {
			size_t nc = *cap ? 2 * *cap : 4096;
			struct edge *nv = realloc(*v, nc * sizeof(*nv));

			if (!nv) {
				sqlite3_finalize(st);
				return fail(g, "out of memory loading the causality index", NULL);
			}
			*v = nv;
			*cap = nc;
		}
		(*v)[*n].dst = (uint32_t)r;
		(*v)[*n].src = (uint32_t)s;
		++*n;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return fail(g, what, sqlite3_errmsg(db));
	return 0;
}

/* 1 if v[0..n) (sorted) has an edge into event id. */
static int has_edge(const struct edge *v, size_t n, uint64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].dst < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].dst == id;
}

/* The joins: the destinations of the edges v[0..ne) (sorted by destination; their sources
 * go to srcs) and the first events of forked processes, in id order; then jfirst and jrow. */
static int make_joins(struct graph *g, const struct edge *v, size_t ne)
{
	size_t forks = 0, nd = 0, i = 0, o = 0;
	uint64_t k = 0;

	for (size_t e = 0; e < ne; e++)
		nd += !e || v[e].dst != v[e - 1].dst;
	for (size_t p = 0; p < g->np; p++)
		forks += g->fsrc[p] && g->n[p] && !has_edge(v, ne, g->base[p] + 1);
	g->nj = nd + forks;
	g->j = malloc((g->nj + 2) * sizeof(*g->j));
	g->srcs = malloc((ne ? ne : 1) * sizeof(*g->srcs));
	g->jfirst = malloc((g->np + 1) * sizeof(*g->jfirst));
	g->jrow = big_alloc((g->total + 2) * sizeof(*g->jrow));
	if (!g->j || !g->srcs || !g->jfirst || !g->jrow)
		return fail(g, "out of memory loading the causality index", NULL);
	for (size_t p = 0; p < g->np; p++) {
		uint64_t lo = g->base[p] + 1, hi = g->base[p] + g->n[p], id = lo;
		int forked = g->fsrc[p] && g->n[p]; /* the first event is a join, edges or not */

		g->jfirst[p] = (uint32_t)(k + 1);
		while (forked || (i < ne && v[i].dst <= hi)) {
			uint64_t at = forked ? lo : v[i].dst;

			forked = 0;
			/* jrow: 0 before the first join of p, then each join's number up to the next */
			for (; id < at; id++)
				g->jrow[id] = k >= g->jfirst[p] ? (uint32_t)k : 0;
			k++;
			g->j[k].id = (uint32_t)at;
			g->j[k].first = (uint32_t)o;
			while (i < ne && v[i].dst == at)
				g->srcs[o++] = v[i++].src;
		}
		for (; id <= hi; id++)
			g->jrow[id] = k >= g->jfirst[p] ? (uint32_t)k : 0;
	}
	g->jfirst[g->np] = (uint32_t)(k + 1);
	g->j[k + 1].first = (uint32_t)o;
	g->jrow[0] = 0;
	return 0;
}

static int graph_load(struct graph *g, sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	struct edge *v = NULL, *w = NULL;
	size_t ne = 0, nw = 0, cap = 0, wcap = 0, np = 0, i = 0;
	uint64_t total = 0;
	int rc, sorted = 1;

	if (g->loaded)
		return g->loaded > 0 ? 0 : -1;
	if (sqlite3_prepare_v2(db, "SELECT count(*), coalesce(sum(nevents), 0) FROM process", -1,
	                       &st, NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW) {
		fail(g, "reading the process table", sqlite3_errmsg(db));
		goto out;
	}
	np = (size_t)sqlite3_column_int64(st, 0);
	total = (uint64_t)sqlite3_column_int64(st, 1);
	sqlite3_finalize(st);
	st = NULL;
	if (total >= UINT32_MAX - 2) {
		fail(g, "more than 4e9 events: causality functions are not available", NULL);
		goto out;
	}
	g->np = np;
	g->total = total;
	g->base = calloc(np ? np : 1, sizeof(*g->base));
	g->n = calloc(np ? np : 1, sizeof(*g->n));
	g->fsrc = calloc(np ? np : 1, sizeof(*g->fsrc));
	g->col = calloc(np ? np : 1, sizeof(*g->col));
	g->used = calloc(np ? np : 1, sizeof(*g->used));
	if (!g->base || !g->n || !g->fsrc || !g->col || !g->used) {
		fail(g, "out of memory loading the causality index", NULL);
		goto out;
	}
	if (sqlite3_prepare_v2(db, "SELECT first_event, nevents, fork_event FROM process "
	                       "ORDER BY first_event", -1, &st, NULL) != SQLITE_OK) {
		fail(g, "reading the process table", sqlite3_errmsg(db));
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && i < np) {
		int64_t first = sqlite3_column_int64(st, 0), n = sqlite3_column_int64(st, 1);
		uint64_t expect = i ? g->base[i - 1] + g->n[i - 1] + 1 : 1;

		if (n < 0 || first < 1 || (uint64_t)first != expect) {
			fail(g, "process.first_event does not number events 1, 2, 3... in order", NULL);
			goto out;
		}
		g->base[i] = (uint64_t)first - 1;
		g->n[i] = (uint64_t)n;
		g->fsrc[i] = (uint32_t)sqlite3_column_int64(st, 2); /* NULL reads as 0 */
		i++;
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		fail(g, "reading the process table", sqlite3_errmsg(db));
		goto out;
	}
	sqlite3_finalize(st);
	st = NULL;
	for (size_t p = 0; p < np; p++)
		if (g->fsrc[p] > total) {
			fail(g, "process.fork_event names no event", NULL);
			goto out;
		}
	if (read_edges(g, db, "SELECT send, recv FROM message", "message", &v, &ne, &cap))
		goto out;
	/* the other edges are few: read apart, sorted, merged into the messages in place */
	if (read_edges(g, db, "SELECT connect, accept FROM connection", "connection", &w, &nw,
	               &wcap) ||
	    read_edges(g, db, "SELECT src, dst FROM dependency", "dependency", &w, &nw, &wcap))
		goto out;
	/* messages come in rowid order, which is their receive's id when the loader wrote
	 * them: sorted already; else a sort */
	for (size_t e = 1; e < ne && sorted; e++)
		sorted = v[e - 1].dst < v[e].dst;
	if (!sorted)
		qsort(v, ne, sizeof(*v), cmp_edge);
	if (nw) {
		struct edge *nv = realloc(v, (ne + nw) * sizeof(*nv));
		size_t a = ne, b = nw, o = ne + nw;

		if (!nv) {
			fail(g, "out of memory loading the causality index", NULL);
			goto out;
		}
		v = nv;
		qsort(w, nw, sizeof(*w), cmp_edge);
		while (b > 0) {
			if (a > 0 && cmp_edge(&v[a - 1], &w[b - 1]) > 0)
				v[--o] = v[--a];
			else
				v[--o] = w[--b];
		}
		ne += nw;
	}
	if (make_joins(g, v, ne))
		goto out;
	{
		/* ENCORE_SQL_MEMORY (bytes) lowers the budget: tests use it to exercise columns */
		const char *env = getenv("ENCORE_SQL_MEMORY");
		uint64_t budget = env ? strtoull(env, NULL, 0) : ANA_SQL_COLUMN_BYTES;

		g->maxcols = (size_t)(budget / (4 * (g->nj + 1)));
		if (g->maxcols < 4)
			g->maxcols = 4;
		if (order(g))
			goto out;
		if (np && (uint64_t)np * (g->nj + 1) * 4 <= budget)
			vclocks(g); /* else (or out of memory) columns one by one, on demand */
	}
	g->loaded = 1;
out:
	free(v);
	free(w);
	sqlite3_finalize(st);
	return g->loaded > 0 ? 0 : -1;
}

/* The reachability column of process c over the joins. */
static const uint32_t *column(struct graph *g, size_t c)
{
	uint32_t *col;

	if (g->col[c]) {
		g->used[c] = ++g->tick;
		return g->col[c];
	}
	if (g->ncols >= g->maxcols) {
		size_t lru = SIZE_MAX;

		for (size_t p = 0; p < g->np; p++)
			if (g->col[p] && (lru == SIZE_MAX || g->used[p] < g->used[lru]))
				lru = p;
		col = g->col[lru];
		g->col[lru] = NULL;
		g->ncols--;
	} else if (!(col = big_alloc((g->nj + 1) * sizeof(*col)))) {
		return NULL;
	}
	ana_hbg_column(&g->hbg, g->topo, c, col);
	g->col[c] = col;
	g->used[c] = ++g->tick;
	g->ncols++;
	return col;
}

/* 1/0, or -1 with an error on ctx. */
static int hb_ids(sqlite3_context *ctx, struct graph *g, sqlite3_int64 a, sqlite3_int64 b)
{
	const uint32_t *col;
	size_t p;

	if (a < 1 || b < 1 || (uint64_t)a > g->total || (uint64_t)b > g->total) {
		char msg[128];

		snprintf(msg, sizeof(msg), "no event with id %lld (ids are 1..%llu)",
		         (long long)(a < 1 || (uint64_t)a > g->total ? a : b),
		         (unsigned long long)g->total);
		sqlite3_result_error(ctx, msg, -1);
		return -1;
	}
	p = proc_of(g, (uint64_t)a);
	if ((uint64_t)b > g->base[p] && (uint64_t)b <= g->base[p] + g->n[p])
		return a < b; /* same process: program order */
	if (g->vc || g->vc16)
		return vc_get(g, g->jrow[b], p) >= (uint64_t)a - g->base[p];
	if (!(col = column(g, p))) {
		sqlite3_result_error_nomem(ctx);
		return -1;
	}
	return col[g->jrow[b]] >= (uint64_t)a - g->base[p];
}

static int args(sqlite3_context *ctx, sqlite3_value **argv, struct graph **g, sqlite3_int64 *a,
                sqlite3_int64 *b)
{
	*g = sqlite3_user_data(ctx);
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL) {
		sqlite3_result_null(ctx);
		return -1;
	}
	if (graph_load(*g, sqlite3_context_db_handle(ctx))) {
		sqlite3_result_error(ctx, (*g)->err, -1);
		return -1;
	}
	*a = sqlite3_value_int64(argv[0]);
	*b = sqlite3_value_int64(argv[1]);
	return 0;
}

static void fn_hb(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct graph *g;
	sqlite3_int64 a, b;
	int r;

	(void)argc;
	if (args(ctx, argv, &g, &a, &b))
		return;
	if ((r = hb_ids(ctx, g, a, b)) >= 0)
		sqlite3_result_int(ctx, r);
}

static void fn_concurrent(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct graph *g;
	sqlite3_int64 a, b;
	int r1, r2;

	(void)argc;
	if (args(ctx, argv, &g, &a, &b))
		return;
	if ((r1 = hb_ids(ctx, g, a, b)) < 0 || (r2 = hb_ids(ctx, g, b, a)) < 0)
		return;
	sqlite3_result_int(ctx, a != b && !r1 && !r2);
}

/* ---------------------------------------------------------------------------------------
 * causal_past(ID) / causal_future(ID): eponymous virtual tables with a hidden argument.
 */
struct cvtab {
	sqlite3_vtab base;
	struct causal_aux *aux;
	sqlite3 *db;
};

struct ccursor {
	sqlite3_vtab_cursor base;
	uint64_t *lo, *hi;         /* per process: rows lo..hi (indices), empty when lo > hi */
	size_t p;
	uint64_t k;
	sqlite3_int64 of;
	int eof;
};

static int c_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                     sqlite3_vtab **out, char **err)
{
	struct cvtab *vt;
	int rc;

	(void)argc;
	(void)argv;
	(void)err;
	rc = sqlite3_declare_vtab(db, "CREATE TABLE x(event INTEGER, proc INTEGER, idx INTEGER, "
	                              "of HIDDEN)");
	if (rc != SQLITE_OK)
		return rc;
	if (!(vt = sqlite3_malloc(sizeof(*vt))))
		return SQLITE_NOMEM;
	memset(vt, 0, sizeof(*vt));
	vt->aux = aux;
	vt->db = db;
	*out = &vt->base;
	return SQLITE_OK;
}

static int c_disconnect(sqlite3_vtab *vt)
{
	sqlite3_free(vt);
	return SQLITE_OK;
}

static int c_best(sqlite3_vtab *vt, sqlite3_index_info *info)
{
	(void)vt;
	for (int i = 0; i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];

		if (c->iColumn == 3 && c->op == SQLITE_INDEX_CONSTRAINT_EQ && c->usable) {
			info->aConstraintUsage[i].argvIndex = 1;
			info->aConstraintUsage[i].omit = 1;
			info->estimatedCost = 1000;
			info->idxNum = 1;
			return SQLITE_OK;
		}
	}
	info->estimatedCost = 1e300;
	info->idxNum = 0;
	return SQLITE_OK;
}

static int c_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
	struct ccursor *c = sqlite3_malloc(sizeof(*c));

	(void)vt;
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	c->eof = 1;
	*out = &c->base;
	return SQLITE_OK;
}

static int c_close(sqlite3_vtab_cursor *cur)
{
	struct ccursor *c = (struct ccursor *)cur;

	free(c->lo);
	free(c->hi);
	sqlite3_free(c);
	return SQLITE_OK;
}

static void c_settle(struct ccursor *c, size_t np)
{
	while (c->p < np && c->k > c->hi[c->p]) {
		c->p++;
		if (c->p < np)
			c->k = c->lo[c->p];
	}
	c->eof = c->p >= np;
}

static int c_error(sqlite3_vtab *vt, const char *msg)
{
	sqlite3_free(vt->zErrMsg);
	vt->zErrMsg = sqlite3_mprintf("%s", msg);
	return SQLITE_ERROR;
}

/* Reverse edges, built the first time causal_future is asked. */
static int out_edges(struct graph *g)
{
	uint64_t total = g->total, m = 0;
	uint32_t *fill;

	if (g->ostart)
		return 0;
	if (!(g->ostart = calloc(total + 2, sizeof(*g->ostart))))
		return -1;
	for (uint32_t k = 1; k <= g->nj; k++)
		for (uint32_t e = 0, ns = nsrcs(g, k), q = jproc(g, k); e < ns; e++) {
			uint32_t s = jsrc(g, k, q, e);

			if (s)
				g->ostart[s]++, m++;
		}
	/* prefix sums: edges of id are oedge[ostart[id] .. ostart[id+1]) */
	for (uint64_t id = 0, sum = 0; id <= total + 1; id++) {
		uint64_t c = g->ostart[id];

		g->ostart[id] = (uint32_t)sum;
		sum += c;
	}
	fill = malloc((total + 2) * sizeof(*fill));
	if (!fill || !(g->oedge = malloc((m ? m : 1) * sizeof(*g->oedge)))) {
		free(fill);
		free(g->ostart);
		g->ostart = NULL;
		return -1;
	}
	memcpy(fill, g->ostart, (total + 2) * sizeof(*fill));
	for (uint32_t k = 1; k <= g->nj; k++)
		for (uint32_t e = 0, ns = nsrcs(g, k), q = jproc(g, k); e < ns; e++) {
			uint32_t s = jsrc(g, k, q, e);

			if (s)
				g->oedge[fill[s]++] = g->j[k].id;
		}
	free(fill);
	return 0;
}

/* Past of b: per process the last event that happened before b.  With the clocks, b's row;
 * otherwise a closure over the joins' in-edges, linear in the joins it covers. */
static void past(struct graph *g, uint64_t b, uint64_t *cut)
{
	size_t q = proc_of(g, b), np = g->np;
	uint32_t *scan;
	int changed = 1;

	if (g->vc || g->vc16) {
		for (size_t x = 0; x < np; x++)
			cut[x] = vc_get(g, g->jrow[b], x);
		cut[q] = b - g->base[q] - 1;
		return;
	}
	memset(cut, 0, np * sizeof(*cut));
	if (!(scan = malloc(np * sizeof(*scan))))
		return;
	for (size_t x = 0; x < np; x++)
		scan[x] = g->jfirst[x];
	cut[q] = b - g->base[q]; /* b's own in-edges count; b itself is dropped below */
	while (changed) {
		changed = 0;
		for (size_t x = 0; x < np; x++)
			for (; scan[x] < g->jfirst[x + 1] && g->j[scan[x]].id - g->base[x] <= cut[x];
			     scan[x]++) {
				for (uint32_t e = 0, ns = nsrcs(g, scan[x]); e < ns; e++) {
					uint32_t s = jsrc(g, scan[x], (uint32_t)x, e), y;

					if (!s)
						continue;
					y = (uint32_t)proc_of(g, s);
					if (s - g->base[y] > cut[y]) {
						cut[y] = s - g->base[y];
						changed = 1;
					}
				}
			}
	}
	cut[q]--;
	free(scan);
}

/* Future of a: per process the first event a happened before (n + 1 when none). */
static void future(struct graph *g, uint64_t a, uint64_t *fut)
{
	size_t p = proc_of(g, a), np = g->np;
	uint64_t *low = malloc(np * sizeof(*low));
	int changed = 1;

	if (!low) {
		for (size_t x = 0; x < np; x++)
			fut[x] = g->n[x] + 1;
		return;
	}
	for (size_t x = 0; x < np; x++)
		fut[x] = low[x] = g->n[x] + 1;
	fut[p] = a - g->base[p];     /* a's own out-edges count; a is dropped below */
	while (changed) {
		changed = 0;
		for (size_t x = 0; x < np; x++)
			while (low[x] > fut[x]) {
				uint64_t id = g->base[x] + --low[x];

				for (uint32_t e = g->ostart[id]; e < g->ostart[id + 1]; e++) {
					uint64_t d = g->oedge[e];
					size_t y = proc_of(g, d);

					if (d - g->base[y] < fut[y]) {
						fut[y] = d - g->base[y];
						changed = 1;
					}
				}
			}
	}
	fut[p]++;
	free(low);
}

static int c_filter(sqlite3_vtab_cursor *cur, int idxnum, const char *idxstr, int argc,
                    sqlite3_value **argv)
{
	struct ccursor *c = (struct ccursor *)cur;
	struct cvtab *vt = (struct cvtab *)cur->pVtab;
	struct graph *g = vt->aux->g;
	const char *name = vt->aux->future ? "causal_future" : "causal_past";
	char msg[160];
	sqlite3_int64 id;

	(void)idxstr;
	c->eof = 1;
	if (idxnum != 1 || argc < 1) {
		snprintf(msg, sizeof(msg), "%s needs an event id: SELECT * FROM %s(ID)", name, name);
		return c_error(&vt->base, msg);
	}
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return SQLITE_OK;
	if (graph_load(g, vt->db))
		return c_error(&vt->base, g->err);
	id = sqlite3_value_int64(argv[0]);
	if (id < 1 || (uint64_t)id > g->total) {
		snprintf(msg, sizeof(msg), "%s: no event with id %lld (ids are 1..%llu)", name,
		         (long long)id, (unsigned long long)g->total);
		return c_error(&vt->base, msg);
	}
	free(c->lo);
	free(c->hi);
	c->lo = malloc(g->np * sizeof(*c->lo));
	c->hi = malloc(g->np * sizeof(*c->hi));
	if (!c->lo || !c->hi)
		return SQLITE_NOMEM;
	c->of = id;
	if (vt->aux->future) {
		if (out_edges(g))
			return SQLITE_NOMEM;
		future(g, (uint64_t)id, c->lo);
		for (size_t x = 0; x < g->np; x++)
			c->hi[x] = g->n[x];
	} else {
		past(g, (uint64_t)id, c->hi);
		for (size_t x = 0; x < g->np; x++)
			c->lo[x] = 1;
	}
	c->p = 0;
	c->k = g->np ? c->lo[0] : 0;
	c_settle(c, g->np);
	return SQLITE_OK;
}

static int c_next(sqlite3_vtab_cursor *cur)
{
	struct ccursor *c = (struct ccursor *)cur;
	struct graph *g = ((struct cvtab *)cur->pVtab)->aux->g;

	c->k++;
	c_settle(c, g->np);
	return SQLITE_OK;
}

static int c_eof(sqlite3_vtab_cursor *cur)
{
	return ((struct ccursor *)cur)->eof;
}

static int c_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i)
{
	struct ccursor *c = (struct ccursor *)cur;
	struct graph *g = ((struct cvtab *)cur->pVtab)->aux->g;

	switch (i) {
	case 0: sqlite3_result_int64(ctx, (sqlite3_int64)(g->base[c->p] + c->k)); break;
	case 1: sqlite3_result_int64(ctx, (sqlite3_int64)c->p); break;
	case 2: sqlite3_result_int64(ctx, (sqlite3_int64)c->k); break;
	default: sqlite3_result_int64(ctx, c->of); break;
	}
	return SQLITE_OK;
}

static int c_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	struct ccursor *c = (struct ccursor *)cur;
	struct graph *g = ((struct cvtab *)cur->pVtab)->aux->g;

	*rowid = (sqlite3_int64)(g->base[c->p] + c->k);
	return SQLITE_OK;
}

static const sqlite3_module causal_module = {
	.iVersion = 0,
	.xCreate = NULL,          /* eponymous only: SELECT * FROM causal_past(ID) */
	.xConnect = c_connect,
	.xBestIndex = c_best,
	.xDisconnect = c_disconnect,
	.xDestroy = c_disconnect,
	.xOpen = c_open,
	.xClose = c_close,
	.xFilter = c_filter,
	.xNext = c_next,
	.xEof = c_eof,
	.xColumn = c_column,
	.xRowid = c_rowid,
};

/* Register everything on db, sharing one graph; returns an SQLite code. */
static int register_all(sqlite3 *db)
{
	struct graph *g = calloc(1, sizeof(*g));
	int rc;

	if (!g)
		return SQLITE_NOMEM;
	g->past.g = g->future.g = g;
	g->future.future = 1;
	g->refs = 4;
	rc = sqlite3_create_function_v2(db, "hb", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, g, fn_hb,
	                                NULL, NULL, graph_release);
	if (rc != SQLITE_OK) {
		free(g);
		return rc;
	}
	rc = sqlite3_create_function_v2(db, "concurrent", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, g,
	                                fn_concurrent, NULL, NULL, graph_release);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_module_v2(db, "causal_past", &causal_module, &g->past,
		                              aux_release);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_module_v2(db, "causal_future", &causal_module, &g->future,
		                              aux_release);
	return rc;
}

#ifndef ANA_SQL_EXTENSION
int ana_sql_register(struct sqlite3 *db)
{
	if (!db)
		return TRACE_EINVAL;
	return register_all(db) == SQLITE_OK ? 0 : TRACE_ENOMEM;
}
#endif
