/*
 * load.c: a session directory into the model, through libtrace's public reader only.
 *
 * Each process may have several files (one per exec'd image); their events are numbered
 * continuously, so they are appended in segment order.  A damaged file contributes every whole
 * event before the damage and a warning; events dropped by the disk budget leave placeholder
 * events so that indices keep meaning what the recorder numbered.
 */
#include <stdlib.h>
#include <string.h>

#include "ana_internal.h"

/* Placeholders beyond this many are refused rather than allocated. */
#define ANA_MAX_GAP 100000000ull

static int load_file(struct ana_session *s, int p, const char *path, int first,
                     struct trace_diag *diag)
{
	struct trace_reader *r = NULL;
	struct trace_event ev;
	struct trace_diag dd;
	uint32_t *sites = NULL;
	size_t nsites = 0, capsites = 0;
	int rc, renumbered = 0;

	rc = trace_reader_open(path, &r, diag);
	if (rc)
		return rc;
	if (first) {
		const struct trace_process *tp = trace_reader_process(r);
		struct ana_proc *pr = &s->procs[p];

		if (tp) {
			free(pr->parent);
			pr->parent = strdup(tp->parent);
			pr->fork_index = tp->fork_index;
			pr->pid = tp->pid;
			snprintf(pr->host_id, sizeof(pr->host_id), "%s", tp->host_id);
			if (!pr->parent) {
				rc = TRACE_ENOMEM;
				goto out;
			}
		}
	}
	while ((rc = trace_reader_next(r, &ev)) == 1) {
		struct ana_proc *pr = &s->procs[p];
		int64_t added;

		if (ev.index > pr->n + 1) {
			uint64_t gap = ev.index - pr->n - 1;
			struct trace_event none;

			if (gap > ANA_MAX_GAP) {
				ana__diag(diag, TRACE_ECORRUPT, "%s: event %llu follows event %llu: too "
				          "many missing events", path, (unsigned long long)ev.index,
				          (unsigned long long)pr->n);
				rc = TRACE_ECORRUPT;
				goto out;
			}
			memset(&none, 0, sizeof(none));
			none.fd = -1;
			for (uint64_t g = 0; g < gap; g++)
				if ((added = ana_add_trace_event(s, p, &none)) < 0) {
					rc = (int)added;
					goto out;
				}
		} else if (ev.index && ev.index < pr->n + 1 && !renumbered) {
			/* Indices must grow; a file that repeats them is numbered on from where the
			 * previous one stopped, and the difference is reported rather than fatal, so
			 * the rest of the session can still be analysed. */
			ana__warn(s, "%s: event %llu comes after event %llu of the previous image: "
			          "its events were renumbered from %llu", path,
			          (unsigned long long)ev.index, (unsigned long long)pr->n,
			          (unsigned long long)pr->n + 1);
			renumbered = 1;
		}
		if ((added = ana_add_trace_event(s, p, &ev)) < 0) {
			rc = (int)added;
			goto out;
		}
		if (ev.site) {
			size_t i;

			/* sites are few; a linear check keeps the stack table small and exact */
			for (i = 0; i < nsites && sites[i] != ev.site; i++)
				;
			if (i == nsites) {
				const struct trace_stack *st = trace_reader_stack(r, ev.site);

				if (nsites == capsites) {
					size_t nc = capsites ? capsites * 2 : 32;
					uint32_t *n = realloc(sites, nc * sizeof(*n));

					if (!n) {
						rc = TRACE_ENOMEM;
						goto out;
					}
					sites = n;
					capsites = nc;
				}
				sites[nsites++] = ev.site;
				if (st && ana__stack(s, (size_t)p, ev.site) == NULL) {
					const char **fn = calloc(st->nframes ? st->nframes : 1, sizeof(char *));

					if (!fn) {
						rc = TRACE_ENOMEM;
						goto out;
					}
					for (uint32_t f = 0; f < st->nframes; f++)
						fn[f] = st->frames[f].function ? st->frames[f].function : "";
					rc = ana_add_stack(s, p, ev.site, fn, st->nframes);
					free(fn);
					if (rc)
						goto out;
				}
			}
		}
	}
	if (rc < 0) {
		ana__diag(diag, rc, "%s: reading events: %s", path, trace_strerror(rc));
		goto out;
	}
	rc = 0;
	if (first) {
		/* The first image inherited its channels from the parent (fork); a later image's
		 * list names channels of this same process that survived exec, which are already
		 * the same end records. */
		const struct trace_inherit *inh;
		size_t n = trace_reader_inherited(r, &inh);

		for (size_t i = 0; i < n; i++)
			if ((rc = ana_add_inherited(s, p, inh[i].channel)))
				goto out;
	}
	{
		/* chunks dropped by the disk budget: the channels their events defined */
		const struct trace_chan_def *defs;
		size_t n = trace_reader_kept_channels(r, &defs);

		for (size_t i = 0; i < n; i++)
			if ((rc = ana__kept_channel(s, (uint32_t)p, &defs[i])))
				goto out;
	}
	memset(&dd, 0, sizeof(dd));
	if (trace_reader_damage(r, &dd))
		ana__warn(s, "%s: damaged at offset %llu (%s): events after it are missing", path,
		          (unsigned long long)dd.offset, dd.msg[0] ? dd.msg : trace_strerror(dd.code));
	if (trace_reader_dropped(r))
		ana__warn(s, "%s: %llu events were dropped by the disk budget", path,
		          (unsigned long long)trace_reader_dropped(r));
out:
	free(sites);
	trace_reader_close(r);
	return rc;
}

int ana_load(const char *dir, struct ana_session **out, struct trace_diag *diag)
{
	struct trace_session *ts = NULL;
	struct ana_session *s = NULL;
	int rc;

	if (!dir || !out)
		return TRACE_EINVAL;
	*out = NULL;
	if (diag)
		memset(diag, 0, sizeof(*diag));
	if ((rc = trace_session_open(dir, &ts, diag)))
		return rc;
	if ((rc = ana_new(&s)))
		goto out;
	for (size_t i = 0; i < trace_session_count(ts); i++) {
		const char *const *paths;
		size_t nf = trace_session_files(ts, i, &paths);
		int p = ana_add_process(s, trace_session_name(ts, i), NULL, 0);

		if (p < 0) {
			rc = p;
			ana__diag(diag, rc, "%s: process '%s' appears twice", dir,
			          trace_session_name(ts, i));
			goto out;
		}
		for (size_t f = 0; f < nf; f++)
			if ((rc = load_file(s, p, paths[f], f == 0, diag)))
				goto out;
	}
	if (!s->nprocs) {
		rc = TRACE_ENOENT;
		ana__diag(diag, rc, "%s: no traces in this directory (record one with `encore record "
		          "-o %s -- CMD`)", dir, dir);
		goto out;
	}
	rc = ana_finish(s, diag);
out:
	trace_session_close(ts);
	if (rc) {
		if (diag && !diag->msg[0])
			ana__diag(diag, rc, "%s: %s", dir, trace_strerror(rc));
		ana_free(s);
		return rc;
	}
	*out = s;
	return 0;
}
