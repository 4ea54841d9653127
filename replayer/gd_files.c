/*
 * gd_files.c: before a replay starts, the files the recording read must still be there as
 * they were.  The recorder noted every regular file a process opened for reading (size,
 * mtime, a hash of its first bytes: schemas/trace-format.md, "File inputs"); a replay of an
 * unpacked session reads whatever the file system holds now, so a changed configuration or
 * data file would make it diverge later, or worse, behave differently without diverging.
 * Here each one is compared with the file system (size and mtime, then the hash if the mtime
 * differs) and the first that changed is named, before any process starts.
 *
 * A packed session (DIR/pack/manifest, schemas/pack.md) is checked only for the files its pack
 * lacks (one that had changed already when it was packed): its replay uses the packed ones;
 * with --no-pack, every file is checked, as in an unpacked session.  Files modified after the recording began, or created by the session
 * (its path records, gathered by gd_created.c), were written by the recorded processes
 * themselves before they read them: outputs of the run, which the replay writes again, not
 * inputs; they are not checked.  Executables are checked by build-id elsewhere (gd.c);
 * libraries are not checked (a security update that keeps the interface is the
 * common case, and replay reports a divergence if one matters).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gd_internal.h"

/* Check the file inputs of one trace file.  *start_ns is the session's earliest start. */
static int check_one(const struct rep *rep, const char *path, int64_t start_ns,
                     const struct trace_pack *pack, struct trace_diag *d)
{
	struct trace_reader *r;
	struct trace_event ev;
	const struct trace_file_input *fl;
	size_t n, i;
	int rc;

	if ((rc = trace_reader_open(path, &r, d)) != 0)
		return rc;
	while ((rc = trace_reader_next(r, &ev)) == 1)
		;
	n = trace_reader_files(r, &fl);
	for (i = 0; i < n && rc == 0; i++) {
		const struct trace_file_input *f = &fl[i];
		const char *at = f->resolved[0] ? f->resolved : f->path;
		char what[32];
		int c;

		/* (a file the session created carries a time from the kernel's coarse clock, a
		 * tick behind the CLOCK_REALTIME of the session's start: made in the run's first
		 * milliseconds, it can look older) */
		if (f->kind != TRACE_FILE_READ || at[0] != '/' || f->mtime_ns >= start_ns ||
		    rep__created_has(rep, at) ||
		    (pack && trace_pack_find(pack, trace_reader_process(r)->host_id, at)))
			continue;
		c = trace_file_check(f, at, what, sizeof(what));
		if (c == 1) {
			rep__diag_set(d, TRACE_EINVAL, NULL,
			              "%s %s since the recording%s%s%s: pack the session on the "
			              "recording machine (encore pack), or pass --ignore-changed-files",
			              at, strcmp(what, "missing") ? "changed" : "was removed",
			              strcmp(what, "missing") ? " (" : "",
			              strcmp(what, "missing") ? what : "",
			              strcmp(what, "missing") ? ")" : "");
			rc = TRACE_EINVAL;
		} else if (c < 0) {
			rep__diag_set(d, TRACE_EIO, NULL,
			              "%s, read by process %s when recorded, cannot be read now: pack the "
			              "session on the recording machine (encore pack), or pass "
			              "--ignore-changed-files", at, trace_reader_process(r)->name);
			rc = TRACE_EIO;
		}
	}
	trace_reader_close(r);
	return rc < 0 ? rc : 0;
}

/* The earliest start of a recorded image: files modified after it were written by the run. */
static int64_t session_start(struct trace_session *s)
{
	int64_t start = INT64_MAX;
	size_t i, j;

	for (i = 0; i < trace_session_count(s); i++) {
		const char *const *paths;
		size_t nf = trace_session_files(s, i, &paths);

		for (j = 0; j < nf; j++) {
			struct trace_reader *r;
			struct trace_diag d;

			if (trace_reader_open(paths[j], &r, &d) != 0)
				continue;
			if (trace_reader_process(r)->start_realtime_ns &&
			    (int64_t)trace_reader_process(r)->start_realtime_ns < start)
				start = (int64_t)trace_reader_process(r)->start_realtime_ns;
			trace_reader_close(r);
		}
	}
	return start;
}

int rep__check_files(const struct rep *r, struct trace_diag *d)
{
	const char *dir = r->dir;
	struct trace_session *s = NULL;
	struct trace_pack *pack = NULL;
	struct trace_diag pd;
	int64_t start;
	size_t i, j;
	int rc;

	memset(&pd, 0, sizeof(pd));
	if (!r->opt.no_pack) { /* packed: the replay uses the packed files */
		rc = trace_pack_open(dir, &pack, &pd);
		if (rc != 0 && rc != TRACE_ENOENT) {
			rep__diag_set(d, rc, pd.file, "the pack manifest cannot be read (%s): run encore "
			              "pack again where the session was recorded", pd.msg);
			return rc;
		}
	}
	if ((rc = trace_session_open(dir, &s, d)) != 0) {
		trace_pack_free(pack);
		return rc;
	}
	start = session_start(s);
	for (i = 0; i < trace_session_count(s) && rc == 0; i++) {
		const char *const *paths;
		size_t nf = trace_session_files(s, i, &paths);

		for (j = 0; j < nf && rc == 0; j++)
			rc = check_one(r, paths[j], start, pack, d);
	}
	trace_session_close(s);
	trace_pack_free(pack);
	return rc;
}
