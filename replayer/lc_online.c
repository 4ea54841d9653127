/*
 * lc_online.c: the local controller's half of the online halting protocol (Manabe & Imase
 * section 3.2 and Appendix B; Miller & Choi 2.2 for halt markers).
 *
 * With the online protocol the GD gives each LC its simple predicate SP_i (or none: a
 * passive process).  The LC evaluates SP_i live, in the state before each next event, with
 * the shared evaluator of libtrace/predicate.h and a term callback that reads:
 *   - counters kept as events are committed (events, sent, received, bytes, marks, last);
 *   - var.SYMBOL from the program's own memory: the global is found by name, with
 *     dlsym(RTLD_DEFAULT) when the executable exports it, else in the ELF symbol table of
 *     /proc/self/exe (a plain `long counter;` of a non-PIE or PIE program); its size (1, 2, 4
 *     or 8 bytes, signed) comes from the symbol.
 * Everything is resolved when the configuration arrives (no allocation afterwards).  Under
 * `encore debug` the predicate may also come at a halt (REP_MSG_MODE: the online protocol
 * from there; the counters ran from the start), and trace points (REP_MSG_TRACE) are
 * evaluated the same way before each event, reported when their condition becomes true.
 */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lc.h"

#define LC_MARKS_MAX 64
#define LC_VARS_MAX 16

static struct trace_pred *pred;
static const struct trace_pred_sp *sp;

static struct {
	int64_t sent, received, bytes_sent, bytes_received;
	uint32_t last_kind;
} cnt;

static struct {
	const uint8_t *key; /* into lc.data */
	uint32_t klen;
	int64_t value;
} marks[LC_MARKS_MAX];
static size_t nmarks;

static struct {
	const char *name;   /* the term's, owned by pred */
	const void *addr;
	size_t size;
} vars[LC_VARS_MAX];
static size_t nvars;

/* Trace points: condition C (a simple predicate of ours) and term E, reported when C becomes
 * true, in the state before each next event (where a halting predicate is evaluated too). */
#define LC_TRACES_MAX 16
static struct {
	uint32_t id;
	struct trace_pred *c, *e;
	const struct trace_pred_sp *csp;
	const struct trace_pred_term *eterm;
	int held;
} traces[LC_TRACES_MAX];
static size_t ntraces;
static uint64_t traced_pos = UINT64_MAX;
static struct {
	const char *name;
	const void *addr;
	size_t size;
} tvars[LC_VARS_MAX];
static size_t ntvars;

/* sent(P) / received(P): the channels whose other end P holds (from the GD) and counts. */
#define LC_PEERS_MAX 8
#define LC_PEER_CHANS 64
static struct {
	char name[TRACE_NAME_MAX];
	uint32_t chans[LC_PEER_CHANS];
	size_t nchans;
	int64_t sent, received;
} peers[LC_PEERS_MAX];
static size_t npeers;

void lc_counters(int64_t c[4], int set)
{
	if (set) {
		cnt.sent = c[0];
		cnt.received = c[1];
		cnt.bytes_sent = c[2];
		cnt.bytes_received = c[3];
	} else {
		c[0] = cnt.sent;
		c[1] = cnt.received;
		c[2] = cnt.bytes_sent;
		c[3] = cnt.bytes_received;
	}
}

void lc_online_reset(void)
{
	sp = NULL; /* a forked child: its own predicate comes with its CONFIG */
	pred = NULL;
	memset(&cnt, 0, sizeof(cnt));
	nmarks = 0;
	nvars = 0;
	npeers = 0;
	ntraces = 0; /* the parent's: a forked child gets its own before its CONFIG */
	ntvars = 0;
	traced_pos = UINT64_MAX;
}

int lc_has_sp(void)
{
	return sp != NULL;
}

void lc_count(const struct lc_ev *ev)
{
	int64_t n = ev->result > 0 ? ev->result : 0;

	cnt.last_kind = ev->kind;
	for (size_t p = 0; p < npeers && n && ev->channel; p++)
		for (size_t i = 0; i < peers[p].nchans; i++)
			if (peers[p].chans[i] == ev->channel) {
				if (ev->kind == TRACE_EV_SEND)
					peers[p].sent++;
				else if (ev->kind == TRACE_EV_RECV || ev->kind == TRACE_EV_INPUT)
					peers[p].received++;
				break;
			}
	switch (ev->kind) {
	case TRACE_EV_SEND:
		if (n) {
			cnt.sent++;
			cnt.bytes_sent += n;
		}
		break;
	case TRACE_EV_RECV:
	case TRACE_EV_INPUT:
		if (n && ev->channel) {
			cnt.received++;
			cnt.bytes_received += n;
		}
		break;
	case TRACE_EV_MARK: {
		const uint8_t *k = lc.data + ev->data_off;
		size_t i;

		for (i = 0; i < nmarks; i++)
			if (marks[i].klen == ev->data_len && memcmp(marks[i].key, k, ev->data_len) == 0)
				break;
		if (i == nmarks && nmarks < LC_MARKS_MAX) {
			marks[i].key = k;
			marks[i].klen = ev->data_len;
			nmarks++;
		}
		if (i < LC_MARKS_MAX)
			marks[i].value = ev->naux ? ev->aux[0] : 0;
		break;
	}
	default:
		break;
	}
}

static int read_var(const void *a, size_t size, int64_t *v)
{
	switch (size) {
	case 1: *v = *(const volatile int8_t *)a; return 0;
	case 2: *v = *(const volatile int16_t *)a; return 0;
	case 4: *v = *(const volatile int32_t *)a; return 0;
	default: *v = *(const volatile int64_t *)a; return 0;
	}
}

static int term_value(void *ctx, const struct trace_pred_term *t, int64_t *v)
{
	(void)ctx;
	switch (t->kind) {
	case TRACE_TERM_EVENTS: *v = (int64_t)lc.pos; return 0;
	case TRACE_TERM_SENT: *v = cnt.sent; return 0;
	case TRACE_TERM_RECEIVED: *v = cnt.received; return 0;
	case TRACE_TERM_BYTES_SENT: *v = cnt.bytes_sent; return 0;
	case TRACE_TERM_BYTES_RECEIVED: *v = cnt.bytes_received; return 0;
	case TRACE_TERM_LAST: *v = lc.pos && cnt.last_kind == t->ev_kind; return 0;
	case TRACE_TERM_EXITED: *v = lc.done; return 0;
	case TRACE_TERM_MARK: {
		size_t n = t->arg ? strlen(t->arg) : 0;

		*v = 0;
		for (size_t i = 0; i < nmarks; i++)
			if (marks[i].klen == n && memcmp(marks[i].key, t->arg, n) == 0)
				*v = marks[i].value;
		return 0;
	}
	case TRACE_TERM_SENT_TO:
	case TRACE_TERM_RECEIVED_FROM:
		for (size_t p = 0; p < npeers && t->arg; p++)
			if (strcmp(peers[p].name, t->arg) == 0) {
				*v = t->kind == TRACE_TERM_SENT_TO ? peers[p].sent : peers[p].received;
				return 0;
			}
		return TRACE_ENOENT;
	case TRACE_TERM_IN: {
		/* FUNCTION on the recorded call-site stack of event k (false in state 0) */
		const struct lc_ev *e;
		const char *f;

		*v = 0;
		if (lc.pos <= lc.base || !t->arg)
			return 0;
		e = &lc.ev[lc.pos - lc.base - 1];
		if (e->site >= lc.nsites || !(f = lc.site_funcs[e->site]))
			return 0;
		for (; *f; f += strlen(f) + 1)
			if (strcmp(f, t->arg) == 0) {
				*v = 1;
				break;
			}
		return 0;
	}
	case TRACE_TERM_VAR:
		for (size_t i = 0; i < nvars; i++)
			if (vars[i].name == t->arg || (t->arg && strcmp(vars[i].name, t->arg) == 0))
				return read_var(vars[i].addr, vars[i].size, v);
		for (size_t i = 0; i < ntvars; i++)
			if (tvars[i].name == t->arg || (t->arg && strcmp(tvars[i].name, t->arg) == 0))
				return read_var(tvars[i].addr, tvars[i].size, v);
		return TRACE_ENOENT;
	default:
		return TRACE_EINVAL;
	}
}

int lc_sp_holds(void)
{
	int truth = 0;

	if (!sp)
		return 1;
	if (trace_pred_sp_eval(sp, term_value, NULL, &truth) != 0)
		return 0;
	return truth;
}

static const char *term_name(const struct trace_pred_term *t, char *buf, size_t cap)
{
	switch (t->kind) {
	case TRACE_TERM_EVENTS: return "events";
	case TRACE_TERM_SENT: return "sent";
	case TRACE_TERM_RECEIVED: return "received";
	case TRACE_TERM_BYTES_SENT: return "bytes_sent";
	case TRACE_TERM_BYTES_RECEIVED: return "bytes_received";
	case TRACE_TERM_EXITED: return "exited";
	case TRACE_TERM_SENT_TO: snprintf(buf, cap, "sent(%s)", t->arg); return buf;
	case TRACE_TERM_RECEIVED_FROM: snprintf(buf, cap, "received(%s)", t->arg); return buf;
	case TRACE_TERM_MARK: snprintf(buf, cap, "mark.%s", t->arg); return buf;
	case TRACE_TERM_VAR: snprintf(buf, cap, "var.%s", t->arg); return buf;
	case TRACE_TERM_IN: snprintf(buf, cap, "in(%s)", t->arg); return buf;
	case TRACE_TERM_LAST: snprintf(buf, cap, "last(%s)", trace_kind_name(t->ev_kind)); return buf;
	default: return "?";
	}
}

/* "TERM = VALUE" lines for the terms of our simple predicate, in the state now (for the GD's
 * report at a halt: "the values of the terms the predicate named"). */
void lc_terms_text(char *out, size_t cap)
{
	const struct trace_pred_term *const *terms;
	size_t nt, pos = 0;

	out[0] = '\0';
	if (!sp)
		return;
	nt = trace_pred_sp_terms(sp, &terms);
	for (size_t i = 0; i < nt && pos + 160 < cap; i++) {
		char name[128];
		int64_t v;

		if (term_value(NULL, terms[i], &v) == 0)
			pos += (size_t)snprintf(out + pos, cap - pos, "%s = %lld\n",
			                        term_name(terms[i], name, sizeof(name)), (long long)v);
		else
			pos += (size_t)snprintf(out + pos, cap - pos, "%s = ?\n",
			                        term_name(terms[i], name, sizeof(name)));
	}
}

/* --- finding a global by name -------------------------------------------------------------- */

static int first_object_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uintptr_t *)data = (uintptr_t)info->dlpi_addr;
	return 1; /* the first object is the executable */
}

/* The symbol in /proc/self/exe's .symtab: address (load bias added) and size. */
static int symtab_lookup(const char *name, const void **addr, size_t *size)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	char *strs = NULL;
	Elf64_Sym *syms = NULL;
	uintptr_t bias = 0;
	int fd, rc = -1;

	fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || !eh.e_shnum)
		goto out;
	sh = malloc((size_t)eh.e_shnum * sizeof(*sh));
	if (!sh || pread(fd, sh, (size_t)eh.e_shnum * sizeof(*sh), (off_t)eh.e_shoff) !=
	               (ssize_t)((size_t)eh.e_shnum * sizeof(*sh)))
		goto out;
	if (eh.e_type == ET_DYN)
		dl_iterate_phdr(first_object_cb, &bias);
	for (unsigned i = 0; i < eh.e_shnum && rc != 0; i++) {
		size_t n;

		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh.e_shnum)
			continue;
		n = sh[i].sh_size / sizeof(Elf64_Sym);
		free(syms);
		free(strs);
		syms = malloc(sh[i].sh_size ? sh[i].sh_size : 1);
		strs = malloc(sh[sh[i].sh_link].sh_size + 1);
		if (!syms || !strs ||
		    pread(fd, syms, sh[i].sh_size, (off_t)sh[i].sh_offset) != (ssize_t)sh[i].sh_size ||
		    pread(fd, strs, sh[sh[i].sh_link].sh_size, (off_t)sh[sh[i].sh_link].sh_offset) !=
		        (ssize_t)sh[sh[i].sh_link].sh_size)
			break;
		strs[sh[sh[i].sh_link].sh_size] = '\0';
		for (size_t k = 0; k < n; k++) {
			if (ELF64_ST_TYPE(syms[k].st_info) != STT_OBJECT ||
			    syms[k].st_name >= sh[sh[i].sh_link].sh_size ||
			    strcmp(strs + syms[k].st_name, name) != 0)
				continue;
			*addr = (const void *)(bias + syms[k].st_value);
			*size = syms[k].st_size;
			rc = 0;
			break;
		}
	}
out:
	free(syms);
	free(strs);
	free(sh);
	syscall(SYS_close, fd);
	return rc;
}

static int resolve_var(const char *name, const void **addr, size_t *size)
{
	void *p = dlsym(RTLD_DEFAULT, name);
	Dl_info info;
	const ElfW(Sym) *sym = NULL;

	if (p && dladdr1(p, &info, (void **)&sym, RTLD_DL_SYMENT) && sym &&
	    ELF64_ST_TYPE(sym->st_info) == STT_OBJECT) {
		*addr = p;
		*size = sym->st_size;
		return 0;
	}
	return symtab_lookup(name, addr, size);
}

static int sp_setup(const char *text, char *why, size_t cap);

/* Take the simple predicate text from CONFIG ("" for a passive process) and the channels of
 * the peers its sent(P)/received(P) terms name (of every step of a linked predicate: counted
 * from the start). */
int lc_online_setup(const char *text, const char *peer_text, char *why, size_t cap)
{
	/* "PEER:c1,c2;PEER2:c3" */
	for (const char *p = peer_text; *p && npeers < LC_PEERS_MAX;) {
		const char *colon = strchr(p, ':'), *end = strchr(p, ';');
		size_t nl;

		if (!end)
			end = p + strlen(p);
		if (!colon || colon > end)
			break;
		nl = (size_t)(colon - p) < TRACE_NAME_MAX - 1 ? (size_t)(colon - p) : TRACE_NAME_MAX - 1;
		memcpy(peers[npeers].name, p, nl);
		peers[npeers].name[nl] = '\0';
		peers[npeers].nchans = 0;
		for (const char *q = colon + 1; q < end && peers[npeers].nchans < LC_PEER_CHANS;) {
			char *e;
			unsigned long c = strtoul(q, &e, 10);

			if (e == q)
				break;
			peers[npeers].chans[peers[npeers].nchans++] = (uint32_t)c;
			q = *e == ',' ? e + 1 : e;
		}
		npeers++;
		p = *end ? end + 1 : end;
	}
	return sp_setup(text, why, cap);
}

/* A linked predicate's next step (REP_MSG_STAGE), or a new halting mode at a halt
 * (REP_MSG_MODE): this process's simple predicate in it, "" for none (passive).  Counters,
 * marks and peers go on; var. terms are resolved anew. */
int lc_online_stage(const char *text, char *why, size_t cap)
{
	trace_pred_free(pred);
	pred = NULL;
	sp = NULL;
	nvars = 0;
	return sp_setup(text, why, cap);
}

static int sp_setup(const char *text, char *why, size_t cap)
{
	const struct trace_pred_term *const *terms;
	struct trace_diag d;
	size_t nt;

	if (!text[0])
		return 0;
	if (trace_pred_parse(text, &pred, &d) != 0 || !(sp = trace_pred_get_sp(pred, 0, 0, 0))) {
		snprintf(why, cap, "cannot parse the simple predicate the GD sent: %s", text);
		return -1;
	}
	nt = trace_pred_sp_terms(sp, &terms);
	for (size_t i = 0; i < nt; i++) {
		const void *addr = NULL;
		size_t size = 0;

		if (terms[i]->kind != TRACE_TERM_VAR)
			continue;
		if (nvars == LC_VARS_MAX) {
			snprintf(why, cap, "more than %d var. terms in one simple predicate", LC_VARS_MAX);
			return -1;
		}
		if (resolve_var(terms[i]->arg, &addr, &size) != 0 || !addr) {
			if (!lc.online)
				continue; /* only shown at a halt: reported as "?" */
			snprintf(why, cap, "var.%s: the program has no global variable of that name (a "
			         "static or local one, or a stripped binary?)", terms[i]->arg);
			return -1;
		}
		if (size != 1 && size != 2 && size != 4 && size != 8) {
			if (!lc.online)
				continue;
			snprintf(why, cap, "var.%s is %zu bytes: only integers of 1, 2, 4 or 8 bytes can "
			         "be compared", terms[i]->arg, size);
			return -1;
		}
		vars[nvars].name = terms[i]->arg;
		vars[nvars].addr = addr;
		vars[nvars].size = size;
		nvars++;
	}
	return 0;
}

/* --- trace points ---------------------------------------------------------------------------- */

static void trace_resolve(const struct trace_pred_sp *one)
{
	const struct trace_pred_term *const *terms;
	size_t nt = trace_pred_sp_terms(one, &terms);

	for (size_t i = 0; i < nt && ntvars < LC_VARS_MAX; i++) {
		const void *addr = NULL;
		size_t size = 0;

		/* one that does not resolve reads as unknown: the condition does not hold */
		if (terms[i]->kind != TRACE_TERM_VAR || resolve_var(terms[i]->arg, &addr, &size) != 0 ||
		    !addr || (size != 1 && size != 2 && size != 4 && size != 8))
			continue;
		tvars[ntvars].name = terms[i]->arg;
		tvars[ntvars].addr = addr;
		tvars[ntvars].size = size;
		ntvars++;
	}
}

int lc_trace_add(uint32_t id, const char *text)
{
	char c[REP_TEXT_MAX];
	const char *sep = strchr(text, '\x1e');
	const struct trace_pred_term *const *terms;
	const struct trace_pred_sp *esp;
	int truth = 0;

	if (!sep || ntraces == LC_TRACES_MAX || (size_t)(sep - text) >= sizeof(c))
		return -1;
	memcpy(c, text, (size_t)(sep - text));
	c[sep - text] = '\0';
	traces[ntraces].c = traces[ntraces].e = NULL;
	if (trace_pred_parse(c, &traces[ntraces].c, NULL) != 0 ||
	    trace_pred_parse(sep + 1, &traces[ntraces].e, NULL) != 0 ||
	    !(traces[ntraces].csp = trace_pred_get_sp(traces[ntraces].c, 0, 0, 0)) ||
	    !(esp = trace_pred_get_sp(traces[ntraces].e, 0, 0, 0)) ||
	    trace_pred_sp_terms(esp, &terms) < 1) {
		trace_pred_free(traces[ntraces].c);
		trace_pred_free(traces[ntraces].e);
		return -1;
	}
	traces[ntraces].eterm = terms[0];
	traces[ntraces].id = id;
	trace_resolve(traces[ntraces].csp);
	trace_resolve(esp);
	/* "becomes true": from the state it is set in (reported on moves after it) */
	traces[ntraces].held = trace_pred_sp_eval(traces[ntraces].csp, term_value, NULL, &truth) ==
	                       0 && truth;
	ntraces++;
	return 0;
}

void lc_trace_del(uint32_t id)
{
	size_t kept = 0;

	for (size_t i = 0; i < ntraces; i++) {
		if (id && traces[i].id != id) {
			traces[kept++] = traces[i];
			continue;
		}
		trace_pred_free(traces[i].c);
		trace_pred_free(traces[i].e);
	}
	ntraces = kept;
	if (!ntraces)
		ntvars = 0;
}

int lc_ntraces(void)
{
	return ntraces != 0;
}

/* Before the next event: each condition in the state now (once per state). */
void lc_trace_check(void)
{
	if (lc.pos == traced_pos)
		return;
	traced_pos = lc.pos;
	for (size_t i = 0; i < ntraces; i++) {
		int truth = 0;
		int64_t v = 0;

		if (trace_pred_sp_eval(traces[i].csp, term_value, NULL, &truth) != 0)
			truth = 0;
		if (truth && !traces[i].held) {
			if (term_value(NULL, traces[i].eterm, &v) != 0)
				v = 0;
			lc_traced(traces[i].id, v);
		}
		traces[i].held = truth;
	}
}
