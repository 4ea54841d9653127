/*
 * sql_func.c: causality inside SQLite (issue #7): hb(a, b), concurrent(a, b) and the
 * table-valued functions causal_past(id) / causal_future(id) over event ids.
 *
 * They need nothing but the database: on first use they read the process table (event id
 * ranges, fork edges) and the message table (send -> receive edges), order the events
 * topologically, and answer hb(a, b) with reachability columns as the analyzer's hb.c does:
 * for the process p of a, col_p[b] is the last event of p that happened before or is b,
 * so hb(a, b) is col_p[b] >= index(a).  When every column fits in ANA_SQL_COLUMN_BYTES they
 * are built together in one pass, stored per event (a vector clock per event: row b holds
 * col_p[b] for every p), which makes hb one memory read and causal_past a row copy.
 * Otherwise a column costs one pass and 4 bytes per event, and as many as fit are kept
 * (least recently used out).
 *
 * Compiled twice: into the analyzer (ana_sql_register) and, with ANA_SQL_EXTENSION defined,
 * into the loadable extension encore_sql.so (sql_ext.c) for any SQLite client.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifndef ANA_SQL_EXTENSION
#include <sqlite3.h>

#include "ana.h"
#endif

#define ANA_SQL_COLUMN_BYTES (512ull << 20)

struct graph;

struct causal_aux {
	struct graph *g;
	int future;
};

struct graph {
	int refs;
	int loaded;                /* 1 loaded, -1 failed (err says why) */
	char err[256];
	size_t np;
	uint64_t total;            /* event ids are 1..total */
	uint64_t *base;            /* per process: id of its event 1, minus one */
	uint64_t *n;               /* per process: events */
	uint32_t *fsrc;            /* per process: id of the parent's fork event, 0 none */
	uint32_t *src;             /* per id: the send its receive depends on, 0 none */
	uint32_t *topo;            /* a linear extension: the process of each step */
	/* reachability columns */
	uint32_t **col;            /* per process, NULL when not built */
	uint64_t *used;
	uint64_t tick;
	size_t ncols, maxcols;
	uint32_t *vc;              /* when all columns fit: vc[id * np + p] = col_p[id] */
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
	free(g->src);
	free(g->topo);
	if (g->col)
		for (size_t p = 0; p < g->np; p++)
			big_free(g->col[p]);
	free(g->col);
	free(g->used);
	free(g->ostart);
	free(g->oedge);
	big_free(g->vc);
	g->vc = NULL;
	g->base = g->n = g->used = NULL;
	g->fsrc = g->src = g->topo = g->ostart = g->oedge = NULL;
	g->col = NULL;
	g->np = 0;
	g->total = 0;
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

static int fail(struct graph *g, const char *msg, const char *detail)
{
	snprintf(g->err, sizeof(g->err), "%s%s%s", msg, detail ? ": " : "", detail ? detail : "");
	g->loaded = -1;
	graph_unload(g);
	return -1;
}

/* A linear extension of happened-before: each process runs until its next event waits for
 * an edge's source; it is woken when that source's process gets there. */
static int order(struct graph *g)
{
	size_t np = g->np;
	uint64_t *pos = calloc(np ? np : 1, sizeof(*pos)), t = 0, *need = NULL;
	size_t *stack = malloc((np ? np : 1) * sizeof(*stack)), top = 0;
	size_t *head = malloc((np ? np : 1) * sizeof(*head)), *next = NULL, *waiton = NULL;
	int rc = 0;

	next = malloc((np ? np : 1) * sizeof(*next));
	waiton = malloc((np ? np : 1) * sizeof(*waiton));
	need = malloc((np ? np : 1) * sizeof(*need));
	if (!pos || !stack || !head || !next || !waiton || !need ||
	    !(g->topo = malloc((g->total ? g->total : 1) * sizeof(*g->topo)))) {
		rc = fail(g, "out of memory ordering the events", NULL);
		goto out;
	}
	for (size_t p = 0; p < np; p++) {
		head[p] = SIZE_MAX;
		stack[top++] = np - 1 - p;
	}
	while (top) {
		size_t p = stack[--top];

		while (pos[p] < g->n[p]) {
			uint64_t j = pos[p] + 1, id = g->base[p] + j, d = g->src[id];
			size_t q;

			if (!d && j == 1)
				d = g->fsrc[p];
			if (d && j == 1 && g->src[id] && g->fsrc[p]) {
				/* two edges: wait for whichever is not done yet */
				size_t qf = proc_of(g, g->fsrc[p]);

				if (g->fsrc[p] - g->base[qf] > pos[qf])
					d = g->fsrc[p];
			}
			if (d) {
				q = proc_of(g, d);
				if (d - g->base[q] > pos[q]) {
					waiton[p] = q;
					need[p] = d - g->base[q];
					next[p] = head[q];
					head[q] = p;
					break;
				}
			}
			pos[p] = j;
			g->topo[t++] = (uint32_t)p;
		}
		/* wake the processes that waited for p to get this far */
		for (size_t *w = &head[p]; *w != SIZE_MAX;) {
			size_t r = *w;

			if (need[r] <= pos[p]) {
				*w = next[r];
				stack[top++] = r;
			} else {
				w = &next[r];
			}
		}
	}
	if (t != g->total)
		rc = fail(g, "the message table contradicts program order (a cycle of messages)",
		          NULL);
out:
	free(pos);
	free(stack);
	free(head);
	free(next);
	free(waiton);
	free(need);
	return rc;
}

/* Every column at once, one pass over the linear extension: row id = max(row of the previous
 * event of its process, rows of its edges' sources), then its own entry. */
static void vclocks(struct graph *g)
{
	size_t np = g->np;
	uint64_t *pos = calloc(np, sizeof(*pos));
	uint32_t *vc = big_alloc((g->total + 1) * np * sizeof(*vc));

	if (!pos || !vc) {
		free(pos);
		big_free(vc);
		return;
	}
	for (uint64_t t = 0; t < g->total; t++) {
		uint32_t q = g->topo[t];
		uint64_t j = ++pos[q], id = g->base[q] + j;
		uint32_t *row = vc + id * np;
		const uint32_t *a = NULL, *b = NULL;

		if (j > 1)
			memcpy(row, row - np, np * sizeof(*row));
		else
			memset(row, 0, np * sizeof(*row));
		if (j == 1 && g->fsrc[q])
			a = vc + (uint64_t)g->fsrc[q] * np;
		if (g->src[id])
			b = vc + (uint64_t)g->src[id] * np;
		for (size_t x = 0; a && x < np; x++)
			if (a[x] > row[x])
				row[x] = a[x];
		for (size_t x = 0; b && x < np; x++)
			if (b[x] > row[x])
				row[x] = b[x];
		row[q] = (uint32_t)j;
	}
	free(pos);
	g->vc = vc;
}

static int graph_load(struct graph *g, sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	uint64_t total = 0;
	size_t np = 0, i = 0;
	int rc;

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
	if (total >= UINT32_MAX) {
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
	g->src = calloc(total + 2, sizeof(*g->src));
	if (!g->base || !g->n || !g->fsrc || !g->col || !g->used || !g->src) {
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
	if (sqlite3_prepare_v2(db, "SELECT send, recv FROM message", -1, &st, NULL) != SQLITE_OK) {
		fail(g, "reading the message table", sqlite3_errmsg(db));
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t s = sqlite3_column_int64(st, 0), r = sqlite3_column_int64(st, 1);

		if (s < 1 || r < 1 || (uint64_t)s > total || (uint64_t)r > total) {
			fail(g, "message names an event that does not exist", NULL);
			goto out;
		}
		g->src[r] = (uint32_t)s;
	}
	if (rc != SQLITE_DONE) {
		fail(g, "reading the message table", sqlite3_errmsg(db));
		goto out;
	}
	sqlite3_finalize(st);
	st = NULL;
	{
		/* ENCORE_SQL_MEMORY (bytes) lowers the budget: tests use it to exercise columns */
		const char *env = getenv("ENCORE_SQL_MEMORY");
		uint64_t budget = env ? strtoull(env, NULL, 0) : ANA_SQL_COLUMN_BYTES;

		g->maxcols = (size_t)(budget / (4 * (total + 1)));
		if (g->maxcols < 4)
			g->maxcols = 4;
		if (order(g))
			goto out;
		if (np && (uint64_t)np * (total + 1) * 4 <= budget)
			vclocks(g); /* else (or out of memory) columns one by one, on demand */
	}
	g->loaded = 1;
out:
	sqlite3_finalize(st);
	return g->loaded > 0 ? 0 : -1;
}

/* The reachability column of process c (hb.c's column()). */
static const uint32_t *column(struct graph *g, size_t c)
{
	uint64_t *pos;
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
	} else if (!(col = big_alloc((g->total + 1) * sizeof(*col)))) {
		return NULL;
	}
	if (!(pos = calloc(g->np ? g->np : 1, sizeof(*pos)))) {
		big_free(col);
		return NULL;
	}
	col[0] = 0;
	for (uint64_t t = 0; t < g->total; t++) {
		uint32_t q = g->topo[t];
		uint64_t j = ++pos[q], id = g->base[q] + j;
		uint32_t v;

		if (q == c) {
			v = (uint32_t)j;
		} else {
			v = j > 1 ? col[id - 1] : 0;
			if (j == 1 && g->fsrc[q] && col[g->fsrc[q]] > v)
				v = col[g->fsrc[q]];
			if (g->src[id] && col[g->src[id]] > v)
				v = col[g->src[id]];
		}
		col[id] = v;
	}
	free(pos);
	g->col[c] = col;
	g->used[c] = ++g->tick;
	g->ncols++;
	return col;
}

/* 1/0, or -1 with an error on ctx. */
static int hb_ids(sqlite3_context *ctx, struct graph *g, sqlite3_int64 a, sqlite3_int64 b)
{
	const uint32_t *col;
	size_t p, q;

	if (a < 1 || b < 1 || (uint64_t)a > g->total || (uint64_t)b > g->total) {
		char msg[128];

		snprintf(msg, sizeof(msg), "no event with id %lld (ids are 1..%llu)",
		         (long long)(a < 1 || (uint64_t)a > g->total ? a : b),
		         (unsigned long long)g->total);
		sqlite3_result_error(ctx, msg, -1);
		return -1;
	}
	p = proc_of(g, (uint64_t)a);
	if (g->vc)
		return g->vc[(uint64_t)b * g->np + p] >= (uint64_t)a - g->base[p] && a != b;
	q = proc_of(g, (uint64_t)b);
	if (p == q)
		return a < b;
	if (!(col = column(g, p))) {
		sqlite3_result_error_nomem(ctx);
		return -1;
	}
	return col[b] >= (uint64_t)a - g->base[p];
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

	if (g->ostart)
		return 0;
	if (!(g->ostart = calloc(total + 2, sizeof(*g->ostart))))
		return -1;
	for (uint64_t id = 1; id <= total; id++)
		if (g->src[id])
			g->ostart[g->src[id]]++, m++;
	for (size_t p = 0; p < g->np; p++)
		if (g->fsrc[p] && g->n[p])
			g->ostart[g->fsrc[p]]++, m++;
	/* prefix sums: edges of id are oedge[ostart[id] .. ostart[id+1]) */
	for (uint64_t id = 0, sum = 0; id <= total + 1; id++) {
		uint64_t c = g->ostart[id];

		g->ostart[id] = (uint32_t)sum;
		sum += c;
	}
	if (!(g->oedge = malloc((m ? m : 1) * sizeof(*g->oedge)))) {
		free(g->ostart);
		g->ostart = NULL;
		return -1;
	}
	{
		uint32_t *fill = malloc((total + 2) * sizeof(*fill));

		if (!fill) {
			free(g->ostart);
			free(g->oedge);
			g->ostart = g->oedge = NULL;
			return -1;
		}
		memcpy(fill, g->ostart, (total + 2) * sizeof(*fill));
		for (uint64_t id = 1; id <= total; id++)
			if (g->src[id])
				g->oedge[fill[g->src[id]]++] = (uint32_t)id;
		for (size_t p = 0; p < g->np; p++)
			if (g->fsrc[p] && g->n[p])
				g->oedge[fill[g->fsrc[p]]++] = (uint32_t)(g->base[p] + 1);
		free(fill);
	}
	return 0;
}

/* Past of b: per process the last event that happened before b (a closure over in-edges,
 * linear in the events it covers). */
static void past(struct graph *g, uint64_t b, uint64_t *cut)
{
	size_t q = proc_of(g, b), np = g->np;
	uint64_t *scanned = calloc(np, sizeof(*scanned));
	int changed = 1;

	if (g->vc) {
		for (size_t x = 0; x < np; x++)
			cut[x] = g->vc[b * np + x];
		cut[q]--;
		free(scanned);
		return;
	}
	memset(cut, 0, np * sizeof(*cut));
	if (!scanned)
		return;
	cut[q] = b - g->base[q]; /* b's own in-edges count; b itself is dropped below */
	while (changed) {
		changed = 0;
		for (size_t x = 0; x < np; x++)
			while (scanned[x] < cut[x]) {
				uint64_t k = ++scanned[x], id = g->base[x] + k, d[2];

				d[0] = g->src[id];
				d[1] = k == 1 ? g->fsrc[x] : 0;
				for (int e = 0; e < 2; e++) {
					size_t y;

					if (!d[e])
						continue;
					y = proc_of(g, d[e]);
					if (d[e] - g->base[y] > cut[y]) {
						cut[y] = d[e] - g->base[y];
						changed = 1;
					}
				}
			}
	}
	cut[q]--;
	free(scanned);
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
