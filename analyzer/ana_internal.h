/*
 * ana_internal.h: the analyzer's private model.  Never included outside analyzer/.
 *
 * Memory layout is chosen for 1e7 events: one 40-byte record per event, per-process arrays
 * indexed by event index - 1, and no per-event vector clock (happened-before is answered by
 * closures over message edges and by reachability columns built on demand).
 */
#ifndef ENCORE_ANA_INTERNAL_H
#define ENCORE_ANA_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "ana.h"

#define ANA_NONE UINT32_MAX

/* Channel ids handed out by ana_add_channel live above every id a recorder would assign, so
 * builder channels and recorded ones never collide within a process. */
#define ANA_BUILDER_CHAN 0x80000000u

struct ana_ev {
	uint64_t offset;     /* send/recv: derived byte offset in its direction */
	int64_t result;      /* as recorded; marks: the value */
	uint32_t chan;       /* process-local channel id; marks: the interned key */
	uint32_t site;
	uint32_t src_proc;   /* recv: sender of the last byte; accept: the connecting process;
	                        send/connect/fork: the other end of its out edge; ANA_NONE */
	uint32_t src_idx;    /* that event's index */
	uint32_t end;        /* send/recv: its end record (p, id); after finish the merged end
	                        object (the union-find root); ANA_NONE when none */
	uint8_t kind;
	uint8_t flags;
	uint8_t external : 1; /* recv from an unrecorded peer */
	uint8_t fatal : 1;    /* signal: it killed the process (aux[0] == 1) */
	uint8_t eof : 1;      /* recv: returned 0 for a request of at least one byte */
	uint8_t shut_wr : 1;  /* shutdown: ended this side's sending (SHUT_WR, SHUT_RDWR) */
	uint8_t xin : 1;      /* it has in-edges in the session's xin table */
	uint8_t xout : 1;     /* it has out-edges in the session's xout table */
	uint8_t lost : 1;     /* recv: the disk budget dropped the send of its bytes */
	uint8_t ended : 1;    /* wait: it reaped a child that ended (result = the child's pid);
	                         handler: a SIGCHLD run for a child that ended (result = its pid) */
};

/* Edges that do not fit an event's one src slot: an end of file waits for the last release
 * (close, shutdown, exit) of every process that held the writing end, so it may have several
 * in-edges, and a release's slot may be taken already; a wait's source is the child's end,
 * whose slot may be taken too (a killed child's last event, a send).  Both tables are sorted by key
 * (proc << 32 | index of the event they belong to); an edge given way to break a cycle keeps
 * its row with oproc = ANA_NONE. */
struct ana_xedge {
	uint64_t key;
	uint32_t oproc;      /* the event at the other end of the edge */
	uint32_t oidx;
};

struct ana_stackrec {
	uint32_t site;
	uint32_t nframes;
	char **fn;
};

struct ana_proc {
	char *name;
	char *parent;
	uint64_t fork_index;
	int64_t pid;
	char host_id[64];
	struct ana_ev *ev;   /* ev[k-1] is event k */
	uint64_t n, cap;
	/* thread[k-1]: event k's thread (schemas/trace-format.md, "Threads"), cap entries like
	 * ev; NULL while every event so far is the main thread's (0), so that a process without
	 * threads costs nothing more */
	uint32_t *thread;
	uint32_t *inherited;
	size_t ninherited, capinherited;
	struct ana_stackrec *stacks;
	size_t nstacks, capstacks;
	int sorted_stacks;
	int threads;
	uint64_t sends, recvs;
	/* fork: the child's first event happened after the parent's fork event (a happened-
	 * before edge like a message); ANA_NONE for a root or a parent not recorded */
	uint32_t fparent;
	uint64_t fidx;
};

/* One channel end object: a (process, local id) pair, merged across fork inheritance. */
struct ana_end {
	uint32_t proc;
	uint32_t id;
	uint32_t uf;          /* union-find parent (inheritance) */
	uint32_t peer;        /* the end at the other side, ANA_NONE when external/unknown */
	uint32_t pipe_other;  /* PIPE event: the other end created with it */
	uint8_t pipe_dir;     /* pipes: 1 read end, 2 write end */
	uint8_t has_ep;
	uint8_t peer_dropped; /* no peer found, and what would name it was dropped by the disk
	                         budget (its process's oldest events): not external */
	uint8_t builder;      /* made by ana_add_channel: peer already known */
	uint8_t dgram_linked; /* UDP: a datagram of it was matched with a recorded peer's */
	uint8_t unix_dgram;   /* a Unix datagram socket (its SOCKET event's domain and type) */
	uint64_t capacity;    /* builder: bytes in flight toward this end before a send blocks
	                         (ana_set_capacity); 0: as the end's type says (edges.c) */
	uint8_t ambiguous;    /* 1: several processes wrote it, 2: several read it,
	                         4: their sends overlap (concurrent writers): not linked,
	                         8: their receives overlap (concurrent readers): not linked */
	uint64_t nout, nin;   /* builder: bytes sent and received so far on this record */
	struct trace_endpoint ep;
	/* the sends into the stream this end writes: filled by finish, sorted by offset */
	uint64_t nsends;
	uint64_t firstsend;   /* index into s->sendrefs */
	uint32_t writer;      /* the single process writing it, ANA_NONE when none */
	uint32_t reader;      /* the single process reading the peer side */
};

struct ana_sendref {
	uint64_t offset;
	uint64_t len;
	uint32_t proc;
	uint32_t idx;
};

/* A datagram sent or received on a UDP socket (dgram.c), noted while loading. */
struct ana_dgaddr {
	uint16_t fam;         /* AF_INET (IPv4-mapped IPv6 too), AF_INET6, AF_UNIX; 0: unknown
	                         (or a Unix socket without a name) */
	uint16_t port;        /* AF_UNIX: 16 bits of the path's hash, for sorting */
	uint8_t ip[16];       /* AF_UNIX: the path's 64-bit hash, then zeros */
};

struct ana_dgram {
	uint32_t proc, idx;   /* the event */
	uint32_t end;         /* its end record, then its root end (ANA_NONE: not UDP) */
	uint32_t hash;        /* send: the datagram's hash; receive: of the bytes recorded */
	uint64_t len;         /* the result: bytes sent; received (the whole length with
	                         MSG_TRUNC) */
	uint64_t bytes;       /* receive: bytes recorded */
	uint8_t send;
	uint8_t whole;        /* receive: its bytes are the whole datagram, as far as it says */
	uint8_t filled;       /* receive: its bytes filled the room (it may have been cut) */
	uint8_t peek;
	uint8_t anon;         /* receive: from a Unix socket without a name (source: family only) */
	struct ana_dgaddr a;  /* send: destination (0: connected); receive: source */
	struct ana_dgaddr b;  /* send: the local address, when the recorder logged it */
};

struct ana_session {
	struct ana_proc *procs;
	size_t nprocs, capprocs;
	uint64_t total;
	int finished;

	struct ana_end *ends;
	size_t nends, capends;
	/* (proc, id) -> end: open addressing, keys proc<<32|id, values end+1 */
	uint64_t *endkeys;
	uint32_t *endvals;
	size_t endcap;

	struct ana_sendref *sendrefs;
	uint64_t nsendrefs;

	char **keys;          /* interned mark keys */
	size_t nkeys, capkeys;

	uint32_t nbuilder;    /* builder channels so far */
	uint32_t *builder_a, *builder_b; /* end index of each builder channel's two sides */

	uint32_t *topo;       /* a linear extension of happened-before: process of each step */

	struct ana_xedge *xin, *xout; /* extra edges (edges.c) */
	size_t nxin, nxout;
	/* readiness results and the channels they found readable (READY aux), for edges.c */
	struct ana_readyref {
		uint32_t proc, idx, chan;
	} *readyrefs;
	size_t nready, capready;
	/* descriptors passed with SCM_RIGHTS (PASS events), for match.c */
	struct ana_passref {
		uint32_t proc, idx;   /* the PASS event */
		uint32_t chan;        /* the passed channel (sender) or the new end (receiver); 0 none */
		uint32_t via;         /* the channel it travelled on */
		uint32_t seq;         /* its place among the PASS events of its call */
		uint8_t in;           /* 1 received, 0 sent */
		uint8_t linked;
		uint64_t at;          /* offset of the call's first byte on `via` */
		uint64_t sent, received; /* sender: the passed channel's bytes so far */
	} *passrefs;
	size_t npass, cappass;

	/* reachability columns (ana_hb), the ANA_NCOLS most recently used:
	 * col[c][base[q] + j - 1] = last event of colproc[c] that happened before or is (q,j) */
#define ANA_NCOLS 4
	uint32_t *col[ANA_NCOLS];
	size_t colproc[ANA_NCOLS];
	uint64_t colused[ANA_NCOLS];
	uint64_t coltick;
	uint64_t *base;

	struct ana_dgram *dgrams; /* datagram sends and receives (dgram.c) */
	size_t ndgrams, capdgrams;
	/* every datagram send with each datagram socket its destination names, sorted by
	 * (end, proc, idx): the rivals of a datagram receive (hb.c, races) */
	struct ana_dgdest {
		uint32_t end, proc, idx;
	} *dgdest;
	size_t ndgdest;

	char **warnings;
	size_t nwarnings, capwarnings;
};

/* model.c */
void ana__warn(struct ana_session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ana__diag(struct trace_diag *d, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
uint32_t ana__end_lookup(const struct ana_session *s, uint32_t proc, uint32_t id);
int ana__end_get(struct ana_session *s, uint32_t proc, uint32_t id, uint32_t *out);
int ana__intern_key(struct ana_session *s, const char *key, uint32_t *out);
int ana__find_key(const struct ana_session *s, const char *key);
const struct ana_stackrec *ana__stack(const struct ana_session *s, size_t p, uint32_t site);

/* match.c */
/* A PASS event (event number idx of p): kept for matching the ends it joins. */
int ana__pass_event(struct ana_session *s, uint32_t p, uint64_t idx, const struct trace_event *ev);
int ana__match(struct ana_session *s, struct trace_diag *diag);
/* A channel of process p whose defining events the disk budget dropped, as the trace's
 * checkpoint describes it (trace_reader_kept_channels). */
int ana__kept_channel(struct ana_session *s, uint32_t p, const struct trace_chan_def *d);
/* The send among v[0..n) (sorted by offset) whose bytes hold `byte`, or -1. */
int64_t ana__find_send(const struct ana_sendref *v, uint64_t n, uint64_t byte);

/* dgram.c: datagrams noted while loading (event p's next index), matched after the
 * channels (match.c) */
int ana__dgram_note(struct ana_session *s, uint32_t p, const struct trace_event *ev,
                    uint32_t end);
int ana__dgram_match(struct ana_session *s);
/* The rows of s->dgdest for datagram socket `end` (a root end); *count gets their number. */
const struct ana_dgdest *ana__dgram_dests(const struct ana_session *s, uint32_t end,
                                          size_t *count);

/* edges.c: happened-before edges other than messages, linked by ana_finish after matching */
void ana__link_forks(struct ana_session *s);
int ana__link_connections(struct ana_session *s);
int ana__link_streams(struct ana_session *s); /* ends of file and bounded buffers */
/* The rows of `table` (n of them) that belong to event (p, k); *count gets their number. */
const struct ana_xedge *ana__xedges(const struct ana_xedge *table, size_t n, uint32_t p,
                                    uint64_t k, size_t *count);

static inline const struct ana_ev *ana__ev(const struct ana_session *s, size_t p, uint64_t k)
{
	return &s->procs[p].ev[k - 1];
}

/* Edges of happened-before stored on events: a receive names the send of its last byte, an
 * accept the connect of its peer; a send names its first dependent receive, a connect the
 * accept that took it, a fork event the child's first event.  Every event has at most one
 * edge in and one edge out that matters: the later dependents of a send are later events of
 * the same receiving process. */
static inline int ana__in_edge(const struct ana_ev *e)
{
	return (e->kind == TRACE_EV_RECV || e->kind == TRACE_EV_ACCEPT) && e->src_proc != ANA_NONE;
}

static inline int ana__out_edge(const struct ana_ev *e)
{
	return (e->kind == TRACE_EV_SEND || e->kind == TRACE_EV_FORK ||
	        e->kind == TRACE_EV_CONNECT) && e->src_proc != ANA_NONE;
}

static inline int ana__bit(const uint64_t *bits, uint64_t k)
{
	return (int)((bits[k >> 6] >> (k & 63)) & 1u);
}

#endif
