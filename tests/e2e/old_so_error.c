/*
 * old_so_error.c: rewrites one trace file as a recorder before call getsockopt (135) wrote
 * it: every read of SO_ERROR (a connect event of call getsockopt) becomes a connect event of
 * call connect with the same aux (schemas/trace-format.md, "Event kinds"), everything else
 * (process, call sites, inherited channels, events) copied as it is.  For connfail_dump.sh:
 * traces of older recorders must still replay.
 *
 *   old_so_error IN OUT
 *
 * Exit status 0, or 1 with the reason on stderr.
 */
#include <fcntl.h>
#include <stdio.h>

#include "trace.h"

int main(int argc, char **argv)
{
	struct trace_reader *r;
	struct trace_writer *w;
	struct trace_diag d;
	const struct trace_inherit *inh;
	struct trace_event ev;
	static uint8_t defined[1 << 16]; /* call sites defined in OUT so far */
	size_t n, done = 0;
	int rc, changed = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: old_so_error IN OUT\n");
		return 1;
	}
	if (trace_reader_open(argv[1], &r, &d) != 0 ||
	    trace_writer_open(AT_FDCWD, argv[2], trace_reader_process(r), NULL, 0, &w, &d) != 0) {
		fprintf(stderr, "old_so_error: %s: %s\n", d.file, d.msg);
		return 1;
	}
	while ((rc = trace_reader_next(r, &ev)) == 1) {
		const struct trace_stack *st;

		/* the inherited channels are known after the first event is read */
		for (n = trace_reader_inherited(r, &inh); done < n; done++)
			trace_writer_inherit(w, inh[done].channel, inh[done].sent, inh[done].received);
		if (ev.site && ev.site < sizeof(defined) && !defined[ev.site] &&
		    (st = trace_reader_stack(r, ev.site))) {
			if (trace_writer_stack(w, st->site, st->frames, st->nframes) != 0)
				return 1;
			defined[ev.site] = 1;
		}
		if (ev.call == TRACE_CALL_GETSOCKOPT) {
			ev.call = TRACE_CALL_CONNECT;
			changed++;
		}
		if (trace_writer_event(w, &ev) != 0)
			return 1;
	}
	trace_reader_close(r);
	if (rc < 0 || trace_writer_close(w) != 0)
		return 1;
	printf("%d\n", changed);
	return 0;
}
