/*
 * ana_bench.c: analysis speed on synthetic sessions: 64 processes exchanging
 * messages over random stream channels, 1e6 and 1e7 events (ENCORE_BENCH_EVENTS overrides
 * the list, e.g. "1000000").  Prints events per second for each phase:
 *   load    ana_load of the same session written as trace files (libtrace's reader, then
 *           matching from the logged TCP endpoints), up to 2e6 events;
 *   build   feeding the events through the builder (what ana_load does per event);
 *   match   ana_finish: channel matching, message edges, a linear extension;
 *   inf     Inf(P) for a conjunctive P over 8 processes true only late in their runs, so
 *           the closure covers most events (the target is >= 1e7 events/s);
 *   pred    the same CP as predicate text ("p0: events >= N && ..."): parsing, evaluating
 *           each SP on every state of its process, then Inf (events/s over all events);
 *   hb      one reachability column (the cost of the first ana_hb about a process);
 *   races   ana_races (one column per receiving process), up to 2e6 events.
 * Timings are printed, never asserted.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ana.h"

#define NPROC 64
#define FANOUT 4

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

struct chan {
	int a, b;
	uint64_t inflight[2]; /* bytes sent and not yet received, a->b and b->a */
};

/* The trace files of the session, when written. */
struct files {
	char dir[256];
	struct trace_writer *w[NPROC];
};

static int files_open(struct files *f)
{
	struct trace_diag d;

	snprintf(f->dir, sizeof(f->dir), "%s/ana-bench-XXXXXX",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(f->dir))
		return -1;
	for (int p = 0; p < NPROC; p++) {
		struct trace_process tp;
		char file[128], path[512];

		memset(&tp, 0, sizeof(tp));
		snprintf(tp.name, sizeof(tp.name), "p%d", p);
		snprintf(tp.host_id, sizeof(tp.host_id), "bench");
		if (trace_file_name(tp.name, 0, file, sizeof(file)))
			return -1;
		snprintf(path, sizeof(path), "%s/%s", f->dir, file);
		if (trace_writer_open(AT_FDCWD, path, &tp, NULL, 0, &f->w[p], &d)) {
			fprintf(stderr, "ana_bench: %s\n", d.msg);
			return -1;
		}
	}
	return 0;
}

static int files_event(struct files *f, int p, uint32_t kind, uint32_t chan, int64_t result,
                       const struct trace_endpoint *ep)
{
	struct trace_event ev;
	uint8_t buf[TRACE_ENDPOINT_MAX];
	int n;

	if (!f)
		return 0;
	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.fd = -1;
	ev.channel = chan;
	ev.result = result;
	ev.len = result > 0 ? (uint64_t)result : 0;
	if (ep) {
		n = trace_endpoint_encode(ep, buf, sizeof(buf));
		if (n < 0)
			return -1;
		ev.data = buf;
		ev.data_len = (uint32_t)n;
	}
	return trace_writer_event(f->w[p], &ev);
}

static void files_close(struct files *f, int remove)
{
	char cmd[600];

	for (int p = 0; p < NPROC; p++)
		trace_writer_close(f->w[p]);
	if (remove && strstr(f->dir, "/ana-bench-")) {
		snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", f->dir);
		if (system(cmd) != 0)
			fprintf(stderr, "ana_bench: could not remove %s\n", f->dir);
	}
}

static void tcp_end(struct trace_endpoint *ep, uint16_t lport, uint16_t pport)
{
	struct sockaddr_in a;

	memset(ep, 0, sizeof(*ep));
	ep->type = TRACE_CHAN_TCP;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons(lport);
	memcpy(ep->local, &a, sizeof(a));
	ep->local_len = sizeof(a);
	a.sin_port = htons(pport);
	memcpy(ep->peer, &a, sizeof(a));
	ep->peer_len = sizeof(a);
}

static int run(uint64_t target)
{
	struct files fs, *f = NULL;
	struct step {
		uint32_t chan;
		uint32_t len;
		uint16_t proc;
		uint16_t kind;
	} *steps = NULL;
	struct ana_session *s;
	struct chan ch[NPROC * FANOUT];
	int nch = 0, rc = 1;
	uint64_t total = 0, *cut = NULL, *bits[8] = {0};
	struct ana_sp sps[8];
	struct ana_cp cp = {sps, 8};
	struct trace_diag d;
	double t0, t1, t2, t3, t4;

	if (ana_new(&s))
		return 1;
	if (target <= 2000000) {
		if (files_open(&fs)) {
			fprintf(stderr, "ana_bench: cannot write trace files\n");
			ana_free(s);
			return 1;
		}
		f = &fs;
	}
	for (int p = 0; p < NPROC; p++) {
		char name[16];

		snprintf(name, sizeof(name), "p%d", p);
		if (ana_add_process(s, name, NULL, 0) != p)
			goto out;
	}
	for (int p = 0; p < NPROC; p++)
		for (int k = 1; k <= FANOUT; k++) {
			ch[nch].a = p;
			ch[nch].b = (p + k * 7) % NPROC;
			ch[nch].inflight[0] = ch[nch].inflight[1] = 0;
			if (ana_add_channel(s, ch[nch].a, ch[nch].b) != nch)
				goto out;
			if (f) {
				/* both ends log the TCP 4-tuple; channel id nch+1 in both processes */
				struct trace_endpoint ep;

				tcp_end(&ep, (uint16_t)(10000 + 2 * nch), (uint16_t)(10001 + 2 * nch));
				if (files_event(f, ch[nch].a, TRACE_EV_CONNECT, (uint32_t)nch + 1, 0, &ep))
					goto out;
				tcp_end(&ep, (uint16_t)(10001 + 2 * nch), (uint16_t)(10000 + 2 * nch));
				if (files_event(f, ch[nch].b, TRACE_EV_ACCEPT, (uint32_t)nch + 1, 0, &ep))
					goto out;
			}
			nch++;
		}

	/* a random interleaving: each step one process sends, receives what is waiting on one
	 * of its channels (sometimes in two parts), or does something local.  The steps are
	 * generated first so that the timed phase is the builder alone. */
	steps = malloc(target * sizeof(*steps));
	if (!steps)
		goto out;
	for (uint64_t i = 0; i < target; i++) {
		struct chan *c = &ch[rnd() % (uint64_t)nch];
		int dir = (int)(rnd() & 1), from = dir ? c->b : c->a, to = dir ? c->a : c->b;
		uint64_t r = rnd() % 10;
		struct step *st = &steps[i];

		st->chan = (uint32_t)(c - ch);
		if (r < 4) {
			st->len = 1 + (uint32_t)(rnd() % 512);
			st->kind = TRACE_EV_SEND;
			st->proc = (uint16_t)from;
			c->inflight[dir] += st->len;
		} else if (r < 8 && c->inflight[dir]) {
			uint64_t len = c->inflight[dir];

			if (len > 1 && (rnd() & 3) == 0)
				len /= 2;
			if (len > UINT32_MAX)
				len = UINT32_MAX;
			st->len = (uint32_t)len;
			st->kind = TRACE_EV_RECV;
			st->proc = (uint16_t)to;
			c->inflight[dir] -= len;
		} else {
			st->len = 0;
			st->kind = TRACE_EV_CLOCK;
			st->proc = (uint16_t)from;
		}
	}
	t0 = now();
	for (total = 0; total < target; total++) {
		const struct step *st = &steps[total];
		int64_t k;

		if (st->kind == TRACE_EV_SEND)
			k = ana_add_send(s, st->proc, (int)st->chan, st->len);
		else if (st->kind == TRACE_EV_RECV)
			k = ana_add_recv(s, st->proc, (int)st->chan, st->len);
		else
			k = ana_add_simple(s, st->proc, TRACE_EV_CLOCK, 0);
		if (k < 0)
			goto out;
	}
	t1 = now();
	if (ana_finish(s, &d)) {
		fprintf(stderr, "ana_bench: finish: %s\n", d.msg);
		goto out;
	}
	t2 = now();

	/* SP_i true only in the last tenth of process i*8's run */
	for (int i = 0; i < 8; i++) {
		size_t p = (size_t)i * 8, nw = ana_bits_words(s, p);
		uint64_t n = ana_nevents(s, p);

		bits[i] = calloc(nw, sizeof(uint64_t));
		if (!bits[i])
			goto out;
		for (uint64_t k = n - n / 10; k <= n; k++)
			bits[i][k >> 6] |= 1ull << (k & 63);
		sps[i].proc = p;
		sps[i].bits = bits[i];
	}
	cut = calloc(NPROC, sizeof(*cut));
	if (!cut)
		goto out;
	t3 = now();
	if (ana_inf_cp(s, &cp, cut) != 1)
		goto out;
	t4 = now();
	{
		uint64_t covered = 0;

		for (int p = 0; p < NPROC; p++)
			covered += cut[p];
		printf("ana_bench %llu events, %d processes, %d channels\n",
		       (unsigned long long)total, NPROC, nch);
		printf("  build  %8.3f s  %12.0f events/s\n", t1 - t0, (double)total / (t1 - t0));
		printf("  match  %8.3f s  %12.0f events/s\n", t2 - t1, (double)total / (t2 - t1));
		printf("  inf    %8.3f s  %12.0f events/s  (cut covers %llu events)\n", t4 - t3,
		       (double)covered / (t4 - t3), (unsigned long long)covered);
	}
	{
		char text[1024], *t = text;
		struct trace_pred *pred = NULL;
		struct ana_cuts out;
		int ok;

		for (int i = 0; i < 8; i++) {
			uint64_t n = ana_nevents(s, (size_t)i * 8);

			t += snprintf(t, sizeof(text) - (size_t)(t - text), "%sp%d: events >= %llu",
			              i ? " && " : "", i * 8, (unsigned long long)(n - n / 10));
		}
		t3 = now();
		ok = trace_pred_parse(text, &pred, &d) == 0 && ana_inf(s, pred, &out, &d) == 0;
		t4 = now();
		trace_pred_free(pred);
		if (!ok) {
			fprintf(stderr, "ana_bench: predicate: %s\n", d.msg);
			goto out;
		}
		if (out.ncuts != 1 || memcmp(out.cuts, cut, NPROC * sizeof(uint64_t)) != 0) {
			fprintf(stderr, "ana_bench: the predicate text and the bitsets disagree\n");
			ana_cuts_free(&out);
			goto out;
		}
		ana_cuts_free(&out);
		printf("  pred   %8.3f s  %12.0f events/s  (parse, evaluate 8 SPs on every state, "
		       "Inf)\n", t4 - t3, (double)total / (t4 - t3));
	}
	t3 = now();
	if (ana_hb(s, 0, 1, 1, ana_nevents(s, 1)) < 0)
		goto out;
	t4 = now();
	printf("  hb     %8.3f s  %12.0f events/s  (one reachability column)\n", t4 - t3,
	       (double)total / (t4 - t3));
	if (target <= 2000000) {
		struct ana_race *races = NULL;
		size_t nr = 0;

		t3 = now();
		if (ana_races(s, &races, &nr))
			goto out;
		t4 = now();
		free(races);
		printf("  races  %8.3f s  %12.0f events/s  (%zu races)\n", t4 - t3,
		       (double)total / (t4 - t3), nr);
	}
	if (f) {
		struct ana_session *l = NULL;
		struct ana_stats st, st0;
		uint64_t all = total + 2 * (uint64_t)nch;

		for (uint64_t i = 0; i < total; i++)
			if (files_event(f, steps[i].proc, steps[i].kind,
			                steps[i].kind == TRACE_EV_CLOCK ? 0 : steps[i].chan + 1,
			                steps[i].len, NULL))
				goto out;
		files_close(f, 0);
		f = NULL;
		t3 = now();
		if (ana_load(fs.dir, &l, &d)) {
			fprintf(stderr, "ana_bench: load: %s\n", d.msg);
			files_close(&fs, 1);
			goto out;
		}
		t4 = now();
		ana_stats(l, &st);
		ana_stats(s, &st0);
		printf("  load   %8.3f s  %12.0f events/s  (files: read + match; %llu messages as "
		       "built: %llu; %zu of %d channels matched)\n", t4 - t3, (double)all / (t4 - t3),
		       (unsigned long long)st.messages, (unsigned long long)st0.messages,
		       st.channels_matched, nch);
		ana_free(l);
		for (int p = 0; p < NPROC; p++)
			fs.w[p] = NULL;
		files_close(&fs, 1);
	}
	rc = 0;
out:
	free(steps);
	if (f)
		files_close(f, 1);
	if (rc)
		fprintf(stderr, "ana_bench: failed at %llu events\n", (unsigned long long)total);
	for (int i = 0; i < 8; i++)
		free(bits[i]);
	free(cut);
	ana_free(s);
	return rc;
}

int main(void)
{
	const char *env = getenv("ENCORE_BENCH_EVENTS");
	char list[256], *save = NULL, *tok;

	snprintf(list, sizeof(list), "%s", env ? env : "1000000,10000000");
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (run(strtoull(tok, NULL, 10)))
			return 1;
	return 0;
}
