/*
 * stab.h: stability, encore's part for simultaneous events (Spezialetti & Gupta, "Debugging
 * Distributed Programs through the Detection of Simultaneous Events").
 *
 * The distributed control-flow graph (DCFG, section 2) of a program built from its
 * recordings, the sets of section 3.2, the valid recognition points (3.2.4) of a
 * simultaneous event `PROC: LOCAL == PROC: LOCAL ...` (section 3.1), and the recorded run
 * checked at the Inf cut.  schemas/stability.md is the contract and says where encore departs
 * from the paper and why.  Built on the analyzer (ana.h): a DCFG is made from finished
 * sessions.  Conventions are the analyzer's: 0 or a negative TRACE_E* code, a struct
 * trace_diag where one is taken, nothing printed.  The names keep the analyzer's ana_
 * prefix they had before stability became a part of its own.
 */
#ifndef ENCORE_STAB_H
#define ENCORE_STAB_H

#include <stddef.h>
#include <stdint.h>

#include "ana.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ana_dcfg;

enum ana_node_kind {
	ANA_NODE_START = 1,      /* the entry of a process */
	ANA_NODE_STOP = 2,       /* its end (exit, or the end of its trace) */
	ANA_NODE_SEND = 3,       /* a send call site */
	ANA_NODE_RECV = 4,       /* a receive call site */
};
/* Node flags, from recordings: they make an interaction not unique (3.2.2). */
#define ANA_NODE_F_EXTERNAL 0x1   /* recv: some instance read bytes from outside the session
                                     or that no recorded send produced */
#define ANA_NODE_F_UNRECEIVED 0x2 /* send: some instance was never read by a recorded recv */

const char *ana_node_kind_name(uint32_t kind);

struct ana_node {
	size_t proc;             /* DCFG process */
	uint32_t kind;           /* enum ana_node_kind */
	const char *key;         /* identity in its process: the call-site stack */
	const char *function;    /* innermost function ("" when unknown) */
	uint64_t seen;           /* recorded executions */
	int flags;               /* ANA_NODE_F_* */
	uint32_t nsucc, nout, nin;
};

/* What happened between two consecutive sites of a process (for the stability of local
 * events, 3.2.3): the kinds of the events in between and the keys of the marks set. */
struct ana_between {
	uint64_t kinds;          /* bit k: an event of enum trace_kind k */
	const char *const *marks;
	size_t nmarks;
};

int ana_dcfg_new(struct ana_dcfg **out);
void ana_dcfg_free(struct ana_dcfg *g);
/* Builder (tests, other front ends).  A process comes with its start and stop nodes; nodes
 * are found or added by (process, kind, key); edges are added once (again: merged). */
int ana_dcfg_add_proc(struct ana_dcfg *g, const char *name);
int ana_dcfg_add_node(struct ana_dcfg *g, int proc, uint32_t kind, const char *key,
                      const char *function);
int ana_dcfg_start(const struct ana_dcfg *g, int proc);
int ana_dcfg_stop(const struct ana_dcfg *g, int proc);
int ana_dcfg_set_flags(struct ana_dcfg *g, int node, int flags);
/* Intraprocess edge a -> b (same process); between may be NULL (nothing in between). */
int ana_dcfg_add_flow(struct ana_dcfg *g, int a, int b, const struct ana_between *between);
/* Interprocess edge: send node -> receive node. */
int ana_dcfg_add_msg(struct ana_dcfg *g, int send, int recv);
/* Before anything is added: split every call site by the process at the other end (a
 * helper that calls several servers from one site becomes one node per server), so that
 * interactions through such sites can be unique.  Off by default. */
int ana_dcfg_split_by_peer(struct ana_dcfg *g, int on);
/* Before anything is added: split every call site by the site its process executed just
 * before it (an event loop receiving every message type at one site becomes one node per
 * predecessor: the receive after a vote is not the receive after an ack).  Off by default. */
int ana_dcfg_split_by_context(struct ana_dcfg *g, int on);
/* Merge a finished session into g: processes by logical name, nodes by call-site stack.
 * With `dir` (the session directory) sites are told apart by function+offset of every
 * frame, read from the trace files; with dir NULL by function names only.  The session's
 * events stay mapped to nodes (for ana_stable_run) until the next call. */
int ana_dcfg_add_session(struct ana_dcfg *g, const struct ana_session *s, const char *dir,
                         struct trace_diag *diag);
/* Reach, Dom, PDom, PRE, POST1, POST2 (3.2, 3.2.1, 3.2.2).  Again after any change. */
int ana_dcfg_solve(struct ana_dcfg *g, struct trace_diag *diag);

size_t ana_dcfg_nprocs(const struct ana_dcfg *g);
const char *ana_dcfg_proc_name(const struct ana_dcfg *g, size_t p);
int ana_dcfg_proc_find(const struct ana_dcfg *g, const char *name);
size_t ana_dcfg_nnodes(const struct ana_dcfg *g);
size_t ana_dcfg_nmsgs(const struct ana_dcfg *g);
int ana_dcfg_node(const struct ana_dcfg *g, size_t n, struct ana_node *out);
int ana_dcfg_find(const struct ana_dcfg *g, size_t proc, uint32_t kind, const char *key);

enum ana_set {
	ANA_SET_REACH = 1,       /* nodes reachable from n by >= 1 intraprocess edge */
	ANA_SET_DOM,             /* nodes on every path from start to n (n included) */
	ANA_SET_PDOM,            /* nodes on every path from n to stop (n included) */
	ANA_SET_PRE,             /* Definition 3.1 (sends) */
	ANA_SET_POST1,           /* Definition 3.2, sends: executing them guarantees n */
	ANA_SET_POST2,           /* Definition 3.2, receives: executing them implies n before */
};
/* 1 if m is in SET(n), 0 if not; TRACE_EINVAL before ana_dcfg_solve. */
int ana_dcfg_in(const struct ana_dcfg *g, enum ana_set set, size_t n, size_t m);

/* A simultaneous event LE_1 == LE_2 == ... (Definition 1.1).  The text is split on every
 * ` == ` (white space on both sides) outside parentheses that is followed by `PROC:`; each
 * part must be one simple predicate (predicate.h), each on its own process. */
struct ana_se;
int ana_se_parse(const char *text, struct ana_se **out, struct trace_diag *diag);
void ana_se_free(struct ana_se *se);
size_t ana_se_ncomp(const struct ana_se *se);
const struct trace_pred_sp *ana_se_sp(const struct ana_se *se, size_t i);
const char *ana_se_text(const struct ana_se *se, size_t i);
/* 1 when component i is monotonic by its terms (once true, true in every later state:
 * `sent >= 3`, `exited`, `received(b) > 0 and bytes_sent >= 10`...), else 0. */
int ana_se_monotonic(const struct ana_se *se, size_t i);

enum ana_se_class {
	ANA_SE_INVALID = 0,
	ANA_SE_LOCAL = 1,        /* the component is on the recognizing process itself */
	ANA_SE_MONOTONIC = 2,    /* stable by its semantics: pre-recognition interaction only */
	ANA_SE_DEPENDENT = 3,    /* dependent monotonic: P_i blocks right after S_i */
	ANA_SE_GENERALIZED = 4,  /* generalized dependent monotonic: nothing on the paths
	                            S_i ~> R_i changes what the LOCAL reads */
};
const char *ana_se_class_name(uint32_t cls);

#define ANA_NO_NODE SIZE_MAX
/* Why a point is valid for one component i (Fig. 1): the pre-recognition interaction
 * S_i -> ... -> R_i^P and, unless monotonic or local, the post-recognition interaction
 * S_i^P -> ... -> R_i. */
struct ana_se_witness {
	uint32_t cls;            /* enum ana_se_class */
	size_t pre_send, pre_recv;    /* S_i (in P_i), R_i^P (in P); ANA_NO_NODE when local */
	size_t post_send, post_recv;  /* S_i^P (in P), R_i (in P_i); ANA_NO_NODE when none */
	int post1;               /* S_i^P in POST1(R_i): 3.2.4's first alternative */
	int pdom_p;              /* S_i^P postdominates p: the second alternative */
};
struct ana_recog {
	size_t proc;             /* the recognizing process P (DCFG numbering) */
	size_t node;             /* p: just after this node of P */
	uint32_t cls;            /* the strongest class its components need */
	struct ana_se_witness *w;     /* one per component */
};
struct ana_recogs {
	size_t ncomp;
	size_t n;
	struct ana_recog *v;     /* by process, then node */
	int bound_hit;           /* the search stopped at its bound: some points may be missing */
};
void ana_recogs_free(struct ana_recogs *r);
/* Every valid recognition point of se in the solved g (3.2.4).  `bound` limits the
 * candidate combinations examined (0 = default 1<<20). */
int ana_stable_points(const struct ana_dcfg *g, const struct ana_se *se, size_t bound,
                      struct ana_recogs *out, struct trace_diag *diag);

/* For a user who got no point: what part i lacks everywhere in g, if anything. */
enum ana_se_hint {
	ANA_HINT_NONE = 0,       /* nothing obvious: the parts' interactions do not combine */
	ANA_HINT_NO_PRE = 1,     /* no send of its process reaches another process */
	ANA_HINT_NO_WAIT = 2,    /* not monotonic, and no receive of its process, on every
	                            path after one of its sends, is fed by a single send: nothing
	                            can hold it (an event loop: try ana_dcfg_split_by_context) */
	ANA_HINT_CHANGES = 3,    /* it waits, but what its LOCAL reads changes on the way */
};
int ana_stable_hint(const struct ana_dcfg *g, const struct ana_se *se, size_t i);

/* The recorded run: the Inf cut of the conjunction LE_1 && LE_2 ..., and whether each
 * component is stable there.  With a valid recognition point executed after the cut (the
 * first such point in pts, at its first execution that knows every component's cut
 * state), component i must hold from what P learnt of P_i (lo) to P_i's last state before
 * it depends on anything P did after recognising (hi): where a breakpoint started at p
 * can halt P_i.  Without one, from the cut to the end of P_i's trace. */
struct ana_stable_comp {
	size_t proc;             /* session process */
	uint64_t state;          /* its state at the Inf cut */
	uint64_t true_through;   /* last state of the run of true states from `state` */
	uint64_t lo, hi;         /* the window that must stay true */
	int stable;
};
struct ana_stable_run {
	int holds;               /* the conjunction holds at some consistent cut */
	size_t nprocs;
	uint64_t *cut;           /* Inf, nprocs entries (NULL when it never holds) */
	int recognized;          /* a valid point was executed at or after the cut */
	size_t recog;            /* its index in pts */
	size_t proc;             /* session process and event of the recognition */
	uint64_t event;
	size_t ncomp;
	struct ana_stable_comp *comp;
};
void ana_stable_run_free(struct ana_stable_run *r);
/* g must have had s added last (ana_dcfg_add_session) and be solved. */
int ana_stable_run(struct ana_session *s, const struct ana_dcfg *g, const struct ana_se *se,
                   const struct ana_recogs *pts, struct ana_stable_run *out,
                   struct trace_diag *diag);

#ifdef __cplusplus
}
#endif

#endif
