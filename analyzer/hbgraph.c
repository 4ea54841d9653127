/*
 * hbgraph.c: the vector-clock engine, over any event graph given as processes of nodes.
 *
 * A node is an event that matters for happened-before: in the analyzer's model every event
 * (vclock.c), in a database the events with incoming edges (sql/sql_func.c: between two of
 * them nothing new arrives, so the clock of any event is the clock of the last node at or
 * before it).  Each node names its in-edges beyond program order by the source event
 * (process, index) and the source's own node (the last node at or before it in its
 * process), whose clock holds the rest of the source's past.
 *
 * Three things are computed from it, all in one pass over a linear extension of the nodes:
 * the linear extension itself (ana_hbg_order), every node's vector clock (the clocks of
 * Fidge and Mattern, in 2- or 4-byte entries), and one reachability column (the entry of
 * one process in every node's clock, when all clocks do not fit in memory).  This file uses
 * nothing but its own header section (ana.h) and the C library, so that the loadable SQLite
 * extension can link it alone.
 */
#include <stdlib.h>
#include <string.h>

#include "ana.h"

/* The process of node k: first[p] <= k < first[p + 1]. */
static uint32_t node_proc(const struct ana_hbg *g, uint32_t k)
{
	size_t lo = 0, hi = g->nprocs;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (g->first[mid] <= k)
			lo = mid;
		else
			hi = mid;
	}
	return (uint32_t)lo;
}

/* Each process runs through its nodes until one waits for a node of another process not
 * yet reached; it is parked on that process's wait list and woken when the process gets
 * there.  A node waiting for a later node of its own process, or a cycle, leaves nodes
 * unreached. */
int ana_hbg_order(const struct ana_hbg *g, uint32_t *topo)
{
	size_t np = g->nprocs, top = 0, alloc = np ? np : 1;
	uint32_t *pos = malloc(alloc * sizeof(*pos)), *need = malloc(alloc * sizeof(*need));
	size_t *stack = malloc(alloc * sizeof(*stack)), *head = malloc(alloc * sizeof(*head));
	size_t *next = malloc(alloc * sizeof(*next));
	uint64_t t = 0;
	int rc = 0;

	if (!pos || !need || !stack || !head || !next) {
		rc = TRACE_ENOMEM;
		goto out;
	}
	for (size_t p = 0; p < np; p++) {
		head[p] = SIZE_MAX;
		pos[p] = g->first[p];
		stack[top++] = np - 1 - p;
	}
	while (top) {
		size_t p = stack[--top];

		while (pos[p] < g->first[p + 1]) {
			uint32_t k = pos[p], w = 0, wp = 0;
			struct ana_hbg_src src;

			for (uint32_t e = 0, ns = g->nsrcs(g->ctx, k, (uint32_t)p); e < ns && !w; e++)
				if (g->src(g->ctx, k, (uint32_t)p, e, &src) && src.node &&
				    src.node >= pos[src.proc]) {
					w = src.node;
					wp = src.proc;
				}
			if (w) {
				need[p] = w;
				next[p] = head[wp];
				head[wp] = p;
				break;
			}
			topo[t++] = pos[p]++;
		}
		/* wake the processes that waited for p to get this far */
		for (size_t *wl = &head[p]; *wl != SIZE_MAX;) {
			size_t r = *wl;

			if (need[r] < pos[p]) {
				*wl = next[r];
				stack[top++] = r;
			} else {
				wl = &next[r];
			}
		}
	}
	if (t != g->nnodes)
		rc = TRACE_ECORRUPT;
out:
	free(pos);
	free(need);
	free(stack);
	free(head);
	free(next);
	return rc;
}

/* Row k = max(row of the previous node of its process, the rows of its sources with their
 * own entries), then its own entry. */
#define ANA_HBG_VCLOCKS(NAME, T)                                                            \
void NAME(const struct ana_hbg *g, const uint32_t *topo, T *vc)                             \
{                                                                                           \
	size_t np = g->nprocs;                                                              \
                                                                                            \
	memset(vc, 0, np * sizeof(*vc));                                                    \
	for (uint64_t t = 0; t < g->nnodes; t++) {                                          \
		uint32_t k = topo[t], q = node_proc(g, k);                                  \
		T *row = vc + (uint64_t)k * np;                                             \
		uint32_t prev = k > g->first[q] ? k - 1 : 0;                                \
		struct ana_hbg_src src;                                                     \
                                                                                            \
		memcpy(row, vc + (uint64_t)prev * np, np * sizeof(*row));                   \
		for (uint32_t e = 0, ns = g->nsrcs(g->ctx, k, q); e < ns; e++) {            \
			const T *a;                                                         \
                                                                                            \
			if (!g->src(g->ctx, k, q, e, &src))                                 \
				continue;                                                   \
			a = vc + (uint64_t)src.node * np;                                   \
			for (size_t x = 0; x < np; x++)                                     \
				if (a[x] > row[x])                                          \
					row[x] = a[x];                                      \
			if (src.index > row[src.proc])                                      \
				row[src.proc] = (T)src.index;                               \
		}                                                                           \
		row[q] = (T)g->index(g->ctx, k, q);                                         \
	}                                                                                   \
}

ANA_HBG_VCLOCKS(ana_hbg_vclocks16, uint16_t)
ANA_HBG_VCLOCKS(ana_hbg_vclocks32, uint32_t)

void ana_hbg_column(const struct ana_hbg *g, const uint32_t *topo, size_t c, uint32_t *col)
{
	col[0] = 0;
	for (uint64_t t = 0; t < g->nnodes; t++) {
		uint32_t k = topo[t], q = node_proc(g, k), v;
		struct ana_hbg_src src;

		if (q == c) {
			v = g->index(g->ctx, k, q);
		} else {
			v = k > g->first[q] ? col[k - 1] : 0;
			for (uint32_t e = 0, ns = g->nsrcs(g->ctx, k, q); e < ns; e++) {
				uint32_t w;

				if (!g->src(g->ctx, k, q, e, &src))
					continue;
				w = src.proc == c ? src.index : col[src.node];
				if (w > v)
					v = w;
			}
		}
		col[k] = v;
	}
}
