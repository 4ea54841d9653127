/*
 * debug.h: what the files of `encore debug` share (cmd_debug.c: options and the input loop;
 * debug_session.c: the replay, moving between cuts, printing states; debug_cmds.c: reading
 * the commands, predicates, moves; debug_inspect.c: bt, print, gdb, output, races;
 * debug_trace.c: trace points).  Private to cli/.
 */
#ifndef ENCORE_CLI_DEBUG_H
#define ENCORE_CLI_DEBUG_H

#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "ana.h"
#include "rep.h"

#define DBG_MAX_BP 64
#define DBG_MAX_TRACE 32
#define DBG_MAX_HIST 256            /* states back remembers */

struct dbg_bp {                 /* stop P: a halting predicate */
	int id;
	char *text;
	struct trace_pred *pred;
	int live;                   /* reads var. terms: found by the online protocol */
};

struct dbg_trace {              /* trace C print E */
	int id;
	char *cond, *expr;
	struct trace_pred *pred;    /* C, one simple predicate */
	size_t proc;                /* its process, rep order */
	uint64_t *bits;             /* the states of proc where C holds (ana_sp_bits) */
	struct trace_pred_term term;/* E, one term of the predicate language */
	char *arg;                  /* its argument (mark key, process) */
	int live;                   /* C or E reads var. terms: the LC evaluates them
	                               (rep_trace_add), bits is NULL */
	char *etext;                /* E as the simple predicate that gives its term */
};

struct dbg {
	const char *dir;
	int json, tty, quit;
	char lib[PATH_MAX];
	struct rep_options ro;
	struct rep *r;
	int live;                   /* the processes are halted at cur (not ended, not failed) */
	int fresh;                  /* r is opened and not started yet */
	int failed;                 /* the execution stopped (divergence, crash...): cur is not
	                               a state of it */
	size_t n;                   /* processes, rep order */
	int *amap;                  /* rep order -> analyzer order (-1: none) */
	uint64_t *cur;              /* the state shown now */
	uint64_t *hist;             /* the states shown before it, the latest last (for back) */
	size_t nhist;
	int moving_back;            /* back is moving: the state left is not kept */
	struct dbg_bp bps[DBG_MAX_BP];
	size_t nbp;
	int next_bp;
	struct dbg_bp *hit;         /* while continue shows its state: the predicate that holds */
	struct dbg_trace trs[DBG_MAX_TRACE];
	size_t ntr;
	int next_tr;
};

extern volatile sig_atomic_t dbg_interrupted;

/* debug_session.c */
int dbg_open(struct dbg *g);            /* first replay, halted at the start; 0 or exit status */
void dbg_free(struct dbg *g);
/* Move to cut[] (rep order): forward in this execution, else by a new one.  0, or -1 with
 * the message in err. */
int dbg_move(struct dbg *g, const uint64_t *cut, char *err, size_t cap);
/* Run forward from the current halt with the online protocol to the least consistent cut
 * where P (var. terms read live) holds (rep_online_here; strict: its processes move on).
 * 1: halted there (g->cur), 0: P never holds (g->cur: where the processes halted or ended,
 * still live), -2: P refused, nothing moved, -1: the replay stopped; err says why. */
int dbg_online(struct dbg *g, const char *text, int strict, char *err, size_t cap);
int dbg_proc(struct dbg *g, const char *name);  /* rep index, or -1 */
/* Rep-order cut <-> analyzer-order cut. */
void dbg_to_ana(struct dbg *g, const uint64_t *cut, uint64_t *acut);
void dbg_from_ana(struct dbg *g, const uint64_t *acut, uint64_t *cut);
/* The state now: "cuts" and "processes" members (JSON, no braces) or text. */
void dbg_print_state_json(struct dbg *g);
void dbg_print_state_text(struct dbg *g);
/* The trace points hit between the states from[] and to[] (JSON member "traced" or text). */
void dbg_print_traced(struct dbg *g, const uint64_t *from, const uint64_t *to);

/* debug_trace.c: trace C print E, untrace [N] */
void dbg_trace_add(struct dbg *g, char *args);
void dbg_trace_del(struct dbg *g, char *args);

/* debug_inspect.c */
void dbg_cmd_bt(struct dbg *g, char *args);
void dbg_cmd_output(struct dbg *g, char *args);
void dbg_cmd_print(struct dbg *g, char *args);
void dbg_cmd_gdb(struct dbg *g, char *args);
void dbg_cmd_races(struct dbg *g);

/* debug_cmds.c */
void dbg_command(struct dbg *g, char *line);
void dbg_error(struct dbg *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *dbg_word(char **s);       /* the next word of *s, NUL-terminated in place; NULL: none */
char *dbg_rest(char *s);        /* s without its leading and trailing blanks */
/* A process of the session by name; says so and returns -1 when it is not one. */
int dbg_proc_arg(struct dbg *g, const char *cmd, const char *name);

#endif
