/*
 * view.h: pictures of a recorded session: what `encore show` and `encore export` write.
 *
 * A view is the analyzer's model of a session (processes, events, message edges) plus what
 * only the trace files hold and the viewers want: each event's timestamp, a mark's key, and
 * where each process was forked.  Its order and clocks come from the analyzer (ana_sweep,
 * ana_vclocks), which is the one home of happened-before; the writers only lay it out:
 * a space-time diagram in SVG, Chrome trace-event JSON (Perfetto), a ShiViz log.
 *
 * Conventions are the analyzer's: 0 or a negative TRACE_E* code, a struct trace_diag where
 * one is taken.  The writers print to the FILE they are given and nothing else; the caller
 * checks the stream for write errors.
 */
#ifndef ENCORE_VIEW_H
#define ENCORE_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ana.h"

#ifdef __cplusplus
extern "C" {
#endif

struct view_event {
	uint32_t kind;          /* enum trace_kind */
	uint32_t channel;
	int64_t result;         /* marks: the value */
	uint64_t time_ns;       /* as recorded (0 when not stamped) */
	uint64_t ts_ns;         /* display time: the recorded time, made to increase along
	                           happened-before (unstamped events borrow their neighbours') */
	uint64_t rank;          /* Lamport clock: 1 + max(previous event, every event it
	                           depends on: ana_event_deps) */
	const char *key;        /* marks: the key; else NULL */
	uint32_t src_proc;      /* receives: the process of the send; accepts: of the connect
	                           (ANA_NO_PROC: none) */
	uint64_t src_index;
	struct ana_ref *xdeps;  /* edges into it beyond src and the fork (ana_event_deps): an
	                           end of file's releases, the receive that made room for a
	                           send, the send a readiness result saw */
	uint32_t nxdeps;
	int external;           /* external input: bytes from outside, clock, random, ready set,
	                           pid */
	uint32_t thread;        /* the process's thread that made it (0: the main thread) */
};

struct view_proc {
	const char *name;
	int parent;             /* view process number of the parent, -1 for a root */
	uint64_t fork_index;    /* the parent's fork event that started it */
	int64_t pid;
	uint64_t n;
	struct view_event *ev;  /* ev[k - 1] is event k */
	uint32_t nthreads;      /* 1 + the highest thread of its events (1: one thread) */
};

struct view {
	struct ana_session *s;
	size_t nprocs;
	struct view_proc *procs;
	uint64_t nmessages;     /* receives linked to a send (as ana_stats counts them) */
	uint64_t max_rank;
};

/* Load session `dir`: 0, or a negative TRACE_E* code with *diag filled. */
int view_load(const char *dir, struct view *v, struct trace_diag *diag);
void view_free(struct view *v);

/* 1 if event (p, k) is a receive drawn as a message arrow (from its src_proc/src_index). */
int view_is_message(const struct view *v, size_t p, uint64_t k);

/* A space-time diagram as SVG: one line per process, events by Lamport rank, messages,
 * forks and other edges as arrows; with cuts (may be NULL), each cut drawn across the
 * processes and `pred` (may be NULL) named in the title. */
int view_svg_write(FILE *out, const char *dir, const struct view *v, const char *pred,
                   const struct ana_cuts *cuts);

/* Chrome trace-event JSON (chrome://tracing, Perfetto): a track per process, a slice per
 * event at its display time, flows for messages, connections and forks.  *flows (may be
 * NULL) gets the number of message flows. */
int view_chrome_write(FILE *out, const char *dir, const struct view *v, uint64_t *flows);

/* A ShiViz log: the parsing regex, an empty delimiter, then per event (in ana_sweep's
 * order) "HOST {vector clock}" and a description. */
int view_shiviz_write(FILE *out, const struct view *v);

/* s as a JSON string literal, escaped: quotes, backslashes, control characters (\uXXXX);
 * other bytes as they are.  The one escaper of every JSON encore writes (the CLI's --json
 * outputs too). */
void view_json_string(FILE *out, const char *s);

#ifdef __cplusplus
}
#endif

#endif
