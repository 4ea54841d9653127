/*
 * view.h: what `encore show` and `encore export` draw from, shared by cmd_show.c (which
 * defines it) and cmd_export.c.
 *
 * A view is the analyzer's model of a session (processes, events, message edges) plus what
 * only the trace files hold and the viewers want: each event's timestamp, a mark's key, and
 * where each process was forked.  view_sweep walks every event once in an order consistent
 * with happened-before (program order, messages, connections, ends of file, forks), which is
 * what a space-time layout and vector clocks both need.
 */
#ifndef ENCORE_CLI_VIEW_H
#define ENCORE_CLI_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "ana.h"

struct view_event {
	uint32_t kind;          /* enum trace_kind */
	uint32_t channel;
	int64_t result;         /* marks: the value */
	uint64_t time_ns;       /* as recorded (0 when not stamped) */
	uint64_t ts_ns;         /* display time: the recorded time, made to increase along
	                           happened-before (unstamped events borrow their neighbours') */
	uint64_t rank;          /* Lamport clock: 1 + max(previous event, the send of a receive,
	                           the fork of a first event) */
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
	int is_src;             /* another process's event (receive, accept, end of file, forked
	                           child) depends on this event */
};

struct view_proc {
	const char *name;
	int parent;             /* view process number of the parent, -1 for a root */
	uint64_t fork_index;    /* the parent's fork event that started it */
	int64_t pid;
	uint64_t n;
	struct view_event *ev;  /* ev[k - 1] is event k */
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

/* Call fn for every event once, each after everything that happened before it.  Returns 0,
 * fn's first non-zero return, or TRACE_ECORRUPT if the edges form a cycle. */
int view_sweep(const struct view *v, int (*fn)(void *ctx, size_t p, uint64_t k), void *ctx);

#endif
