/*
 * dcfg.c: the distributed control-flow graph (DCFG) of Spezialetti & Gupta section 2, built
 * from recordings, and the data-flow sets of their section 3.2: Reach, Dom and PDom per
 * process, PRE (Definition 3.1, an over-approximation) and POST1 / POST2 (Definition 3.2,
 * under-approximations).  stable.c uses them to find valid recognition points (3.2.4).
 *
 * The paper builds the DCFG from the program text; encore builds it from what recordings
 * observed: a node is a communication call site (a send or a receive, identified by the
 * call-site stack the recorder logged: function+offset of every frame), an intraprocess edge
 * is one observed succession of two sites in one process (with a summary of the events seen
 * between them), and an interprocess edge joins the send site of a message to the receive
 * site that read it.  Several recordings merge by logical process name and stack.  Every
 * "guaranteed" below is therefore relative to the behaviours recorded: a path no recording
 * took is not in the graph (schemas/stability.md).  Optionally a site is split by the
 * process at the other end (ana_dcfg_split_by_peer) or by the site executed before it
 * (ana_dcfg_split_by_context), which labels the same event sequences more finely.
 */
#include <stdlib.h>
#include <string.h>

#include "ana_internal.h"
#include "dcfg_internal.h"

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t nc;
	void *n;

	if (need <= *cap)
		return 0;
	nc = *cap ? *cap * 2 : 8;
	while (nc < need)
		nc *= 2;
	n = realloc(*p, nc * size);
	if (!n)
		return TRACE_ENOMEM;
	*p = n;
	*cap = nc;
	return 0;
}

static int grow32(uint32_t **p, uint32_t *cap, uint32_t need)
{
	size_t c = *cap;
	int rc = grow((void **)p, &c, need, sizeof(**p));

	*cap = (uint32_t)c;
	return rc;
}

int ana_dcfg_new(struct ana_dcfg **out)
{
	if (!out)
		return TRACE_EINVAL;
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : TRACE_ENOMEM;
}

static void unsolve(struct ana_dcfg *g)
{
	free(g->reach);
	free(g->dom);
	free(g->pdom);
	free(g->pre);
	free(g->post1);
	free(g->post2);
	free(g->sends_of);
	free(g->recvs_of);
	g->reach = g->dom = g->pdom = g->pre = g->post1 = g->post2 = NULL;
	g->sends_of = g->recvs_of = NULL;
	g->solved = 0;
}

static void free_segs(struct ana_dcfg *g)
{
	for (size_t p = 0; p < g->nsegprocs; p++)
		free(g->segfirst[p]);
	free(g->segfirst);
	free(g->nseg);
	g->segfirst = NULL;
	g->nseg = NULL;
	g->nsegprocs = 0;
}

static void free_evnode(struct ana_dcfg *g)
{
	for (size_t p = 0; p < g->nevprocs; p++)
		free(g->evnode[p]);
	free(g->evnode);
	g->evnode = NULL;
	g->nevprocs = 0;
	g->last = NULL;
}

static void free_bases(struct ana_dcfg *g)
{
	for (size_t i = 0; i < g->nbases; i++) {
		free(g->bases[i].key);
		free(g->bases[i].function);
	}
	free(g->bases);
	g->bases = NULL;
	g->nbases = g->capbases = 0;
}

void ana_dcfg_free(struct ana_dcfg *g)
{
	if (!g)
		return;
	unsolve(g);
	for (size_t i = 0; i < g->nprocs; i++)
		free(g->procs[i].name);
	for (size_t i = 0; i < g->nnodes; i++) {
		struct dcfg_node *n = &g->nodes[i];

		free(n->key);
		free(n->function);
		free(n->succ);
		free(n->pred);
		free(n->out);
		free(n->in);
	}
	for (size_t i = 0; i < g->nflows; i++) {
		for (size_t k = 0; k < g->flows[i].nmarks; k++)
			free(g->flows[i].marks[k]);
		free(g->flows[i].marks);
	}
	free(g->procs);
	free(g->nodes);
	free(g->flows);
	free(g->map);
	free_segs(g);
	free_evnode(g);
	free_bases(g);
	free(g);
}

static int new_node(struct ana_dcfg *g, uint32_t proc, uint32_t kind, const char *key,
                    const char *function)
{
	struct dcfg_node *n;
	int rc;

	if (g->nnodes >= INT32_MAX)
		return TRACE_EINVAL;
	if ((rc = grow((void **)&g->nodes, &g->capnodes, g->nnodes + 1, sizeof(*n))))
		return rc;
	n = &g->nodes[g->nnodes];
	memset(n, 0, sizeof(*n));
	n->proc = proc;
	n->kind = kind;
	n->key = strdup(key ? key : "");
	n->function = strdup(function ? function : "");
	if (!n->key || !n->function) {
		free(n->key);
		free(n->function);
		return TRACE_ENOMEM;
	}
	g->solved = 0;
	return (int)g->nnodes++;
}

int ana_dcfg_proc_find(const struct ana_dcfg *g, const char *name)
{
	if (!g || !name)
		return TRACE_EINVAL;
	for (size_t i = 0; i < g->nprocs; i++)
		if (strcmp(g->procs[i].name, name) == 0)
			return (int)i;
	return TRACE_ENOENT;
}

int ana_dcfg_add_proc(struct ana_dcfg *g, const char *name)
{
	struct dcfg_proc *p;
	int rc, a, b;

	if (!g || !name || !*name)
		return TRACE_EINVAL;
	if ((rc = ana_dcfg_proc_find(g, name)) >= 0)
		return rc;
	if ((rc = grow((void **)&g->procs, &g->capprocs, g->nprocs + 1, sizeof(*p))))
		return rc;
	p = &g->procs[g->nprocs];
	if (!(p->name = strdup(name)))
		return TRACE_ENOMEM;
	if ((a = new_node(g, (uint32_t)g->nprocs, ANA_NODE_START, "start", "")) < 0 ||
	    (b = new_node(g, (uint32_t)g->nprocs, ANA_NODE_STOP, "stop", "")) < 0) {
		free(p->name);
		return a < 0 ? a : b;
	}
	p->start = (uint32_t)a;
	p->stop = (uint32_t)b;
	return (int)g->nprocs++;
}

int ana_dcfg_find(const struct ana_dcfg *g, size_t proc, uint32_t kind, const char *key)
{
	if (!g || !key || proc >= g->nprocs)
		return TRACE_EINVAL;
	for (size_t i = 0; i < g->nnodes; i++)
		if (g->nodes[i].proc == proc && g->nodes[i].kind == kind &&
		    strcmp(g->nodes[i].key, key) == 0)
			return (int)i;
	return TRACE_ENOENT;
}

int ana_dcfg_add_node(struct ana_dcfg *g, int proc, uint32_t kind, const char *key,
                      const char *function)
{
	int rc;

	if (!g || proc < 0 || (size_t)proc >= g->nprocs || !key ||
	    (kind != ANA_NODE_SEND && kind != ANA_NODE_RECV))
		return TRACE_EINVAL;
	if ((rc = ana_dcfg_find(g, (size_t)proc, kind, key)) >= 0)
		return rc;
	return new_node(g, (uint32_t)proc, kind, key, function);
}

int ana_dcfg_start(const struct ana_dcfg *g, int proc)
{
	if (!g || proc < 0 || (size_t)proc >= g->nprocs)
		return TRACE_EINVAL;
	return (int)g->procs[proc].start;
}

int ana_dcfg_stop(const struct ana_dcfg *g, int proc)
{
	if (!g || proc < 0 || (size_t)proc >= g->nprocs)
		return TRACE_EINVAL;
	return (int)g->procs[proc].stop;
}

int ana_dcfg_set_flags(struct ana_dcfg *g, int node, int flags)
{
	if (!g || node < 0 || (size_t)node >= g->nnodes)
		return TRACE_EINVAL;
	g->nodes[node].flags |= flags;
	g->solved = 0;
	return 0;
}

static int add_mark(struct dcfg_flow *f, const char *key)
{
	char **n;

	for (size_t i = 0; i < f->nmarks; i++)
		if (strcmp(f->marks[i], key) == 0)
			return 0;
	n = realloc(f->marks, (f->nmarks + 1) * sizeof(*n));
	if (!n)
		return TRACE_ENOMEM;
	f->marks = n;
	if (!(f->marks[f->nmarks] = strdup(key)))
		return TRACE_ENOMEM;
	f->nmarks++;
	return 0;
}

int ana_dcfg_add_flow(struct ana_dcfg *g, int a, int b, const struct ana_between *between)
{
	struct dcfg_node *na, *nb;
	struct dcfg_flow *f = NULL;
	int rc;

	if (!g || a < 0 || b < 0 || (size_t)a >= g->nnodes || (size_t)b >= g->nnodes)
		return TRACE_EINVAL;
	na = &g->nodes[a];
	nb = &g->nodes[b];
	if (na->proc != nb->proc || na->kind == ANA_NODE_STOP || nb->kind == ANA_NODE_START)
		return TRACE_EINVAL;
	for (uint32_t i = 0; i < na->nsucc; i++)
		if (g->flows[na->succ[i]].b == (uint32_t)b)
			f = &g->flows[na->succ[i]];
	if (!f) {
		if ((rc = grow((void **)&g->flows, &g->capflows, g->nflows + 1, sizeof(*f))) ||
		    (rc = grow32(&na->succ, &na->capsucc, na->nsucc + 1)) ||
		    (rc = grow32(&nb->pred, &nb->cappred, nb->npred + 1)))
			return rc;
		f = &g->flows[g->nflows];
		memset(f, 0, sizeof(*f));
		f->a = (uint32_t)a;
		f->b = (uint32_t)b;
		na->succ[na->nsucc++] = (uint32_t)g->nflows;
		nb->pred[nb->npred++] = (uint32_t)g->nflows;
		g->nflows++;
	}
	f->seen++;
	if (between) {
		f->kinds |= between->kinds;
		for (size_t i = 0; i < between->nmarks; i++)
			if ((rc = add_mark(f, between->marks[i])))
				return rc;
	}
	g->solved = 0;
	return 0;
}

int ana_dcfg_add_msg(struct ana_dcfg *g, int send, int recv)
{
	struct dcfg_node *s, *r;
	int rc;

	if (!g || send < 0 || recv < 0 || (size_t)send >= g->nnodes || (size_t)recv >= g->nnodes)
		return TRACE_EINVAL;
	s = &g->nodes[send];
	r = &g->nodes[recv];
	if (s->kind != ANA_NODE_SEND || r->kind != ANA_NODE_RECV)
		return TRACE_EINVAL;
	for (uint32_t i = 0; i < s->nout; i++)
		if (s->out[i] == (uint32_t)recv)
			return 0;
	if ((rc = grow32(&s->out, &s->capout, s->nout + 1)) ||
	    (rc = grow32(&r->in, &r->capin, r->nin + 1)))
		return rc;
	s->out[s->nout++] = (uint32_t)recv;
	r->in[r->nin++] = (uint32_t)send;
	g->nmsgs++;
	g->solved = 0;
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * From a recorded session.
 */

/* The identity of a call site: every frame as function+offset, innermost first, joined by
 * " < " (read "called from").  Frames without a function name use object+pc. */
static char *stack_key(const struct trace_stack *st)
{
	size_t cap = 64, len = 0;
	char *buf = malloc(cap);

	if (!buf)
		return NULL;
	buf[0] = 0;
	for (uint32_t f = 0; st && f < st->nframes; f++) {
		const struct trace_frame *fr = &st->frames[f];
		char one[600];
		int n;

		if (fr->function && *fr->function)
			n = snprintf(one, sizeof(one), "%s%s+0x%llx", f ? " < " : "", fr->function,
			             (unsigned long long)fr->offset);
		else
			n = snprintf(one, sizeof(one), "%s%s@0x%llx", f ? " < " : "",
			             fr->object && *fr->object ? fr->object : "?",
			             (unsigned long long)fr->pc);
		if (n < 0)
			continue;
		if ((size_t)n >= sizeof(one))
			n = (int)sizeof(one) - 1;
		if (len + (size_t)n + 1 > cap) {
			char *nb;

			while (len + (size_t)n + 1 > cap)
				cap *= 2;
			if (!(nb = realloc(buf, cap))) {
				free(buf);
				return NULL;
			}
			buf = nb;
		}
		memcpy(buf + len, one, (size_t)n + 1);
		len += (size_t)n;
	}
	if (!len) {
		free(buf);
		return strdup("?");
	}
	return buf;
}

struct siteinfo {
	uint32_t site;
	char *key;
	char *function;
};

/* The sites of one trace file (one image: site ids are per file, so an exec'd image's site
 * 1 is not its parent image's site 1). */
struct segsites {
	uint64_t first;       /* index of the image's first event minus one */
	struct siteinfo *v;
	size_t n, cap;
	uint32_t *idx;        /* idx[site] = position in v + 1, for sites below nidx */
	size_t nidx;
};

struct procsites {
	struct segsites *seg;
	size_t nseg;
};

#define DENSE_SITES (1u << 22)

static void free_sites(struct procsites *ps, size_t n)
{
	for (size_t p = 0; ps && p < n; p++) {
		for (size_t f = 0; f < ps[p].nseg; f++) {
			struct segsites *sg = &ps[p].seg[f];

			for (size_t i = 0; i < sg->n; i++) {
				free(sg->v[i].key);
				free(sg->v[i].function);
			}
			free(sg->v);
			free(sg->idx);
		}
		free(ps[p].seg);
	}
	free(ps);
}

static struct siteinfo *site_find(struct segsites *sg, uint32_t site)
{
	if (site < DENSE_SITES)
		return site < sg->nidx && sg->idx[site] ? &sg->v[sg->idx[site] - 1] : NULL;
	for (size_t i = 0; i < sg->n; i++)
		if (sg->v[i].site == site)
			return &sg->v[i];
	return NULL;
}

/* The image (trace file) event k of a process belongs to. */
static size_t seg_of(const uint64_t *firsts, size_t nseg, uint64_t k)
{
	size_t f = 0;

	while (f + 1 < nseg && firsts[f + 1] < k)
		f++;
	return f;
}

static int seg_add_site(struct segsites *sg, uint32_t site, const struct trace_stack *st)
{
	struct siteinfo *si;
	int rc;

	if ((rc = grow((void **)&sg->v, &sg->cap, sg->n + 1, sizeof(*si))))
		return rc;
	if (site < DENSE_SITES && site >= sg->nidx) {
		size_t nn = sg->nidx ? sg->nidx : 64;
		uint32_t *ni;

		while (nn <= site)
			nn *= 2;
		if (!(ni = realloc(sg->idx, nn * sizeof(*ni))))
			return TRACE_ENOMEM;
		memset(ni + sg->nidx, 0, (nn - sg->nidx) * sizeof(*ni));
		sg->idx = ni;
		sg->nidx = nn;
	}
	si = &sg->v[sg->n];
	si->site = site;
	si->key = stack_key(st);
	si->function = strdup(st && st->nframes && st->frames[0].function ?
	                      st->frames[0].function : "");
	if (!si->key || !si->function) {
		free(si->key);
		free(si->function);
		return TRACE_ENOMEM;
	}
	if (site < DENSE_SITES)
		sg->idx[site] = (uint32_t)sg->n + 1;
	sg->n++;
	return 0;
}

/* Call-site stacks with offsets, read from the trace files (the model keeps only function
 * names), per image. */
static int read_sites(const char *dir, const struct ana_session *s, struct procsites *ps,
                      struct trace_diag *diag)
{
	struct trace_session *ts = NULL;
	int rc;

	if ((rc = trace_session_open(dir, &ts, diag)))
		return rc;
	for (size_t i = 0; i < trace_session_count(ts); i++) {
		const char *const *paths;
		size_t nf = trace_session_files(ts, i, &paths);
		int p = ana_proc_find(s, trace_session_name(ts, i));

		if (p < 0 || !nf)
			continue;
		if (!(ps[p].seg = calloc(nf, sizeof(*ps[p].seg)))) {
			rc = TRACE_ENOMEM;
			goto out;
		}
		ps[p].nseg = nf;
		for (size_t f = 0; f < nf; f++) {
			struct segsites *sg = &ps[p].seg[f];
			const struct trace_process *tp;
			struct trace_reader *r = NULL;
			struct trace_event ev;

			if ((rc = trace_reader_open(paths[f], &r, diag)))
				goto out;
			tp = trace_reader_process(r);
			sg->first = tp ? tp->first_index : 0;
			while ((rc = trace_reader_next(r, &ev)) == 1) {
				if (!ev.site || site_find(sg, ev.site))
					continue;
				if ((rc = seg_add_site(sg, ev.site, trace_reader_stack(r, ev.site)))) {
					trace_reader_close(r);
					goto out;
				}
			}
			trace_reader_close(r);
			if (rc < 0) {
				ana__diag(diag, rc, "%s: reading call sites: %s", paths[f],
				          trace_strerror(rc));
				goto out;
			}
		}
	}
	rc = 0;
out:
	trace_session_close(ts);
	return rc;
}

/* The key of a site from the model alone: function names (no offsets). */
static char *model_key(const struct ana_session *s, size_t p, uint32_t site, char **function)
{
	const struct ana_stackrec *st = ana__stack(s, p, site);
	size_t len = 1;
	char *buf;

	*function = strdup(st && st->nframes ? st->fn[0] : "");
	if (!st || !st->nframes)
		return *function ? strdup("?") : NULL;
	for (uint32_t f = 0; f < st->nframes; f++)
		len += strlen(st->fn[f]) + 3;
	if (!(buf = malloc(len)))
		return NULL;
	buf[0] = 0;
	for (uint32_t f = 0; f < st->nframes; f++) {
		if (f)
			strcat(buf, " < ");
		strcat(buf, st->fn[f][0] ? st->fn[f] : "?");
	}
	return buf;
}

static int is_node_event(const struct ana_ev *e)
{
	if (e->result <= 0)
		return 0;
	return e->kind == TRACE_EV_SEND || e->kind == TRACE_EV_RECV || e->kind == TRACE_EV_INPUT;
}

static size_t map_slot(const struct ana_dcfg *g, const struct dcfg_sitemap *k)
{
	uint64_t h = ((uint64_t)k->proc << 33 ^ (uint64_t)k->seg << 45 ^ (uint64_t)k->site << 1 ^
	              (uint64_t)k->peer << 20 ^ (uint64_t)k->ctx << 27 ^
	              (k->kind == ANA_NODE_SEND)) * 0x9E3779B97F4A7C15ull;
	size_t i = (size_t)(h >> 32) & (g->capmap - 1);

	while (g->map[i].node != UINT32_MAX &&
	       !(g->map[i].proc == k->proc && g->map[i].seg == k->seg &&
	         g->map[i].site == k->site && g->map[i].kind == k->kind &&
	         g->map[i].peer == k->peer && g->map[i].ctx == k->ctx))
		i = (i + 1) & (g->capmap - 1);
	return i;
}

static int map_put(struct ana_dcfg *g, const struct dcfg_sitemap *e)
{
	if ((g->nmap + 1) * 2 > g->capmap) {
		struct dcfg_sitemap *old = g->map;
		size_t oldcap = g->capmap, nc = oldcap ? oldcap * 2 : 64;

		if (!(g->map = malloc(nc * sizeof(*g->map)))) {
			g->map = old;
			return TRACE_ENOMEM;
		}
		for (size_t i = 0; i < nc; i++)
			g->map[i].node = UINT32_MAX;
		g->capmap = nc;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].node != UINT32_MAX)
				g->map[map_slot(g, &old[i])] = old[i];
		free(old);
	}
	g->map[map_slot(g, e)] = *e;
	g->nmap++;
	return 0;
}

static uint32_t event_seg(const struct ana_dcfg *g, size_t p, uint64_t k)
{
	if (p >= g->nsegprocs || !g->nseg[p])
		return 0;
	return (uint32_t)seg_of(g->segfirst[p], g->nseg[p], k);
}

/* The base identity of event k (e) of session process p: its call-site stack, and with
 * by_peer the process at the other end (`peer`, DCFG_PEER_*).  Returns the base id. */
static int event_base(struct ana_dcfg *g, const struct ana_session *s, struct procsites *ps,
                      size_t p, uint64_t k, const struct ana_ev *e, uint32_t peer)
{
	struct dcfg_sitemap m;
	struct dcfg_base *b;
	char *key, *fn = NULL;
	int rc;

	m.proc = (uint32_t)p;
	m.seg = event_seg(g, p, k);
	m.site = e->site;
	m.kind = e->kind == TRACE_EV_SEND ? ANA_NODE_SEND : ANA_NODE_RECV;
	m.peer = g->by_peer ? peer : DCFG_PEER_NONE;
	m.ctx = DCFG_CTX_BASE;
	m.node = UINT32_MAX;
	if (g->capmap && g->map[map_slot(g, &m)].node != UINT32_MAX)
		return (int)g->map[map_slot(g, &m)].node;
	if (ps) {
		struct siteinfo *si = e->site && m.seg < ps[p].nseg ?
		                      site_find(&ps[p].seg[m.seg], e->site) : NULL;

		key = strdup(si ? si->key : "?");
		fn = strdup(si ? si->function : "");
	} else {
		key = model_key(s, p, e->site, &fn);
	}
	if (key && g->by_peer) {
		/* "f+0x10 < main+0x20 -> peer" for a send, "... <- peer" for a receive */
		const char *name = peer == DCFG_PEER_NONE ? "?" : peer == DCFG_PEER_MANY ? "*" :
		                   s->procs[peer].name;
		size_t len = strlen(key) + strlen(name) + 5;
		char *k2 = malloc(len);

		if (k2)
			snprintf(k2, len, "%s %s %s", key, m.kind == ANA_NODE_SEND ? "->" : "<-", name);
		free(key);
		key = k2;
	}
	if (!key || !fn ||
	    (rc = grow((void **)&g->bases, &g->capbases, g->nbases + 1, sizeof(*b)))) {
		free(key);
		free(fn);
		return TRACE_ENOMEM;
	}
	b = &g->bases[g->nbases];
	b->key = key;
	b->function = fn;
	b->kind = m.kind;
	m.node = (uint32_t)g->nbases++;
	if ((rc = map_put(g, &m)))
		return rc;
	return (int)m.node;
}

/* The node of a base in DCFG process dproc, after the base `ctx` (DCFG_CTX_START: first)
 * when the graph splits sites by context, added when new. */
static int base_node(struct ana_dcfg *g, size_t p, int dproc, uint32_t base, uint32_t ctx)
{
	const struct dcfg_base *b = &g->bases[base];
	struct dcfg_sitemap m;
	char *key = NULL;
	int node;

	memset(&m, 0, sizeof(m));
	m.proc = (uint32_t)p;
	m.seg = DCFG_SEG_CTX;
	m.site = base;
	m.ctx = g->by_context ? ctx : DCFG_CTX_START;
	m.node = UINT32_MAX;
	if (g->capmap && g->map[map_slot(g, &m)].node != UINT32_MAX)
		return (int)g->map[map_slot(g, &m)].node;
	if (g->by_context) {
		/* "f+0x10 < main+0x20 | after g+0x30 < main+0x40" */
		const char *before = ctx == DCFG_CTX_START ? "start" : g->bases[ctx].key;
		size_t len = strlen(b->key) + strlen(before) + 10;

		if (!(key = malloc(len)))
			return TRACE_ENOMEM;
		snprintf(key, len, "%s | after %s", b->key, before);
	}
	node = ana_dcfg_add_node(g, dproc, b->kind, key ? key : b->key, b->function);
	free(key);
	if (node < 0)
		return node;
	m.node = (uint32_t)node;
	if (map_put(g, &m))
		return TRACE_ENOMEM;
	return node;
}

uint32_t ana__dcfg_event_node(const struct ana_dcfg *g, const struct ana_session *s, size_t p,
                              uint64_t k)
{
	if (!g || !s || s != g->last || p >= g->nevprocs || k < 1 || k > s->procs[p].n)
		return UINT32_MAX;
	return g->evnode[p][k - 1];
}

int ana_dcfg_split_by_peer(struct ana_dcfg *g, int on)
{
	if (!g || g->nnodes)
		return TRACE_EINVAL;
	g->by_peer = on ? 1 : 0;
	return 0;
}

int ana_dcfg_split_by_context(struct ana_dcfg *g, int on)
{
	if (!g || g->nnodes)
		return TRACE_EINVAL;
	g->by_context = on ? 1 : 0;
	return 0;
}

/* Sends of one process sorted by (channel, index), to find every send whose bytes a receive
 * read (the model links a receive to the send of its last byte only). */
struct sendix {
	uint32_t chan;
	uint32_t idx;
	uint32_t reader;      /* the process that read it (DCFG_PEER_*) */
};

static int cmp_sendix(const void *a, const void *b)
{
	const struct sendix *x = a, *y = b;

	if (x->chan != y->chan)
		return x->chan < y->chan ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The sends of process q (in sx) whose bytes receive e read: *first and the count; they are
 * consecutive in sx (one channel, offsets growing with the index). */
static size_t covered(const struct ana_session *s, struct sendix *sx, size_t nsx,
                      const struct ana_ev *e, struct sendix **first)
{
	const struct ana_ev *last = ana__ev(s, e->src_proc, e->src_idx);
	struct sendix key = {last->chan, e->src_idx, 0};
	struct sendix *hit = bsearch(&key, sx, nsx, sizeof(*hit), cmp_sendix), *lo;

	if (!hit)
		return 0;
	for (lo = hit; lo > sx && lo[-1].chan == key.chan; lo--) {
		const struct ana_ev *se = ana__ev(s, e->src_proc, lo[-1].idx);

		if (se->offset + (uint64_t)se->result <= e->offset)
			break;
	}
	*first = lo;
	return (size_t)(hit - lo) + 1;
}

static int linked(const struct ana_ev *e)
{
	return e->kind == TRACE_EV_RECV && !e->external && e->src_proc != ANA_NONE &&
	       e->result > 0;
}

/* With the session directory: the call sites of every event, and where each trace file
 * (segment) of a process starts, kept for ana_stable_run. */
static int read_segments(struct ana_dcfg *g, const struct ana_session *s, const char *dir,
                         struct procsites *ps, struct trace_diag *diag)
{
	size_t np = s->nprocs, alloc = np ? np : 1;
	int rc;

	if ((rc = read_sites(dir, s, ps, diag)))
		return rc;
	g->segfirst = calloc(alloc, sizeof(*g->segfirst));
	g->nseg = calloc(alloc, sizeof(*g->nseg));
	if (!g->segfirst || !g->nseg)
		return TRACE_ENOMEM;
	g->nsegprocs = np;
	for (size_t p = 0; p < np; p++) {
		if (!ps[p].nseg)
			continue;
		if (!(g->segfirst[p] = malloc(ps[p].nseg * sizeof(uint64_t))))
			return TRACE_ENOMEM;
		for (size_t f = 0; f < ps[p].nseg; f++)
			g->segfirst[p][f] = ps[p].seg[f].first;
		g->nseg[p] = ps[p].nseg;
	}
	return 0;
}

/* Process p of the session into g (dproc[p] its DCFG process), its event -> node map
 * emptied, and its sends that moved bytes in sx[p], sorted by channel and index. */
static int index_sends(struct ana_dcfg *g, const struct ana_session *s, size_t p, int *dproc,
                       struct sendix **sx, size_t *nsx)
{
	const struct ana_proc *pr = &s->procs[p];
	size_t ns = 0;

	if ((dproc[p] = ana_dcfg_add_proc(g, pr->name)) < 0)
		return dproc[p];
	for (uint64_t k = 1; k <= pr->n; k++)
		ns += ana__ev(s, p, k)->kind == TRACE_EV_SEND && ana__ev(s, p, k)->result > 0;
	if (!(g->evnode[p] = malloc((pr->n + 1) * sizeof(uint32_t))) ||
	    !(sx[p] = malloc((ns + 1) * sizeof(**sx))))
		return TRACE_ENOMEM;
	for (uint64_t k = 1; k <= pr->n; k++) {
		const struct ana_ev *e = ana__ev(s, p, k);

		g->evnode[p][k - 1] = UINT32_MAX;
		if (e->kind == TRACE_EV_SEND && e->result > 0) {
			sx[p][nsx[p]].chan = e->chan;
			sx[p][nsx[p]].idx = (uint32_t)k;
			sx[p][nsx[p]].reader = DCFG_PEER_NONE;
			nsx[p]++;
		}
	}
	qsort(sx[p], nsx[p], sizeof(**sx), cmp_sendix);
	return 0;
}

/* Who read each send (a peek reads without consuming: the send is not received). */
static void mark_readers(const struct ana_session *s, struct sendix **sx, const size_t *nsx)
{
	for (size_t p = 0; p < s->nprocs; p++)
		for (uint64_t k = 1; k <= s->procs[p].n; k++) {
			const struct ana_ev *e = ana__ev(s, p, k);
			struct sendix *first;
			size_t n;

			if (!linked(e) || (e->flags & TRACE_FL_PEEK))
				continue;
			n = covered(s, sx[e->src_proc], nsx[e->src_proc], e, &first);
			for (size_t i = 0; i < n; i++)
				first[i].reader = first[i].reader == DCFG_PEER_NONE ||
				                  first[i].reader == p ? (uint32_t)p : DCFG_PEER_MANY;
		}
}

/* What a non-node event adds to the stretch between two sites: its kind, a mark's key. */
static int note_between(const struct ana_session *s, const struct ana_ev *e,
                        struct ana_between *bt, const char ***marks, size_t *capmarks)
{
	if (e->kind < 64)
		bt->kinds |= 1ull << e->kind;
	if (e->kind == TRACE_EV_MARK && e->chan < s->nkeys) {
		if (bt->nmarks == *capmarks) {
			size_t nc = *capmarks ? *capmarks * 2 : 8;
			const char **nm = realloc(*marks, nc * sizeof(*nm));

			if (!nm)
				return TRACE_ENOMEM;
			*marks = nm;
			*capmarks = nc;
		}
		(*marks)[bt->nmarks++] = s->keys[e->chan];
		bt->marks = *marks;
	}
	return 0;
}

/* The nodes of process p and its intraprocess edges (section 2: E^intra), from start
 * through every site it executed to stop. */
static int add_proc_flow(struct ana_dcfg *g, const struct ana_session *s,
                         struct procsites *ps, size_t p, int dp, struct sendix **sx,
                         const size_t *nsx)
{
	const struct ana_proc *pr = &s->procs[p];
	struct ana_between bt = {0, NULL, 0};
	const char **marks = NULL;
	size_t capmarks = 0;
	int prev = (int)g->procs[dp].start, rc = 0;
	uint32_t ctx = DCFG_CTX_START;

	for (uint64_t k = 1; k <= pr->n; k++) {
		const struct ana_ev *e = ana__ev(s, p, k);
		uint32_t peer = DCFG_PEER_NONE;
		int base, node;

		if (!is_node_event(e)) {
			if ((rc = note_between(s, e, &bt, &marks, &capmarks)))
				goto out;
			continue;
		}
		if (e->kind == TRACE_EV_SEND) {
			struct sendix key = {e->chan, (uint32_t)k, 0};
			struct sendix *me = bsearch(&key, sx[p], nsx[p], sizeof(*me), cmp_sendix);

			peer = me ? me->reader : DCFG_PEER_NONE;
		} else if (linked(e)) {
			peer = e->src_proc;
		}
		if ((base = event_base(g, s, ps, p, k, e, peer)) < 0)
			rc = base;
		else if ((node = base_node(g, p, dp, (uint32_t)base, ctx)) < 0)
			rc = node;
		else
			rc = ana_dcfg_add_flow(g, prev, node, &bt);
		if (rc)
			goto out;
		g->evnode[p][k - 1] = (uint32_t)node;
		g->nodes[node].seen++;
		memset(&bt, 0, sizeof(bt));
		prev = node;
		ctx = (uint32_t)base;
		/* a send some instance of which nobody recorded reading, a receive of bytes
		 * from outside: no guaranteed interaction through them */
		if (e->kind == TRACE_EV_SEND && peer == DCFG_PEER_NONE)
			g->nodes[node].flags |= ANA_NODE_F_UNRECEIVED;
		if (e->kind != TRACE_EV_SEND && !linked(e))
			g->nodes[node].flags |= ANA_NODE_F_EXTERNAL;
	}
	rc = ana_dcfg_add_flow(g, prev, (int)g->procs[dp].stop, &bt);
out:
	free(marks);
	return rc;
}

/* Interprocess edges (E^inter): every send whose bytes a receive read -> the receive. */
static int add_msgs(struct ana_dcfg *g, const struct ana_session *s, struct sendix **sx,
                    const size_t *nsx)
{
	int rc;

	for (size_t p = 0; p < s->nprocs; p++)
		for (uint64_t k = 1; k <= s->procs[p].n; k++) {
			const struct ana_ev *e = ana__ev(s, p, k);
			struct sendix *first;
			size_t q, n;

			if (!linked(e) || g->evnode[p][k - 1] == UINT32_MAX)
				continue;
			q = e->src_proc;
			n = covered(s, sx[q], nsx[q], e, &first);
			for (size_t i = 0; i < n; i++) {
				uint32_t sn = g->evnode[q][first[i].idx - 1];

				if (sn != UINT32_MAX &&
				    (rc = ana_dcfg_add_msg(g, (int)sn, (int)g->evnode[p][k - 1])))
					return rc;
			}
		}
	return 0;
}

int ana_dcfg_add_session(struct ana_dcfg *g, const struct ana_session *s, const char *dir,
                         struct trace_diag *diag)
{
	size_t np = s ? s->nprocs : 0, alloc = np ? np : 1;
	struct procsites *ps = NULL;
	struct sendix **sx = NULL;
	size_t *nsx = NULL;
	int *dproc = NULL;
	int rc = 0;

	if (!g || !s || !s->finished) {
		ana__diag(diag, TRACE_EINVAL, "the session must be loaded and finished before its "
		          "DCFG is built");
		return TRACE_EINVAL;
	}
	for (size_t i = 0; i < g->capmap; i++)
		g->map[i].node = UINT32_MAX;
	g->nmap = 0;
	free_segs(g);
	free_evnode(g);
	if (!(g->evnode = calloc(alloc, sizeof(*g->evnode))))
		return TRACE_ENOMEM;
	g->nevprocs = np;
	if (dir) {
		if (!(ps = calloc(alloc, sizeof(*ps)))) {
			rc = TRACE_ENOMEM;
			goto out;
		}
		if ((rc = read_segments(g, s, dir, ps, diag)))
			goto out;
	}
	sx = calloc(alloc, sizeof(*sx));
	nsx = calloc(alloc, sizeof(*nsx));
	dproc = calloc(alloc, sizeof(*dproc));
	if (!sx || !nsx || !dproc) {
		rc = TRACE_ENOMEM;
		goto out;
	}
	for (size_t p = 0; p < np; p++)
		if ((rc = index_sends(g, s, p, dproc, sx, nsx)))
			goto out;
	mark_readers(s, sx, nsx);
	for (size_t p = 0; p < np; p++)
		if ((rc = add_proc_flow(g, s, ps, p, dproc[p], sx, nsx)))
			goto out;
	if ((rc = add_msgs(g, s, sx, nsx)))
		goto out;
	g->last = s;
	g->nsessions++;
	g->solved = 0;
out:
	free_bases(g);
	if (ps)
		free_sites(ps, np);
	for (size_t p = 0; sx && p < np; p++)
		free(sx[p]);
	free(sx);
	free(nsx);
	free(dproc);
	if (rc)
		free_evnode(g);
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * Solving: section 3.2.  Sets are bitsets over all nodes.
 */
static int set_or_changed(uint64_t *a, const uint64_t *b, const uint64_t *minus, size_t w)
{
	int ch = 0;

	for (size_t i = 0; i < w; i++) {
		uint64_t v = a[i] | (b[i] & ~(minus ? minus[i] : 0));

		ch |= v != a[i];
		a[i] = v;
	}
	return ch;
}

static void set_add(uint64_t *a, size_t m)
{
	a[m >> 6] |= 1ull << (m & 63);
}

/* Reach(n): nodes reachable from n by at least one intraprocess edge. */
static void solve_reach(struct ana_dcfg *g, uint32_t *stack)
{
	for (size_t n = 0; n < g->nnodes; n++) {
		uint64_t *r = dcfg_set(g, g->reach, n);
		size_t top = 0;

		stack[top++] = (uint32_t)n;
		while (top) {
			const struct dcfg_node *x = &g->nodes[stack[--top]];

			for (uint32_t i = 0; i < x->nsucc; i++) {
				uint32_t b = g->flows[x->succ[i]].b;

				if (!dcfg_has(r, b)) {
					set_add(r, b);
					stack[top++] = b;
				}
			}
		}
	}
}

/* Dom (forward = 1: paths from start) or PDom (forward = 0: paths to stop), reflexive.
 * A node no path joins to start (resp. stop) gets {n} only: nothing is guaranteed there
 * (the textbook "all nodes" would be vacuously true and unsound for POST). */
static void solve_dom(struct ana_dcfg *g, uint64_t *base, int forward, uint64_t *tmp,
                      uint64_t *joined)
{
	size_t w = g->words;

	for (size_t p = 0; p < g->nprocs; p++) {
		uint32_t root = forward ? g->procs[p].start : g->procs[p].stop;
		int changed = 1;

		/* joined = nodes with a path from start (to stop) */
		memset(joined, 0, w * sizeof(uint64_t));
		set_add(joined, root);
		for (size_t n = 0; n < g->nnodes; n++)
			if (g->nodes[n].proc == p &&
			    (forward ? dcfg_has(dcfg_set(g, g->reach, root), n)
			             : dcfg_has(dcfg_set(g, g->reach, n), root)))
				set_add(joined, n);
		for (size_t n = 0; n < g->nnodes; n++) {
			uint64_t *d = dcfg_set(g, base, n);

			if (g->nodes[n].proc != p)
				continue;
			memset(d, 0, w * sizeof(uint64_t));
			if (n == root || !dcfg_has(joined, n))
				set_add(d, n);
			else
				memcpy(d, joined, w * sizeof(uint64_t));
		}
		while (changed) {
			changed = 0;
			for (size_t n = 0; n < g->nnodes; n++) {
				const struct dcfg_node *x = &g->nodes[n];
				uint32_t ne = forward ? x->npred : x->nsucc;
				uint64_t *d = dcfg_set(g, base, n);

				if (x->proc != p || n == root || !dcfg_has(joined, n))
					continue;
				memcpy(tmp, joined, w * sizeof(uint64_t));
				for (uint32_t i = 0; i < ne; i++) {
					const struct dcfg_flow *f = &g->flows[forward ? x->pred[i] : x->succ[i]];
					uint32_t o = forward ? f->a : f->b;
					const uint64_t *od = dcfg_set(g, base, o);

					if (!dcfg_has(joined, o))
						continue;
					for (size_t k = 0; k < w; k++)
						tmp[k] &= od[k];
				}
				set_add(tmp, n);
				if (memcmp(tmp, d, w * sizeof(uint64_t))) {
					memcpy(d, tmp, w * sizeof(uint64_t));
					changed = 1;
				}
			}
		}
	}
}

/* The only interprocess edge leaving send s goes to r, and every recorded instance of s
 * was received (S ->uniq R of 3.2.2). */
static int uniq_out(const struct ana_dcfg *g, uint32_t s, uint32_t r)
{
	const struct dcfg_node *x = &g->nodes[s];

	return x->nout == 1 && x->out[0] == r && !(x->flags & ANA_NODE_F_UNRECEIVED);
}

/* The only interprocess edge entering receive r comes from s, and r never read bytes from
 * outside the session (uniq S -> R of 3.2.2). */
static int uniq_in(const struct ana_dcfg *g, uint32_t s, uint32_t r)
{
	const struct dcfg_node *x = &g->nodes[r];

	return x->nin == 1 && x->in[0] == s && !(x->flags & ANA_NODE_F_EXTERNAL);
}

/* 3.2.1: PRE(R) = U_{S -> R} PRE(S) - {S' : P(S') = P(R)};
 *        PRE(S) = U_{R : S in Reach(R)} PRE(R) u {S}.
 * Solved with the paper's LIST of communication edges S -> R whose PRE(S) changed. */
static int solve_pre(struct ana_dcfg *g)
{
	size_t w = g->words;
	uint32_t *list, *ls, *lr;
	uint8_t *queued;
	size_t nl = 0, cap = g->nmsgs + 1;
	int rc = 0;

	/* queued is per (send, index in its out list), flattened */
	size_t *first = calloc(g->nnodes + 1, sizeof(*first));

	if (!first)
		return TRACE_ENOMEM;
	for (size_t n = 0; n < g->nnodes; n++)
		first[n + 1] = first[n] + g->nodes[n].nout;
	list = malloc(cap * sizeof(*list));
	ls = malloc(cap * sizeof(*ls));
	lr = malloc(cap * sizeof(*lr));
	queued = calloc(cap, 1);
	if (!list || !ls || !lr || !queued) {
		rc = TRACE_ENOMEM;
		goto out;
	}
	for (size_t n = 0; n < g->nnodes; n++)
		if (g->nodes[n].kind == ANA_NODE_SEND)
			set_add(dcfg_set(g, g->pre, n), n);
	/* LIST starts with every edge; it is a FIFO ring of edge slots */
	for (size_t n = 0; n < g->nnodes; n++)
		for (uint32_t i = 0; i < g->nodes[n].nout; i++) {
			size_t e = first[n] + i;

			ls[e] = (uint32_t)n;
			lr[e] = g->nodes[n].out[i];
			list[nl++] = (uint32_t)e;
			queued[e] = 1;
		}
	for (size_t head = 0; nl; head = (head + 1) % cap, nl--) {
		uint32_t e = list[head], s = ls[e], r = lr[e];
		uint64_t *pr = dcfg_set(g, g->pre, r);

		queued[e] = 0;
		if (!set_or_changed(pr, dcfg_set(g, g->pre, s),
		                    dcfg_set(g, g->sends_of, g->nodes[r].proc), w))
			continue;
		/* propagate to the sends reachable from R in its process */
		for (size_t m = 0; m < g->nnodes; m++) {
			if (g->nodes[m].kind != ANA_NODE_SEND || !dcfg_has(dcfg_set(g, g->reach, r), m))
				continue;
			if (!set_or_changed(dcfg_set(g, g->pre, m), pr, NULL, w))
				continue;
			for (uint32_t i = 0; i < g->nodes[m].nout; i++) {
				size_t e2 = first[m] + i;

				if (!queued[e2]) {
					queued[e2] = 1;
					list[(head + nl) % cap] = (uint32_t)e2;
					nl++;
				}
			}
		}
	}
out:
	free(first);
	free(list);
	free(ls);
	free(lr);
	free(queued);
	return rc;
}

/* 3.2.2, the forward approximation:
 *   POST1(R) = U_{S ->uniq R} POST1(S) - {S' : P(S') = P(R)}
 *   POST1(S) = U_{R : S in PDom(R)} POST1(R) u {S}
 * and the backward one:
 *   POST2(S) = U_{R : uniq S -> R} POST2(R) - {R' : P(R') = P(S)}
 *   POST2(R) = U_{S : R in Dom(S)} POST2(S) u {R}
 * Least fixed points, from {S} (resp. {R}): every member is backed by a finite chain of
 * guaranteed interactions, which is what makes the sets safe under-approximations. */
static void solve_post(struct ana_dcfg *g)
{
	size_t w = g->words;
	int changed = 1;

	for (size_t n = 0; n < g->nnodes; n++) {
		if (g->nodes[n].kind == ANA_NODE_SEND)
			set_add(dcfg_set(g, g->post1, n), n);
		if (g->nodes[n].kind == ANA_NODE_RECV)
			set_add(dcfg_set(g, g->post2, n), n);
	}
	while (changed) {
		changed = 0;
		for (size_t n = 0; n < g->nnodes; n++) {
			const struct dcfg_node *x = &g->nodes[n];

			if (x->kind == ANA_NODE_RECV) {
				for (uint32_t i = 0; i < x->nin; i++)
					if (uniq_out(g, x->in[i], (uint32_t)n))
						changed |= set_or_changed(dcfg_set(g, g->post1, n),
						                          dcfg_set(g, g->post1, x->in[i]),
						                          dcfg_set(g, g->sends_of, x->proc), w);
				/* POST2(R) gets POST2(S) for every S that R dominates */
				for (size_t m = 0; m < g->nnodes; m++)
					if (g->nodes[m].kind == ANA_NODE_SEND && g->nodes[m].proc == x->proc &&
					    dcfg_has(dcfg_set(g, g->dom, m), n))
						changed |= set_or_changed(dcfg_set(g, g->post2, n),
						                          dcfg_set(g, g->post2, m), NULL, w);
			} else if (x->kind == ANA_NODE_SEND) {
				for (uint32_t i = 0; i < x->nout; i++)
					if (uniq_in(g, (uint32_t)n, x->out[i]))
						changed |= set_or_changed(dcfg_set(g, g->post2, n),
						                          dcfg_set(g, g->post2, x->out[i]),
						                          dcfg_set(g, g->recvs_of, x->proc), w);
				/* POST1(S) gets POST1(R) for every R that S postdominates */
				for (size_t m = 0; m < g->nnodes; m++)
					if (g->nodes[m].kind == ANA_NODE_RECV && g->nodes[m].proc == x->proc &&
					    dcfg_has(dcfg_set(g, g->pdom, m), n))
						changed |= set_or_changed(dcfg_set(g, g->post1, n),
						                          dcfg_set(g, g->post1, m), NULL, w);
			}
		}
	}
}

int ana_dcfg_solve(struct ana_dcfg *g, struct trace_diag *diag)
{
	size_t nn, w;
	uint32_t *stack = NULL;
	uint64_t *tmp = NULL, *joined = NULL;
	int rc = 0;

	if (!g)
		return TRACE_EINVAL;
	unsolve(g);
	nn = g->nnodes;
	w = g->words = nn / 64 + 1;
	if (nn && w > SIZE_MAX / sizeof(uint64_t) / nn) {
		ana__diag(diag, TRACE_ENOMEM, "DCFG of %zu sites is too large to solve", nn);
		return TRACE_ENOMEM;
	}
	g->reach = calloc(nn * w + 1, sizeof(uint64_t));
	g->dom = calloc(nn * w + 1, sizeof(uint64_t));
	g->pdom = calloc(nn * w + 1, sizeof(uint64_t));
	g->pre = calloc(nn * w + 1, sizeof(uint64_t));
	g->post1 = calloc(nn * w + 1, sizeof(uint64_t));
	g->post2 = calloc(nn * w + 1, sizeof(uint64_t));
	g->sends_of = calloc(g->nprocs * w + 1, sizeof(uint64_t));
	g->recvs_of = calloc(g->nprocs * w + 1, sizeof(uint64_t));
	stack = malloc((nn + 1) * sizeof(*stack));
	tmp = malloc(w * sizeof(*tmp));
	joined = malloc(w * sizeof(*joined));
	if (!g->reach || !g->dom || !g->pdom || !g->pre || !g->post1 || !g->post2 ||
	    !g->sends_of || !g->recvs_of || !stack || !tmp || !joined) {
		ana__diag(diag, TRACE_ENOMEM, "out of memory solving a DCFG of %zu sites", nn);
		rc = TRACE_ENOMEM;
		goto out;
	}
	for (size_t n = 0; n < nn; n++) {
		if (g->nodes[n].kind == ANA_NODE_SEND)
			set_add(dcfg_set(g, g->sends_of, g->nodes[n].proc), n);
		if (g->nodes[n].kind == ANA_NODE_RECV)
			set_add(dcfg_set(g, g->recvs_of, g->nodes[n].proc), n);
	}
	solve_reach(g, stack);
	solve_dom(g, g->dom, 1, tmp, joined);
	solve_dom(g, g->pdom, 0, tmp, joined);
	if ((rc = solve_pre(g)))
		goto out;
	solve_post(g);
	g->solved = 1;
out:
	free(stack);
	free(tmp);
	free(joined);
	if (rc)
		unsolve(g);
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * Reading the graph.
 */
size_t ana_dcfg_nprocs(const struct ana_dcfg *g)
{
	return g ? g->nprocs : 0;
}

const char *ana_dcfg_proc_name(const struct ana_dcfg *g, size_t p)
{
	return g && p < g->nprocs ? g->procs[p].name : NULL;
}

size_t ana_dcfg_nnodes(const struct ana_dcfg *g)
{
	return g ? g->nnodes : 0;
}

size_t ana_dcfg_nmsgs(const struct ana_dcfg *g)
{
	return g ? g->nmsgs : 0;
}

int ana_dcfg_node(const struct ana_dcfg *g, size_t n, struct ana_node *out)
{
	const struct dcfg_node *x;

	if (!g || !out || n >= g->nnodes)
		return TRACE_EINVAL;
	x = &g->nodes[n];
	out->proc = x->proc;
	out->kind = x->kind;
	out->key = x->key;
	out->function = x->function;
	out->seen = x->seen;
	out->flags = x->flags;
	out->nsucc = x->nsucc;
	out->nout = x->nout;
	out->nin = x->nin;
	return 0;
}

int ana_dcfg_in(const struct ana_dcfg *g, enum ana_set set, size_t n, size_t m)
{
	uint64_t *base;

	if (!g || n >= g->nnodes || m >= g->nnodes)
		return TRACE_EINVAL;
	if (!g->solved)
		return TRACE_EINVAL;
	switch (set) {
	case ANA_SET_REACH: base = g->reach; break;
	case ANA_SET_DOM: base = g->dom; break;
	case ANA_SET_PDOM: base = g->pdom; break;
	case ANA_SET_PRE: base = g->pre; break;
	case ANA_SET_POST1: base = g->post1; break;
	case ANA_SET_POST2: base = g->post2; break;
	default: return TRACE_EINVAL;
	}
	return dcfg_has(dcfg_set(g, base, n), m);
}

const char *ana_node_kind_name(uint32_t kind)
{
	switch (kind) {
	case ANA_NODE_START: return "start";
	case ANA_NODE_STOP: return "stop";
	case ANA_NODE_SEND: return "send";
	case ANA_NODE_RECV: return "recv";
	default: return "unknown";
	}
}
