/*
 * predicate.h: the predicate language of encore (schemas/predicates.md), part of libtrace's
 * public interface (included by trace.h; include trace.h, not this file).
 *
 *   P      := LP
 *   LP     := DP ('->' DP)*          linked (Miller & Choi 3.4)
 *   DP     := CP ('||' CP)*          disjunctive
 *   CP     := SP ('&&' SP)*          conjunctive
 *   SP     := PROC ':' LOCAL | '(' P ')'
 *
 * A parsed predicate is classified by shape.  Except for TRACE_PRED_GENERAL it is exposed in
 * normal form: a chain of DPs (one for non-linked predicates), each a list of CPs, each a list
 * of simple predicates with at most one per process (two SPs of one CP naming the same process
 * are merged into one whose LOCAL is the `and` of both).
 *
 * A LOCAL condition is evaluated on one process state through a caller-supplied term
 * callback, so the analyzer (offline, from the trace) and the replayer (live, reading the
 * program's memory for var.SYMBOL) share one evaluator.
 */
#ifndef ENCORE_TRACE_PREDICATE_H
#define ENCORE_TRACE_PREDICATE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct trace_diag;

enum trace_pred_shape {
	TRACE_PRED_CONJUNCTIVE = 1, /* one DP of one CP (a single SP is conjunctive too) */
	TRACE_PRED_DISJUNCTIVE = 2, /* one DP of several CPs, each of exactly one SP */
	TRACE_PRED_LINKED = 3,      /* several DPs chained with -> */
	TRACE_PRED_GENERAL = 4,     /* && over || (or || of multi-SP CPs): NP-hard, searched */
};

/* Terms a LOCAL condition can name. */
enum trace_term_kind {
	TRACE_TERM_EVENTS = 1,     /* integer: events executed (the state index) */
	TRACE_TERM_SENT,           /* integer: send events that moved >= 1 byte */
	TRACE_TERM_RECEIVED,       /* integer: recv events that moved >= 1 byte */
	TRACE_TERM_SENT_TO,        /* integer: sent(PROC), arg = PROC */
	TRACE_TERM_RECEIVED_FROM,  /* integer: received(PROC), arg = PROC */
	TRACE_TERM_BYTES_SENT,     /* integer */
	TRACE_TERM_BYTES_RECEIVED, /* integer */
	TRACE_TERM_MARK,           /* integer: mark.KEY, arg = KEY; 0 before any mark */
	TRACE_TERM_VAR,            /* integer: var.SYMBOL, arg = SYMBOL; replayer only */
	TRACE_TERM_IN,             /* boolean: in(FUNCTION), arg = FUNCTION */
	TRACE_TERM_LAST,           /* boolean: last(KIND), kind = enum trace_kind */
	TRACE_TERM_EXITED,         /* boolean */
};

struct trace_pred_term {
	uint32_t kind;    /* enum trace_term_kind */
	uint32_t ev_kind; /* TRACE_TERM_LAST: the enum trace_kind */
	const char *arg;  /* PROC, KEY, SYMBOL or FUNCTION; NULL when none */
};

/* The callback that gives a term's value in the state being evaluated.  Booleans are 0/1.
 * Return 0, or a negative TRACE_E* code when the term cannot be evaluated here (for example
 * var.SYMBOL offline): evaluation then fails with that code. */
typedef int (*trace_term_fn)(void *ctx, const struct trace_pred_term *term, int64_t *value);

struct trace_pred;    /* a whole parsed predicate */
struct trace_pred_sp; /* one simple predicate: PROC ':' LOCAL */

/* Parse.  On a syntax error returns TRACE_EPARSE and fills diag: offset = the 0-based column
 * of the offending character, msg = "expected X, found Y" style text.  diag may be NULL. */
int trace_pred_parse(const char *text, struct trace_pred **out, struct trace_diag *diag);
void trace_pred_free(struct trace_pred *p);

enum trace_pred_shape trace_pred_shape(const struct trace_pred *p);
/* The canonical text of p (normal form, fully parenthesised where needed). Returns the
 * length it needed (like snprintf). */
int trace_pred_format(const struct trace_pred *p, char *buf, size_t cap);
/* 1 if any SP of p names a var.SYMBOL term (only a live process can evaluate it). */
int trace_pred_uses_var(const struct trace_pred *p);

/* Normal form (not for TRACE_PRED_GENERAL). */
/* (Added note, schemas/predicates.md "Shapes": a GENERAL predicate that is an || of CPs,
 * such as `a:x && b:y || c:z`, still has its normal form here: ndp = 1, one CP per disjunct,
 * so the analyzer can compute one Inf per CP.  A GENERAL predicate with || under &&, such as
 * `(a:x || b:y) && c:z`, has none: ndp = 0 and every other accessor returns 0 / NULL; use
 * trace_pred_all_sps and trace_pred_eval_tree.  Out-of-range indices give 0 / NULL.) */
size_t trace_pred_ndp(const struct trace_pred *p);
size_t trace_pred_ncp(const struct trace_pred *p, size_t dp);
size_t trace_pred_nsp(const struct trace_pred *p, size_t dp, size_t cp);
const struct trace_pred_sp *trace_pred_get_sp(const struct trace_pred *p, size_t dp, size_t cp,
                                              size_t sp);

/* Every SP of p, whatever the shape (in text order, after merging), for callers that need
 * to precompute per-SP truth. */
size_t trace_pred_all_sps(const struct trace_pred *p, const struct trace_pred_sp *const **sps);

/* Evaluate the &&/|| structure of p (GENERAL or not; `->` is not allowed here and gives
 * TRACE_EINVAL) given the truth of each SP: sp_truth(ctx, sp) returns 0/1 or a negative code. */
int trace_pred_eval_tree(const struct trace_pred *p,
                         int (*sp_truth)(void *ctx, const struct trace_pred_sp *sp), void *ctx);

/* One simple predicate. */
const char *trace_pred_sp_proc(const struct trace_pred_sp *sp);
int trace_pred_sp_format(const struct trace_pred_sp *sp, char *buf, size_t cap);
/* The distinct terms the LOCAL names (for display of their values at a halt, and so that
 * a caller can check it supports them). */
size_t trace_pred_sp_terms(const struct trace_pred_sp *sp,
                           const struct trace_pred_term *const **terms);
/* Evaluate the LOCAL condition: *truth = 0/1.  Returns 0 or the callback's error. */
int trace_pred_sp_eval(const struct trace_pred_sp *sp, trace_term_fn term, void *ctx, int *truth);

#ifdef __cplusplus
}
#endif

#endif
