/*
 * dcfg_internal.h: the distributed control-flow graph (schemas/stability.md), private to
 * stability/ (dcfg.c builds and solves it, stable.c searches recognition points in it).
 *
 * Sizes: nodes are call sites, not events, so a few hundred at most; every set is a bitset
 * over all nodes (nnodes bits), which keeps the equations of Spezialetti & Gupta 3.2 a few
 * lines each.
 */
#ifndef ENCORE_DCFG_INTERNAL_H
#define ENCORE_DCFG_INTERNAL_H

#include <stdint.h>

#include "stab.h"

/* What an intraprocess edge a -> b saw between a and b, over every observation of it. */
struct dcfg_flow {
	uint32_t a, b;
	uint64_t kinds;       /* bit k: an event of enum trace_kind k happened between */
	char **marks;         /* keys of the marks set between */
	size_t nmarks;
	uint64_t seen;
};

struct dcfg_node {
	uint32_t proc;
	uint32_t kind;        /* enum ana_node_kind */
	char *key;
	char *function;
	uint64_t seen;
	int flags;            /* ANA_NODE_F_* */
	uint32_t *succ, nsucc, capsucc;   /* intraprocess: indices into g->flows */
	uint32_t *pred, npred, cappred;
	uint32_t *out, nout, capout;      /* interprocess: send -> receive nodes */
	uint32_t *in, nin, capin;         /* receive <- send nodes */
};

struct dcfg_proc {
	char *name;
	uint32_t start, stop;
};

/* session process p, call site `site`, event kind -> node: the map of the most recent
 * ana_dcfg_add_session, so that stable.c can find the events of a node in that session */
struct dcfg_sitemap {
	uint32_t proc;        /* session process */
	uint32_t seg;         /* its image (trace file): site ids are per file; DCFG_SEG_CTX
	                         for a (base, context) entry, whose site is the base */
	uint32_t site;
	uint32_t kind;
	uint32_t peer;        /* by_peer: the process at the other end (DCFG_PEER_*) */
	uint32_t ctx;         /* DCFG_CTX_BASE for a base entry (node = base id), else the base
	                         id of the site executed before (DCFG_CTX_START: none) */
	uint32_t node;
};

#define DCFG_SEG_CTX UINT32_MAX
#define DCFG_CTX_BASE UINT32_MAX
#define DCFG_CTX_START (UINT32_MAX - 1)

/* A call site of the session being added, before the context split: its key. */
struct dcfg_base {
	char *key;
	char *function;
	uint32_t kind;
};

#define DCFG_PEER_NONE UINT32_MAX        /* outside the session, or never read */
#define DCFG_PEER_MANY (UINT32_MAX - 1)  /* several processes */

struct ana_dcfg {
	struct dcfg_proc *procs;
	size_t nprocs, capprocs;
	struct dcfg_node *nodes;
	size_t nnodes, capnodes;
	struct dcfg_flow *flows;
	size_t nflows, capflows;
	size_t nmsgs;
	size_t nsessions;

	int by_peer;                  /* ana_dcfg_split_by_peer */
	int by_context;               /* ana_dcfg_split_by_context */
	struct dcfg_base *bases;      /* while a session is added */
	size_t nbases, capbases;

	/* while a session is added: (proc, seg, site, kind, peer) -> node, open addressing;
	 * capmap is a power of two, node == UINT32_MAX marks a free slot */
	struct dcfg_sitemap *map;
	size_t nmap, capmap;
	uint64_t **segfirst;          /* per session process: first index - 1 of each image */
	size_t *nseg;
	size_t nsegprocs;

	/* the most recent session added: node of each event (UINT32_MAX: not a site) */
	const struct ana_session *last;
	uint32_t **evnode;
	size_t nevprocs;

	/* after ana_dcfg_solve; each nnodes * words uint64_t */
	int solved;
	size_t words;
	uint64_t *reach, *dom, *pdom, *pre, *post1, *post2;
	uint64_t *sends_of, *recvs_of;   /* per DCFG process: words each */
};

static inline uint64_t *dcfg_set(const struct ana_dcfg *g, uint64_t *base, size_t n)
{
	return base + n * g->words;
}

static inline int dcfg_has(const uint64_t *set, size_t m)
{
	return (int)((set[m >> 6] >> (m & 63)) & 1u);
}

/* The node of event k of session process p in the most recent session added, or ANA_NONE
 * style UINT32_MAX when the event is not a communication site. */
uint32_t ana__dcfg_event_node(const struct ana_dcfg *g, const struct ana_session *s, size_t p,
                              uint64_t k);

#endif
