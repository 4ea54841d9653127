/*
 * sql.c: a session into SQLite.  Fills the schema of schemas/trace.sql from the
 * analyzer's model (processes, matched channels, messages, races) and, when the session
 * directory is at hand, from a second pass over the trace files for what the model does not
 * keep (times, errno, fds, libc calls, recorded values, frames, process metadata).  Also the
 * cache `encore sql` keeps inside a session directory, stamped with the traces' sizes and
 * modification times, the schema and the analyzer's model version.  The causality functions are in sql_func.c.
 *
 * Speed: one transaction with its journal in memory, 16 KiB pages; the bulk tables (events,
 * messages, marks, inputs, races) filled 1024 rows per `INSERT ... SELECT` from a virtual
 * table over a C array (no bind call per value), event ids appended rather than sought;
 * message races and the stability graph computed by the analyzer in a second thread while
 * the events go in; the few indexes built after the rows.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "ana_internal.h"
#include "sqldb.h"
#include "stab.h"
#include "sql_schema.h"

/* Flag bit of event.flags beyond TRACE_FL_*: this signal killed the process. */
#define SQL_FL_FATAL 0x100u

const char *ana_sql_schema(void)
{
	return ana_sql_schema_text;
}

static int sql_fail(sqlite3 *db, struct trace_diag *diag, const char *what)
{
	ana__diag(diag, TRACE_EIO, "SQLite: %s: %s", what, db ? sqlite3_errmsg(db) : "no database");
	return TRACE_EIO;
}

/* Single-row statements; events, messages, marks, inputs and races go in batches (below). */
enum {
	ST_PROC, ST_CHANNEL, ST_STACK, ST_FRAME, ST_WARN, ST_META, ST_NODE, ST_PRE, ST_POST,
	ST_CONN, ST_DEP, ST_N
};

static const char *const st_sql[ST_N] = {
	"INSERT INTO process VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	"INSERT INTO channel VALUES (?,?,?,?,?,?,?,?,?,?)",
	"INSERT INTO stack VALUES (?,?,?,?,?)",
	"INSERT INTO frame VALUES (?,?,?,?,?,?)",
	"INSERT INTO warning VALUES (?,?)",
	"INSERT OR REPLACE INTO meta VALUES (?,?)",
	"INSERT INTO site_node VALUES (?,?,?,?,?,?)",
	"INSERT INTO pre_set VALUES (?,?)",
	"INSERT INTO post_set VALUES (?,?,?)",
	"INSERT INTO connection VALUES (?,?,?)",
	"INSERT INTO dependency VALUES (?,?,?)",
};

/* Rows per INSERT of the bulk tables (events, messages, marks, inputs, races). */
#define SQL_BATCH 1024

enum { V_NULL, V_INT, V_TEXT, V_BLOB };

struct sqlval {
	int64_t i;          /* V_INT: the value; V_BLOB: its offset in the batch's bytes */
	const char *t;      /* V_TEXT: static text (kind and call names, interned keys) */
	int type;
	uint32_t len;       /* V_BLOB: its length */
};

/* The bulk tables are filled by `INSERT INTO t SELECT * FROM encore_fill_t`, where
 * encore_fill_t is a virtual table (registered on the connection for the load only) that
 * returns the SQL_BATCH rows gathered in v: no bind calls and no VALUES coroutine per row,
 * about a third fewer instructions per row than binding 32-row INSERTs. */
struct batch {
	const char *table;
	char module[48];
	int ncol, n;
	sqlite3 *db;
	sqlite3_stmt *ins;   /* INSERT INTO table SELECT * FROM module */
	struct sqlval *v;    /* SQL_BATCH * ncol values */
	uint8_t *bytes;      /* the blobs' copies (the reader's buffers do not last) */
	size_t nbytes, capbytes;
};

/* A batch is flushed early when its blobs pass this many bytes. */
#define SQL_BATCH_BYTES ((size_t)16 << 20)

struct filler {
	struct batch ev, msg, mark, input;
	sqlite3 *db;
	struct ana_session *s;
	sqlite3_stmt *st[ST_N];
	uint64_t *first;          /* per process: event id of its event 1 */
	int64_t last_ev;          /* the last event id inserted */
	int64_t nstacks;
	uint64_t done, total;
	const struct ana_db_progress *progress;
	struct trace_diag *diag;
	/* per process while reading its traces: site -> stack id */
	uint32_t *sitekey;
	int64_t *siteval;
	size_t sitecap, nsites;
};

struct bvtab {
	sqlite3_vtab base;
	struct batch *b;
};

struct bcursor {
	sqlite3_vtab_cursor base;
	int row;
};

static int bv_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                      sqlite3_vtab **out, char **err)
{
	struct batch *b = aux;
	char decl[256];
	struct bvtab *vt;
	int o, rc;

	(void)argc;
	(void)argv;
	(void)err;
	o = snprintf(decl, sizeof(decl), "CREATE TABLE x(");
	for (int c = 0; c < b->ncol && o < (int)sizeof(decl) - 8; c++)
		o += snprintf(decl + o, sizeof(decl) - (size_t)o, "%sc%d", c ? "," : "", c);
	snprintf(decl + o, sizeof(decl) - (size_t)o, ")");
	if ((rc = sqlite3_declare_vtab(db, decl)) != SQLITE_OK)
		return rc;
	if (!(vt = sqlite3_malloc(sizeof(*vt))))
		return SQLITE_NOMEM;
	memset(vt, 0, sizeof(*vt));
	vt->b = b;
	*out = &vt->base;
	return SQLITE_OK;
}

static int bv_disconnect(sqlite3_vtab *vt)
{
	sqlite3_free(vt);
	return SQLITE_OK;
}

static int bv_best(sqlite3_vtab *vt, sqlite3_index_info *info)
{
	(void)vt;
	info->estimatedCost = SQL_BATCH;
	info->estimatedRows = SQL_BATCH;
	return SQLITE_OK;
}

static int bv_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
	struct bcursor *c = sqlite3_malloc(sizeof(*c));

	(void)vt;
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	*out = &c->base;
	return SQLITE_OK;
}

static int bv_close(sqlite3_vtab_cursor *cur)
{
	sqlite3_free(cur);
	return SQLITE_OK;
}

static int bv_filter(sqlite3_vtab_cursor *cur, int idxnum, const char *idxstr, int argc,
                     sqlite3_value **argv)
{
	(void)idxnum;
	(void)idxstr;
	(void)argc;
	(void)argv;
	((struct bcursor *)cur)->row = 0;
	return SQLITE_OK;
}

static int bv_next(sqlite3_vtab_cursor *cur)
{
	((struct bcursor *)cur)->row++;
	return SQLITE_OK;
}

static int bv_eof(sqlite3_vtab_cursor *cur)
{
	const struct bcursor *c = (const struct bcursor *)cur;

	return c->row >= ((const struct bvtab *)cur->pVtab)->b->n;
}

static int bv_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i)
{
	const struct bcursor *c = (const struct bcursor *)cur;
	const struct batch *b = ((const struct bvtab *)cur->pVtab)->b;
	const struct sqlval *v = &b->v[(size_t)c->row * (size_t)b->ncol + (size_t)i];

	if (v->type == V_INT)
		sqlite3_result_int64(ctx, v->i);
	else if (v->type == V_TEXT)
		sqlite3_result_text(ctx, v->t, -1, SQLITE_STATIC);
	else if (v->type == V_BLOB)
		sqlite3_result_blob(ctx, b->bytes + v->i, (int)v->len, SQLITE_STATIC);
	/* else NULL, what the column holds before xColumn */
	return SQLITE_OK;
}

static int bv_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = ((const struct bcursor *)cur)->row;
	return SQLITE_OK;
}

static const sqlite3_module batch_module = {
	.iVersion = 0,
	.xCreate = NULL,          /* eponymous only */
	.xConnect = bv_connect,
	.xBestIndex = bv_best,
	.xDisconnect = bv_disconnect,
	.xDestroy = bv_disconnect,
	.xOpen = bv_open,
	.xClose = bv_close,
	.xFilter = bv_filter,
	.xNext = bv_next,
	.xEof = bv_eof,
	.xColumn = bv_column,
	.xRowid = bv_rowid,
};

static int batch_init(struct filler *f, struct batch *b, const char *table, int ncol)
{
	char sql[160];

	b->table = table;
	b->ncol = ncol;
	b->n = 0;
	b->db = f->db;
	snprintf(b->module, sizeof(b->module), "encore_fill_%s", table);
	if (!(b->v = calloc((size_t)SQL_BATCH * (size_t)ncol, sizeof(*b->v))))
		return TRACE_ENOMEM;
	if (sqlite3_create_module_v2(f->db, b->module, &batch_module, b, NULL) != SQLITE_OK)
		return sql_fail(f->db, f->diag, "registering the loader's row source");
	snprintf(sql, sizeof(sql), "INSERT INTO %s SELECT * FROM %s", table, b->module);
	if (sqlite3_prepare_v2(f->db, sql, -1, &b->ins, NULL) != SQLITE_OK)
		return sql_fail(f->db, f->diag, sql);
	return 0;
}

static struct sqlval *batch_row(struct batch *b)
{
	return b->v + (size_t)b->n * (size_t)b->ncol;
}

static int batch_flush(struct filler *f, struct batch *b)
{
	int rc = 0;

	if (!b->n)
		return 0;
	if (sqlite3_step(b->ins) != SQLITE_DONE)
		rc = sql_fail(f->db, f->diag, b->table);
	sqlite3_reset(b->ins);
	b->n = 0;
	b->nbytes = 0;
	return rc;
}

static int batch_add(struct filler *f, struct batch *b)
{
	return ++b->n == SQL_BATCH || b->nbytes > SQL_BATCH_BYTES ? batch_flush(f, b) : 0;
}

/* v holds a copy of data[0..len) until the batch is flushed. */
static int vblob(struct batch *b, struct sqlval *v, const void *data, uint32_t len)
{
	if (!b->bytes || b->nbytes + len > b->capbytes) {
		size_t nc = b->capbytes ? b->capbytes : 65536;
		uint8_t *nb;

		while (nc < b->nbytes + len)
			nc *= 2;
		if (!(nb = realloc(b->bytes, nc)))
			return TRACE_ENOMEM;
		b->bytes = nb;
		b->capbytes = nc;
	}
	if (len)
		memcpy(b->bytes + b->nbytes, data, len);
	v->type = V_BLOB;
	v->i = (int64_t)b->nbytes;
	v->len = len;
	b->nbytes += len;
	return 0;
}

/* Unregisters the row source (a NULL module drops it): nothing of the load stays on db. */
static void batch_free(struct batch *b)
{
	sqlite3_finalize(b->ins);
	b->ins = NULL;
	if (b->db)
		sqlite3_create_module_v2(b->db, b->module, NULL, NULL, NULL);
	b->db = NULL;
	free(b->v);
	b->v = NULL;
	free(b->bytes);
	b->bytes = NULL;
}

static void vint(struct sqlval *v, int64_t x)
{
	v->type = V_INT;
	v->i = x;
}

static void vnull(struct sqlval *v)
{
	v->type = V_NULL;
}

static void vtext(struct sqlval *v, const char *t)
{
	v->type = V_TEXT;
	v->t = t;
}

static int step(struct filler *f, int which, const char *what)
{
	sqlite3_stmt *st = f->st[which];
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return sql_fail(f->db, f->diag, what);
	return 0;
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void bind_static(sqlite3_stmt *st, int i, const char *s)
{
	sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
}

static void tick(struct filler *f)
{
	if (++f->done % 65536 == 0 && f->progress && f->progress->fn)
		f->progress->fn(f->progress->ctx, f->done, f->total);
}

/* ---------------------------------------------------------------------------------------
 * Stacks: ids are global, per (process, site).
 */
static int site_find(struct filler *f, uint32_t site, int64_t *id)
{
	if (!f->sitecap)
		return 0;
	for (size_t i = (site * 2654435761u) & (f->sitecap - 1);; i = (i + 1) & (f->sitecap - 1)) {
		if (f->siteval[i] == 0)
			return 0;
		if (f->sitekey[i] == site) {
			*id = f->siteval[i];
			return 1;
		}
	}
}

static int site_put(struct filler *f, uint32_t site, int64_t id)
{
	if (2 * (f->nsites + 1) > f->sitecap) {
		size_t nc = f->sitecap ? f->sitecap * 2 : 64;
		uint32_t *nk = calloc(nc, sizeof(*nk));
		int64_t *nv = calloc(nc, sizeof(*nv));

		if (!nk || !nv) {
			free(nk);
			free(nv);
			return TRACE_ENOMEM;
		}
		for (size_t i = 0; i < f->sitecap; i++) {
			size_t j;

			if (!f->siteval[i])
				continue;
			for (j = (f->sitekey[i] * 2654435761u) & (nc - 1); nv[j]; j = (j + 1) & (nc - 1))
				;
			nk[j] = f->sitekey[i];
			nv[j] = f->siteval[i];
		}
		free(f->sitekey);
		free(f->siteval);
		f->sitekey = nk;
		f->siteval = nv;
		f->sitecap = nc;
	}
	size_t j;

	for (j = (site * 2654435761u) & (f->sitecap - 1); f->siteval[j];
	     j = (j + 1) & (f->sitecap - 1))
		;
	f->sitekey[j] = site;
	f->siteval[j] = id;
	f->nsites++;
	return 0;
}

static void site_reset(struct filler *f)
{
	if (f->sitecap)
		memset(f->siteval, 0, f->sitecap * sizeof(*f->siteval));
	f->nsites = 0;
}

/* The stack id of `site` in process p, inserting the stack and its frames the first time.
 * `ts` (from the trace reader) gives full frames; without it the model's function names. */
static int stack_id(struct filler *f, size_t p, uint32_t site, const struct trace_stack *ts,
                    int64_t *out)
{
	sqlite3_stmt *st = f->st[ST_STACK], *fr = f->st[ST_FRAME];
	const struct ana_stackrec *sr = NULL;
	uint32_t nframes;
	int64_t id;
	int rc;

	*out = 0;
	if (!site)
		return 0;
	if (site_find(f, site, out))
		return 0;
	if (!ts)
		sr = ana__stack(f->s, p, site);
	nframes = ts ? ts->nframes : sr ? sr->nframes : 0;
	id = ++f->nstacks;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, (int64_t)p);
	sqlite3_bind_int64(st, 3, site);
	sqlite3_bind_int64(st, 4, nframes);
	if (ts && nframes)
		bind_text(st, 5, ts->frames[0].function);
	else if (sr && nframes)
		bind_text(st, 5, sr->fn[0]);
	else
		sqlite3_bind_null(st, 5);
	if ((rc = step(f, ST_STACK, "inserting a stack")))
		return rc;
	for (uint32_t i = 0; i < nframes; i++) {
		sqlite3_bind_int64(fr, 1, id);
		sqlite3_bind_int64(fr, 2, i);
		if (ts) {
			bind_text(fr, 3, ts->frames[i].function);
			bind_text(fr, 4, ts->frames[i].object);
			sqlite3_bind_int64(fr, 5, (int64_t)ts->frames[i].pc);
			sqlite3_bind_int64(fr, 6, (int64_t)ts->frames[i].offset);
		} else {
			bind_text(fr, 3, sr->fn[i]);
			sqlite3_bind_null(fr, 4);
			sqlite3_bind_null(fr, 5);
			sqlite3_bind_null(fr, 6);
		}
		if ((rc = step(f, ST_FRAME, "inserting a frame")))
			return rc;
	}
	if ((rc = site_put(f, site, id)))
		return rc;
	*out = id;
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * Events.  `tev` is the event as the trace reader returned it, NULL for a session built in
 * memory (then only the model's fields are known).
 */
static int is_input_kind(uint32_t kind)
{
	return kind == TRACE_EV_INPUT || kind == TRACE_EV_CLOCK || kind == TRACE_EV_RANDOM ||
	       kind == TRACE_EV_READY;
}

/* A clock value as nanoseconds: timespec (clock_gettime), timeval (gettimeofday) or the
 * result of time().  Returns 0 when the value is not a clock reading. */
static int clock_ns(const struct trace_event *tev, int64_t *ns)
{
	int64_t a, b;

	if (tev->call == TRACE_CALL_TIME && tev->result >= 0) {
		*ns = tev->result * 1000000000;
		return 1;
	}
	if (!tev->data || tev->data_len != 16)
		return 0;
	memcpy(&a, tev->data, 8);
	memcpy(&b, tev->data + 8, 8);
	*ns = a * 1000000000 + (tev->call == TRACE_CALL_GETTIMEOFDAY ? b * 1000 : b);
	return 1;
}

/* The event table's row of (p, k), event id `id`. */
static int put_event_row(struct filler *f, size_t p, uint64_t k, int64_t id,
                         const struct trace_event *tev, uint32_t image, int64_t site)
{
	struct ana_session *s = f->s;
	const struct ana_ev *e = ana__ev(s, p, k);
	uint32_t kind = e->kind, flags = e->flags;
	struct sqlval *v;

	if (kind == TRACE_EV_SIGNAL && e->fatal)
		flags |= SQL_FL_FATAL;
	v = batch_row(&f->ev);
	/* NULL for the next id in line: SQLite then appends at max(id) + 1 without the seek an
	 * explicit key costs; an id after a gap (dropped events) is given */
	if (id == f->last_ev + 1)
		vnull(&v[0]);
	else
		vint(&v[0], id);
	f->last_ev = id;
	vint(&v[1], (int64_t)p);
	vint(&v[2], (int64_t)k);
	vtext(&v[3], trace_kind_name(kind));
	if (tev && tev->call)
		vtext(&v[4], trace_call_name(tev->call));
	else
		vnull(&v[4]);
	if (tev && tev->fd >= 0)
		vint(&v[5], tev->fd);
	else
		vnull(&v[5]);
	if (kind != TRACE_EV_MARK && e->chan) {
		uint32_t end = ana__end_lookup(s, (uint32_t)p, e->chan);

		if (end != ANA_NONE)
			vint(&v[6], (int64_t)end + 1);
		else
			vnull(&v[6]);
	} else {
		vnull(&v[6]);
	}
	if (kind == TRACE_EV_SEND || kind == TRACE_EV_RECV || kind == TRACE_EV_INPUT) {
		vint(&v[7], (int64_t)e->offset);
		vint(&v[8], tev ? (int64_t)tev->len : e->result > 0 ? e->result : 0);
	} else {
		vnull(&v[7]);
		vnull(&v[8]);
	}
	vint(&v[9], e->result);
	if (tev)
		vint(&v[10], tev->err);
	else
		vnull(&v[10]);
	vint(&v[11], flags);
	if (kind == TRACE_EV_RECV)
		vint(&v[12], e->external);
	else
		vnull(&v[12]);
	if (site)
		vint(&v[13], site);
	else
		vnull(&v[13]);
	if (tev && tev->time_ns)
		vint(&v[14], (int64_t)tev->time_ns);
	else
		vnull(&v[14]);
	if (tev) {
		vint(&v[15], image);
		vint(&v[16], tev->thread);
	} else {
		vnull(&v[15]);
		vnull(&v[16]);
	}
	return batch_add(f, &f->ev);
}

/* A mark's row in the mark table, an input's in the input table. */
static int put_mark_or_input(struct filler *f, size_t p, uint64_t k, int64_t id,
                             const struct trace_event *tev)
{
	struct ana_session *s = f->s;
	const struct ana_ev *e = ana__ev(s, p, k);
	uint32_t kind = e->kind;
	int rc;

	if (kind == TRACE_EV_MARK) {
		struct sqlval *m = batch_row(&f->mark);

		vint(&m[0], id);
		vint(&m[1], (int64_t)p);
		vint(&m[2], (int64_t)k);
		vtext(&m[3], e->chan < s->nkeys ? s->keys[e->chan] : "");
		vint(&m[4], e->result);
		return batch_add(f, &f->mark);
	}
	if (is_input_kind(kind) && tev) {
		struct sqlval *in = batch_row(&f->input);
		int64_t ns;

		vint(&in[0], id);
		vint(&in[1], (int64_t)p);
		vint(&in[2], (int64_t)k);
		vtext(&in[3], trace_kind_name(kind));
		if (tev->data) {
			vint(&in[4], tev->data_len);
			if ((rc = vblob(&f->input, &in[5], tev->data, tev->data_len)))
				return rc;
		} else {
			vnull(&in[4]);
			vnull(&in[5]);
		}
		if (kind == TRACE_EV_CLOCK && clock_ns(tev, &ns))
			vint(&in[6], ns);
		else if (kind == TRACE_EV_RANDOM || kind == TRACE_EV_READY || kind == TRACE_EV_INPUT)
			vint(&in[6], e->result);
		else
			vnull(&in[6]);
		return batch_add(f, &f->input);
	}
	return 0;
}

/* An accept's row in the connection table: the connect it took, a happened-before edge
 * like a message's. */
static int put_connection(struct filler *f, size_t p, const struct ana_ev *e, int64_t id)
{
	sqlite3_stmt *cn = f->st[ST_CONN];
	uint32_t end = e->chan ? ana__end_lookup(f->s, (uint32_t)p, e->chan) : ANA_NONE;

	sqlite3_bind_int64(cn, 1, id);
	sqlite3_bind_int64(cn, 2, (int64_t)(f->first[e->src_proc] + e->src_idx - 1));
	if (end != ANA_NONE)
		sqlite3_bind_int64(cn, 3, (int64_t)end + 1);
	else
		sqlite3_bind_null(cn, 3);
	return step(f, ST_CONN, "inserting a connection");
}

/* The analyzer's other edges into (p, k) (edges.c) in the dependency table: an end of file
 * after the writers' releases, a send into a full pipe after the receive that made room, a
 * signal's handler run after the kill that caused it ("signal"); an
 * in-edge of another kind (in its source slot) is named after the event's kind. */
static int put_deps(struct filler *f, size_t p, uint64_t k, const struct ana_ev *e, int64_t id)
{
	struct ana_session *s = f->s;
	uint32_t kind = e->kind;
	const char *dk = kind == TRACE_EV_SEND ? "room"
	                 : kind == TRACE_EV_RECV && e->eof ? "eof"
	                 : kind == TRACE_EV_HANDLER ? "signal" : trace_kind_name(kind);
	size_t nx = 0;
	const struct ana_xedge *x = e->xin ? ana__xedges(s->xin, s->nxin, (uint32_t)p, k, &nx)
	                                   : NULL;
	int rc;

	for (size_t i = 0; i <= nx; i++) {
		sqlite3_stmt *dp = f->st[ST_DEP];
		uint32_t oq, oi;

		if (i < nx) {
			if (x[i].oproc == ANA_NONE)
				continue; /* given way to break a cycle (a warning says so) */
			oq = x[i].oproc;
			oi = x[i].oidx;
		} else if (ana__in_edge(e) && kind != TRACE_EV_RECV && kind != TRACE_EV_ACCEPT) {
			oq = e->src_proc;
			oi = e->src_idx;
		} else {
			break;
		}
		sqlite3_bind_int64(dp, 1, id);
		sqlite3_bind_int64(dp, 2, (int64_t)(f->first[oq] + oi - 1));
		bind_static(dp, 3, dk);
		if ((rc = step(f, ST_DEP, "inserting a dependency")))
			return rc;
	}
	return 0;
}

/* A linked receive's row in the message table. */
static int put_message(struct filler *f, size_t p, const struct ana_ev *e, int64_t id)
{
	struct sqlval *m = batch_row(&f->msg);
	uint32_t end = e->chan ? ana__end_lookup(f->s, (uint32_t)p, e->chan) : ANA_NONE;

	vint(&m[0], id);
	vint(&m[1], (int64_t)(f->first[e->src_proc] + e->src_idx - 1));
	vint(&m[2], id);
	if (end != ANA_NONE)
		vint(&m[3], (int64_t)end + 1);
	else
		vnull(&m[3]);
	vint(&m[4], (int64_t)e->offset);
	vint(&m[5], e->result);
	vint(&m[6], (e->flags & TRACE_FL_PEEK) ? 1 : 0);
	return batch_add(f, &f->msg);
}

static int put_event(struct filler *f, size_t p, uint64_t k, const struct trace_event *tev,
                     uint32_t image, const struct trace_stack *ts)
{
	const struct ana_ev *e = ana__ev(f->s, p, k);
	int64_t id = (int64_t)(f->first[p] + k - 1), site = 0;
	uint32_t kind = e->kind;
	int rc;

	if (e->site && (rc = stack_id(f, p, e->site, ts, &site)))
		return rc;
	if ((rc = put_event_row(f, p, k, id, tev, image, site)))
		return rc;
	tick(f);
	if ((rc = put_mark_or_input(f, p, k, id, tev)))
		return rc;
	if (kind == TRACE_EV_ACCEPT && e->src_proc != ANA_NONE &&
	    (rc = put_connection(f, p, e, id)))
		return rc;
	if ((e->xin || (ana__in_edge(e) && kind != TRACE_EV_RECV && kind != TRACE_EV_ACCEPT)) &&
	    (rc = put_deps(f, p, k, e, id)))
		return rc;
	if (kind == TRACE_EV_RECV && e->src_proc != ANA_NONE && (rc = put_message(f, p, e, id)))
		return rc;
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * Processes.
 */
static int put_process(struct filler *f, size_t p, const struct trace_process *tp,
                       uint32_t images)
{
	struct ana_session *s = f->s;
	const struct ana_proc *pr = &s->procs[p];
	sqlite3_stmt *st = f->st[ST_PROC];
	int rc;

	sqlite3_bind_int64(st, 1, (int64_t)p);
	bind_text(st, 2, pr->name);
	if (pr->fparent != ANA_NONE) {
		sqlite3_bind_int64(st, 3, pr->fparent);
		sqlite3_bind_int64(st, 5, (int64_t)(f->first[pr->fparent] + pr->fidx - 1));
	} else {
		sqlite3_bind_null(st, 3);
		sqlite3_bind_null(st, 5);
	}
	bind_text(st, 4, pr->parent && pr->parent[0] ? pr->parent : NULL);
	if (tp) {
		char *argv = NULL, hex[2 * sizeof(tp->build_id) + 1];
		size_t cap = 3, used = 0;

		sqlite3_bind_int64(st, 6, tp->pid);
		sqlite3_bind_int64(st, 7, tp->ppid);
		bind_text(st, 8, tp->host);
		bind_text(st, 9, tp->host_id);
		bind_text(st, 10, tp->exe);
		/* argv as a JSON array of strings */
		for (uint32_t i = 0; i < tp->argc; i++)
			cap += 6 * strlen(tp->argv[i] ? tp->argv[i] : "") + 3;
		if (!(argv = malloc(cap)))
			return TRACE_ENOMEM;
		argv[used++] = '[';
		for (uint32_t i = 0; i < tp->argc; i++) {
			const unsigned char *c = (const unsigned char *)(tp->argv[i] ? tp->argv[i] : "");

			if (i)
				argv[used++] = ',';
			argv[used++] = '"';
			for (; *c; c++) {
				if (*c == '"' || *c == '\\') {
					argv[used++] = '\\';
					argv[used++] = (char)*c;
				} else if (*c < 0x20) {
					used += (size_t)snprintf(argv + used, cap - used, "\\u%04x", *c);
				} else {
					argv[used++] = (char)*c;
				}
			}
			argv[used++] = '"';
		}
		argv[used++] = ']';
		sqlite3_bind_text(st, 11, argv, (int)used, free);
		bind_text(st, 12, tp->cwd);
		for (uint32_t i = 0; i < tp->build_id_len && i < sizeof(tp->build_id); i++)
			snprintf(hex + 2 * i, 3, "%02x", tp->build_id[i]);
		hex[2 * (tp->build_id_len < sizeof(tp->build_id) ? tp->build_id_len
		                                                  : sizeof(tp->build_id))] = '\0';
		bind_text(st, 13, hex[0] ? hex : NULL);
		sqlite3_bind_int64(st, 14, (int64_t)tp->start_realtime_ns);
	} else {
		if (pr->pid)
			sqlite3_bind_int64(st, 6, pr->pid);
		else
			sqlite3_bind_null(st, 6);
		for (int i = 7; i <= 14; i++)
			sqlite3_bind_null(st, i);
		if (pr->host_id[0])
			bind_text(st, 9, pr->host_id);
	}
	sqlite3_bind_int64(st, 15, images);
	sqlite3_bind_int64(st, 16, (int64_t)f->first[p]);
	sqlite3_bind_int64(st, 17, (int64_t)pr->n);
	sqlite3_bind_int64(st, 18, pr->threads);
	if ((rc = step(f, ST_PROC, "inserting a process")))
		return rc;
	return 0;
}

/* Every event of process p from the model alone. */
static int fill_proc_model(struct filler *f, size_t p)
{
	int rc;

	if ((rc = put_process(f, p, NULL, 0)))
		return rc;
	for (uint64_t k = 1; k <= f->s->procs[p].n; k++)
		if ((rc = put_event(f, p, k, NULL, 0, NULL)))
			return rc;
	return 0;
}

/* Process p from its trace files, numbering events as ana_load did (load.c): a gap in the
 * indices (events dropped by the disk budget) leaves no rows; an image that repeats indices
 * is numbered on. */
static int fill_proc_files(struct filler *f, size_t p, const char *const *paths, size_t nf)
{
	uint64_t cur = 0, n = f->s->procs[p].n;
	int rc = 0;

	for (size_t i = 0; i < nf; i++) {
		struct trace_reader *r = NULL;
		struct trace_event ev;

		site_reset(f); /* call-site ids are per trace file: an exec'd image has its own */

		if ((rc = trace_reader_open(paths[i], &r, f->diag)))
			return rc;
		if (i == 0 && (rc = put_process(f, p, trace_reader_process(r), (uint32_t)nf))) {
			trace_reader_close(r);
			return rc;
		}
		while ((rc = trace_reader_next(r, &ev)) == 1) {
			uint64_t k = ev.index > cur + 1 ? ev.index : cur + 1;

			if (k > n)
				break; /* the model stopped here (cannot happen for an unchanged file) */
			cur = k;
			rc = put_event(f, p, k, &ev, (uint32_t)i,
			               ev.site ? trace_reader_stack(r, ev.site) : NULL);
			if (rc)
				break;
		}
		trace_reader_close(r);
		if (rc < 0) {
			if (!f->diag || !f->diag->msg[0])
				ana__diag(f->diag, rc, "%s: reading events: %s", paths[i],
				          trace_strerror(rc));
			return rc;
		}
	}
	return 0;
}

static int fill_channels(struct filler *f)
{
	struct ana_session *s = f->s;
	sqlite3_stmt *st = f->st[ST_CHANNEL];
	char buf[300];
	int rc;

	for (size_t i = 0; i < s->nends; i++) {
		const struct ana_end *e = &s->ends[i];
		uint32_t root = (uint32_t)i, peer;
		const char *type = "unknown";

		for (int guard = 0; s->ends[root].uf != root && guard < 1 << 20; guard++)
			root = s->ends[root].uf;
		peer = s->ends[root].peer;
		if (e->has_ep || s->ends[root].has_ep) {
			const struct trace_endpoint *ep = e->has_ep ? &e->ep : &s->ends[root].ep;

			switch (ep->type) {
			case TRACE_CHAN_TCP: type = "tcp"; break;
			case TRACE_CHAN_UNIX: type = "unix"; break;
			case TRACE_CHAN_SOCKETPAIR: type = "socketpair"; break;
			case TRACE_CHAN_PIPE: type = "pipe"; break;
			case TRACE_CHAN_UDP: type = "udp"; break;
			case TRACE_CHAN_OTHER: type = "other"; break;
			default: break;
			}
		} else if (e->pipe_dir || s->ends[root].pipe_dir) {
			type = "pipe";
		} else if (e->builder || s->ends[root].builder) {
			type = "stream";
		}
		sqlite3_bind_int64(st, 1, (int64_t)i + 1);
		sqlite3_bind_int64(st, 2, e->proc);
		sqlite3_bind_int64(st, 3, e->id >= ANA_BUILDER_CHAN ? e->id - ANA_BUILDER_CHAN : e->id);
		bind_static(st, 4, type);
		{
			uint8_t d = e->pipe_dir ? e->pipe_dir : s->ends[root].pipe_dir;

			if (d == 1)
				bind_static(st, 5, "read");
			else if (d == 2)
				bind_static(st, 5, "write");
			else
				sqlite3_bind_null(st, 5);
		}
		if (s->ends[root].has_ep) {
			trace_endpoint_format(&s->ends[root].ep, 0, buf, sizeof(buf));
			bind_text(st, 6, buf[0] ? buf : NULL);
			trace_endpoint_format(&s->ends[root].ep, 1, buf, sizeof(buf));
			bind_text(st, 7, buf[0] ? buf : NULL);
		} else {
			sqlite3_bind_null(st, 6);
			sqlite3_bind_null(st, 7);
		}
		if (root != i)
			sqlite3_bind_int64(st, 8, (int64_t)root + 1);
		else
			sqlite3_bind_null(st, 8);
		if (peer != ANA_NONE) {
			uint32_t pr = peer;

			for (int guard = 0; s->ends[pr].uf != pr && guard < 1 << 20; guard++)
				pr = s->ends[pr].uf;
			sqlite3_bind_int64(st, 9, (int64_t)pr + 1);
			bind_static(st, 10, (s->ends[root].ambiguous || s->ends[pr].ambiguous) ? "shared"
			                                                                       : "matched");
		} else {
			sqlite3_bind_null(st, 9);
			bind_static(st, 10, s->ends[root].ambiguous ? "shared" : "external");
		}
		if ((rc = step(f, ST_CHANNEL, "inserting a channel")))
			return rc;
	}
	return 0;
}

/* Message races (ana_races) and the stability graph (the DCFG and its sets) are computed in
 * a thread of their own while the events go in: ana_races only touches the session's
 * reachability columns, which nothing else here reads; the DCFG only reads the session and
 * the trace files; neither writes what the rows are made from.  Their rows go in after. */
struct race_job {
	struct ana_session *s;
	const char *dir;
	struct ana_race *v;
	size_t n;
	int rc;
	struct ana_dcfg *g;       /* NULL when it could not be made (then why in gmsg) */
	char gmsg[400];
};

/* The sets are quadratic in the call sites: past this many nodes the tables stay empty and a
 * warning row says so (real programs have tens to hundreds of communication sites). */
#define STABLE_MAX_NODES 4096

static void *race_thread(void *arg)
{
	struct race_job *j = arg;
	struct trace_diag d;
	size_t n;

	j->rc = ana_races(j->s, &j->v, &j->n);
	memset(&d, 0, sizeof(d));
	if (ana_dcfg_new(&j->g) != 0) {
		j->g = NULL;
		snprintf(j->gmsg, sizeof(j->gmsg), "site_node, pre_set and post_set are empty: out "
		         "of memory");
	} else if (ana_dcfg_add_session(j->g, j->s, j->dir, &d) != 0 ||
	           ana_dcfg_solve(j->g, &d) != 0) {
		snprintf(j->gmsg, sizeof(j->gmsg), "site_node, pre_set and post_set are empty: %s",
		         d.msg);
	} else if ((n = ana_dcfg_nnodes(j->g)) > STABLE_MAX_NODES) {
		snprintf(j->gmsg, sizeof(j->gmsg), "site_node, pre_set and post_set are empty: %zu "
		         "call-site nodes (more than %d); use encore stable DIR --sets", n,
		         STABLE_MAX_NODES);
	} else {
		return NULL;
	}
	ana_dcfg_free(j->g);
	j->g = NULL;
	return NULL;
}

static int fill_races(struct filler *f, struct race_job *j)
{
	struct batch b;
	int rc = j->rc;

	if (rc) {
		ana__diag(f->diag, rc, "computing message races: %s", trace_strerror(rc));
		return rc;
	}
	memset(&b, 0, sizeof(b));
	if ((rc = batch_init(f, &b, "race", 3)))
		goto out;
	for (size_t i = 0; i < j->n && !rc; i++) {
		const struct ana_race *r = &j->v[i];
		struct sqlval *v = batch_row(&b);

		vint(&v[0], (int64_t)(f->first[r->proc] + r->recv - 1));
		vint(&v[1], (int64_t)(f->first[r->src_proc] + r->src_send - 1));
		vint(&v[2], (int64_t)(f->first[r->rival_proc] + r->rival_send - 1));
		rc = batch_add(f, &b);
	}
	if (!rc)
		rc = batch_flush(f, &b);
out:
	batch_free(&b);
	return rc;
}

static int put_meta(struct filler *f, const char *key, const char *value)
{
	bind_static(f->st[ST_META], 1, key);
	bind_text(f->st[ST_META], 2, value);
	return step(f, ST_META, "writing meta");
}

/* Run a script of several statements; the index part of the schema is run last. */
static int exec(sqlite3 *db, const char *sql, struct trace_diag *diag, const char *what)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		ana__diag(diag, TRACE_EIO, "SQLite: %s: %s", what, err ? err : sqlite3_errmsg(db));
		sqlite3_free(err);
		return TRACE_EIO;
	}
	return 0;
}

static int put_warning(struct filler *f, int64_t id, const char *msg)
{
	sqlite3_bind_int64(f->st[ST_WARN], 1, id);
	bind_text(f->st[ST_WARN], 2, msg);
	return step(f, ST_WARN, "inserting a warning");
}

/* Stability (schemas/stability.md): the DCFG of this session, built and solved as
 * `encore stable DIR --sets` does (same node ids, race_thread made it), and its PRE, POST1
 * and POST2 sets.  A session the DCFG cannot be built from gets empty tables and a warning,
 * never a failed load. */
static int fill_stability(struct filler *f, const struct race_job *j, int64_t warn_id)
{
	static const struct { enum ana_set set; const char *kind; } posts[] = {
		{ ANA_SET_POST1, "post1" }, { ANA_SET_POST2, "post2" },
	};
	struct ana_dcfg *g = j->g;
	size_t n, a, b, k;
	int rc = 0;

	if (!g)
		return put_warning(f, warn_id, j->gmsg);
	n = ana_dcfg_nnodes(g);
	for (a = 0; a < n && !rc; a++) {
		struct ana_node nd;

		if (ana_dcfg_node(g, a, &nd) != 0)
			continue;
		sqlite3_bind_int64(f->st[ST_NODE], 1, (int64_t)a);
		bind_text(f->st[ST_NODE], 2, ana_dcfg_proc_name(g, nd.proc));
		bind_text(f->st[ST_NODE], 3, ana_node_kind_name(nd.kind));
		bind_text(f->st[ST_NODE], 4, nd.function ? nd.function : "");
		bind_text(f->st[ST_NODE], 5, nd.key ? nd.key : "");
		sqlite3_bind_int64(f->st[ST_NODE], 6, (int64_t)nd.seen);
		if ((rc = step(f, ST_NODE, "inserting a site node")))
			break;
		for (b = 0; b < n && !rc; b++) {
			if (ana_dcfg_in(g, ANA_SET_PRE, a, b) == 1) {
				sqlite3_bind_int64(f->st[ST_PRE], 1, (int64_t)a);
				sqlite3_bind_int64(f->st[ST_PRE], 2, (int64_t)b);
				rc = step(f, ST_PRE, "inserting a PRE set member");
			}
			for (k = 0; k < 2 && !rc; k++)
				if (ana_dcfg_in(g, posts[k].set, a, b) == 1) {
					sqlite3_bind_int64(f->st[ST_POST], 1, (int64_t)a);
					sqlite3_bind_int64(f->st[ST_POST], 2, (int64_t)b);
					bind_text(f->st[ST_POST], 3, posts[k].kind);
					rc = step(f, ST_POST, "inserting a POST set member");
				}
		}
	}
	return rc;
}

int ana_db_fill(struct sqlite3 *db, struct ana_session *s, const char *dir,
                const struct ana_db_progress *progress, struct trace_diag *diag)
{
	struct filler f;
	struct trace_session *ts = NULL;
	const char *idx = strstr(ana_sql_schema_text, "-- Indexes, built after");
	char *tables = NULL, num[32];
	struct race_job race;
	pthread_t racer;
	int rc = 0, began = 0, racing = 0;

	if (!db || !s || !s->finished || !idx)
		return TRACE_EINVAL;
	if (diag)
		memset(diag, 0, sizeof(*diag));
	memset(&f, 0, sizeof(f));
	memset(&race, 0, sizeof(race));
	f.db = db;
	f.s = s;
	f.diag = diag;
	f.progress = progress;
	f.total = s->total;
	if (!(f.first = malloc((s->nprocs ? s->nprocs : 1) * sizeof(*f.first))) ||
	    !(tables = strndup(ana_sql_schema_text, (size_t)(idx - ana_sql_schema_text)))) {
		rc = TRACE_ENOMEM;
		goto out;
	}
	for (size_t p = 0, b = 1; p < s->nprocs; p++) {
		f.first[p] = b;
		b += s->procs[p].n;
	}
	if (dir && (rc = trace_session_open(dir, &ts, diag)))
		goto out;
	/* one transaction, its journal in memory (a fresh database has little to undo), no
	 * fsync: a crash leaves a file the caller never renames; 16 KiB pages (the database is
	 * empty, so it takes them): a quarter of the page writes, about 7% less CPU on the
	 * load, and table scans read fewer, larger pages */
	sqlite3_exec(db, "PRAGMA page_size=16384; PRAGMA journal_mode=MEMORY; "
	             "PRAGMA synchronous=OFF; PRAGMA temp_store=MEMORY; PRAGMA cache_size=-8192",
	             NULL, NULL, NULL);
	if ((rc = exec(db, "BEGIN", diag, "starting the load")))
		goto out;
	began = 1;
	if ((rc = exec(db, tables, diag, "creating the schema")))
		goto out;
	for (int i = 0; i < ST_N; i++)
		if (sqlite3_prepare_v2(db, st_sql[i], -1, &f.st[i], NULL) != SQLITE_OK) {
			rc = sql_fail(db, diag, st_sql[i]);
			goto out;
		}
	if ((rc = batch_init(&f, &f.ev, "event", 17)) || (rc = batch_init(&f, &f.msg, "message", 7)) ||
	    (rc = batch_init(&f, &f.mark, "mark", 5)) ||
	    (rc = batch_init(&f, &f.input, "input", 7)))
		goto out;
	race.s = s;
	race.dir = dir;
	if (pthread_create(&racer, NULL, race_thread, &race) == 0)
		racing = 1;
	else
		race_thread(&race);
	for (size_t p = 0; p < s->nprocs && !rc; p++) {
		const char *const *paths = NULL;
		size_t nf = 0;

		if (ts) {
			for (size_t i = 0; i < trace_session_count(ts); i++)
				if (strcmp(trace_session_name(ts, i), s->procs[p].name) == 0)
					nf = trace_session_files(ts, i, &paths);
		}
		rc = nf ? fill_proc_files(&f, p, paths, nf) : fill_proc_model(&f, p);
	}
	if (rc || (rc = batch_flush(&f, &f.ev)) || (rc = batch_flush(&f, &f.msg)) ||
	    (rc = batch_flush(&f, &f.mark)) || (rc = batch_flush(&f, &f.input)))
		goto out;
	if ((rc = fill_channels(&f)))
		goto out;
	if (racing) {
		pthread_join(racer, NULL);
		racing = 0;
	}
	if ((rc = fill_races(&f, &race)))
		goto out;
	for (size_t i = 0; i < ana_nwarnings(s); i++) {
		sqlite3_bind_int64(f.st[ST_WARN], 1, (int64_t)i + 1);
		bind_text(f.st[ST_WARN], 2, ana_warning(s, i));
		if ((rc = step(&f, ST_WARN, "inserting a warning")))
			goto out;
	}
	if ((rc = fill_stability(&f, &race, (int64_t)ana_nwarnings(s) + 1)))
		goto out;
	snprintf(num, sizeof(num), "%d", ANA_SQL_SCHEMA_VERSION);
	if ((rc = put_meta(&f, "schema_version", num)))
		goto out;
	snprintf(num, sizeof(num), "%llu", (unsigned long long)s->total);
	if ((rc = put_meta(&f, "events", num)) || (rc = put_meta(&f, "session", dir)))
		goto out;
	if (f.progress && f.progress->fn)
		f.progress->fn(f.progress->ctx, f.total, f.total);
	if ((rc = exec(db, idx, diag, "creating the indexes")))
		goto out;
	rc = exec(db, "COMMIT", diag, "committing the load");
	began = 0;
out:
	if (racing)
		pthread_join(racer, NULL);
	free(race.v);
	ana_dcfg_free(race.g);
	batch_free(&f.ev);
	batch_free(&f.msg);
	batch_free(&f.mark);
	batch_free(&f.input);
	for (int i = 0; i < ST_N; i++)
		sqlite3_finalize(f.st[i]);
	if (began)
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	trace_session_close(ts);
	free(f.first);
	free(f.sitekey);
	free(f.siteval);
	free(tables);
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * Standalone files and the session cache.
 */

/* FNV-1a, 64 bits. */
static uint64_t fnv(uint64_t h, const void *buf, size_t len)
{
	const unsigned char *c = buf;

	for (size_t i = 0; i < len; i++) {
		h ^= c[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ana_db_stamp(const char *dir, char *out, size_t cap, struct trace_diag *diag)
{
	return ana_db_stamp_model(dir, ANA_MODEL_VERSION, out, cap, diag);
}

int ana_db_stamp_model(const char *dir, int model, char *out, size_t cap,
                       struct trace_diag *diag)
{
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, ncap = 0;
	uint64_t h = 0xcbf29ce484222325ull;
	int rc = 0, fd;

	if (!dir || !out || cap < 17)
		return TRACE_EINVAL;
	if (!(d = opendir(dir))) {
		ana__diag(diag, TRACE_EIO, "%s: cannot open the session directory: %s", dir,
		          strerror(errno));
		return TRACE_EIO;
	}
	fd = dirfd(d);
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len < 7 || de->d_name[0] == '.' || strcmp(de->d_name + len - 6, ".trace"))
			continue;
		if (n == ncap) {
			size_t nc = ncap ? 2 * ncap : 16;
			char **nv = realloc(names, nc * sizeof(*nv));

			if (!nv) {
				rc = TRACE_ENOMEM;
				goto out;
			}
			names = nv;
			ncap = nc;
		}
		if (!(names[n] = strdup(de->d_name))) {
			rc = TRACE_ENOMEM;
			goto out;
		}
		n++;
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	/* the schema text too: a cache made by a build with another schema is stale; and the
	 * analyzer's model: one made by an encore that matched or linked less is stale too */
	h = fnv(h, ana_sql_schema_text, sizeof(ana_sql_schema_text));
	h = fnv(h, &model, sizeof(model));
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		int64_t v[4];

		if (fstatat(fd, names[i], &st, 0)) {
			ana__diag(diag, TRACE_EIO, "%s/%s: %s", dir, names[i], strerror(errno));
			rc = TRACE_EIO;
			goto out;
		}
		v[0] = (int64_t)st.st_size;
		v[1] = (int64_t)st.st_mtim.tv_sec;
		v[2] = (int64_t)st.st_mtim.tv_nsec;
		v[3] = (int64_t)st.st_ino;
		h = fnv(h, names[i], strlen(names[i]) + 1);
		h = fnv(h, v, sizeof(v));
	}
	snprintf(out, cap, "%016llx", (unsigned long long)h);
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return rc;
}

int ana_db_cache_path(const char *dir, char *out, size_t cap)
{
	int n;

	if (!dir || !out)
		return TRACE_EINVAL;
	n = snprintf(out, cap, "%s/.encore.db", dir);
	return n < 0 || (size_t)n >= cap ? TRACE_EINVAL : 0;
}

/* Load dir and fill the database at `path` (a new file, or ":memory:" with *mem). */
static int build(const char *dir, const char *path, sqlite3 **keep, const char *stamp,
                 const struct ana_db_progress *progress, struct trace_diag *diag)
{
	struct ana_session *s = NULL;
	sqlite3 *db = NULL;
	char ver[64];
	int rc;

	if ((rc = ana_load(dir, &s, diag)))
		return rc;
	/* one thread uses it: no per-call mutex (a measurable share of the load time) */
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
	                    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		rc = sql_fail(db, diag, path);
		goto out;
	}
	if ((rc = ana_db_fill(db, s, dir, progress, diag)))
		goto out;
	if (stamp) {
		char *sql = sqlite3_mprintf("INSERT OR REPLACE INTO meta VALUES ('stamp', %Q)", stamp);

		rc = sql ? exec(db, sql, diag, "stamping the database") : TRACE_ENOMEM;
		sqlite3_free(sql);
		if (rc)
			goto out;
	}
	snprintf(ver, sizeof(ver), "PRAGMA user_version=%d", ANA_SQL_SCHEMA_VERSION);
	if ((rc = exec(db, ver, diag, "setting the schema version")))
		goto out;
out:
	ana_free(s);
	if (rc || !keep) {
		if (db && sqlite3_close(db) != SQLITE_OK && !rc)
			rc = sql_fail(db, diag, path);
	} else {
		*keep = db;
	}
	return rc;
}

/* Build into a temporary file beside `path`, then rename it over `path`.  The temporary
 * file is made first by us, relative to the directory's descriptor, exclusively, without
 * following a link and with mode 0600 (the database holds the recorded input bytes), and
 * SQLite fills that file; the rename stays inside the same descriptor (docs/security.md). */
static int write_file(const char *dir, const char *path, const char *stamp,
                      const struct ana_db_progress *progress, struct trace_diag *diag)
{
	size_t len = strlen(path);
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char *tmp = malloc(len + 32), *parent = NULL;
	int rc = 0, pfd = -1, fd;

	if (!tmp)
		return TRACE_ENOMEM;
	snprintf(tmp, len + 32, "%s.tmp.%ld", path, (long)getpid());
	if (!*base || !(parent = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path))
	                               : strdup("."))) {
		rc = *base ? TRACE_ENOMEM : TRACE_EINVAL;
		if (rc == TRACE_EINVAL)
			ana__diag(diag, rc, "%s: not a file name", path);
		goto out;
	}
	pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0) {
		ana__diag(diag, TRACE_EIO, "%s: cannot open the directory: %s", parent,
		          strerror(errno));
		rc = TRACE_EIO;
		goto out;
	}
	/* a stale temporary file of ours (same pid), or a link someone planted: the name goes,
	 * never what a link points at */
	unlinkat(pfd, tmp + (base - path), 0);
	fd = openat(pfd, tmp + (base - path), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	            0600);
	if (fd < 0) {
		ana__diag(diag, TRACE_EIO, "%s: cannot create the database: %s", tmp, strerror(errno));
		rc = TRACE_EIO;
		goto out;
	}
	close(fd);
	rc = build(dir, tmp, NULL, stamp, progress, diag);
	if (!rc && renameat(pfd, tmp + (base - path), pfd, base)) {
		ana__diag(diag, TRACE_EIO, "%s: cannot rename the finished database into place: %s",
		          path, strerror(errno));
		rc = TRACE_EIO;
	}
	if (rc)
		unlinkat(pfd, tmp + (base - path), 0);
out:
	if (pfd >= 0)
		close(pfd);
	free(parent);
	free(tmp);
	return rc;
}

int ana_db_write(const char *dir, const char *path, const struct ana_db_progress *progress,
                 struct trace_diag *diag)
{
	char stamp[32];
	int rc;

	if (!dir || !path)
		return TRACE_EINVAL;
	if (diag)
		memset(diag, 0, sizeof(*diag));
	if ((rc = ana_db_stamp(dir, stamp, sizeof(stamp), diag)))
		return rc;
	return write_file(dir, path, stamp, progress, diag);
}

/* The session's cache lives in DIR only when DIR is ours and closed to others: anyone else
 * who may write there could plant a link where the cache goes, or a database of their own
 * for us to open (docs/security.md).  Otherwise it is built in memory. */
static int dir_private(const char *dir)
{
	struct stat st;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ok;

	if (fd < 0)
		return 0;
	ok = fstat(fd, &st) == 0 && st.st_uid == geteuid() && !(st.st_mode & 022) &&
	     faccessat(fd, ".", W_OK, AT_EACCESS) == 0;
	close(fd);
	return ok;
}

/* 1 if the database at path (in a private directory) is a regular file of ours, closed to
 * others, with our schema version and the stamp; else 0.  An older cache made with wider
 * permissions is stale, so it is rebuilt 0600. */
static int cache_fresh(const char *path, const char *stamp)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	struct stat sb;
	int fresh = 0;

	if (lstat(path, &sb) || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid() ||
	    (sb.st_mode & 077) || access(path, R_OK))
		return 0;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		goto out;
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW || sqlite3_column_int(st, 0) != ANA_SQL_SCHEMA_VERSION)
		goto out;
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'stamp'", -1, &st, NULL) !=
	    SQLITE_OK || sqlite3_step(st) != SQLITE_ROW)
		goto out;
	fresh = sqlite3_column_text(st, 0) &&
	        strcmp((const char *)sqlite3_column_text(st, 0), stamp) == 0;
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	return fresh;
}

int ana_db_open(const char *dir, struct sqlite3 **out, int *rebuilt,
                const struct ana_db_progress *progress, struct trace_diag *diag)
{
	char stamp[32], path[4096];
	sqlite3 *db = NULL;
	int rc, made = 0, priv;

	if (!dir || !out)
		return TRACE_EINVAL;
	*out = NULL;
	if (rebuilt)
		*rebuilt = 0;
	if (diag)
		memset(diag, 0, sizeof(*diag));
	if ((rc = ana_db_stamp(dir, stamp, sizeof(stamp), diag)))
		return rc;
	if ((rc = ana_db_cache_path(dir, path, sizeof(path)))) {
		ana__diag(diag, rc, "%s: directory name too long", dir);
		return rc;
	}
	priv = dir_private(dir);
	if (!priv || !cache_fresh(path, stamp)) {
		if (priv) {
			if ((rc = write_file(dir, path, stamp, progress, diag)))
				return rc;
			made = 1;
		} else {
			/* a session we may not write to, or should not (another user's, one others
			 * may write into, read-only media) */
			if ((rc = build(dir, ":memory:", &db, stamp, progress, diag)))
				return rc;
			made = 2;
		}
	}
	if (!db && sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		rc = sql_fail(db, diag, path);
		sqlite3_close(db);
		return rc;
	}
	/* queries never change the trace: read-only file, and query_only for the in-memory
	 * copy as well */
	if ((rc = exec(db, "PRAGMA query_only=1", diag, "opening read-only")) ||
	    (rc = ana_sql_register(db))) {
		if (!diag || !diag->msg[0])
			ana__diag(diag, rc, "registering the SQL functions: %s", trace_strerror(rc));
		sqlite3_close(db);
		return rc;
	}
	if (rebuilt)
		*rebuilt = made;
	*out = db;
	return 0;
}
