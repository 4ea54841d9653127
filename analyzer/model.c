/*
 * model.c: the analyzer's in-memory session: processes and their events, the builder that
 * tests, benchmarks and the loader feed, and ana_finish, which turns recorded events into a
 * partial order (channel matching in match.c, then message edges and a linear extension of
 * happened-before here).
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <sys/socket.h>

#include "ana_internal.h"

/* ---------------------------------------------------------------------------------------
 * Small helpers
 */
static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *np;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	while (ncap < need)
		ncap *= 2;
	np = realloc(*p, ncap * elem);
	if (!np)
		return TRACE_ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

void ana__warn(struct ana_session *s, const char *fmt, ...)
{
	va_list ap;
	char *line = NULL;
	int n;

	/* Warnings are best effort: running out of memory here must not fail the analysis. */
	if (grow((void **)&s->warnings, &s->capwarnings, s->nwarnings + 1, sizeof(char *)))
		return;
	va_start(ap, fmt);
	n = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	s->warnings[s->nwarnings++] = line;
}

void ana__diag(struct trace_diag *d, int code, const char *fmt, ...)
{
	va_list ap;

	if (!d)
		return;
	memset(d, 0, sizeof(*d));
	d->code = code;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
}

size_t ana_nwarnings(const struct ana_session *s)
{
	return s ? s->nwarnings : 0;
}

const char *ana_warning(const struct ana_session *s, size_t i)
{
	return s && i < s->nwarnings ? s->warnings[i] : NULL;
}

/* ---------------------------------------------------------------------------------------
 * Session lifecycle
 */
int ana_new(struct ana_session **out)
{
	struct ana_session *s = calloc(1, sizeof(*s));

	if (!s)
		return TRACE_ENOMEM;
	*out = s;
	return 0;
}

void ana_free(struct ana_session *s)
{
	size_t i, j;

	if (!s)
		return;
	for (i = 0; i < s->nprocs; i++) {
		struct ana_proc *p = &s->procs[i];

		free(p->name);
		free(p->parent);
		free(p->ev);
		free(p->thread);
		free(p->inherited);
		for (j = 0; j < p->nstacks; j++) {
			for (uint32_t f = 0; f < p->stacks[j].nframes; f++)
				free(p->stacks[j].fn[f]);
			free(p->stacks[j].fn);
		}
		free(p->stacks);
	}
	free(s->procs);
	free(s->ends);
	free(s->endkeys);
	free(s->endvals);
	free(s->sendrefs);
	for (i = 0; i < s->nkeys; i++)
		free(s->keys[i]);
	free(s->keys);
	free(s->builder_a);
	free(s->builder_b);
	free(s->topo);
	free(s->xin);
	free(s->xout);
	free(s->readyrefs);
	free(s->passrefs);
	free(s->dgrams);
	free(s->dgdest);
	for (int c = 0; c < ANA_NCOLS; c++)
		free(s->col[c]);
	free(s->base);
	for (i = 0; i < s->nwarnings; i++)
		free(s->warnings[i]);
	free(s->warnings);
	free(s);
}

/* ---------------------------------------------------------------------------------------
 * Channel end records: one per (process, local channel id), found through a hash table.
 */
static uint64_t end_hash(uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return key;
}

uint32_t ana__end_lookup(const struct ana_session *s, uint32_t proc, uint32_t id)
{
	uint64_t key = (uint64_t)proc << 32 | id;
	size_t mask = s->endcap - 1, i;

	if (!s->endcap)
		return ANA_NONE;
	for (i = end_hash(key) & mask; s->endvals[i]; i = (i + 1) & mask)
		if (s->endkeys[i] == key)
			return s->endvals[i] - 1;
	return ANA_NONE;
}

static int end_rehash(struct ana_session *s)
{
	size_t ncap = s->endcap ? s->endcap * 2 : 64, i, j;
	uint64_t *nk = calloc(ncap, sizeof(*nk));
	uint32_t *nv = calloc(ncap, sizeof(*nv));

	if (!nk || !nv) {
		free(nk);
		free(nv);
		return TRACE_ENOMEM;
	}
	for (i = 0; i < s->endcap; i++) {
		if (!s->endvals[i])
			continue;
		for (j = end_hash(s->endkeys[i]) & (ncap - 1); nv[j]; j = (j + 1) & (ncap - 1))
			;
		nk[j] = s->endkeys[i];
		nv[j] = s->endvals[i];
	}
	free(s->endkeys);
	free(s->endvals);
	s->endkeys = nk;
	s->endvals = nv;
	s->endcap = ncap;
	return 0;
}

int ana__end_get(struct ana_session *s, uint32_t proc, uint32_t id, uint32_t *out)
{
	uint32_t e = ana__end_lookup(s, proc, id);
	uint64_t key = (uint64_t)proc << 32 | id;
	size_t i;
	int rc;

	if (e != ANA_NONE) {
		*out = e;
		return 0;
	}
	if ((s->nends + 1) * 2 > s->endcap && (rc = end_rehash(s)))
		return rc;
	if ((rc = grow((void **)&s->ends, &s->capends, s->nends + 1, sizeof(*s->ends))))
		return rc;
	e = (uint32_t)s->nends++;
	memset(&s->ends[e], 0, sizeof(s->ends[e]));
	s->ends[e].proc = proc;
	s->ends[e].id = id;
	s->ends[e].uf = e;
	s->ends[e].peer = ANA_NONE;
	s->ends[e].pipe_other = ANA_NONE;
	s->ends[e].writer = ANA_NONE;
	s->ends[e].reader = ANA_NONE;
	for (i = end_hash(key) & (s->endcap - 1); s->endvals[i]; i = (i + 1) & (s->endcap - 1))
		;
	s->endkeys[i] = key;
	s->endvals[i] = e + 1;
	*out = e;
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * Mark keys are interned once per session so that events store a small number.
 */
int ana__find_key(const struct ana_session *s, const char *key)
{
	for (size_t i = 0; i < s->nkeys; i++)
		if (strcmp(s->keys[i], key) == 0)
			return (int)i;
	return -1;
}

int ana__intern_key(struct ana_session *s, const char *key, uint32_t *out)
{
	int k = ana__find_key(s, key);
	int rc;

	if (k >= 0) {
		*out = (uint32_t)k;
		return 0;
	}
	if ((rc = grow((void **)&s->keys, &s->capkeys, s->nkeys + 1, sizeof(char *))))
		return rc;
	if (!(s->keys[s->nkeys] = strdup(key)))
		return TRACE_ENOMEM;
	*out = (uint32_t)s->nkeys++;
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * Builder
 */
int ana_add_process(struct ana_session *s, const char *name, const char *parent,
                    uint64_t fork_index)
{
	struct ana_proc *p;
	int rc;

	if (!s || !name || !name[0] || s->finished)
		return TRACE_EINVAL;
	if (ana_proc_find(s, name) >= 0)
		return TRACE_EINVAL;
	if (s->nprocs >= ANA_NONE - 1 || s->nprocs >= (size_t)INT32_MAX)
		return TRACE_EINVAL;
	if ((rc = grow((void **)&s->procs, &s->capprocs, s->nprocs + 1, sizeof(*s->procs))))
		return rc;
	p = &s->procs[s->nprocs];
	memset(p, 0, sizeof(*p));
	p->name = strdup(name);
	p->parent = strdup(parent ? parent : "");
	if (!p->name || !p->parent) {
		free(p->name);
		free(p->parent);
		return TRACE_ENOMEM;
	}
	p->fork_index = fork_index;
	p->fparent = ANA_NONE;
	return (int)s->nprocs++;
}

static int check_proc(const struct ana_session *s, int p)
{
	return s && !s->finished && p >= 0 && (size_t)p < s->nprocs;
}

int ana_add_inherited(struct ana_session *s, int p, uint32_t channel)
{
	struct ana_proc *pr;
	int rc;

	if (!check_proc(s, p) || !channel)
		return TRACE_EINVAL;
	pr = &s->procs[p];
	if ((rc = grow((void **)&pr->inherited, &pr->capinherited, pr->ninherited + 1,
	               sizeof(uint32_t))))
		return rc;
	pr->inherited[pr->ninherited++] = channel;
	return 0;
}

static void merge_endpoint(struct trace_endpoint *dst, const struct trace_endpoint *src)
{
	/* Later events know more (BIND: local; CONNECT/ACCEPT: both sides): keep every field
	 * some event filled. */
	if (src->type)
		dst->type = src->type;
	if (src->dir)
		dst->dir = src->dir;
	if (src->inode)
		dst->inode = src->inode;
	if (src->peer_inode)
		dst->peer_inode = src->peer_inode;
	if (src->peer_pid)
		dst->peer_pid = src->peer_pid;
	if (src->local_len && src->local_len <= sizeof(dst->local)) {
		memcpy(dst->local, src->local, src->local_len);
		dst->local_len = src->local_len;
	}
	if (src->peer_len && src->peer_len <= sizeof(dst->peer)) {
		memcpy(dst->peer, src->peer, src->peer_len);
		dst->peer_len = src->peer_len;
	}
}

static void end_set_ep(struct ana_session *s, uint32_t e, const struct trace_endpoint *ep)
{
	merge_endpoint(&s->ends[e].ep, ep);
	s->ends[e].has_ep = 1;
}

static int is_endpoint_kind(uint32_t kind)
{
	return kind == TRACE_EV_SOCKET || kind == TRACE_EV_CONNECT || kind == TRACE_EV_ACCEPT ||
	       kind == TRACE_EV_BIND || kind == TRACE_EV_PIPE;
}

/* PIPE (pipe, socketpair) makes two ends at once: aux[0] and aux[1], as pipe(2) returns
 * them (read end first).  They are each other's peer without any matching. */
static int add_pipe_pair(struct ana_session *s, uint32_t p, const struct trace_event *ev,
                         const struct trace_endpoint *ep, int have_ep)
{
	uint32_t a, b;
	int rc;

	if (ev->naux < 2 || ev->aux[0] <= 0 || ev->aux[1] <= 0 || ev->aux[0] > UINT32_MAX ||
	    ev->aux[1] > UINT32_MAX)
		return 0;
	if ((rc = ana__end_get(s, p, (uint32_t)ev->aux[0], &a)) ||
	    (rc = ana__end_get(s, p, (uint32_t)ev->aux[1], &b)))
		return rc;
	s->ends[a].pipe_other = b;
	s->ends[b].pipe_other = a;
	if (have_ep) {
		struct trace_endpoint ea = *ep, eb = *ep;

		if (ep->type == TRACE_CHAN_PIPE) {
			ea.dir = 1;
			eb.dir = 2;
		} else {
			/* socketpair: the data describes aux[0]'s end; the other sees it mirrored */
			eb.inode = ep->peer_inode;
			eb.peer_inode = ep->inode;
		}
		end_set_ep(s, a, &ea);
		end_set_ep(s, b, &eb);
	}
	s->ends[a].pipe_dir = have_ep && ep->type == TRACE_CHAN_PIPE ? 1 : 0;
	s->ends[b].pipe_dir = have_ep && ep->type == TRACE_CHAN_PIPE ? 2 : 0;
	return 0;
}

int64_t ana_add_trace_event(struct ana_session *s, int p, const struct trace_event *ev)
{
	struct ana_proc *pr;
	struct ana_ev *e;
	struct trace_endpoint ep;
	int have_ep = 0, rc;

	if (!check_proc(s, p) || !ev)
		return TRACE_EINVAL;
	pr = &s->procs[p];
	if (pr->n >= UINT32_MAX - 1)
		return TRACE_EINVAL; /* src_idx is 32 bits: 4e9 events per process */
	if (pr->n == pr->cap) {
		uint64_t ncap = pr->cap ? pr->cap * 2 : 256;
		struct ana_ev *nev = realloc(pr->ev, ncap * sizeof(*nev));

		if (!nev)
			return TRACE_ENOMEM;
		pr->ev = nev;
		if (pr->thread) {
			uint32_t *nt = realloc(pr->thread, ncap * sizeof(*nt));

			if (!nt)
				return TRACE_ENOMEM; /* pr->cap unchanged: ev's new room goes unused */
			pr->thread = nt;
		}
		pr->cap = ncap;
	}
	if (ev->thread && !pr->thread) {
		/* the first event of another thread than the main one: every earlier one was 0 */
		pr->thread = calloc(pr->cap, sizeof(*pr->thread));
		if (!pr->thread)
			return TRACE_ENOMEM;
	}
	if (pr->thread)
		pr->thread[pr->n] = ev->thread;
	e = &pr->ev[pr->n];
	memset(e, 0, sizeof(*e));
	e->kind = ev->kind > 255 ? TRACE_EV_NONE : (uint8_t)ev->kind;
	e->flags = (uint8_t)ev->flags;
	e->chan = ev->channel;
	e->site = ev->site;
	e->result = ev->result;
	e->src_proc = ANA_NONE;
	e->src_idx = 0;
	e->end = ANA_NONE;
	/* the reader derives offsets continuing across fork and exec (trace_reader_inherited
	 * carries the counts), so they are the stream's own byte positions */
	e->offset = ev->offset;

	if (e->kind == TRACE_EV_MARK) {
		/* data = key, aux[0] = value (trace.h) */
		char key[256];
		uint32_t kid;
		size_t kl = ev->data_len < sizeof(key) - 1 ? ev->data_len : sizeof(key) - 1;

		if (ev->data && kl)
			memcpy(key, ev->data, kl);
		key[kl] = '\0';
		if ((rc = ana__intern_key(s, key, &kid)))
			return rc;
		/* recorder/stdio.c: scanf or ungetc on a channel, whose bytes it cannot count */
		if (strcmp(key, "encore.stdio") == 0)
			ana__warn(s, "%s used stdio on channel %lld: its bytes there are not recorded; "
			          "replay of it is not guaranteed", pr->name,
			          (long long)(ev->naux ? ev->aux[0] : 0));
		e->chan = kid;
		e->result = ev->naux ? ev->aux[0] : 0;
	} else if (ev->channel) {
		if ((rc = ana__end_get(s, (uint32_t)p, ev->channel, &e->end)))
			return rc;
	}
	if ((is_endpoint_kind(e->kind) ||
	     (e->kind == TRACE_EV_PASS && ev->naux && ev->aux[0] == TRACE_PASS_IN)) &&
	    ev->data && ev->data_len) {
		memset(&ep, 0, sizeof(ep));
		have_ep = trace_endpoint_decode(ev->data, ev->data_len, &ep) == 0;
		if (have_ep && e->end != ANA_NONE && e->kind != TRACE_EV_PIPE)
			end_set_ep(s, e->end, &ep);
	}
	if (e->kind == TRACE_EV_PIPE && (rc = add_pipe_pair(s, (uint32_t)p, ev, &ep, have_ep)))
		return rc;
	if (e->kind == TRACE_EV_PASS && (rc = ana__pass_event(s, (uint32_t)p, pr->n + 1, ev)))
		return rc;
	if ((e->kind == TRACE_EV_SEND || e->kind == TRACE_EV_INPUT || e->kind == TRACE_EV_SOCKET) &&
	    (rc = ana__dgram_note(s, (uint32_t)p, ev, e->end)))
		return rc;
	if (e->kind == TRACE_EV_THREAD)
		pr->threads = 1;
	if (e->kind == TRACE_EV_SIGNAL && ev->naux && ev->aux[0] == 1)
		e->fatal = 1;
	/* a wait that reaped a child that exited or was killed (si_code, trace.h) */
	if (e->kind == TRACE_EV_WAIT && ev->result > 0 && ev->naux > 1 &&
	    (ev->aux[1] == CLD_EXITED || ev->aux[1] == CLD_KILLED || ev->aux[1] == CLD_DUMPED))
		e->ended = 1;
	/* signals (trace.h): a kill that reached one process keeps its target pid in result and
	 * the signal in offset; a handler run keeps the sender's pid (si_pid) and the signal */
	if (e->kind == TRACE_EV_KILL) {
		e->result = ev->result == 0 && ev->naux > 1 && ev->aux[0] > 0 ? ev->aux[0] : 0;
		e->offset = ev->naux > 1 ? (uint64_t)ev->aux[1] : 0;
	}
	if (e->kind == TRACE_EV_HANDLER) {
		e->result = ev->naux > 1 && ev->aux[1] > 0 ? ev->aux[1] : 0;
		e->offset = (uint64_t)ev->result;
		/* a SIGCHLD run for a child that ended (si_code): the child's pid is si_pid, and
		 * the run follows its end as a wait does (edges.c, link_waits) */
		if (ev->result == SIGCHLD && e->result > 0 &&
		    (ev->aux[0] == CLD_EXITED || ev->aux[0] == CLD_KILLED || ev->aux[0] == CLD_DUMPED))
			e->ended = 1;
	}
	/* a process-shared semaphore (trace.h): its key in result, the ticket in offset, chan 1
	 * for a successful acquisition, 2 for a release (edges.c, link_order) */
	if (e->kind == TRACE_EV_ORDER) {
		int post = ev->call == TRACE_CALL_SEM_POST;

		e->chan = ev->naux >= 2 && ev->aux[0] >= 0 && (post || ev->result >= 0) ? 1 + post : 0;
		e->result = ev->naux >= 2 ? ev->aux[1] : 0;
		e->offset = ev->naux >= 2 && ev->aux[0] >= 0 ? (uint64_t)ev->aux[0] : 0;
	}
	/* a zero-byte request also returns 0: only a real request read to the end of stream */
	if (e->kind == TRACE_EV_RECV && ev->result == 0 && ev->len > 0)
		e->eof = 1;
	if (e->kind == TRACE_EV_SHUTDOWN && ev->result == 0 && ev->naux &&
	    (ev->aux[0] == SHUT_WR || ev->aux[0] == SHUT_RDWR))
		e->shut_wr = 1;
	/* a readiness result names the channels it found readable, two ids per aux entry */
	if (e->kind == TRACE_EV_READY && ev->result > 0)
		for (uint32_t i = 0; i < 2 * ev->naux && i < 2 * TRACE_AUX_MAX; i++) {
			uint32_t id = (uint32_t)((uint64_t)ev->aux[i / 2] >> (i % 2 ? 32 : 0));

			if (!id)
				continue;
			if ((rc = grow((void **)&s->readyrefs, &s->capready, s->nready + 1,
			               sizeof(*s->readyrefs))))
				return rc;
			s->readyrefs[s->nready].proc = (uint32_t)p;
			s->readyrefs[s->nready].idx = (uint32_t)pr->n + 1;
			s->readyrefs[s->nready++].chan = id;
		}
	pr->n++;
	s->total++;
	return (int64_t)pr->n;
}

int ana_add_stack(struct ana_session *s, int p, uint32_t site, const char *const *functions,
                  uint32_t nframes)
{
	struct ana_proc *pr;
	struct ana_stackrec *st;
	int rc;

	if (!s || p < 0 || (size_t)p >= s->nprocs || (nframes && !functions))
		return TRACE_EINVAL;
	pr = &s->procs[p];
	if ((rc = grow((void **)&pr->stacks, &pr->capstacks, pr->nstacks + 1, sizeof(*st))))
		return rc;
	st = &pr->stacks[pr->nstacks];
	st->site = site;
	st->nframes = 0;
	st->fn = calloc(nframes ? nframes : 1, sizeof(char *));
	if (!st->fn)
		return TRACE_ENOMEM;
	for (uint32_t i = 0; i < nframes; i++) {
		st->fn[i] = strdup(functions[i] ? functions[i] : "");
		if (!st->fn[i]) {
			for (uint32_t j = 0; j < i; j++)
				free(st->fn[j]);
			free(st->fn);
			return TRACE_ENOMEM;
		}
		st->nframes++;
	}
	pr->nstacks++;
	pr->sorted_stacks = 0;
	return 0;
}

int ana_add_channel(struct ana_session *s, int a, int b)
{
	uint32_t id, ea, eb = ANA_NONE;
	uint32_t *na, *nb;
	int rc;

	if (!check_proc(s, a) || (b != -1 && !check_proc(s, b)) || a == b)
		return TRACE_EINVAL;
	if (s->nbuilder >= INT32_MAX - 1)
		return TRACE_EINVAL;
	id = ANA_BUILDER_CHAN | s->nbuilder;
	if ((rc = ana__end_get(s, (uint32_t)a, id, &ea)))
		return rc;
	if (b >= 0 && (rc = ana__end_get(s, (uint32_t)b, id, &eb)))
		return rc;
	na = realloc(s->builder_a, (s->nbuilder + 1) * sizeof(uint32_t));
	if (!na)
		return TRACE_ENOMEM;
	s->builder_a = na;
	nb = realloc(s->builder_b, (s->nbuilder + 1) * sizeof(uint32_t));
	if (!nb)
		return TRACE_ENOMEM;
	s->builder_b = nb;
	s->ends[ea].builder = 1;
	s->ends[ea].peer = eb;
	if (eb != ANA_NONE) {
		s->ends[eb].builder = 1;
		s->ends[eb].peer = ea;
	}
	s->builder_a[s->nbuilder] = (uint32_t)a;
	s->builder_b[s->nbuilder] = b >= 0 ? (uint32_t)b : ANA_NONE;
	return (int)s->nbuilder++;
}

static int64_t add_io(struct ana_session *s, int p, int channel, uint64_t len, uint32_t kind)
{
	struct trace_event ev;
	uint32_t end;
	int64_t idx;

	if (!check_proc(s, p) || channel < 0 || (uint32_t)channel >= s->nbuilder)
		return TRACE_EINVAL;
	if (s->builder_a[channel] != (uint32_t)p && s->builder_b[channel] != (uint32_t)p)
		return TRACE_EINVAL;
	if (len > INT64_MAX)
		return TRACE_EINVAL;
	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.fd = -1;
	ev.channel = ANA_BUILDER_CHAN | (uint32_t)channel;
	ev.result = (int64_t)len;
	ev.len = len;
	/* derive the offset as the trace reader would: running count per direction */
	end = ana__end_lookup(s, (uint32_t)p, ev.channel);
	if (end == ANA_NONE)
		return TRACE_EINVAL;
	ev.offset = kind == TRACE_EV_SEND ? s->ends[end].nout : s->ends[end].nin;
	idx = ana_add_trace_event(s, p, &ev);
	if (idx > 0) {
		if (kind == TRACE_EV_SEND)
			s->ends[end].nout += len;
		else
			s->ends[end].nin += len;
	}
	return idx;
}

int64_t ana_add_send(struct ana_session *s, int p, int channel, uint64_t len)
{
	return add_io(s, p, channel, len, TRACE_EV_SEND);
}

int64_t ana_add_recv(struct ana_session *s, int p, int channel, uint64_t len)
{
	return add_io(s, p, channel, len, TRACE_EV_RECV);
}

int ana_set_capacity(struct ana_session *s, int channel, uint64_t bytes)
{
	uint32_t id;

	if (!s || s->finished || channel < 0 || (uint32_t)channel >= s->nbuilder)
		return TRACE_EINVAL;
	id = ANA_BUILDER_CHAN | (uint32_t)channel;
	for (int side = 0; side < 2; side++) {
		uint32_t p = side ? s->builder_b[channel] : s->builder_a[channel];
		uint32_t e = p == ANA_NONE ? ANA_NONE : ana__end_lookup(s, p, id);

		if (e != ANA_NONE)
			s->ends[e].capacity = bytes;
	}
	return 0;
}

/* An event of process p on its side of builder channel `channel` that moves no bytes.
 * Returns the event's index as ana_add_trace_event does. */
static int64_t add_on_channel(struct ana_session *s, int p, int channel, uint32_t kind,
                              uint32_t call, int64_t result, uint64_t len)
{
	struct trace_event ev;
	uint32_t end;

	if (!check_proc(s, p) || channel < 0 || (uint32_t)channel >= s->nbuilder)
		return TRACE_EINVAL;
	if (s->builder_a[channel] != (uint32_t)p && s->builder_b[channel] != (uint32_t)p)
		return TRACE_EINVAL;
	end = ana__end_lookup(s, (uint32_t)p, ANA_BUILDER_CHAN | (uint32_t)channel);
	if (end == ANA_NONE)
		return TRACE_EINVAL;
	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.call = call;
	ev.fd = -1;
	ev.channel = ANA_BUILDER_CHAN | (uint32_t)channel;
	ev.result = result;
	ev.len = len;
	ev.offset = kind == TRACE_EV_RECV ? s->ends[end].nin : 0;
	return ana_add_trace_event(s, p, &ev);
}

/* A builder channel's close, or an end of file read from it (a one-byte request that got 0). */
int64_t ana_add_close(struct ana_session *s, int p, int channel)
{
	return add_on_channel(s, p, channel, TRACE_EV_CLOSE, TRACE_CALL_CLOSE, 0, 0);
}

int64_t ana_add_eof(struct ana_session *s, int p, int channel)
{
	return add_on_channel(s, p, channel, TRACE_EV_RECV, TRACE_CALL_RECV, 0, 1);
}

/* A connection's two ends on a builder channel: the client's connect, the server's accept
 * (its result a descriptor, as accept returns). */
int64_t ana_add_ready(struct ana_session *s, int p, int channel)
{
	struct trace_event ev;

	if (!check_proc(s, p) || channel < 0 || (uint32_t)channel >= s->nbuilder)
		return TRACE_EINVAL;
	if (s->builder_a[channel] != (uint32_t)p && s->builder_b[channel] != (uint32_t)p)
		return TRACE_EINVAL;
	memset(&ev, 0, sizeof(ev));
	ev.kind = TRACE_EV_READY;
	ev.call = TRACE_CALL_POLL;
	ev.fd = -1;
	ev.result = 1;
	ev.naux = 1;
	ev.aux[0] = (int64_t)(ANA_BUILDER_CHAN | (uint32_t)channel);
	return ana_add_trace_event(s, p, &ev);
}

int64_t ana_add_connect(struct ana_session *s, int p, int channel)
{
	return add_on_channel(s, p, channel, TRACE_EV_CONNECT, TRACE_CALL_CONNECT, 0, 0);
}

int64_t ana_add_accept(struct ana_session *s, int p, int channel)
{
	return add_on_channel(s, p, channel, TRACE_EV_ACCEPT, TRACE_CALL_ACCEPT, 3, 0);
}

int64_t ana_add_mark(struct ana_session *s, int p, const char *key, int64_t value)
{
	struct trace_event ev;

	if (!key)
		return TRACE_EINVAL;
	memset(&ev, 0, sizeof(ev));
	ev.kind = TRACE_EV_MARK;
	ev.fd = -1;
	ev.data = (const uint8_t *)key;
	ev.data_len = (uint32_t)strlen(key);
	ev.naux = 1;
	ev.aux[0] = value;
	return ana_add_trace_event(s, p, &ev);
}

int64_t ana_add_simple(struct ana_session *s, int p, uint32_t kind, uint32_t site)
{
	struct trace_event ev;

	if (kind == TRACE_EV_SEND || kind == TRACE_EV_RECV || kind == TRACE_EV_MARK)
		return TRACE_EINVAL; /* those need a channel or a key: use the dedicated adders */
	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.fd = -1;
	ev.site = site;
	return ana_add_trace_event(s, p, &ev);
}

/* Builder processes have no pid: a wait names its child by one, so the child gets one here,
 * above any real pid (pid_max is at most 2^22). */
int64_t ana_add_wait(struct ana_session *s, int p, int child)
{
	struct trace_event ev;

	if (!s || child < 0 || (size_t)child >= s->nprocs || child == p)
		return TRACE_EINVAL;
	if (s->procs[child].pid <= 0)
		s->procs[child].pid = 0x40000000 + child;
	memset(&ev, 0, sizeof(ev));
	ev.kind = TRACE_EV_WAIT;
	ev.call = TRACE_CALL_WAITPID;
	ev.fd = -1;
	ev.result = s->procs[child].pid;
	ev.naux = 2;
	ev.aux[1] = CLD_EXITED;
	return ana_add_trace_event(s, p, &ev);
}

/* Builder processes get a pid the same way for signals: p sends `sig` to `target` (a KILL
 * that reached it), and p runs its handler of a `sig` that `sender` sent (HANDLER). */
static int64_t builder_pid(struct ana_session *s, int p)
{
	if (s->procs[p].pid <= 0)
		s->procs[p].pid = 0x40000000 + p;
	return s->procs[p].pid;
}

int64_t ana_add_kill(struct ana_session *s, int p, int target, int sig)
{
	struct trace_event ev;

	if (!s || !check_proc(s, p) || target < 0 || (size_t)target >= s->nprocs)
		return TRACE_EINVAL;
	memset(&ev, 0, sizeof(ev));
	ev.kind = TRACE_EV_KILL;
	ev.call = TRACE_CALL_KILL;
	ev.fd = -1;
	ev.naux = 2;
	ev.aux[0] = builder_pid(s, target);
	ev.aux[1] = sig;
	return ana_add_trace_event(s, p, &ev);
}

int64_t ana_add_handler(struct ana_session *s, int p, int sender, int sig)
{
	struct trace_event ev;

	if (!s || !check_proc(s, p) || sender < 0 || (size_t)sender >= s->nprocs)
		return TRACE_EINVAL;
	memset(&ev, 0, sizeof(ev));
	ev.kind = TRACE_EV_HANDLER;
	ev.call = TRACE_CALL_HANDLER;
	ev.fd = -1;
	ev.result = sig;
	ev.naux = 2;
	ev.aux[0] = sig == SIGCHLD ? CLD_EXITED : SI_USER;
	ev.aux[1] = builder_pid(s, sender);
	return ana_add_trace_event(s, p, &ev);
}

/* ---------------------------------------------------------------------------------------
 * Finishing: message edges and a linear extension of happened-before.
 */

/* The first edge into process x's next event (or, for its first event, from its parent's
 * fork) whose source has not run yet at pos[]; ANA_NONE when x can go on (or is done).
 * *at gets the source's event index, *xrow the xin row when the edge is one. */
static uint32_t unmet(const struct ana_session *s, const uint64_t *pos, uint32_t x,
                      uint64_t *at, const struct ana_xedge **xrow)
{
	const struct ana_proc *pr = &s->procs[x];
	const struct ana_ev *e;

	*xrow = NULL;
	if (pos[x] >= pr->n)
		return ANA_NONE;
	if (pos[x] == 0 && pr->fparent != ANA_NONE && pos[pr->fparent] < pr->fidx) {
		*at = pr->fidx;
		return pr->fparent;
	}
	e = &pr->ev[pos[x]];
	if (ana__in_edge(e) && pos[e->src_proc] < e->src_idx) {
		*at = e->src_idx;
		return e->src_proc;
	}
	if (e->xin) {
		size_t n;
		const struct ana_xedge *r = ana__xedges(s->xin, s->nxin, x, pos[x] + 1, &n);

		for (size_t i = 0; i < n; i++)
			if (r[i].oproc != ANA_NONE && pos[r[i].oproc] < r[i].oidx) {
				*at = r[i].oidx;
				*xrow = &r[i];
				return r[i].oproc;
			}
	}
	return ANA_NONE;
}

/* Kahn's algorithm over processes: run each process until its next event waits for an event
 * of another process that has not run yet (the send of a receive, the connect of an accept,
 * the releases an end of file waits for), park it on that process's wait list, look again
 * when that process moves.  Returns the number of steps ordered: all of them unless the
 * edges make a cycle; then pos[] says where each process stopped. */
static size_t kahn(struct ana_session *s, uint64_t *pos, uint64_t *need, uint32_t *queue,
                   uint32_t *wnext, uint32_t *whead)
{
	size_t np = s->nprocs, qh = 0, qn = 0, t = 0, p;

	for (p = 0; p < np; p++) {
		pos[p] = 0;
		whead[p] = ANA_NONE;
		queue[qn++] = (uint32_t)p;
	}
	/* Every process is in at most one place (the ring queue or one wait list), so a ring
	 * of np entries never overflows. */
	while (qn) {
		uint32_t x = queue[qh];
		struct ana_proc *pr = &s->procs[x];
		uint32_t *link, w;

		qh = (qh + 1) % np;
		qn--;
		while (pos[x] < pr->n) {
			const struct ana_xedge *xr;
			uint64_t at = 0;
			uint32_t from = unmet(s, pos, x, &at, &xr);

			if (from != ANA_NONE) {
				need[x] = at;
				wnext[x] = whead[from];
				whead[from] = x;
				break;
			}
			s->topo[t++] = x;
			pos[x]++;
		}
		for (link = &whead[x]; (w = *link) != ANA_NONE;) {
			if (need[w] <= pos[x]) {
				*link = wnext[w];
				queue[(qh + qn++) % np] = w;
			} else {
				link = &wnext[w];
			}
		}
	}
	return t;
}

/* A cycle through an edge that is the kernel's usual order rather than proof: a connect
 * logged after an event that depends on its accept (a signal handler's receive while connect
 * blocked), or an end of file "after" a release that really came later (a descriptor closed
 * on exec, released at the exec but counted at the process's end).  Messages are proof of
 * order, so such an edge gives way.  Walks the waits-for chain from a stuck process into its
 * cycle and drops the first such edge on it; returns 0 when the cycle has none (the trace
 * itself is contradictory). */
static int drop_stuck_edge(struct ana_session *s, const uint64_t *pos)
{
	const struct ana_xedge *xr;
	uint64_t at;
	uint32_t x = 0;

	while (x < s->nprocs && unmet(s, pos, x, &at, &xr) == ANA_NONE)
		x++;
	if (x == s->nprocs)
		return 0;
	/* every unfinished process waits for another unfinished one, so the chain never ends
	 * and np steps land inside a cycle */
	for (size_t i = 0; i < s->nprocs && x != ANA_NONE; i++)
		x = unmet(s, pos, x, &at, &xr);
	for (size_t i = 0; i < s->nprocs && x != ANA_NONE; i++) {
		struct ana_ev *e = &s->procs[x].ev[pos[x]];
		uint32_t from = unmet(s, pos, x, &at, &xr);

		if (xr) {
			size_t n;
			struct ana_xedge *o = (struct ana_xedge *)ana__xedges(s->xout, s->nxout, from,
			                                                      at, &n);

			ana__warn(s, "the end of file at event %llu of %s is not ordered after event "
			          "%llu of %s: other edges contradict it",
			          (unsigned long long)pos[x] + 1, s->procs[x].name,
			          (unsigned long long)at, s->procs[from].name);
			for (size_t j = 0; j < n; j++)
				if (o[j].oproc == x && o[j].oidx == pos[x] + 1)
					o[j].oproc = ANA_NONE;
			((struct ana_xedge *)xr)->oproc = ANA_NONE;
			return 1;
		}
		if (e->kind == TRACE_EV_ACCEPT && from == e->src_proc && at == e->src_idx) {
			struct ana_ev *ce = &s->procs[e->src_proc].ev[e->src_idx - 1];

			ana__warn(s, "the accept at event %llu of %s is not ordered after the connect at "
			          "event %u of %s: other edges contradict it",
			          (unsigned long long)pos[x] + 1, s->procs[x].name, e->src_idx,
			          s->procs[e->src_proc].name);
			ce->src_proc = ANA_NONE;
			ce->src_idx = 0;
			e->src_proc = ANA_NONE;
			e->src_idx = 0;
			return 1;
		}
		x = from;
	}
	return 0;
}

/* The cycle kahn stopped on, said for the user: from a stuck process, the waits-for chain
 * (unmet) until a process comes back, then the cycle's links from there ("event 12 (recv) of
 * sh.1 waits for event 30 of sh.2, ..."), at most four named.  Not the first stuck process
 * alone: that one is often a shell waiting for a child, outside the cycle. */
static void cycle_text(const struct ana_session *s, const uint64_t *pos, char *out, size_t cap)
{
	size_t np = s->nprocs, len = 0, steps;
	uint8_t *seen = calloc(np ? np : 1, 1);
	const struct ana_xedge *xr;
	uint64_t at = 0;
	uint32_t x = ANA_NONE, y;

	out[0] = '\0';
	for (size_t p = 0; p < np && x == ANA_NONE; p++)
		if (pos[p] < s->procs[p].n)
			x = (uint32_t)p;
	if (!seen || x == ANA_NONE) {
		free(seen);
		return;
	}
	/* into the cycle: the first process met twice */
	for (steps = 0; steps <= np && !seen[x]; steps++) {
		seen[x] = 1;
		if ((y = unmet(s, pos, x, &at, &xr)) == ANA_NONE)
			break;
		x = y;
	}
	y = x;
	for (steps = 0; steps < 4; steps++) {
		uint32_t from = unmet(s, pos, x, &at, &xr);
		const struct ana_ev *e;

		if (from == ANA_NONE || len + 8 >= cap)
			break;
		e = &s->procs[x].ev[pos[x]];
		len += (size_t)snprintf(out + len, cap - len, "%sevent %llu (%s) of %s waits for event %llu of %s",
		                        steps ? "; " : "", (unsigned long long)pos[x] + 1,
		                        trace_kind_name(e->kind), s->procs[x].name,
		                        (unsigned long long)at, s->procs[from].name);
		if (len >= cap)
			len = cap - 1;
		x = from;
		if (x == y)
			break;
	}
	if (x != y && len + 8 < cap)
		snprintf(out + len, cap - len, ", ...");
	free(seen);
}

/* A linear extension of happened-before: one process number per step; it is the order every
 * per-event sweep (reachability columns, races) uses. */
static int order_events(struct ana_session *s, struct trace_diag *diag)
{
	size_t np = s->nprocs;
	uint64_t *pos = calloc(np ? np : 1, sizeof(*pos));
	uint64_t *need = calloc(np ? np : 1, sizeof(*need));
	uint32_t *queue = malloc((np ? np : 1) * sizeof(*queue));
	uint32_t *wnext = malloc((np ? np : 1) * sizeof(*wnext)); /* wait lists as linked lists */
	uint32_t *whead = malloc((np ? np : 1) * sizeof(*whead));
	int rc = 0;

	free(s->topo);
	s->topo = malloc((s->total ? s->total : 1) * sizeof(uint32_t));
	if (!pos || !need || !queue || !wnext || !whead || !s->topo) {
		rc = TRACE_ENOMEM;
		goto out;
	}
	while (kahn(s, pos, need, queue, wnext, whead) != s->total) {
		if (drop_stuck_edge(s, pos))
			continue;
		{
			char cyc[400];

			cycle_text(s, pos, cyc, sizeof(cyc));
			ana__diag(diag, TRACE_ECORRUPT,
			          "messages contradict program order (a cycle: %s); a send missing from "
			          "a trace, or a stream several processes wrote, makes one",
			          cyc[0] ? cyc : "not found");
		}
		rc = TRACE_ECORRUPT;
		break;
	}
out:
	free(pos);
	free(need);
	free(queue);
	free(wnext);
	free(whead);
	return rc;
}

static int cmp_stack(const void *a, const void *b)
{
	const struct ana_stackrec *x = a, *y = b;

	return x->site < y->site ? -1 : x->site > y->site;
}

int ana_finish(struct ana_session *s, struct trace_diag *diag)
{
	int rc;

	if (!s)
		return TRACE_EINVAL;
	if (s->finished)
		return 0;
	if ((rc = ana__match(s, diag)))
		return rc;
	ana__link_forks(s);
	if ((rc = ana__link_connections(s)) || (rc = ana__link_streams(s))) {
		ana__diag(diag, rc, "out of memory while ordering connections");
		return rc;
	}
	/* call sites sorted once here, so that lookups after finish only read: ana_db_fill reads
	 * the session from two threads (ana__stack sorts lazily otherwise) */
	for (size_t p = 0; p < s->nprocs; p++) {
		struct ana_proc *pr = &s->procs[p];

		if (!pr->sorted_stacks && pr->nstacks)
			qsort(pr->stacks, pr->nstacks, sizeof(*pr->stacks), cmp_stack);
		pr->sorted_stacks = 1;
	}
	if ((rc = order_events(s, diag)))
		return rc;
	s->finished = 1;
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * Reading the model
 */
size_t ana_nprocs(const struct ana_session *s)
{
	return s ? s->nprocs : 0;
}

const char *ana_proc_name(const struct ana_session *s, size_t p)
{
	return s && p < s->nprocs ? s->procs[p].name : NULL;
}

int ana_proc_find(const struct ana_session *s, const char *name)
{
	if (!s || !name)
		return TRACE_EINVAL;
	for (size_t i = 0; i < s->nprocs; i++)
		if (strcmp(s->procs[i].name, name) == 0)
			return (int)i;
	return TRACE_ENOENT;
}

uint64_t ana_nevents(const struct ana_session *s, size_t p)
{
	return s && p < s->nprocs ? s->procs[p].n : 0;
}

uint64_t ana_total_events(const struct ana_session *s)
{
	return s ? s->total : 0;
}

int64_t ana_event_deps(const struct ana_session *s, size_t p, uint64_t k, struct ana_ref *out,
                       size_t cap)
{
	const struct ana_ev *e;
	const struct ana_proc *pr;
	int64_t n = 0;

	if (!s || !s->finished || p >= s->nprocs || k < 1 || k > s->procs[p].n || (cap && !out))
		return TRACE_EINVAL;
	pr = &s->procs[p];
	e = ana__ev(s, p, k);
#define ANA_DEP(q, j)                                                                      \
	do {                                                                                 \
		if ((size_t)n < cap) {                                                           \
			out[n].proc = (q);                                                           \
			out[n].index = (j);                                                          \
		}                                                                                \
		n++;                                                                             \
	} while (0)
	if (k == 1 && pr->fparent != ANA_NONE)
		ANA_DEP(pr->fparent, pr->fidx);
	if (ana__in_edge(e))
		ANA_DEP(e->src_proc, e->src_idx);
	if (e->xin) {
		size_t nx;
		const struct ana_xedge *r = ana__xedges(s->xin, s->nxin, (uint32_t)p, k, &nx);

		for (size_t i = 0; i < nx; i++)
			if (r[i].oproc != ANA_NONE)
				ANA_DEP(r[i].oproc, r[i].oidx);
	}
#undef ANA_DEP
	return n;
}

int ana_event_get(const struct ana_session *s, size_t p, uint64_t k, struct ana_event *out)
{
	const struct ana_ev *e;

	if (!s || p >= s->nprocs || k < 1 || k > s->procs[p].n || !out)
		return TRACE_EINVAL;
	e = ana__ev(s, p, k);
	memset(out, 0, sizeof(*out));
	out->kind = e->kind;
	out->flags = e->flags;
	out->channel = e->kind == TRACE_EV_MARK ? 0 : e->chan;
	out->site = e->site;
	out->result = e->result;
	out->offset = e->offset;
	out->src_proc = ANA_NO_PROC;
	if (ana__in_edge(e)) {
		out->src_proc = e->src_proc;
		out->src_index = e->src_idx;
	}
	out->external = e->external;
	out->thread = s->procs[p].thread ? s->procs[p].thread[k - 1] : 0;
	return 0;
}


const struct ana_stackrec *ana__stack(const struct ana_session *s, size_t p, uint32_t site)
{
	struct ana_proc *pr;
	struct ana_stackrec key;

	if (!site || p >= s->nprocs || !s->procs[p].nstacks)
		return NULL;
	/* Sorting lazily is a benign mutation of a cache: the set of stacks does not change. */
	pr = (struct ana_proc *)&s->procs[p];
	if (!pr->sorted_stacks) {
		qsort(pr->stacks, pr->nstacks, sizeof(*pr->stacks), cmp_stack);
		pr->sorted_stacks = 1;
	}
	memset(&key, 0, sizeof(key));
	key.site = site;
	return bsearch(&key, pr->stacks, pr->nstacks, sizeof(*pr->stacks), cmp_stack);
}

const char *ana_site_function(const struct ana_session *s, size_t p, uint32_t site)
{
	const struct ana_stackrec *st;

	if (!s)
		return "";
	st = ana__stack(s, p, site);
	return st && st->nframes ? st->fn[0] : "";
}

int ana_stats(const struct ana_session *s, struct ana_stats *st)
{
	size_t i, p;

	if (!s || !st || !s->finished)
		return TRACE_EINVAL;
	memset(st, 0, sizeof(*st));
	st->procs = s->nprocs;
	st->events = s->total;
	for (p = 0; p < s->nprocs; p++) {
		const struct ana_proc *pr = &s->procs[p];

		st->thread_procs += pr->threads != 0;
		for (uint64_t k = 0; k < pr->n; k++) {
			const struct ana_ev *e = &pr->ev[k];

			if (e->result <= 0)
				continue;
			if (e->kind == TRACE_EV_SEND) {
				st->sends++;
			} else if (e->kind == TRACE_EV_INPUT && e->end != ANA_NONE) {
				/* the recorder logs bytes from an unrecorded peer as INPUT */
				st->recvs++;
				st->external_recvs++;
			} else if (e->kind == TRACE_EV_RECV) {
				st->recvs++;
				if (e->src_proc != ANA_NONE)
					st->messages++;
				else if (e->external)
					st->external_recvs++;
				else if (!e->lost) /* a send the disk budget dropped: warned */
					st->unmatched_recvs++;
			}
		}
	}
	/* A channel is a root end object with its peer (counted once), or a root that moved
	 * bytes with no recorded peer (external). */
	for (i = 0; i < s->nends; i++) {
		const struct ana_end *e = &s->ends[i];

		if (e->uf != i)
			continue;
		if (e->peer != ANA_NONE) {
			if (e->peer > i) {
				st->channels++;
				st->channels_matched++;
			}
		} else if (e->dgram_linked) {
			/* a datagram socket has no one peer: matched when its datagrams are */
			st->channels++;
			st->channels_matched++;
		} else if ((e->writer != ANA_NONE || e->reader != ANA_NONE) && !e->peer_dropped) {
			st->channels++;
			st->channels_external++;
		}
	}
	return 0;
}
