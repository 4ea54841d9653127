/*
 * session.c: a session is a directory of trace files, one per process image, with no shared
 * mutable file (processes on several hosts can write into copies and be merged by copying).
 * This groups the files by the logical name their headers carry and orders each process's
 * images by segment number.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"

struct session_proc {
	char name[TRACE_NAME_MAX];
	char **paths;   /* by segment */
	uint32_t *segs;
	size_t n;
};

struct trace_session {
	struct session_proc *procs;
	size_t n;
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct session_proc *)a)->name, ((const struct session_proc *)b)->name);
}

static int add_file(struct trace_session *s, const char *path, const struct trace_process *p,
                    struct trace_diag *diag)
{
	struct session_proc *sp = NULL;
	size_t i;
	char **np, *copy;
	uint32_t *ns;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->procs[i].name, p->name) == 0)
			sp = &s->procs[i];
	if (!sp) {
		struct session_proc *nps = realloc(s->procs, (s->n + 1) * sizeof(*nps));

		if (!nps)
			return TRACE_ENOMEM;
		s->procs = nps;
		sp = &s->procs[s->n++];
		memset(sp, 0, sizeof(*sp));
		snprintf(sp->name, sizeof(sp->name), "%s", p->name);
	}
	for (i = 0; i < sp->n; i++)
		if (sp->segs[i] == p->segment) {
			fmt_diag(diag, TRACE_ECORRUPT, path, 0,
			         "process %s segment %u is also in %s: one session directory per recording",
			         p->name, p->segment, sp->paths[i]);
			return TRACE_ECORRUPT;
		}
	np = realloc(sp->paths, (sp->n + 1) * sizeof(*np));
	if (!np)
		return TRACE_ENOMEM;
	sp->paths = np;
	ns = realloc(sp->segs, (sp->n + 1) * sizeof(*ns));
	if (!ns)
		return TRACE_ENOMEM;
	sp->segs = ns;
	copy = strdup(path);
	if (!copy)
		return TRACE_ENOMEM;
	/* keep the images in segment order */
	for (i = sp->n; i > 0 && sp->segs[i - 1] > p->segment; i--) {
		sp->segs[i] = sp->segs[i - 1];
		sp->paths[i] = sp->paths[i - 1];
	}
	sp->paths[i] = copy;
	sp->segs[i] = p->segment;
	sp->n++;
	return 0;
}

int trace_session_open(const char *dir, struct trace_session **out, struct trace_diag *diag)
{
	struct trace_session *s;
	struct dirent **names = NULL;
	int n, i, rc = 0;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s) {
		fmt_diag(diag, TRACE_ENOMEM, dir, 0, "out of memory");
		return TRACE_ENOMEM;
	}
	n = scandir(dir, &names, NULL, alphasort);
	if (n < 0) {
		int e = errno;

		rc = e == ENOENT ? TRACE_ENOENT : TRACE_EIO;
		fmt_diag(diag, rc, dir, 0, "cannot read session directory: %s", strerror(e));
		if (diag)
			diag->sys_errno = e;
		free(s);
		return rc;
	}
	for (i = 0; i < n && rc == 0; i++) {
		const char *nm = names[i]->d_name;
		size_t len = strlen(nm);
		char path[4096];
		struct trace_reader *r;

		if (len < 7 || strcmp(nm + len - 6, ".trace") != 0 || nm[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, nm);
		rc = trace_reader_open(path, &r, diag);
		if (rc == 0) {
			rc = add_file(s, path, trace_reader_process(r), diag);
			if (rc == TRACE_ENOMEM)
				fmt_diag(diag, rc, path, 0, "out of memory");
			trace_reader_close(r);
		}
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (rc == 0 && s->n == 0) {
		rc = TRACE_ENOENT;
		fmt_diag(diag, rc, dir, 0, "no trace files (*.trace) in this directory");
	}
	if (rc) {
		trace_session_close(s);
		return rc;
	}
	qsort(s->procs, s->n, sizeof(*s->procs), by_name);
	*out = s;
	return 0;
}

size_t trace_session_count(const struct trace_session *s)
{
	return s->n;
}

const char *trace_session_name(const struct trace_session *s, size_t i)
{
	return i < s->n ? s->procs[i].name : NULL;
}

size_t trace_session_files(const struct trace_session *s, size_t i, const char *const **paths)
{
	if (i >= s->n) {
		*paths = NULL;
		return 0;
	}
	*paths = (const char *const *)s->procs[i].paths;
	return s->procs[i].n;
}

void trace_session_close(struct trace_session *s)
{
	size_t i, j;

	if (!s)
		return;
	for (i = 0; i < s->n; i++) {
		for (j = 0; j < s->procs[i].n; j++)
			free(s->procs[i].paths[j]);
		free(s->procs[i].paths);
		free(s->procs[i].segs);
	}
	free(s->procs);
	free(s);
}
