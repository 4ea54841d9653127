/*
 * gd_created.c: what the recording itself created, hidden from its replay
 * (replayer/README.md, "Isolation and packed files").
 *
 * A replay runs over the file system as it is after the recording, which holds everything the
 * recorded run made: make finds its targets up to date, an open with O_CREAT|O_EXCL fails, a
 * server finds its pid file.  The recorder noted every name a process created where none was
 * and every name it removed (path records: schemas/trace-format.md, "Paths created").  Here
 * the GD gathers them from every trace as it checks the traces (rep__created_add), and
 * decides, per recorded host, which paths the replay must not see (rep__created_plan): those
 * whose first record in the session, by the recorded wall clock, is a creation (nothing was
 * there when the recording started; a first record that is a removal means the name was
 * there, and what it held is gone) and that exist now.  Inside the host's namespace, under
 * its overlays, the helper removes them (gd_isolate.c, hide_created), parents first, which
 * leaves a whiteout in the scratch area's upper layer and the real file system untouched.
 * A file the recording made by renaming one that was there before it started, whose old name
 * is free now, is renamed back instead (a log rotated, `mv config config.old`): the replay
 * finds it under its old name, with what it holds now.
 * A replay without isolation cannot hide them: it counts them, and `encore replay` says so.
 *
 * A file that was there before the recording and that the recording changed (appended to,
 * overwrote) cannot be given back as it was: the GD names those the recording read after
 * they changed (file inputs whose mtime is past the session's start, not created by it), for
 * `encore replay` to name when a replay diverges (rep_changed_inputs).  Those it read before
 * they changed are refused before the start already (gd_files.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gd_internal.h"

struct created_rec {
	char *path;           /* canonical once planned: its directory with links resolved */
	char *host;           /* META_HOST_ID of the trace that noted it (shared, not owned) */
	int64_t time_ns;
	size_t seq;           /* the order of noting, for records of one time */
	uint32_t op;
	char *from;           /* a rename's old name (owned, canonical once planned), or NULL */
	const char *to;       /* in the plan: rename it back to this name instead of hiding it */
};

struct gd_created {
	struct created_rec *recs;
	size_t n, cap;
	char **hosts;         /* the host ids seen (owned) */
	size_t nhosts;
	/* the plan: per path to hide, its host; sorted parents first (a directory's removal takes
	 * what it holds: what was below it is gone when its turn comes) */
	struct created_rec *hide;
	size_t nhide;
	struct created_rec *reads; /* file inputs read (path, host, mtime as time_ns) */
	size_t nreads, capreads;
	char changed[1024];   /* rep_changed_inputs: "PATH, PATH..." */
	size_t nchanged;
	size_t hidden;        /* removed in a namespace (helpers' counts) */
	size_t restored;      /* renamed back to their old names there */
	size_t not_hidden;    /* there, under no overlay, or their removal failed */
	int planned;
};

static struct gd_created *created_get(struct rep *r)
{
	if (!r->created)
		r->created = calloc(1, sizeof(*r->created));
	return r->created;
}

static char *host_of(struct gd_created *c, const char *host)
{
	char **n;

	for (size_t i = 0; i < c->nhosts; i++)
		if (strcmp(c->hosts[i], host) == 0)
			return c->hosts[i];
	if (!(n = realloc(c->hosts, (c->nhosts + 1) * sizeof(*n))))
		return NULL;
	c->hosts = n;
	if (!(n[c->nhosts] = strdup(host)))
		return NULL;
	return n[c->nhosts++];
}

/* The files the image read, with their mtimes: those past the session's start (known once
 * every trace is read) changed while recorded. */
static int add_reads(struct gd_created *c, struct trace_reader *rd, char *h)
{
	const struct trace_file_input *fl;
	size_t n = trace_reader_files(rd, &fl);

	for (size_t i = 0; i < n; i++) {
		const char *at = fl[i].resolved[0] ? fl[i].resolved : fl[i].path;
		struct created_rec *e;

		if (fl[i].kind != TRACE_FILE_READ || at[0] != '/')
			continue;
		if (c->nreads == c->capreads) {
			size_t cap = c->capreads ? c->capreads * 2 : 16;
			struct created_rec *nr = realloc(c->reads, cap * sizeof(*nr));

			if (!nr)
				return TRACE_ENOMEM;
			c->reads = nr;
			c->capreads = cap;
		}
		e = &c->reads[c->nreads];
		memset(e, 0, sizeof(*e));
		if (!(e->path = strdup(at)))
			return TRACE_ENOMEM;
		e->host = h;
		e->time_ns = fl[i].mtime_ns;
		c->nreads++;
	}
	return 0;
}

int rep__created_has(const struct rep *r, const char *path)
{
	const struct gd_created *c = r->created;

	for (size_t i = 0; c && i < c->n; i++)
		if ((c->recs[i].op == TRACE_PATH_FILE || c->recs[i].op == TRACE_PATH_LINK) &&
		    strcmp(c->recs[i].path, path) == 0)
			return 1;
	return 0;
}

int rep__created_add(struct rep *r, struct trace_reader *rd, const char *host)
{
	const struct trace_path_change *l;
	size_t n = trace_reader_paths(rd, &l);
	struct gd_created *c;
	char *h;
	int rc;

	if (!(c = created_get(r)) || !(h = host_of(c, host)))
		return TRACE_ENOMEM;
	if ((rc = add_reads(c, rd, h)) != 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		struct created_rec *e;

		if (c->n == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 64;
			struct created_rec *nr = realloc(c->recs, cap * sizeof(*nr));

			if (!nr)
				return TRACE_ENOMEM;
			c->recs = nr;
			c->cap = cap;
		}
		e = &c->recs[c->n];
		memset(e, 0, sizeof(*e));
		if (!(e->path = strdup(l[i].path)) ||
		    (l[i].from[0] && !(e->from = strdup(l[i].from)))) {
			free(e->path);
			return TRACE_ENOMEM;
		}
		e->host = h;
		e->time_ns = l[i].time_ns;
		e->seq = c->n;
		e->op = l[i].op;
		c->n++;
	}
	return 0;
}

/* The path with its directory's links resolved (as the kernel would reach it now), so that
 * one file named two ways is one path; as it is when the directory is gone. */
static char *canonical(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[4096], real[4096], *out;
	size_t dl;

	if (!slash || slash == path || (dl = (size_t)(slash - path)) >= sizeof(dir))
		return strdup(path);
	memcpy(dir, path, dl);
	dir[dl] = '\0';
	if (!realpath(dir, real))
		return strdup(path);
	if (!(out = malloc(strlen(real) + strlen(slash) + 1)))
		return NULL;
	strcpy(out, strcmp(real, "/") ? real : "");
	strcat(out, slash);
	return out;
}

static int by_path_time(const void *a, const void *b)
{
	const struct created_rec *x = a, *y = b;
	int c = strcmp(x->host, y->host);

	if (!c)
		c = strcmp(x->path, y->path);
	if (!c)
		c = x->time_ns < y->time_ns ? -1 : x->time_ns > y->time_ns;
	if (!c)
		c = x->seq < y->seq ? -1 : x->seq > y->seq;
	return c;
}

static int parents_first(const void *a, const void *b)
{
	const struct created_rec *x = a, *y = b;
	int c = strcmp(x->host, y->host);

	return c ? c : strcmp(x->path, y->path);
}

/* Under dir (or dir itself)? */
static int below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* The first path record of path (of host), or NULL; recs sorted by host, path and time. */
static const struct created_rec *first_rec(const struct gd_created *c, const char *host,
                                           const char *path)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int k = strcmp(c->recs[mid].host, host);

		if (!k)
			k = strcmp(c->recs[mid].path, path);
		if (k < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->n && strcmp(c->recs[lo].host, host) == 0 &&
	       strcmp(c->recs[lo].path, path) == 0 ? &c->recs[lo] : NULL;
}

/* Was path (of host) created by the session: its first path record a creation? */
static int created_first(const struct gd_created *c, const char *host, const char *path)
{
	const struct created_rec *e = first_rec(c, host, path);

	return e && e->op != TRACE_PATH_REMOVED;
}

/* The files the recording read after they changed, that were there before it started and
 * are there now: each named once, as many as fit. */
static void changed_inputs(const struct rep *r, struct gd_created *c)
{
	int64_t start = INT64_MAX;
	size_t len = 0;

	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].rec_t0 > 0 && r->procs[i].rec_t0 < start)
			start = r->procs[i].rec_t0;
	qsort(c->reads, c->nreads, sizeof(*c->reads), by_path_time);
	for (size_t i = 0; i < c->nreads; i++) {
		struct created_rec *e = &c->reads[i];
		struct stat st;
		char *p;

		if (i && strcmp(e->path, c->reads[i - 1].path) == 0)
			continue;
		if (e->time_ns < start || !(p = canonical(e->path)))
			continue;
		if (!created_first(c, e->host, p) && lstat(p, &st) == 0) {
			size_t pl = strlen(p);

			if (len + pl + 3 < sizeof(c->changed)) {
				len += (size_t)snprintf(c->changed + len, sizeof(c->changed) - len, "%s%s",
				                        len ? ", " : "", p);
			} else if (len + 5 < sizeof(c->changed) && !strstr(c->changed, "...")) {
				len += (size_t)snprintf(c->changed + len, sizeof(c->changed) - len, ", ...");
			}
			c->nchanged++;
		}
		free(p);
	}
}

int rep__created_plan(struct rep *r)
{
	struct gd_created *c = r->created;
	char sess[4096];

	if (!c || c->planned)
		return 0;
	c->planned = 1;
	if (!realpath(r->dir, sess))
		snprintf(sess, sizeof(sess), "%s", r->dir);
	for (size_t i = 0; i < c->n; i++) {
		char *p = canonical(c->recs[i].path);

		if (!p)
			return TRACE_ENOMEM;
		free(c->recs[i].path);
		c->recs[i].path = p;
		if (c->recs[i].from) {
			if (!(p = canonical(c->recs[i].from)))
				return TRACE_ENOMEM;
			free(c->recs[i].from);
			c->recs[i].from = p;
		}
	}
	qsort(c->recs, c->n, sizeof(*c->recs), by_path_time);
	if (!(c->hide = calloc(c->n ? c->n : 1, sizeof(*c->hide))))
		return TRACE_ENOMEM;
	for (size_t i = 0; i < c->n;) {
		size_t j = i;
		struct stat st;

		while (j < c->n && strcmp(c->recs[j].host, c->recs[i].host) == 0 &&
		       strcmp(c->recs[j].path, c->recs[i].path) == 0)
			j++;
		/* first a creation: nothing was there at the start; and something is there now */
		if (c->recs[i].op != TRACE_PATH_REMOVED && c->recs[i].op != TRACE_PATH_NONE &&
		    c->recs[i].path[0] == '/' && !below(c->recs[i].path, sess) &&
		    !below(c->recs[i].path, r->dir) && lstat(c->recs[i].path, &st) == 0) {
			struct created_rec *h = &c->hide[c->nhide++];
			const struct created_rec *old;
			struct stat ost;

			*h = c->recs[i];
			/* made by renaming a file that was there at the start, whose name is free */
			if (h->op == TRACE_PATH_LINK && h->from && !S_ISDIR(st.st_mode) &&
			    (old = first_rec(c, h->host, h->from)) != NULL &&
			    old->op == TRACE_PATH_REMOVED && !below(h->from, sess) &&
			    lstat(h->from, &ost) != 0 && errno == ENOENT)
				h->to = h->from;
		}
		i = j;
	}
	qsort(c->hide, c->nhide, sizeof(*c->hide), parents_first);
	changed_inputs(r, c);
	return 0;
}

size_t rep__created_paths(const struct rep *r, const char *host, const char **out,
                          const char **to, size_t cap)
{
	const struct gd_created *c = r->created;
	size_t k = 0;

	for (size_t i = 0; c && i < c->nhide; i++)
		if (strcmp(c->hide[i].host, host) == 0) {
			if (k < cap) {
				out[k] = c->hide[i].path;
				to[k] = c->hide[i].to;
			}
			k++;
		}
	return k;
}

void rep__created_count(struct rep *r, size_t hidden, size_t not_hidden, size_t restored)
{
	if (r->created) {
		r->created->hidden += hidden;
		r->created->not_hidden += not_hidden;
		r->created->restored += restored;
	}
}

size_t rep_created_restored(const struct rep *r)
{
	return r->created ? r->created->restored : 0;
}

const char *rep_changed_inputs(const struct rep *r, size_t *n)
{
	if (n)
		*n = r->created ? r->created->nchanged : 0;
	return r->created && r->created->nchanged ? r->created->changed : NULL;
}

size_t rep_created_hidden(const struct rep *r)
{
	return r->created ? r->created->hidden : 0;
}

size_t rep_created_visible(const struct rep *r)
{
	if (!r->created)
		return 0;
	/* without a namespace, every one there now is seen */
	return rep_scratch(r) ? r->created->not_hidden : r->created->nhide;
}

void rep__created_free(struct rep *r)
{
	struct gd_created *c = r->created;

	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->recs[i].path);
		free(c->recs[i].from);
	}
	for (size_t i = 0; i < c->nreads; i++)
		free(c->reads[i].path);
	free(c->reads);
	for (size_t i = 0; i < c->nhosts; i++)
		free(c->hosts[i]);
	free(c->recs);
	free(c->hosts);
	free(c->hide);
	free(c);
	r->created = NULL;
}
