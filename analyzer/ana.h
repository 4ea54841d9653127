/*
 * ana.h: the analyzer, encore's offline view of a recorded session.
 *
 * It loads every trace of a session into memory (or is fed events through a small builder,
 * which is what tests and benchmarks use), matches the two ends of each channel from what
 * both ends logged, links every receive to the send that produced its last byte, and then
 * answers questions about consistent global states:
 *
 *   - happened-before between two events (a reachability column computed on demand);
 *   - Inf(P), the least consistent cut(s) satisfying a predicate (Manabe & Imase section 3,
 *     Miller & Choi 3.4 for linked predicates);
 *   - Ariadne's breakpoints: the least consistent cut containing events (stop after) and
 *     the cut just before a set of events (stop before) with core/influence/other sets
 *     (Kundu et al.);
 *   - message races, the places where another run could differ.
 *
 * Stability (stab.h, stability/) and SQL over traces (sqldb.h, sql/) are parts of their own
 * built on this one; the replayer needs only this header.
 *
 * Conventions follow trace.h: 0 (or a count, or 1 for "yes") on success, a negative TRACE_E*
 * code on failure, with a struct trace_diag where one is taken.  Nothing here prints or exits.
 * Processes are numbered 0..nprocs-1 in the order they were added (by logical name when
 * loaded); their events 1..n; state k is the process right after event k.  A cut is an
 * array of nprocs state indices.  A session is not thread-safe: queries keep caches in it
 * (ana_hb's column), so give each thread its own or serialise.
 */
#ifndef ENCORE_ANA_H
#define ENCORE_ANA_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the model the analyzer makes of traces: which channel ends it matches and
 * which edges of happened-before it adds (match.c, dgram.c, edges.c).  Bump it with any
 * change there that gives the same traces other messages, connections or edges: the SQL
 * cache of a session (DIR/.encore.db, sql/) carries it in its stamp and is rebuilt
 * (schemas/sql.md, `meta`).  2: datagrams and passed descriptors matched.  4: receives of
 * shared pipe ends linked by their shared offsets; semaphore edges (ORDER events).  5: a
 * child's SIGKILL before its parent's wait.  6: a SIGCHLD handler run after the child's end.
 * 7: a Unix client matched with a process that inherited the listener (a prefork worker). */
#define ANA_MODEL_VERSION 7

struct ana_session;
struct ana_ref;

/* ---------------------------------------------------------------------------------------
 * Building a session.
 */

/* Load every process of the session directory `dir`.  Damaged traces are read up to their
 * damage and reported as warnings (ana_warning), not as failures. */
int ana_load(const char *dir, struct ana_session **out, struct trace_diag *diag);

/* An empty session for the builder below. */
int ana_new(struct ana_session **out);
void ana_free(struct ana_session *s);

/* Add a process; returns its number (>= 0) or a negative code (TRACE_EINVAL for a
 * duplicate name).  `parent` (may be NULL) and `fork_index` say where it was forked, so that
 * channels it inherited (ana_add_inherited) are the parent's. */
int ana_add_process(struct ana_session *s, const char *name, const char *parent,
                    uint64_t fork_index);
/* Channel ids process p inherited from its parent: same numeric ids as in the parent. */
int ana_add_inherited(struct ana_session *s, int p, uint32_t channel);
/* One recorded event of process p, as the trace reader returns it (process-local channel
 * ids, endpoint data in SOCKET/CONNECT/ACCEPT/BIND/PIPE events, ev->offset derived as the
 * reader derives it).  ev->index is ignored: events are numbered in the order they are added.
 * Returns the event's index (>= 1) or a negative code. */
int64_t ana_add_trace_event(struct ana_session *s, int p, const struct trace_event *ev);
/* The call-site stack of `site` in process p: function names, innermost first. */
int ana_add_stack(struct ana_session *s, int p, uint32_t site, const char *const *functions,
                  uint32_t nframes);

/* Convenience for tests and benchmarks: a stream channel already known to connect process a
 * to process b (b = -1: the peer is not recorded, i.e. external input).  Returns a channel
 * handle for ana_add_send / ana_add_recv. */
int ana_add_channel(struct ana_session *s, int a, int b);
int64_t ana_add_send(struct ana_session *s, int p, int channel, uint64_t len);
int64_t ana_add_recv(struct ana_session *s, int p, int channel, uint64_t len);
/* The connection behind a channel: p's connect, or p's accept of the other side's connect.
 * The accept is ordered after the first connect on the channel (ana_finish). */
/* Each direction of the channel holds at most `bytes` in flight (a pipe: 64 KiB): a send
 * that needed room happened after the receive that made it (ana_finish).  0: unbounded. */
int ana_set_capacity(struct ana_session *s, int channel, uint64_t bytes);
int64_t ana_add_connect(struct ana_session *s, int p, int channel);
/* A readiness result (poll) of p that found `channel` readable: ordered after the send of the
 * first byte p's next receive on it takes (or the writers' releases, for an end of file). */
int64_t ana_add_ready(struct ana_session *s, int p, int channel);
int64_t ana_add_accept(struct ana_session *s, int p, int channel);
/* p lets go of its side of a channel (CLOSE), or reads its end (a receive returning 0 for a
 * one-byte request): the end of file is ordered after the other side's close. */
int64_t ana_add_close(struct ana_session *s, int p, int channel);
int64_t ana_add_eof(struct ana_session *s, int p, int channel);
int64_t ana_add_mark(struct ana_session *s, int p, const char *key, int64_t value);
/* A wait of p that reaped `child` once it ended: ordered after the child's exit (or fatal
 * signal, or last event: killed outright).  The child must have been forked by p. */
int64_t ana_add_wait(struct ana_session *s, int p, int child);
/* Signals: p sends signal sig to `target` (kill, reaching it), and p runs its handler of a
 * sig that `sender` sent: the n-th run of p's handler of sig sent by q is ordered after q's
 * n-th kill of p with sig (analyzer/README.md, the signal edge). */
int64_t ana_add_kill(struct ana_session *s, int p, int target, int sig);
/* With sig SIGCHLD, `sender` is a child of p that ended (CLD_EXITED): the run is ordered after
 * the child's end, as a wait that reaped it. */
int64_t ana_add_handler(struct ana_session *s, int p, int sender, int sig);
/* Any other event of the given enum trace_kind (exit, fork, clock...); `site` may be 0. */
int64_t ana_add_simple(struct ana_session *s, int p, uint32_t kind, uint32_t site);

/* Match channels, link messages and connections, order events.  Required once after the
 * last add and before any query; ana_load does it.  Fails with TRACE_ECORRUPT when the
 * messages contradict program order (a cycle), naming a receive of the cycle in diag; a
 * connection edge on a cycle is dropped with a warning instead. */
int ana_finish(struct ana_session *s, struct trace_diag *diag);

/* Non-fatal findings of load and finish (damaged files, threads, channels shared by several
 * writers, receives with no matching bytes): one line each. */
size_t ana_nwarnings(const struct ana_session *s);
const char *ana_warning(const struct ana_session *s, size_t i);

/* ---------------------------------------------------------------------------------------
 * Reading the model.
 */
size_t ana_nprocs(const struct ana_session *s);
const char *ana_proc_name(const struct ana_session *s, size_t p);
/* The number of the process called `name`, or TRACE_ENOENT. */
int ana_proc_find(const struct ana_session *s, const char *name);
uint64_t ana_nevents(const struct ana_session *s, size_t p);
uint64_t ana_total_events(const struct ana_session *s);

#define ANA_NO_PROC UINT32_MAX

struct ana_event {
	uint32_t kind;       /* enum trace_kind */
	uint32_t flags;      /* TRACE_FL_* */
	uint32_t channel;    /* process-local channel id (marks: 0) */
	uint32_t site;       /* call-site id, 0 when unknown */
	int64_t result;      /* as recorded; marks: the value */
	uint64_t offset;     /* send/recv: byte offset of the first byte in its direction */
	uint32_t src_proc;   /* recv: the process of the send its last byte came from; accept:
	                        the process whose connect it took; else ANA_NO_PROC (external,
	                        unmatched, or another kind) */
	uint64_t src_index;  /* that send's (connect's) index */
	int external;        /* recv whose bytes came from outside the session */
	uint32_t thread;     /* the process's thread that made it: 0 the main thread, then in
	                        creation order (schemas/trace-format.md, "Threads") */
};
int ana_event_get(const struct ana_session *s, size_t p, uint64_t k, struct ana_event *ev);
/* Every event of another process that event (p, k) directly depends on, the edges of
 * happened-before into it: the send of a receive's last byte, the connect of an accept, the
 * parent's fork for a first event, for an end of file (a receive that returned 0) the
 * writers' releases of the stream (their close, shutdown, exit), for a write into a full
 * pipe the receive that made room for it, and for a wait the reaped child's end.  Fills
 * out[0..cap) and returns the number of edges (which may exceed cap), or a negative code. */
int64_t ana_event_deps(const struct ana_session *s, size_t p, uint64_t k, struct ana_ref *out,
                       size_t cap);
/* The innermost function name of a call site ("" when unknown). */
const char *ana_site_function(const struct ana_session *s, size_t p, uint32_t site);

struct ana_stats {
	size_t procs;
	uint64_t events;
	uint64_t sends, recvs;          /* that moved at least one byte */
	uint64_t messages;              /* receives linked to a recorded send */
	uint64_t external_recvs;        /* receives from an unrecorded peer */
	uint64_t unmatched_recvs;       /* peer recorded but no send covers the bytes */
	size_t channels;                /* distinct channels (an end object and its peer) */
	size_t channels_matched;        /* both ends recorded */
	size_t channels_external;       /* one end outside the session */
	size_t thread_procs;            /* processes that created threads */
};
int ana_stats(const struct ana_session *s, struct ana_stats *st);

/* ---------------------------------------------------------------------------------------
 * Happened-before and consistency.
 */

/* 1 if event (p,i) happened before event (q,j), 0 if not, or a negative code.  The first
 * query about a given p costs one pass over all events (it builds p's reachability column,
 * 4 bytes per event); later queries with the same p are O(1). */
int ana_hb(struct ana_session *s, size_t p, uint64_t i, size_t q, uint64_t j);
/* 1 if the cut is consistent (every receive inside has its send inside, every accept its
 * connect, every forked child its parent's fork), else 0. */
int ana_consistent(const struct ana_session *s, const uint64_t *cut);

/* Call fn(ctx, p, k) once for every event, each after every event that happened before it
 * (program order and the edges of ana_event_deps).  The order is fixed, so that writers
 * print the same file every time: passes over the processes in number order, each process
 * run as far as its in-edges allow.  Returns 0, fn's first non-zero return, or
 * TRACE_ECORRUPT when the edges form a cycle. */
int ana_sweep(const struct ana_session *s, int (*fn)(void *ctx, size_t p, uint64_t k),
              void *ctx);

/* Vector clocks of every event (Fidge, Mattern): entry q of the clock of (p, k) is the last
 * event of q that happened before (p, k) or is it, 0 when none, so (p, i) happened before
 * (q, j) exactly when (p, i) != (q, j) and i <= clock(q, j)[p], as ana_hb answers.  They
 * take 4 * nprocs bytes per event (ana_hb's columns do not): for sessions a person views. */
struct ana_vclocks;
int ana_vclocks_new(const struct ana_session *s, struct ana_vclocks **out);
void ana_vclocks_free(struct ana_vclocks *v);
/* The clock of (p, k), nprocs entries; p and k must name an event. */
const uint32_t *ana_vclock(const struct ana_vclocks *v, size_t p, uint64_t k);

/* The engine behind ana_vclocks and the SQL functions hb(), causal_past() (sql/): happened-
 * before over any event graph given as processes of nodes.  Nodes are numbered from 1,
 * process after process: process p's are first[p] .. first[p + 1] - 1, in program order.
 * A node stands for an event with in-edges beyond program order (or for every event); each
 * in-edge is given by its source event and the source's node, the last node at or before the
 * source in its process, whose clock holds the rest of the source's past. */
struct ana_hbg_src {
	uint32_t proc;           /* the source event's process */
	uint32_t index;          /* its index in the process */
	uint32_t node;           /* the last node at or before it in its process, 0 when none */
};
struct ana_hbg {
	size_t nprocs;
	uint64_t nnodes;
	const uint32_t *first;   /* nprocs + 1 entries; first[nprocs] = nnodes + 1 */
	const void *ctx;
	/* the event index of node k of process p */
	uint32_t (*index)(const void *ctx, uint32_t k, uint32_t p);
	/* the number of in-edge slots of node k of process p; slot e is read with src, which
	 * returns 0 when the slot holds no edge */
	uint32_t (*nsrcs)(const void *ctx, uint32_t k, uint32_t p);
	int (*src)(const void *ctx, uint32_t k, uint32_t p, uint32_t e, struct ana_hbg_src *out);
};
/* The nodes in a linear extension of happened-before, into topo[0 .. nnodes).  0, or
 * TRACE_ECORRUPT when the edges form a cycle, TRACE_ENOMEM. */
int ana_hbg_order(const struct ana_hbg *g, uint32_t *topo);
/* Every node's vector clock, vc[k * nprocs + q] = the last event of q that happened before
 * node k or is it; row 0 is all 0.  vc holds (nnodes + 1) * nprocs entries; the 16-bit form
 * needs every process to have fewer than 65536 events. */
void ana_hbg_vclocks16(const struct ana_hbg *g, const uint32_t *topo, uint16_t *vc);
void ana_hbg_vclocks32(const struct ana_hbg *g, const uint32_t *topo, uint32_t *vc);
/* Entry c of every node's clock: col[k] (nnodes + 1 entries, col[0] = 0). */
void ana_hbg_column(const struct ana_hbg *g, const uint32_t *topo, size_t c, uint32_t *col);

/* The least consistent cut containing cut[] (each process at least at cut[p]): the causal
 * past closure.  In place; linear in the events covered. */
int ana_close_down(const struct ana_session *s, uint64_t *cut);
/* The greatest consistent cut below cut[] (each process at most at cut[p]).  In place. */
int ana_close_up(const struct ana_session *s, uint64_t *cut);

/* ---------------------------------------------------------------------------------------
 * Inf(P) on precomputed simple-predicate truth (independent of the predicate language).
 *
 * A simple predicate is given as the set of states of its process where it holds: bit k of
 * bits (k = 0..nevents) is set when SP holds at state k.  ana_bits_words() says how many
 * uint64_t words that takes.
 */
size_t ana_bits_words(const struct ana_session *s, size_t p);

struct ana_sp {
	size_t proc;
	const uint64_t *bits;
};

struct ana_cp {             /* SP && SP && ... (several on one process are and-ed) */
	const struct ana_sp *sps;
	size_t nsp;
};

struct ana_dp {             /* CP || CP || ... */
	const struct ana_cp *cps;
	size_t ncp;
};

/* A set of cuts, each nprocs entries, minimal ones only, in a stable order. */
struct ana_cuts {
	size_t nprocs;
	size_t ncuts;
	uint64_t *cuts;         /* ncuts * nprocs */
	int bound_hit;          /* a bounded search stopped early: the set may be incomplete */
};
void ana_cuts_free(struct ana_cuts *c);

/* Inf of a conjunctive predicate: 1 and the cut when it holds somewhere, 0 when it never
 * holds, or a negative code.  Linear in the number of events. */
int ana_inf_cp(const struct ana_session *s, const struct ana_cp *cp, uint64_t *cut);
/* Every minimal consistent cut satisfying CP1 || CP2 ... (at most one per CP). */
int ana_inf_dp(const struct ana_session *s, const struct ana_dp *dp, struct ana_cuts *out);
/* Linked DP1 -> DP2 -> ...: the minimal cuts at which the last DP holds after the chain.
 * `bound` limits the candidate chains kept per step (0 = default 4096); out->bound_hit says
 * when it was reached. */
int ana_inf_lp(const struct ana_session *s, const struct ana_dp *dps, size_t ndp, size_t bound,
               struct ana_cuts *out);
/* A general monotone combination of nsp simple predicates: eval(ctx, truth) gets truth[i]
 * = 0/1 for each SP and returns 0/1 (or a negative code).  Searches the minimal sets of SPs
 * that make it true, at most `bound` sets examined (0 = default 1<<20). */
int ana_inf_general(const struct ana_session *s, const struct ana_sp *sps, size_t nsp,
                    int (*eval)(void *ctx, const uint8_t *truth), void *ctx, size_t bound,
                    struct ana_cuts *out);

/* ---------------------------------------------------------------------------------------
 * Inf(P) from predicate text (predicate.h).
 */

/* The states of process `proc` (named by the SP) where sp holds, as a bitset the caller
 * frees.  var.SYMBOL terms fail with TRACE_EINVAL and a message saying only `encore replay`
 * can evaluate them; an unknown process name fails with TRACE_ENOENT. */
int ana_sp_bits(const struct ana_session *s, const struct trace_pred_sp *sp, size_t *proc,
                uint64_t **bits, struct trace_diag *diag);
/* Inf(P) for any shape; out->cuts is empty when P never holds. */
int ana_inf(const struct ana_session *s, const struct trace_pred *p, struct ana_cuts *out,
            struct trace_diag *diag);
/* The names p's terms give that occur nowhere in the session: mark.KEY with a key no process
 * marked, in(FUNCTION) with a function in no call site's stack (such a term is 0 or false
 * everywhere).  Written as "mark.KEY, in(F)" into buf (cap bytes, "" when none); their
 * number. */
size_t ana_pred_unknown_names(const struct ana_session *s, const struct trace_pred *p,
                              char *buf, size_t cap);

/* ---------------------------------------------------------------------------------------
 * Ariadne breakpoints (Kundu et al.): stop just after / just before events.
 */
struct ana_ref {
	size_t proc;
	uint64_t index;          /* event index, >= 1 */
};

enum ana_role {
	ANA_ROLE_OTHER = 0,      /* cannot causally influence the events: earliest state */
	ANA_ROLE_INFLUENCE = 1,  /* can influence them: just after its last influencing event */
	ANA_ROLE_CORE = 2,       /* holds one of the events */
};

struct ana_breakpoint {
	uint64_t *cut;           /* nprocs.  after: the least consistent cut containing the
	                            events; before: the greatest consistent cut excluding them
	                            (every other process as far as it can go) */
	uint64_t *ariadne;       /* nprocs: Ariadne's stop, which keeps what led to the events:
	                            core as in cut, influence just after their last event that
	                            happened before the core's, other at state 0.  For after it
	                            equals cut. */
	uint8_t *role;           /* nprocs: enum ana_role */
	int moved;               /* the request was inconsistent and was moved */
	size_t moved_proc;       /* when moved: a core process that could not stop where asked */
	uint64_t moved_from;     /* ... the state that was asked for it */
};
void ana_breakpoint_free(struct ana_breakpoint *b);

/* The least consistent cut containing every event of refs (stop just after them). */
int ana_cut_after(const struct ana_session *s, const struct ana_ref *refs, size_t n,
                  struct ana_breakpoint *out, struct trace_diag *diag);
/* Stop just before the events of refs: the greatest consistent cut with every core process
 * before its earliest event of refs (and Ariadne's stop below it).  When one event of refs
 * happened before another's predecessor, a core process cannot stop just before its event:
 * the cut moves back to the latest consistent state excluding all of refs, and `moved` says
 * so. */
int ana_cut_before(const struct ana_session *s, const struct ana_ref *refs, size_t n,
                   struct ana_breakpoint *out, struct trace_diag *diag);

/* ---------------------------------------------------------------------------------------
 * Message races: a receive r (from send s) and a send s2 to the same process on another
 * channel, such that s2 was the next message waiting on its channel when r happened and r
 * did not happen before s2: s2 could have been received instead.
 */
struct ana_race {
	size_t proc;             /* the receiver */
	uint64_t recv;           /* r */
	size_t src_proc;         /* s */
	uint64_t src_send;
	size_t rival_proc;       /* s2 */
	uint64_t rival_send;
};
/* All races, in receiver order; *races is freed by the caller. */
int ana_races(struct ana_session *s, struct ana_race **races, size_t *n);

/* ---------------------------------------------------------------------------------------
 * The next state where a predicate holds (analyzer/next.c), for a debugger halted at cur[].
 */

/* The least consistent cut at or after the consistent cut cur[] (each process at least at
 * cur[p]) where the conjunctive or disjunctive P holds; with strict, every process P names
 * must be past cur[p].  A disjunctive P gives the cut of its conjunct with the fewest events.
 * 1 and cut[] (nprocs entries), 0 when there is none, or a negative code (TRACE_EINVAL with
 * diag for linked or general P, var. terms, or an inconsistent cur). */
int ana_inf_next(const struct ana_session *s, const struct trace_pred *p, const uint64_t *cur,
                 int strict, uint64_t *cut, struct trace_diag *diag);
/* The value of term t (predicate.h) in process p's state k, as predicates see it (0/1 for
 * exited and last(KIND)).  0, TRACE_ENOENT for sent(P)/received(P) naming no process, or
 * TRACE_EINVAL for var.SYMBOL and in(FUNCTION) (not values of the trace). */
int ana_term_at(const struct ana_session *s, size_t p, uint64_t k,
                const struct trace_pred_term *t, int64_t *value);

#ifdef __cplusplus
}
#endif

#endif
