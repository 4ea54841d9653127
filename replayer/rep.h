/*
 * rep.h: the replayer's public face, used by `encore replay` (cli/cmd_replay.c).
 *
 * The global debugger (GD, Manabe & Imase section 2.2) re-executes every root process of a
 * recorded session with libencore-replay.so preloaded, so that each process runs under a
 * local controller (LC) that enforces its trace, and coordinates them over a control socket
 * inside the session directory.  Without a target it replays to the end; with a cut (one
 * state index per process, from `encore inf --json` or computed here from a predicate) each
 * LC halts before the event that would leave its state, and the GD reports the global state.
 *
 * Conventions follow trace.h: 0 or a count on success, a negative TRACE_E* code on failure
 * with a struct trace_diag naming the thing and what to do.  Nothing here prints or exits;
 * the only text the replayer produces is in the results it returns.
 */
#ifndef ENCORE_REP_H
#define ENCORE_REP_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rep;

/* rep_options.no_isolate: isolated where possible (ENCORE_NO_ISOLATE=auto, encore-replay(1)) */
#define REP_ISOLATE_IF_ABLE 2

struct rep_options {
	const char *lib;          /* absolute path of libencore-replay.so (required) */
	unsigned stall_ms;        /* no progress for this long: REP_STALLED (0: 10000) */
	volatile sig_atomic_t *interrupted; /* set by the caller's SIGINT/SIGTERM handler */
	int roots_stdout;         /* > 0: this descriptor becomes the roots' stdout (so that the
	                             caller's stdout carries only its report); 0: inherited */
	int roots_output;         /* 1: each root's stdout and stderr go to the file
	                             DIR/.encore-replay/NAME.out (0600; its forked children write
	                             there too, rep_output_path), its stdin is /dev/null;
	                             rep_close removes them */
	int live_terms;           /* 1: every LC keeps the counters of predicate terms from its
	                             start, so that the online protocol can begin at any halt
	                             (rep_online_here; `encore debug`) */
	int ignore_changed_files; /* 1: do not refuse an unpacked session whose file inputs
	                             changed since the recording (gd_files.c) */
	/* Isolation and packed files (replayer/README.md, "Isolation and packed files") */
	int no_isolate;           /* 1: no overlay: the replayed processes write to this machine's
	                             files (otherwise rep_start refuses where the kernel cannot
	                             isolate, saying why); REP_ISOLATE_IF_ABLE: isolated where the
	                             machine can make the namespace, as 1 where it cannot
	                             (rep_unisolated says why) */
	const char *keep_scratch; /* the scratch area (what the replay wrote) goes in this new or
	                             empty directory and is kept; NULL: DIR/.encore-replay/scratch,
	                             removed by rep_close */
	int no_pack;              /* 1: DIR/pack is ignored, this machine's files are used */
};

/* Open a recorded session for replay: every trace is read through (a damaged one is refused,
 * naming the file and offset), every recorded executable must still be there with the same
 * ELF build-id (a changed binary is refused before anything starts), and so must every file
 * the processes read (gd_files.c). */
int rep_open(const char *dir, const struct rep_options *opt, struct rep **out,
             struct trace_diag *diag);
void rep_close(struct rep *r);

size_t rep_nprocs(const struct rep *r);
const char *rep_proc_name(const struct rep *r, size_t i);
uint64_t rep_proc_nevents(const struct rep *r, size_t i);

/* The cut to halt at: process i stops at state `state` (before event state + 1). */
int rep_set_target(struct rep *r, size_t i, uint64_t state);
/* The first cut of a JSON document in the shape `encore inf --json` prints
 * ({"cuts":[{"PROC":N,...},...]}), or a bare {"PROC":N,...} object.  Processes it does not
 * name are halted at state 0.  TRACE_EPARSE with diag for bad text, TRACE_ENOENT for an
 * unknown process, TRACE_EINVAL for a state beyond the trace. */
int rep_cut_json(struct rep *r, const char *json, struct trace_diag *diag);
/* Inf(P) computed offline by the analyzer; 1 when P holds somewhere (the cut is set; for a
 * disjunctive P the first minimal cut, *which says its position among `*ncuts`), 0 when P
 * never holds (nothing set). */
int rep_cut_predicate(struct rep *r, const char *text, size_t *which, size_t *ncuts,
                      struct trace_diag *diag);

/* Halt with the online protocol instead (Manabe & Imase section 3.2 and Appendix B): the
 * processes P names are active, each LC evaluates its simple predicate live (var.SYMBOL
 * reads the program's memory), the others are passive and run only as far as the sends the
 * active ones need; the GD declares the halt when every process is halted.  A disjunctive P
 * halts with halt markers (Miller & Choi section 2.2) at the first disjunct that fires
 * (rep_fired).  Conjunctive and disjunctive P only. */
int rep_set_online(struct rep *r, const char *text, struct trace_diag *diag);
/* Report the values of P's terms at the halt (each LC evaluates its own process's terms in
 * its halted state); for halts at a precomputed cut.  rep_set_online does it too. */
int rep_set_terms(struct rep *r, const char *text, struct trace_diag *diag);
/* After a halt with markers: the process whose simple predicate held first; else NULL. */
const char *rep_fired(const struct rep *r);

/* Start the roots (argv and cwd from the trace header).  Each becomes its own process group
 * leader's member, dies with the GD (PR_SET_PDEATHSIG) and reports to the control socket. */
int rep_start(struct rep *r, struct trace_diag *diag);

enum rep_outcome {
	REP_END = 0,          /* every process ran to the end of its trace */
	REP_HALTED = 1,       /* every process is halted at its target (or ended before it) */
	REP_DIVERGED = 2,     /* a process did not do what its trace says: rep_message */
	REP_STALLED = 3,      /* no progress for stall_ms: rep_message says who waits for what */
	REP_INTERRUPTED = 4,  /* *interrupted was set */
	REP_FAILED = 5,       /* processes ended early or never started: rep_message */
	REP_BAD_PREDICATE = 6,/* the halting predicate names what a process lacks (a var. term
	                         of no such global variable): rep_message */
};

/* Run until one of the outcomes above.  Returns it (>= 0) or a negative code. */
int rep_run(struct rep *r);
/* The report of the last REP_DIVERGED / REP_STALLED / REP_FAILED, "" otherwise. */
const char *rep_message(const struct rep *r);

enum rep_pstate {
	REP_P_NOT_STARTED = 0,
	REP_P_RUNNING = 1,
	REP_P_HALTED = 2,
	REP_P_EXITED = 3,     /* ended (exit or signal) */
};

struct rep_proc_info {
	const char *name;
	long pid;             /* 0 when not started */
	enum rep_pstate state;
	uint64_t index;       /* state index: events executed */
	uint64_t nevents;     /* in the trace */
	int wait_status;      /* as waitpid gave it, when exited and reaped; -1 otherwise */
	char last[160];       /* event `index`, "-" at state 0 */
	char next[160];       /* event index + 1, "-" at the end */
	const char *backtrace;/* at a halt: one frame per line (libunwind, in the process) */
	const char *terms;    /* at a halt: "TERM = VALUE" lines for the terms the predicate
	                         names on this process (read live, var. ones included); or NULL */
};
int rep_proc_info(struct rep *r, size_t i, struct rep_proc_info *info);

/* Single step (Manabe & Imase section 5.1), after a halt at a precomputed cut: process i
 * advances by one event, and every other process as far as that event needs (the least
 * consistent cut including it); then rep_run again to reach the new halt. */
int rep_step(struct rep *r, size_t i, struct trace_diag *diag);

/* Leave the halt and run to the end (then rep_run again). */
int rep_continue(struct rep *r);
/* End every replayed process (SIGKILL): the roots and every descendant of the caller, in
 * its process group or not, known to the GD or not (the GD is a subreaper: the caller must
 * not have children of its own it wants kept).  Reaps them all; waits a few seconds at most
 * (a process stuck in the kernel may outlive it).  Idempotent. */
void rep_kill(struct rep *r);

/* The analyzer's view of the session (for evaluating predicate terms at a halt). */
struct ana_session;
struct ana_session *rep_analysis(struct rep *r);

/* --- for `encore debug` (gd_debug.c) --- */

/* The state index of every process now (rep_nprocs entries, in rep_proc_name order): at a
 * halt, the global state; an ended process is at the end of its trace, one not started at 0. */
int rep_current_cut(struct rep *r, uint64_t *cut);
/* Leave the halt for the consistent cut cut[] (rep_nprocs entries), every process at or
 * after its state now (TRACE_EINVAL with diag otherwise: going back needs a new execution,
 * rep_close and rep_open again, Manabe & Imase 5.2); then rep_run to reach it.  After a halt
 * at a precomputed cut, at the start (every target 0), or of rep_online_here. */
int rep_goto(struct rep *r, const uint64_t *cut, struct trace_diag *d);
/* From a halt (at the start, a precomputed cut, or an earlier online halt): the online
 * protocol for P (conjunctive or disjunctive; var. terms read live; no sent(P)/received(P)),
 * every process starting from its state now; strict: the processes P names move on by one
 * event at least.  Needs rep_options.live_terms.  Then rep_run: REP_HALTED at the least
 * consistent cut at or after the current one where P holds, or REP_FAILED with
 * rep_never_held(r) true when it never holds (the processes are halted or ended: rep_goto
 * moves on).  TRACE_EINVAL with diag for a predicate it cannot take. */
int rep_online_here(struct rep *r, const char *text, int strict, struct trace_diag *d);
int rep_never_held(const struct rep *r);
/* Trace points evaluated live by the LCs (trace C print E with var. terms): cond is a simple
 * predicate on process `proc`, term its E as the first term of a simple predicate on it
 * ("PROC: TERM != 0"); each time cond becomes true in the state before an event of proc
 * (in every execution and image of it), the GD records {id, proc, state, E's value there}.
 * Set at a halt or before rep_start.  rep_trace_del(r, 0) removes them all. */
struct rep_traced {
	int id;
	size_t proc;          /* rep order */
	uint64_t state;
	int64_t value;
};
int rep_trace_add(struct rep *r, int id, const char *proc, const char *cond, const char *term,
                  struct trace_diag *d);
void rep_trace_del(struct rep *r, int id);
/* What the trace points reported since the last rep_traced_clear, in the order received. */
const struct rep_traced *rep_traced(const struct rep *r, size_t *n);
void rep_traced_clear(struct rep *r);
/* The global integer variable `name` (1, 2, 4 or 8 bytes, signed, as var.SYMBOL reads it)
 * of halted process i, found in the symbol tables of the files it maps (libdw) and read
 * from its memory.  0, TRACE_ENOENT (no such symbol), TRACE_EINVAL (not halted, not an
 * integer's size, encore built without libdw) or TRACE_EIO, with diag. */
int rep_read_global(struct rep *r, size_t i, const char *name, int64_t *value,
                    struct trace_diag *d);
/* With roots_output: the file collecting process i's output (its root's); 0, or
 * TRACE_ENOENT without roots_output. */
int rep_output_path(const struct rep *r, size_t i, char *buf, size_t cap);

/* Isolation: the scratch area of the running replay (one host-HOSTID directory per recorded
 * host, each with fs/NAME/upper for every file system covered), or NULL when the replay is
 * not isolated.  The number of packed files DIR/pack/manifest lists (0: not packed, or
 * no_pack). */
const char *rep_scratch(const struct rep *r);
/* Where an isolated replay's writes are real, "PATH (WHY), ...": a directory with mounts below
 * it, in a user namespace, covered subdirectory by subdirectory ("/run (its own entries)"),
 * a FUSE mount ("/mnt/x (FUSE)"); or NULL. */
const char *rep_isolation_gaps(const struct rep *r);
/* With no_isolate REP_ISOLATE_IF_ABLE, once rep_start made no namespace: why not (the
 * replay then writes to this machine's files); otherwise NULL. */
const char *rep_unisolated(const struct rep *r);
size_t rep_packed_files(const struct rep *r);
/* Once rep_start returned: how many paths the recording created (that were not there when
 * it started) exist now and were hidden from the replayed processes (removed inside their
 * namespace: replayer/README.md, "Isolation and packed files"); and how many exist now and
 * the replayed processes see, without isolation or outside every overlay. */
size_t rep_created_hidden(const struct rep *r);
size_t rep_created_visible(const struct rep *r);
/* Of those, how many a rename made from a file that was there when the recording started,
 * and were renamed back to that old name (not counted as hidden). */
size_t rep_created_restored(const struct rep *r);
/* Once rep_start returned: the files that were there before the recording, that it changed
 * and then read ("PATH, PATH...", *n of them), which the replay reads as they are now, not
 * as the recording read them; NULL when none. */
const char *rep_changed_inputs(const struct rep *r, size_t *n);
/* What replayed processes did otherwise than recorded without diverging ("NAME: WHAT; ..."),
 * or NULL: random bytes asked for before their LC started that differ from the recorded
 * ones (replayer/README.md). */
const char *rep_warnings(const struct rep *r);
/* In a child about to exec a tool on replayed process i (gdb): join the namespaces process i
 * runs in, so that the tool sees its files (packed ones included) and, without root, may
 * trace it from inside its user namespace.  0 (also when the replay is not isolated), or a
 * negative errno.  Single-threaded callers only (setns(2)). */
int rep_enter_namespaces(const struct rep *r, size_t i);

/* The ELF NT_GNU_BUILD_ID of a file: its length (> 0), 0 when the file has none, or a
 * negative code (TRACE_EIO cannot read, TRACE_EINVAL not ELF). */
int rep_elf_build_id(const char *path, uint8_t *out, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
