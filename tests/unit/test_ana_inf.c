/*
 * test_ana_inf.c: the analyzer's cut algorithms against a brute-force twin.
 *
 * The twin enumerates every cut of a small trace, decides consistency from the message edges
 * the generator itself knows (not from the analyzer's matching), computes happened-before by
 * transitive closure, and finds the minimal cuts satisfying a predicate by looking at all of
 * them.  Hand-made traces cover the examples of Manabe & Imase section 3; thousands of seeded
 * random traces (random processes, channels, partial receives, interleavings) cover the rest,
 * including the vector clocks and the sweep order (ana_vclocks_new, ana_sweep) on every pair.
 */
#include <signal.h>

#include "unit.h"

#include "ana.h"

/* Check's ck_assert_msg records a mark point (a write to its pipe) on every success; the
 * twin makes millions of comparisons, so only failures go to Check here. */
#undef ck_assert_msg
#define ck_assert_msg(expr, ...)                                                           \
	((expr) ? (void)0                                                                      \
	        : _ck_assert_failed(__FILE__, __LINE__, "Assertion '" #expr "' failed",        \
	                            ##__VA_ARGS__))

#define MAXP 4
#define MAXE 16
#define MAXCH 6
#define MAXQ 256

/* ---------------------------------------------------------------------------------------
 * A random execution, built by simulating it step by step so that it is a real one.
 */
struct gen {
	struct ana_session *s;
	int np, nch;
	int cha[MAXCH], chb[MAXCH];
	int fparent[MAXP], fidx[MAXP]; /* forked children: parent and the parent's fork event */
	int ended[MAXP];                /* a child's end: its exit event, or (killed outright,
	                                   no event) its last event; 0 while it runs */
	int reaped[MAXP];               /* its parent waited for it */
	int chld_run[MAXP];             /* its parent ran its SIGCHLD handler for its end */
	int is_wait[MAXP][MAXE + 1];    /* a wait, or a SIGCHLD handler run for a child that
	                                   ended: src_p/src_k name the child's end */
	int is_chld[MAXP][MAXE + 1];    /* of which a SIGCHLD handler run */
	int is_sig[MAXP][MAXE + 1];     /* a handler run: src_p/src_k name the kill */
	int kill_need[MAXP];            /* a child killed outright whose SIGKILL, from another
	                                   process, is still to come */
	int kill_p[MAXP], kill_k[MAXP]; /* that SIGKILL (kill_k 0: none, or its parent's own) */
	int wk_p[MAXP][MAXE + 1];       /* a wait or SIGCHLD handler run for a child killed */
	int wk_k[MAXP][MAXE + 1];       /* outright by another process: after that SIGKILL too */
	int kq[MAXP][MAXP][MAXE + 1];   /* kills of [target] by [sender] not run yet, in order */
	int kq_h[MAXP][MAXP], kq_t[MAXP][MAXP];
	int n[MAXP];
	int is_recv[MAXP][MAXE + 1];
	int is_acc[MAXP][MAXE + 1];    /* an accept: src_p/src_k name its connect */
	int conn[MAXCH], cstate[MAXCH]; /* connection channels: 0 idle, 1 connected, 2 accepted */
	int cevent[MAXCH], aevent[MAXCH]; /* the client's connect, the server's accept */
	int closed[MAXCH][2];           /* side a (0) or b (1) closed it: its close event */
	int eofread[MAXCH][2];          /* that side read the end of file */
	int is_eof[MAXP][MAXE + 1];     /* an end of file: src_p/src_k name the peer's close */
	int cap[MAXCH];                 /* bytes each direction holds (0: unbounded) */
	int rl_n[MAXCH][2], rl_p[MAXCH][2][MAXQ], rl_k[MAXCH][2][MAXQ], rl_end[MAXCH][2][MAXQ];
	int last_rk[MAXCH][2];          /* the receive the direction's last room edge came from */
	int is_room[MAXP][MAXE + 1];    /* a send that waited for room: src_p/src_k the receive */
	int is_ready[MAXP][MAXE + 1];   /* a poll that found rc/rd readable (edge filled later) */
	int rstart[MAXP][MAXE + 1];     /* a receive's first byte offset */
	int eof_c[MAXP][MAXE + 1], eof_d[MAXP][MAXE + 1]; /* an end of file's channel, dir */
	int src_p[MAXP][MAXE + 1], src_k[MAXP][MAXE + 1];
	int rc[MAXP][MAXE + 1], rd[MAXP][MAXE + 1], rm[MAXP][MAXE + 1]; /* recv: channel, dir, bytes */
	int kind[MAXP][MAXE + 1], val[MAXP][MAXE + 1]; /* 1 send, 2 recv, 3 mark x; bytes or value */
	struct unit_rng *rng;
	/* bytes in flight per channel direction, each tagged with its send */
	int qp[MAXCH][2][MAXQ], qk[MAXCH][2][MAXQ], qh[MAXCH][2], qt[MAXCH][2];
	/* happened-before between events, by closure: hb[p][i][q][j] */
	unsigned char hb[MAXP][MAXE + 1][MAXP][MAXE + 1];
	size_t ncuts;
	unsigned char *consistent;
};

/* p may move bytes on channel c: a connection's client once it connected, its server once it
 * accepted; other channels at any time. */
static int ready(const struct gen *g, int c, int p)
{
	if (g->closed[c][g->cha[c] == p ? 0 : 1])
		return 0;
	if (!g->conn[c])
		return 1;
	return g->cha[c] == p ? g->cstate[c] >= 1 : g->cstate[c] == 2;
}

static void gen_simple(struct gen *g, int p)
{
	if (unit_rng_below(g->rng, 3) == 0) {
		int v = (int)unit_rng_below(g->rng, 4);

		ck_assert_int_eq(ana_add_mark(g->s, p, "x", v), g->n[p] + 1);
		g->kind[p][g->n[p] + 1] = 3;
		g->val[p][g->n[p] + 1] = v;
	} else {
		ck_assert_int_eq(ana_add_simple(g->s, p, TRACE_EV_CLOCK, 0), g->n[p] + 1);
	}
	g->n[p]++;
	g->is_recv[p][g->n[p]] = 0;
}

static void gen_build(struct gen *g, struct unit_rng *r, int np, int total)
{
	char name[16];
	int t;

	memset(g, 0, sizeof(*g));
	g->rng = r;
	ck_assert_int_eq(ana_new(&g->s), 0);
	g->np = np;
	for (int p = 0; p < np; p++) {
		char parent[16];

		/* some processes are forked by an earlier one at its event 1..3 */
		g->fparent[p] = -1;
		if (p > 0 && unit_rng_below(r, 2)) {
			int q = (int)unit_rng_below(r, (uint64_t)p), f = 1 + (int)unit_rng_below(r, 3);

			for (int o = 0; o < p; o++)
				if (g->fparent[o] == q && g->fidx[o] == f)
					q = -1;
			if (q >= 0) {
				g->fparent[p] = q;
				g->fidx[p] = f;
			}
		}
		snprintf(name, sizeof(name), "p%d", p);
		snprintf(parent, sizeof(parent), "p%d", g->fparent[p]);
		ck_assert_int_eq(ana_add_process(g->s, name, g->fparent[p] >= 0 ? parent : NULL,
		                                 g->fparent[p] >= 0 ? (uint64_t)g->fidx[p] : 0), p);
	}
	g->nch = 1 + (int)unit_rng_below(r, MAXCH);
	for (int c = 0; c < g->nch; c++) {
		int a = (int)unit_rng_below(r, (uint64_t)np), b = (int)unit_rng_below(r, (uint64_t)np);

		if (a == b)
			b = (a + 1) % np;
		/* now and then a channel whose peer is not recorded */
		if (unit_rng_below(r, 8) == 0)
			b = -1;
		g->cha[c] = a;
		g->chb[c] = b;
		/* half of them are connections: a connects, b accepts, then they talk */
		g->conn[c] = b != -1 && unit_rng_below(r, 2);
		ck_assert_int_eq(ana_add_channel(g->s, a, b), c);
		/* some channels hold only a few bytes: a send waits for the reader to make room */
		if (b != -1 && unit_rng_below(r, 2)) {
			g->cap[c] = 2 + (int)unit_rng_below(r, 4);
			ck_assert_int_eq(ana_set_capacity(g->s, c, (uint64_t)g->cap[c]), 0);
		}
	}
	for (t = 0; t < total; t++) {
		int p = (int)unit_rng_below(r, (uint64_t)np);
		int act = (int)unit_rng_below(r, 10);
		int c, d;

		if (g->n[p] >= MAXE)
			break;
		/* a child does nothing before its parent forks it, nor after its end */
		if ((g->fparent[p] >= 0 && g->n[g->fparent[p]] < g->fidx[p]) || g->ended[p])
			continue;
		{
			int forks = 0;

			for (int k = 0; k < np; k++)
				forks |= g->fparent[k] == p && g->fidx[k] == g->n[p] + 1;
			if (forks) {
				ck_assert_int_eq(ana_add_simple(g->s, p, TRACE_EV_FORK, 0), g->n[p] + 1);
				g->n[p]++;
				g->is_recv[p][g->n[p]] = 0;
				continue;
			}
		}
		/* now and then a forked child ends (exits, or is killed after its last event), and
		 * its parent waits for a child that ended: the wait follows the child's end */
		if (g->fparent[p] >= 0 && g->n[p] >= 1 && unit_rng_below(r, 4) == 0) {
			if (unit_rng_below(r, 3)) {
				ck_assert_int_eq(ana_add_simple(g->s, p, TRACE_EV_EXIT, 0), g->n[p] + 1);
				g->n[p]++;
				g->is_recv[p][g->n[p]] = 0;
			} else if (unit_rng_below(r, 2)) {
				g->kill_need[p] = 1; /* its SIGKILL comes from a process still running */
			}
			g->ended[p] = g->n[p];
			continue;
		}
		/* now and then p sends the SIGKILL a child killed outright died of (after its last
		 * event: a SIGKILL's edge goes to the parent's wait, analyzer/edges.c) */
		{
			int v = -1;

			for (int k = 0; k < np && v < 0; k++)
				if (g->kill_need[k] && k != p && g->n[p] >= 1 &&
				    !(g->fparent[p] >= 0 && g->ended[p]))
					v = k;
			if (v >= 0 && unit_rng_below(r, 2) == 0) {
				int k = g->n[p] + 1;

				ck_assert_int_eq(ana_add_kill(g->s, p, v, SIGKILL), k);
				g->n[p]++;
				g->is_recv[p][k] = 0;
				g->kill_need[v] = 0;
				g->kill_p[v] = p;
				g->kill_k[v] = p == g->fparent[v] ? 0 : k; /* (its parent's: program order) */
				continue;
			}
		}
		{
			int ch = -1;

			for (int k = 0; k < np && ch < 0; k++)
				if (g->fparent[k] == p && g->ended[k] && !g->reaped[k] && !g->kill_need[k])
					ch = k;
			/* the child's end sent p a SIGCHLD: its handler runs once, before or
			 * instead of the wait (a shell reaps in its handler) */
			if (ch >= 0 && !g->chld_run[ch] && unit_rng_below(r, 3) == 0) {
				int k = g->n[p] + 1;

				ck_assert_int_eq(ana_add_handler(g->s, p, ch, SIGCHLD), k);
				g->n[p]++;
				g->is_recv[p][k] = 0;
				g->is_wait[p][k] = 1;
				g->is_chld[p][k] = 1;
				g->src_p[p][k] = ch;
				g->src_k[p][k] = g->ended[ch];
				g->wk_p[p][k] = g->kill_p[ch];
				g->wk_k[p][k] = g->kill_k[ch];
				g->chld_run[ch] = 1;
				continue;
			}
			if (ch >= 0 && unit_rng_below(r, 2) == 0) {
				int k = g->n[p] + 1;

				ck_assert_int_eq(ana_add_wait(g->s, p, ch), k);
				g->n[p]++;
				g->is_recv[p][k] = 0;
				g->is_wait[p][k] = 1;
				g->src_p[p][k] = ch;
				g->src_k[p][k] = g->ended[ch];
				g->wk_p[p][k] = g->kill_p[ch];
				g->wk_k[p][k] = g->kill_k[ch];
				g->reaped[ch] = 1;
				continue;
			}
		}
		/* now and then p signals another running process, which runs its handler later:
		 * the n-th run of a sender's signal follows that sender's n-th kill of it */
		{
			int from = -1;

			for (int k = 0; k < np && from < 0; k++)
				if (g->kq_t[p][k] > g->kq_h[p][k])
					from = k;
			if (from >= 0 && unit_rng_below(r, 3) == 0) {
				int k = g->n[p] + 1;

				ck_assert_int_eq(ana_add_handler(g->s, p, from, SIGUSR1), k);
				g->n[p]++;
				g->is_recv[p][k] = 0;
				g->is_sig[p][k] = 1;
				g->src_p[p][k] = from;
				g->src_k[p][k] = g->kq[p][from][g->kq_h[p][from]++];
				continue;
			}
			if (unit_rng_below(r, 8) == 0) {
				int q = (int)unit_rng_below(r, (uint64_t)np);

				if (q != p && !g->ended[q] && g->kq_t[q][p] < MAXE &&
				    !(g->fparent[q] >= 0 && g->n[g->fparent[q]] < g->fidx[q])) {
					int k = g->n[p] + 1;

					ck_assert_int_eq(ana_add_kill(g->s, p, q, SIGUSR1), k);
					g->n[p]++;
					g->is_recv[p][k] = 0;
					g->kq[q][p][g->kq_t[q][p]++] = k;
					continue;
				}
			}
		}
		if (act < 4) {
			/* send on one of p's channels */
			int cand[MAXCH], nc = 0;

			for (c = 0; c < g->nch; c++) {
				d = g->cha[c] == p ? 0 : 1;
				if ((g->cha[c] == p || g->chb[c] == p) && g->chb[c] != -1 && ready(g, c, p) &&
				    (!g->cap[c] || g->qt[c][d] - g->qh[c][d] < g->cap[c]))
					cand[nc++] = c;
			}
			if (!nc) {
				gen_simple(g, p);
				continue;
			}
			c = cand[unit_rng_below(r, (uint64_t)nc)];
			d = g->cha[c] == p ? 0 : 1;
			{
				int len = 1 + (int)unit_rng_below(r, 3), k = g->n[p] + 1;

				if (g->cap[c] && len > g->cap[c] - (g->qt[c][d] - g->qh[c][d]))
					len = g->cap[c] - (g->qt[c][d] - g->qh[c][d]);
				ck_assert_int_eq(ana_add_send(g->s, p, c, (uint64_t)len), k);
				g->kind[p][k] = 1;
				g->val[p][k] = len;
				g->n[p]++;
				g->is_recv[p][k] = 0;
				if (g->cap[c] && g->qt[c][d] + len > g->cap[c]) {
					/* it needed the bytes up to need - 1 consumed: the receive holding that
					 * byte made the room (one edge per receive: later sends follow) */
					int need = g->qt[c][d] + len - g->cap[c], i = 0;

					while (g->rl_end[c][d][i] < need)
						i++;
					if (g->last_rk[c][d] != g->rl_k[c][d][i] + 1) {
						g->last_rk[c][d] = g->rl_k[c][d][i] + 1;
						g->is_room[p][k] = 1;
						g->src_p[p][k] = g->rl_p[c][d][i];
						g->src_k[p][k] = g->rl_k[c][d][i];
					}
				}
				for (int b = 0; b < len; b++) {
					g->qp[c][d][g->qt[c][d] % MAXQ] = p;
					g->qk[c][d][g->qt[c][d]++ % MAXQ] = k;
				}
			}
		} else if (act < 8) {
			/* receive some of the bytes waiting for p, or external input */
			int cand[MAXCH * 2], nc = 0;

			for (c = 0; c < g->nch; c++) {
				if (!ready(g, c, p))
					continue;
				if (g->chb[c] == p && g->qt[c][0] > g->qh[c][0])
					cand[nc++] = c * 2;
				if (g->cha[c] == p && g->qt[c][1] > g->qh[c][1])
					cand[nc++] = c * 2 + 1;
				if (g->cha[c] == p && g->chb[c] == -1)
					cand[nc++] = -1 - c;
			}
			if (!nc) {
				gen_simple(g, p);
				continue;
			}
			c = cand[unit_rng_below(r, (uint64_t)nc)];
			if (c < 0) {
				int k = g->n[p] + 1;

				ck_assert_int_eq(ana_add_recv(g->s, p, -1 - c, 2), k);
				g->kind[p][k] = 2;
				g->val[p][k] = 2;
				g->n[p]++;
				g->is_recv[p][k] = 0; /* external: no edge */
				continue;
			}
			d = c % 2;
			c /= 2;
			if (unit_rng_below(r, 3) == 0) {
				/* a poll that finds the channel readable; its edge needs the next receive */
				int k = g->n[p] + 1;

				ck_assert_int_eq(ana_add_ready(g->s, p, c), k);
				g->n[p]++;
				g->is_recv[p][k] = 0;
				g->is_ready[p][k] = 1;
				g->rc[p][k] = c;
				g->rd[p][k] = d;
				continue;
			}
			{
				int avail = g->qt[c][d] - g->qh[c][d];
				int m = 1 + (int)unit_rng_below(r, (uint64_t)avail), k = g->n[p] + 1;
				int last = (g->qh[c][d] + m - 1) % MAXQ;

				g->rstart[p][k] = g->qh[c][d];
				ck_assert_int_eq(ana_add_recv(g->s, p, c, (uint64_t)m), k);
				g->kind[p][k] = 2;
				g->val[p][k] = m;
				g->n[p]++;
				g->is_recv[p][k] = 1;
				g->src_p[p][k] = g->qp[c][d][last];
				g->src_k[p][k] = g->qk[c][d][last];
				g->rc[p][k] = c;
				g->rd[p][k] = d;
				g->rm[p][k] = m;
				g->qh[c][d] += m;
				g->rl_p[c][d][g->rl_n[c][d]] = p;
				g->rl_k[c][d][g->rl_n[c][d]] = k;
				g->rl_end[c][d][g->rl_n[c][d]++] = g->qh[c][d];
			}
		} else if (act == 8) {
			/* a connection step: the client connects, then the server accepts it */
			int cand[MAXCH], nc = 0, k = g->n[p] + 1;

			for (c = 0; c < g->nch; c++)
				if (g->conn[c] && ((g->cha[c] == p && g->cstate[c] == 0) ||
				                   (g->chb[c] == p && g->cstate[c] == 1)))
					cand[nc++] = c;
			if (!nc) {
				gen_simple(g, p);
				continue;
			}
			c = cand[unit_rng_below(r, (uint64_t)nc)];
			g->is_recv[p][k] = 0;
			if (g->cstate[c] == 0) {
				ck_assert_int_eq(ana_add_connect(g->s, p, c), k);
				g->cevent[c] = k;
			} else {
				ck_assert_int_eq(ana_add_accept(g->s, p, c), k);
				g->aevent[c] = k;
				g->is_acc[p][k] = 1;
				g->src_p[p][k] = g->cha[c];
				g->src_k[p][k] = g->cevent[c];
			}
			g->cstate[c]++;
			g->n[p]++;
		} else {
			/* now and then p closes its side of a channel, or reads the end of file of a
			 * channel whose other side closed once every byte it sent is read */
			int cand[MAXCH * 2], nc = 0, k = g->n[p] + 1, side;

			for (c = 0; c < g->nch; c++) {
				if (g->chb[c] == -1 || (g->cha[c] != p && g->chb[c] != p) || !ready(g, c, p))
					continue;
				side = g->cha[c] == p ? 0 : 1;
				cand[nc++] = c * 2;
				if (g->closed[c][1 - side] && !g->eofread[c][side] &&
				    g->qh[c][1 - side] == g->qt[c][1 - side])
					cand[nc++] = c * 2 + 1;
			}
			if (!nc || unit_rng_below(r, 2)) {
				gen_simple(g, p);
				continue;
			}
			c = cand[unit_rng_below(r, (uint64_t)nc)];
			side = g->cha[c / 2] == p ? 0 : 1;
			g->is_recv[p][k] = 0;
			if (c % 2 == 0) {
				ck_assert_int_eq(ana_add_close(g->s, p, c / 2), k);
				g->closed[c / 2][side] = k;
			} else if (unit_rng_below(r, 3) == 0) {
				/* a poll that finds the end of the stream */
				ck_assert_int_eq(ana_add_ready(g->s, p, c / 2), k);
				g->is_ready[p][k] = 1;
				g->rc[p][k] = c / 2;
				g->rd[p][k] = side ? 0 : 1;
			} else {
				int o = side ? g->cha[c / 2] : g->chb[c / 2];

				ck_assert_int_eq(ana_add_eof(g->s, p, c / 2), k);
				g->eofread[c / 2][side] = 1;
				g->eof_c[p][k] = c / 2;
				g->eof_d[p][k] = side ? 0 : 1; /* the direction into p */
				g->is_eof[p][k] = 1;
				g->src_p[p][k] = o;
				g->src_k[p][k] = g->closed[c / 2][1 - side];
			}
			g->n[p]++;
		}
	}
	ck_assert_int_eq(ana_finish(g->s, NULL), 0);

	/* a poll's edge: from the send of the first byte p's next receive on that channel takes,
	 * or from the peer's close when that receive is the end of file */
	for (int p = 0; p < np; p++)
		for (int k = 1; k <= g->n[p]; k++) {
			int c = g->rc[p][k], d = g->rd[p][k];

			if (!g->is_ready[p][k])
				continue;
			g->is_ready[p][k] = 0;
			for (int j = k + 1; j <= g->n[p]; j++) {
				if (g->is_recv[p][j] && g->rc[p][j] == c && g->rd[p][j] == d) {
					g->is_ready[p][k] = 1;
					g->src_p[p][k] = g->qp[c][d][g->rstart[p][j] % MAXQ];
					g->src_k[p][k] = g->qk[c][d][g->rstart[p][j] % MAXQ];
					break;
				}
				if (g->is_eof[p][j] && g->eof_c[p][j] == c && g->eof_d[p][j] == d) {
					g->is_ready[p][k] = 1;
					g->src_p[p][k] = g->src_p[p][j];
					g->src_k[p][k] = g->src_k[p][j];
					break;
				}
			}
		}

	/* happened-before: program order, message edges, connections and forks, closed transitively */
	for (int p = 0; p < np; p++)
		if (g->fparent[p] >= 0 && g->n[p] >= 1)
			g->hb[g->fparent[p]][g->fidx[p]][p][1] = 1;
	for (int p = 0; p < np; p++)
		for (int i = 1; i <= g->n[p]; i++) {
			for (int j = i + 1; j <= g->n[p]; j++)
				g->hb[p][i][p][j] = 1;
			if (g->is_recv[p][i] || g->is_acc[p][i] || g->is_eof[p][i] || g->is_room[p][i] ||
			    g->is_wait[p][i] || g->is_ready[p][i] || g->is_sig[p][i])
				g->hb[g->src_p[p][i]][g->src_k[p][i]][p][i] = 1;
			if (g->wk_k[p][i])
				g->hb[g->wk_p[p][i]][g->wk_k[p][i]][p][i] = 1;
		}
	for (int kp = 0; kp < np; kp++)
		for (int ki = 1; ki <= g->n[kp]; ki++)
			for (int p = 0; p < np; p++)
				for (int i = 1; i <= g->n[p]; i++)
					if (g->hb[p][i][kp][ki])
						for (int q = 0; q < np; q++)
							for (int j = 1; j <= g->n[q]; j++)
								if (g->hb[kp][ki][q][j])
									g->hb[p][i][q][j] = 1;

	/* every cut, and whether it is consistent */
	g->ncuts = 1;
	for (int p = 0; p < np; p++)
		g->ncuts *= (size_t)(g->n[p] + 1);
	g->consistent = calloc(g->ncuts, 1);
	ck_assert_ptr_nonnull(g->consistent);
	for (size_t ci = 0; ci < g->ncuts; ci++) {
		uint64_t cut[MAXP];
		size_t x = ci;
		int ok = 1;

		for (int p = 0; p < np; p++) {
			cut[p] = x % (size_t)(g->n[p] + 1);
			x /= (size_t)(g->n[p] + 1);
		}
		for (int p = 0; p < np && ok; p++)
			if (g->fparent[p] >= 0 && cut[p] >= 1 && cut[g->fparent[p]] < (uint64_t)g->fidx[p])
				ok = 0;
		for (int p = 0; p < np && ok; p++)
			for (int i = 1; i <= (int)cut[p] && ok; i++)
				if ((g->is_recv[p][i] || g->is_acc[p][i] || g->is_eof[p][i] || g->is_room[p][i] ||
			    g->is_wait[p][i] || g->is_ready[p][i] || g->is_sig[p][i]) &&
				    cut[g->src_p[p][i]] < (uint64_t)g->src_k[p][i])
					ok = 0;
		for (int p = 0; p < np && ok; p++)
			for (int i = 1; i <= (int)cut[p] && ok; i++)
				if (g->wk_k[p][i] && cut[g->wk_p[p][i]] < (uint64_t)g->wk_k[p][i])
					ok = 0;
		g->consistent[ci] = (unsigned char)ok;
	}
}

static void gen_free(struct gen *g)
{
	ana_free(g->s);
	free(g->consistent);
}

static void cut_of(const struct gen *g, size_t ci, uint64_t *cut)
{
	for (int p = 0; p < g->np; p++) {
		cut[p] = ci % (size_t)(g->n[p] + 1);
		ci /= (size_t)(g->n[p] + 1);
	}
}

static int cut_leq(const uint64_t *a, const uint64_t *b, int np)
{
	for (int p = 0; p < np; p++)
		if (a[p] > b[p])
			return 0;
	return 1;
}

/* Minimal consistent cuts among those accepted by ok(); returns their count in out. */
typedef int (*cut_pred)(const struct gen *g, const uint64_t *cut, void *ctx);

static size_t brute_minimal(const struct gen *g, cut_pred ok, void *ctx, uint64_t *out,
                            size_t cap)
{
	size_t n = 0;

	for (size_t ci = 0; ci < g->ncuts; ci++) {
		uint64_t c[MAXP];
		int minimal = 1;

		if (!g->consistent[ci])
			continue;
		cut_of(g, ci, c);
		if (!ok(g, c, ctx))
			continue;
		for (size_t di = 0; di < g->ncuts && minimal; di++) {
			uint64_t d[MAXP];

			if (di == ci || !g->consistent[di])
				continue;
			cut_of(g, di, d);
			if (cut_leq(d, c, g->np) && ok(g, d, ctx))
				minimal = 0;
		}
		if (minimal) {
			ck_assert_uint_lt(n, cap);
			memcpy(out + n * MAXP, c, sizeof(c));
			n++;
		}
	}
	return n;
}

/* The analyzer's set of cuts equals the twin's (as sets). */
static void assert_same_cuts(const struct gen *g, const struct ana_cuts *a, const uint64_t *b,
                             size_t nb, const char *what)
{
	ck_assert_msg(a->ncuts == nb, "%s: the analyzer found %zu minimal cuts, the twin %zu", what,
	              a->ncuts, nb);
	for (size_t i = 0; i < nb; i++) {
		int found = 0;

		for (size_t j = 0; j < a->ncuts && !found; j++) {
			int eq = 1;

			for (int p = 0; p < g->np; p++)
				if (a->cuts[j * a->nprocs + (size_t)p] != b[i * MAXP + (size_t)p])
					eq = 0;
			found = eq;
		}
		ck_assert_msg(found, "cut %zu of the twin is missing from the analyzer's answer", i);
	}
}

/* random SP truth: bit k set with probability 1/3, sometimes never true */
static void random_bits(struct unit_rng *r, const struct gen *g, int p, uint64_t *bits)
{
	int never = unit_rng_below(r, 6) == 0;

	memset(bits, 0, sizeof(uint64_t));
	for (int k = 0; k <= g->n[p]; k++)
		if (!never && unit_rng_below(r, 3) == 0)
			bits[0] |= 1ull << k;
}

static int bit(const uint64_t *bits, uint64_t k)
{
	return (int)((bits[0] >> k) & 1);
}

/* ---------------------------------------------------------------------------------------
 * Predicates for the twin
 */
struct cpdesc {
	int nsp;
	int proc[MAXP];
	uint64_t bits[MAXP];
};

static int cp_holds(const struct cpdesc *cp, const uint64_t *cut)
{
	for (int i = 0; i < cp->nsp; i++)
		if (!bit(&cp->bits[i], cut[cp->proc[i]]))
			return 0;
	return 1;
}

static int ok_cp(const struct gen *g, const uint64_t *cut, void *ctx)
{
	return cp_holds(ctx, cut);
}

struct dpdesc {
	int ncp;
	struct cpdesc cp[3];
};

static int ok_dp(const struct gen *g, const uint64_t *cut, void *ctx)
{
	const struct dpdesc *dp = ctx;

	for (int i = 0; i < dp->ncp; i++)
		if (cp_holds(&dp->cp[i], cut))
			return 1;
	return 0;
}

static void random_cp(struct unit_rng *r, const struct gen *g, struct cpdesc *cp)
{
	int used = 0;

	cp->nsp = 1 + (int)unit_rng_below(r, (uint64_t)g->np);
	for (int i = 0; i < cp->nsp; i++) {
		int p = (int)unit_rng_below(r, (uint64_t)g->np);

		/* allow the same process twice now and then: the API and-s them */
		if ((used >> p) & 1 && unit_rng_below(r, 2))
			p = (p + 1) % g->np;
		used |= 1 << p;
		cp->proc[i] = p;
		random_bits(r, g, p, &cp->bits[i]);
	}
}

static void to_api_cp(const struct cpdesc *d, struct ana_sp *sps, struct ana_cp *cp)
{
	for (int i = 0; i < d->nsp; i++) {
		sps[i].proc = (size_t)d->proc[i];
		sps[i].bits = &d->bits[i];
	}
	cp->sps = sps;
	cp->nsp = (size_t)d->nsp;
}

/* ---------------------------------------------------------------------------------------
 * Hand-made traces: Manabe & Imase section 3
 */

/* Fig. 2: P = SP1 && SP2 over three processes; process 3's message to process 2 is part of
 * why P became true, so Inf(P) stops process 3 right after that send, not later, although
 * (e11, e22, e23) satisfies P too. */
START_TEST(mi_fig2_cp)
{
	struct ana_session *s;
	uint64_t sp1 = 0, sp2 = 0, cut[3];
	struct ana_sp sps[2];
	struct ana_cp cp = {sps, 2};
	int ch;

	ck_assert_int_eq(ana_new(&s), 0);
	ck_assert_int_eq(ana_add_process(s, "P1", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(s, "P2", NULL, 0), 1);
	ck_assert_int_eq(ana_add_process(s, "P3", NULL, 0), 2);
	ch = ana_add_channel(s, 2, 1);
	ck_assert_int_eq(ana_add_simple(s, 0, TRACE_EV_CLOCK, 0), 1);   /* e11 */
	ck_assert_int_eq(ana_add_simple(s, 1, TRACE_EV_CLOCK, 0), 1);   /* e12 */
	ck_assert_int_eq(ana_add_send(s, 2, ch, 4), 1);                 /* e13: send to 2 */
	ck_assert_int_eq(ana_add_recv(s, 1, ch, 4), 2);                 /* e22: receive it */
	ck_assert_int_eq(ana_add_simple(s, 2, TRACE_EV_CLOCK, 0), 2);   /* e23 */
	ck_assert_int_eq(ana_add_simple(s, 2, TRACE_EV_CLOCK, 0), 3);
	ck_assert_int_eq(ana_finish(s, NULL), 0);

	sp1 = 1ull << 1 | 1ull << 2 * 0;      /* SP1 after e11 */
	sp1 = 1ull << 1;
	sp2 = 1ull << 2;                      /* SP2 after e22 */
	sps[0] = (struct ana_sp){0, &sp1};
	sps[1] = (struct ana_sp){1, &sp2};
	ck_assert_int_eq(ana_inf_cp(s, &cp, cut), 1);
	ck_assert_uint_eq(cut[0], 1);
	ck_assert_uint_eq(cut[1], 2);
	ck_assert_uint_eq(cut[2], 1); /* pulled to its send, and no further */

	/* (1,2,2) satisfies P and is consistent, but it is not the least */
	{
		uint64_t other[3] = {1, 2, 2};

		ck_assert_int_eq(ana_consistent(s, other), 1);
		other[2] = 0;
		ck_assert_int_eq(ana_consistent(s, other), 0); /* received, never sent */
	}
	/* SP2 never true: Inf is empty */
	sp2 = 0;
	ck_assert_int_eq(ana_inf_cp(s, &cp, cut), 0);
	ana_free(s);
}
END_TEST

/* Section 3.3, Theorem 1: two processes that never communicate, P = SP1 || SP2.  Offline both
 * minimal states are known: one per disjunct. */
START_TEST(mi_thm1_dp)
{
	struct ana_session *s;
	uint64_t sp1 = 1ull << 2, sp2 = 1ull << 3;
	struct ana_sp a = {0, &sp1}, b = {1, &sp2};
	struct ana_cp cps[2] = {{&a, 1}, {&b, 1}};
	struct ana_dp dp = {cps, 2};
	struct ana_cuts out;

	ck_assert_int_eq(ana_new(&s), 0);
	ck_assert_int_eq(ana_add_process(s, "P1", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(s, "P2", NULL, 0), 1);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_gt(ana_add_simple(s, 0, TRACE_EV_CLOCK, 0), 0);
		ck_assert_int_gt(ana_add_simple(s, 1, TRACE_EV_CLOCK, 0), 0);
	}
	ck_assert_int_eq(ana_finish(s, NULL), 0);
	ck_assert_int_eq(ana_inf_dp(s, &dp, &out), 0);
	ck_assert_uint_eq(out.ncuts, 2);
	ck_assert_uint_eq(out.cuts[0], 2);
	ck_assert_uint_eq(out.cuts[1], 0);
	ck_assert_uint_eq(out.cuts[2], 0);
	ck_assert_uint_eq(out.cuts[3], 3);
	ana_cuts_free(&out);

	/* process 1 never satisfies SP1: only process 2's state remains */
	sp1 = 0;
	ck_assert_int_eq(ana_inf_dp(s, &dp, &out), 0);
	ck_assert_uint_eq(out.ncuts, 1);
	ck_assert_uint_eq(out.cuts[0], 0);
	ck_assert_uint_eq(out.cuts[1], 3);
	ana_cuts_free(&out);
	ana_free(s);
}
END_TEST

/* A predicate true at the initial state: Inf is the bottom cut. */
START_TEST(cp_true_at_start)
{
	struct ana_session *s;
	uint64_t sp = 1, cut[2] = {9, 9};
	struct ana_sp a = {1, &sp};
	struct ana_cp cp = {&a, 1};
	int ch;

	ck_assert_int_eq(ana_new(&s), 0);
	ck_assert_int_eq(ana_add_process(s, "a", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(s, "b", NULL, 0), 1);
	ch = ana_add_channel(s, 0, 1);
	ck_assert_int_eq(ana_add_send(s, 0, ch, 1), 1);
	ck_assert_int_eq(ana_add_recv(s, 1, ch, 1), 1);
	ck_assert_int_eq(ana_finish(s, NULL), 0);
	ck_assert_int_eq(ana_inf_cp(s, &cp, cut), 1);
	ck_assert_uint_eq(cut[0], 0);
	ck_assert_uint_eq(cut[1], 0);
	/* true only after the receive: the sender is pulled to its send */
	sp = 2;
	ck_assert_int_eq(ana_inf_cp(s, &cp, cut), 1);
	ck_assert_uint_eq(cut[0], 1);
	ck_assert_uint_eq(cut[1], 1);
	ana_free(s);
}
END_TEST

/* A predicate process pulled to a send moves on to its next satisfying state (Appendix B:
 * after sending the requested message it stays active until SP holds again). */
START_TEST(cp_predicate_process_pulled_past_send)
{
	struct ana_session *s;
	uint64_t spa = (1ull << 0) | (1ull << 3), spb = 1ull << 1, cut[2];
	struct ana_sp sps[2] = {{0, &spa}, {1, &spb}};
	struct ana_cp cp = {sps, 2};
	int ch;

	ck_assert_int_eq(ana_new(&s), 0);
	ck_assert_int_eq(ana_add_process(s, "a", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(s, "b", NULL, 0), 1);
	ch = ana_add_channel(s, 0, 1);
	ck_assert_int_eq(ana_add_simple(s, 0, TRACE_EV_CLOCK, 0), 1);
	ck_assert_int_eq(ana_add_send(s, 0, ch, 1), 2);
	ck_assert_int_eq(ana_add_simple(s, 0, TRACE_EV_CLOCK, 0), 3);
	ck_assert_int_eq(ana_add_simple(s, 0, TRACE_EV_CLOCK, 0), 4);
	ck_assert_int_eq(ana_add_recv(s, 1, ch, 1), 1);
	ck_assert_int_eq(ana_finish(s, NULL), 0);
	ck_assert_int_eq(ana_inf_cp(s, &cp, cut), 1);
	ck_assert_uint_eq(cut[0], 3); /* not 2: SP_a is false there */
	ck_assert_uint_eq(cut[1], 1);
	ana_free(s);
}
END_TEST

/* ---------------------------------------------------------------------------------------
 * Random traces against the twin
 */
static void check_hb_and_consistency(struct gen *g)
{
	uint64_t cut[MAXP];

	for (int p = 0; p < g->np; p++)
		for (int i = 1; i <= g->n[p]; i++) {
			struct ana_event ev;

			ck_assert_int_eq(ana_event_get(g->s, (size_t)p, (uint64_t)i, &ev), 0);
			if (g->is_recv[p][i] || g->is_acc[p][i]) {
				ck_assert_uint_eq(ev.src_proc, (uint32_t)g->src_p[p][i]);
				ck_assert_uint_eq(ev.src_index, (uint64_t)g->src_k[p][i]);
			} else {
				ck_assert_uint_eq(ev.src_proc, ANA_NO_PROC);
			}
			{
				/* the direct dependencies: fork, send, connect, close */
				struct ana_ref deps[4];
				int64_t nd = ana_event_deps(g->s, (size_t)p, (uint64_t)i, deps, 4);
				int want = 0;

				if (i == 1 && g->fparent[p] >= 0) {
					ck_assert_int_ge(nd, want + 1);
					ck_assert_uint_eq(deps[want].proc, (size_t)g->fparent[p]);
					ck_assert_uint_eq(deps[want].index, (uint64_t)g->fidx[p]);
					want++;
				}
				if (g->is_recv[p][i] || g->is_acc[p][i] || g->is_eof[p][i] || g->is_room[p][i] ||
			    g->is_wait[p][i] || g->is_ready[p][i] || g->is_sig[p][i]) {
					ck_assert_int_ge(nd, want + 1);
					ck_assert_uint_eq(deps[want].proc, (size_t)g->src_p[p][i]);
					ck_assert_uint_eq(deps[want].index, (uint64_t)g->src_k[p][i]);
					want++;
				}
				if (g->wk_k[p][i]) { /* and the SIGKILL of a child killed outright */
					ck_assert_int_ge(nd, want + 1);
					ck_assert_uint_eq(deps[want].proc, (size_t)g->wk_p[p][i]);
					ck_assert_uint_eq(deps[want].index, (uint64_t)g->wk_k[p][i]);
					want++;
				}
				ck_assert_int_eq(nd, want);
			}
			for (int q = 0; q < g->np; q++)
				for (int j = 1; j <= g->n[q]; j++)
					ck_assert_int_eq(ana_hb(g->s, (size_t)p, (uint64_t)i, (size_t)q,
					                        (uint64_t)j), g->hb[p][i][q][j]);
		}
	for (size_t ci = 0; ci < g->ncuts; ci++) {
		uint64_t down[MAXP], up[MAXP];

		cut_of(g, ci, cut);
		ck_assert_int_eq(ana_consistent(g->s, cut), g->consistent[ci]);
		/* the closures: least consistent above, greatest consistent below */
		memcpy(down, cut, sizeof(cut));
		memcpy(up, cut, sizeof(cut));
		ck_assert_int_eq(ana_close_down(g->s, down), 0);
		ck_assert_int_eq(ana_close_up(g->s, up), 0);
		for (size_t di = 0; di < g->ncuts; di++) {
			uint64_t d[MAXP];

			if (!g->consistent[di])
				continue;
			cut_of(g, di, d);
			if (cut_leq(cut, d, g->np))
				ck_assert(cut_leq(down, d, g->np));
			if (cut_leq(d, cut, g->np))
				ck_assert(cut_leq(d, up, g->np));
		}
		ck_assert(cut_leq(cut, down, g->np));
		ck_assert(cut_leq(up, cut, g->np));
		ck_assert_int_eq(ana_consistent(g->s, down), 1);
		ck_assert_int_eq(ana_consistent(g->s, up), 1);
	}
}

/* ana_sweep visits every event once, each after its process's previous event and after
 * every event it depends on (ana_event_deps), in passes over the processes in order. */
struct sweep_check {
	struct gen *g;
	uint64_t done[MAXP];
	int count;
	int stop_at;            /* return 5 at this visit (0: never) */
};

static int sweep_visit(void *ctx, size_t p, uint64_t k)
{
	struct sweep_check *c = ctx;
	struct ana_ref deps[8];
	int64_t nd = ana_event_deps(c->g->s, p, k, deps, 8);

	ck_assert_uint_eq(c->done[p] + 1, k);
	ck_assert_int_ge(nd, 0);
	ck_assert_int_le(nd, 8);
	for (int64_t i = 0; i < nd; i++)
		ck_assert_uint_ge(c->done[deps[i].proc], deps[i].index);
	c->done[p] = k;
	return ++c->count == c->stop_at ? 5 : 0;
}

/* The vector clocks against ana_hb and the closure twin, on every pair of events. */
static void check_vclocks(struct gen *g)
{
	struct ana_vclocks *vc;
	struct sweep_check sc;
	int total = 0, rc;

	for (int p = 0; p < g->np; p++)
		total += g->n[p];
	memset(&sc, 0, sizeof(sc));
	sc.g = g;
	rc = ana_sweep(g->s, sweep_visit, &sc);
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(sc.count, total);
	for (int p = 0; p < g->np; p++)
		ck_assert_uint_eq(sc.done[p], (uint64_t)g->n[p]);
	/* fn's non-zero return stops the walk and is returned (a session may have no events) */
	memset(&sc, 0, sizeof(sc));
	sc.g = g;
	sc.stop_at = 1 + total / 2;
	rc = ana_sweep(g->s, sweep_visit, &sc);
	ck_assert_int_eq(rc, total ? 5 : 0);
	ck_assert_int_eq(sc.count, total ? sc.stop_at : 0);

	ck_assert_int_eq(ana_vclocks_new(g->s, &vc), 0);
	for (int q = 0; q < g->np; q++)
		for (int j = 1; j <= g->n[q]; j++) {
			const uint32_t *c = ana_vclock(vc, (size_t)q, (uint64_t)j);

			ck_assert_uint_eq(c[q], (uint32_t)j);
			for (int p = 0; p < g->np; p++) {
				/* the entry is the last event of p that happened before (q, j) */
				uint32_t want = 0;

				for (int i = 1; i <= g->n[p]; i++)
					if (p != q && ana_hb(g->s, (size_t)p, (uint64_t)i, (size_t)q,
					                     (uint64_t)j) == 1)
						want = (uint32_t)i;
				if (p != q)
					ck_assert_uint_eq(c[p], want);
				for (int i = 1; i <= g->n[p]; i++) {
					int hb = (p != q || i != j) && (uint32_t)i <= c[p];

					ck_assert_int_eq(hb, ana_hb(g->s, (size_t)p, (uint64_t)i, (size_t)q,
					                            (uint64_t)j));
					ck_assert_int_eq(hb, g->hb[p][i][q][j]);
				}
			}
		}
	ana_vclocks_free(vc);
	ana_vclocks_free(NULL);
}

static void check_cp_dp(struct gen *g, struct unit_rng *r)
{
	struct dpdesc dp;
	struct ana_sp sps[3][MAXP];
	struct ana_cp cps[3];
	struct ana_dp adp;
	struct ana_cuts out;
	uint64_t twin[64 * MAXP], cut[MAXP];
	size_t nt;

	dp.ncp = 1 + (int)unit_rng_below(r, 3);
	for (int i = 0; i < dp.ncp; i++) {
		random_cp(r, g, &dp.cp[i]);
		to_api_cp(&dp.cp[i], sps[i], &cps[i]);
	}
	/* each CP alone: at most one minimal cut (Manabe & Imase Lemma 2), equal to ana_inf_cp */
	for (int i = 0; i < dp.ncp; i++) {
		int rc = ana_inf_cp(g->s, &cps[i], cut);

		nt = brute_minimal(g, ok_cp, &dp.cp[i], twin, 64);
		ck_assert_uint_le(nt, 1);
		ck_assert_int_eq(rc, (int)nt);
		if (nt)
			for (int p = 0; p < g->np; p++)
				ck_assert_uint_eq(cut[p], twin[p]);
	}
	adp.cps = cps;
	adp.ncp = (size_t)dp.ncp;
	ck_assert_int_eq(ana_inf_dp(g->s, &adp, &out), 0);
	nt = brute_minimal(g, ok_dp, &dp, twin, 64);
	assert_same_cuts(g, &out, twin, nt, "DP");
	ana_cuts_free(&out);
}

/* General: (CP0 || CP1) && (CP2 || SP) style, as a monotone formula over a flat SP list. */
struct genpred {
	struct cpdesc all;      /* every SP */
	int form;               /* which formula */
};

static int formula(int form, const uint8_t *t)
{
	switch (form) {
	case 0: return (t[0] || t[1]) && (t[2] || t[3]);
	case 1: return t[0] && (t[1] || (t[2] && t[3]));
	default: return (t[0] && t[1]) || (t[2] && t[3]) || t[1];
	}
}

static int general_eval(void *ctx, const uint8_t *truth)
{
	return formula(((struct genpred *)ctx)->form, truth);
}

static int ok_general(const struct gen *g, const uint64_t *cut, void *ctx)
{
	const struct genpred *gp = ctx;
	uint8_t t[4];

	for (int i = 0; i < 4; i++)
		t[i] = (uint8_t)bit(&gp->all.bits[i], cut[gp->all.proc[i]]);
	return formula(gp->form, t);
}

static void check_general(struct gen *g, struct unit_rng *r)
{
	struct genpred gp;
	struct ana_sp sps[4];
	struct ana_cuts out;
	uint64_t twin[64 * MAXP];
	size_t nt;

	gp.form = (int)unit_rng_below(r, 3);
	gp.all.nsp = 4;
	for (int i = 0; i < 4; i++) {
		gp.all.proc[i] = (int)unit_rng_below(r, (uint64_t)g->np);
		random_bits(r, g, gp.all.proc[i], &gp.all.bits[i]);
		sps[i].proc = (size_t)gp.all.proc[i];
		sps[i].bits = &gp.all.bits[i];
	}
	ck_assert_int_eq(ana_inf_general(g->s, sps, 4, general_eval, &gp, 0, &out), 0);
	ck_assert_int_eq(out.bound_hit, 0);
	nt = brute_minimal(g, ok_general, &gp, twin, 64);
	assert_same_cuts(g, &out, twin, nt, "general");
	ana_cuts_free(&out);
}

/*
 * Linked predicates.  The twin follows the definition, not the algorithm: a chain state is
 * (cut, trigger events); for the next DP and each of its CPs, the least consistent cut above
 * the previous cut where each SP holds at a state whose event the triggers happened before
 * (strictly later on the trigger's own process; a trigger at state 0 constrains only its own
 * process), found by looking at every consistent cut.
 */
struct lpdesc {
	int ndp;
	struct dpdesc dp[3];
};

struct lpstate {
	uint64_t cut[MAXP];
	int ntrig;
	int tp[MAXP];
	uint64_t tk[MAXP];
};

static int after_triggers(const struct gen *g, const struct lpstate *st, int q, uint64_t k)
{
	for (int t = 0; t < st->ntrig; t++) {
		int p = st->tp[t];
		uint64_t j = st->tk[t];

		if (j == 0) {
			if (p == q && k < 1)
				return 0;
			continue;
		}
		if (p == q) {
			if (k <= j)
				return 0;
		} else if (k < 1 || !g->hb[p][j][q][k]) {
			return 0;
		}
	}
	return 1;
}

static size_t twin_lp(const struct gen *g, const struct lpdesc *lp, uint64_t *out, size_t cap)
{
	static struct lpstate cur[512], next[512];
	size_t ncur = 1, nnext, n = 0;

	memset(&cur[0], 0, sizeof(cur[0]));
	for (int d = 0; d < lp->ndp; d++) {
		nnext = 0;
		for (size_t c = 0; c < ncur; c++) {
			for (int i = 0; i < lp->dp[d].ncp; i++) {
				const struct cpdesc *cp = &lp->dp[d].cp[i];
				uint64_t best[MAXP];
				int have = 0;

				for (size_t ci = 0; ci < g->ncuts; ci++) {
					uint64_t x[MAXP];
					int ok = 1;

					if (!g->consistent[ci])
						continue;
					cut_of(g, ci, x);
					if (!cut_leq(cur[c].cut, x, g->np) || !cp_holds(cp, x))
						continue;
					for (int k = 0; k < cp->nsp && ok; k++)
						ok = after_triggers(g, &cur[c], cp->proc[k], x[cp->proc[k]]);
					if (!ok)
						continue;
					if (!have || cut_leq(x, best, g->np)) {
						memcpy(best, x, sizeof(best));
						have = 1;
					}
				}
				if (!have)
					continue;
				{
					struct lpstate ns;
					int dup = 0;

					memset(&ns, 0, sizeof(ns));
					memcpy(ns.cut, best, sizeof(best));
					for (int k = 0; k < cp->nsp; k++) {
						int t;

						for (t = 0; t < ns.ntrig && ns.tp[t] != cp->proc[k]; t++)
							;
						if (t == ns.ntrig) {
							ns.tp[ns.ntrig] = cp->proc[k];
							ns.tk[ns.ntrig++] = best[cp->proc[k]];
						}
					}
					for (size_t o = 0; o < nnext && !dup; o++)
						dup = memcmp(&next[o], &ns, sizeof(ns)) == 0;
					if (!dup) {
						ck_assert_uint_lt(nnext, 512);
						next[nnext++] = ns;
					}
				}
			}
		}
		memcpy(cur, next, nnext * sizeof(cur[0]));
		ncur = nnext;
	}
	/* minimal cuts of the last step */
	for (size_t c = 0; c < ncur; c++) {
		int minimal = 1, dup = 0;

		for (size_t o = 0; o < ncur && minimal; o++)
			if (o != c && cut_leq(cur[o].cut, cur[c].cut, g->np) &&
			    memcmp(cur[o].cut, cur[c].cut, sizeof(cur[c].cut)) != 0)
				minimal = 0;
		for (size_t o = 0; o < n && !dup; o++)
			dup = memcmp(out + o * MAXP, cur[c].cut, sizeof(cur[c].cut)) == 0;
		if (minimal && !dup) {
			ck_assert_uint_lt(n, cap);
			memcpy(out + n * MAXP, cur[c].cut, sizeof(cur[c].cut));
			n++;
		}
	}
	return n;
}

static void check_lp(struct gen *g, struct unit_rng *r)
{
	struct lpdesc lp;
	struct ana_sp sps[3][3][MAXP];
	struct ana_cp cps[3][3];
	struct ana_dp dps[3];
	struct ana_cuts out;
	uint64_t twin[64 * MAXP];
	size_t nt;

	lp.ndp = 2 + (int)unit_rng_below(r, 2);
	for (int d = 0; d < lp.ndp; d++) {
		lp.dp[d].ncp = 1 + (int)unit_rng_below(r, 2);
		for (int i = 0; i < lp.dp[d].ncp; i++) {
			struct cpdesc *cp = &lp.dp[d].cp[i];

			random_cp(r, g, cp);
			/* distinct processes per CP keep the twin's trigger list simple */
			if (cp->nsp > 2)
				cp->nsp = 2;
			if (cp->nsp == 2 && cp->proc[0] == cp->proc[1])
				cp->nsp = 1;
			to_api_cp(cp, sps[d][i], &cps[d][i]);
		}
		dps[d].cps = cps[d];
		dps[d].ncp = (size_t)lp.dp[d].ncp;
	}
	ck_assert_int_eq(ana_inf_lp(g->s, dps, (size_t)lp.ndp, 0, &out), 0);
	ck_assert_int_eq(out.bound_hit, 0);
	nt = twin_lp(g, &lp, twin, 64);
	if (getenv("ANA_DEBUG") && nt != out.ncuts) {
		for (int p = 0; p < g->np; p++) {
			fprintf(stderr, "p%d:", p);
			for (int k = 1; k <= g->n[p]; k++)
				fprintf(stderr, " %d%s", k, g->is_recv[p][k] ? "r" : "");
			fprintf(stderr, "\n");
			for (int k = 1; k <= g->n[p]; k++)
				if (g->is_recv[p][k])
					fprintf(stderr, "  recv %d <- p%d:%d\n", k, g->src_p[p][k], g->src_k[p][k]);
		}
		for (int d = 0; d < lp.ndp; d++) {
			fprintf(stderr, "DP%d:", d);
			for (int i = 0; i < lp.dp[d].ncp; i++) {
				fprintf(stderr, " CP[");
				for (int k = 0; k < lp.dp[d].cp[i].nsp; k++)
					fprintf(stderr, " p%d:%llx", lp.dp[d].cp[i].proc[k], (unsigned long long)lp.dp[d].cp[i].bits[k]);
				fprintf(stderr, " ]");
			}
			fprintf(stderr, "\n");
		}
		for (size_t i = 0; i < nt; i++) {
			fprintf(stderr, "twin:");
			for (int p = 0; p < g->np; p++)
				fprintf(stderr, " %llu", (unsigned long long)twin[i * MAXP + (size_t)p]);
			fprintf(stderr, "\n");
		}
	}
	assert_same_cuts(g, &out, twin, nt, "LP");
	ana_cuts_free(&out);
}

/* Ariadne: after = least consistent cut containing the events; before = the causal past of
 * the greatest consistent cut excluding them; roles from happened-before. */
static void check_ariadne(struct gen *g, struct unit_rng *r)
{
	struct ana_ref refs[MAXP];
	struct ana_breakpoint bp;
	int nref = 0, used = 0;
	int want = 1 + (int)unit_rng_below(r, 2);

	for (int i = 0; i < want; i++) {
		int p = (int)unit_rng_below(r, (uint64_t)g->np);

		if (!g->n[p] || ((used >> p) & 1))
			continue;
		used |= 1 << p;
		refs[nref].proc = (size_t)p;
		refs[nref++].index = 1 + unit_rng_below(r, (uint64_t)g->n[p]);
	}
	if (!nref)
		return;

	/* after */
	ck_assert_int_eq(ana_cut_after(g->s, refs, (size_t)nref, &bp, NULL), 0);
	{
		uint64_t least[MAXP];
		int have = 0;

		for (size_t ci = 0; ci < g->ncuts; ci++) {
			uint64_t x[MAXP];
			int ok = 1;

			if (!g->consistent[ci])
				continue;
			cut_of(g, ci, x);
			for (int i = 0; i < nref; i++)
				ok &= x[refs[i].proc] >= refs[i].index;
			if (ok && (!have || cut_leq(x, least, g->np))) {
				memcpy(least, x, sizeof(x));
				have = 1;
			}
		}
		ck_assert(have);
		for (int p = 0; p < g->np; p++) {
			int core = (used >> p) & 1, infl = 0;

			ck_assert_uint_eq(bp.cut[p], least[p]);
			for (int i = 0; i < nref; i++)
				for (int k = 1; k <= g->n[p]; k++)
					infl |= g->hb[p][k][refs[i].proc][refs[i].index];
			ck_assert_int_eq(bp.role[p], core ? ANA_ROLE_CORE
			                                  : infl ? ANA_ROLE_INFLUENCE : ANA_ROLE_OTHER);
		}
	}
	ana_breakpoint_free(&bp);

	/* before */
	ck_assert_int_eq(ana_cut_before(g->s, refs, (size_t)nref, &bp, NULL), 0);
	{
		uint64_t great[MAXP];
		int have = 0, moved = 0;

		for (size_t ci = 0; ci < g->ncuts; ci++) {
			uint64_t x[MAXP];
			int ok = 1;

			if (!g->consistent[ci])
				continue;
			cut_of(g, ci, x);
			for (int i = 0; i < nref; i++)
				ok &= x[refs[i].proc] < refs[i].index;
			if (ok && (!have || cut_leq(great, x, g->np))) {
				memcpy(great, x, sizeof(x));
				have = 1;
			}
		}
		ck_assert(have); /* the bottom cut always qualifies */
		for (int p = 0; p < g->np; p++)
			ck_assert_uint_eq(bp.cut[p], great[p]);
		for (int i = 0; i < nref; i++)
			moved |= great[refs[i].proc] < refs[i].index - 1;
		ck_assert_int_eq(bp.moved, moved);
		/* the stop: core at the greatest cut, others at their last event that happened
		 * before (or is) a core position, else 0 */
		for (int p = 0; p < g->np; p++) {
			uint64_t want_p = 0;

			if ((used >> p) & 1) {
				want_p = great[p];
			} else {
				for (int i = 0; i < nref; i++) {
					int c = (int)refs[i].proc;

					for (int k = 1; k <= g->n[p]; k++)
						if (great[c] >= 1 && g->hb[p][k][c][great[c]] && (uint64_t)k > want_p)
							want_p = (uint64_t)k;
				}
			}
			ck_assert_uint_eq(bp.ariadne[p], want_p);
			ck_assert_uint_le(bp.ariadne[p], great[p]);
			/* roles follow Ariadne's stop: influence when something led to the core */
			if (!((used >> p) & 1))
				ck_assert_int_eq(bp.role[p], want_p ? ANA_ROLE_INFLUENCE : ANA_ROLE_OTHER);
		}
	}
	ana_breakpoint_free(&bp);
}

/* Races by definition, from the generator's own byte queues: for a receive r of q, the
 * message next in line on each other channel direction q reads; a race unless r happened
 * before its send. */
static void check_races(struct gen *g)
{
	struct ana_race *races;
	size_t n, found = 0;

	ck_assert_int_eq(ana_races(g->s, &races, &n), 0);
	for (int q = 0; q < g->np; q++) {
		int used[MAXCH][2] = {{0}}, consumed[MAXCH][2] = {{0}}, ndir = 0;

		for (int j = 1; j <= g->n[q]; j++)
			if (g->is_recv[q][j] && !used[g->rc[q][j]][g->rd[q][j]]++)
				ndir++;
		for (int j = 1; j <= g->n[q]; j++) {
			if (!g->is_recv[q][j])
				continue;
			for (int c = 0; c < g->nch && ndir >= 2; c++)
				for (int d = 0; d < 2; d++) {
					int b = consumed[c][d], sp, sk, hit = 0;

					if (!used[c][d] || (c == g->rc[q][j] && d == g->rd[q][j]) ||
					    b >= g->qt[c][d])
						continue;
					/* a connection q accepts does not exist for q before its accept */
					if (g->conn[c] && g->chb[c] == q && g->aevent[c] >= j)
						continue;
					sp = g->qp[c][d][b];
					sk = g->qk[c][d][b];
					if (g->hb[q][j][sp][sk])
						continue;
					for (size_t i = 0; i < n && !hit; i++)
						hit = races[i].proc == (size_t)q && races[i].recv == (uint64_t)j &&
						      races[i].rival_proc == (size_t)sp &&
						      races[i].rival_send == (uint64_t)sk &&
						      races[i].src_proc == (size_t)g->src_p[q][j] &&
						      races[i].src_send == (uint64_t)g->src_k[q][j];
					ck_assert_msg(hit, "race %d:%d with %d:%d not reported", q, j, sp, sk);
					found++;
				}
			consumed[g->rc[q][j]][g->rd[q][j]] += g->rm[q][j];
		}
	}
	ck_assert_uint_eq(n, found);
	if (getenv("ANA_DEBUG") && n)
		fprintf(stderr, "races: %zu\n", n);
	free(races);
}

/* ---------------------------------------------------------------------------------------
 * Predicate text, parsed by libtrace and evaluated by the analyzer, against the twin's own
 * evaluation of the same terms on each state.
 */
static const char *const term_names[] = {"events", "sent", "received", "mark.x", "bytes_sent",
                                         "last(send)"};
static const char *const op_names[] = {">=", "==", "<"};

struct textsp {
	int proc, term, op, val;
};

static int64_t term_at(const struct gen *g, int p, int term, uint64_t k)
{
	int64_t v = 0;

	if (term == 0)
		return (int64_t)k;
	if (term == 5)
		return k && g->kind[p][k] == 1;
	for (uint64_t i = 1; i <= k; i++) {
		int kd = g->kind[p][i];

		if (term == 1 && kd == 1)
			v++;
		else if (term == 2 && kd == 2)
			v++;
		else if (term == 3 && kd == 3)
			v = g->val[p][i];
		else if (term == 4 && kd == 1)
			v += g->val[p][i];
	}
	return v;
}

static int textsp_holds(const struct gen *g, const struct textsp *t, uint64_t k)
{
	int64_t v = term_at(g, t->proc, t->term, k);

	if (t->term == 5)
		return (int)v;
	return t->op == 0 ? v >= t->val : t->op == 1 ? v == t->val : v < t->val;
}

static int textsp_format(const struct textsp *t, char *buf, size_t cap)
{
	if (t->term == 5)
		return snprintf(buf, cap, "p%d: %s", t->proc, term_names[t->term]);
	return snprintf(buf, cap, "p%d: %s %s %d", t->proc, term_names[t->term], op_names[t->op],
	                t->val);
}

static void check_text(struct gen *g, struct unit_rng *r)
{
	struct textsp sps[2];
	int nsp = 1 + (int)unit_rng_below(r, 2), disj = (int)unit_rng_below(r, 2);
	struct dpdesc dp;
	char text[256], *t = text;
	struct trace_pred *pred;
	struct trace_diag d;
	struct ana_cuts out;
	uint64_t twin[64 * MAXP];
	size_t nt;

	memset(&dp, 0, sizeof(dp));
	for (int i = 0; i < nsp; i++) {
		sps[i].proc = (int)unit_rng_below(r, (uint64_t)g->np);
		if (i == 1 && !disj && sps[1].proc == sps[0].proc)
			sps[1].proc = (sps[0].proc + 1) % g->np; /* one SP per process in a CP */
		sps[i].term = (int)unit_rng_below(r, 6);
		sps[i].op = (int)unit_rng_below(r, 3);
		sps[i].val = (int)unit_rng_below(r, 4);
		if (i)
			t += snprintf(t, sizeof(text) - (size_t)(t - text), disj ? " || " : " && ");
		t += textsp_format(&sps[i], t, sizeof(text) - (size_t)(t - text));
	}
	/* the twin's truth as bitsets, shaped as the text */
	dp.ncp = disj ? nsp : 1;
	for (int i = 0; i < nsp; i++) {
		struct cpdesc *cp = &dp.cp[disj ? i : 0];
		int k = cp->nsp++;

		cp->proc[k] = sps[i].proc;
		cp->bits[k] = 0;
		for (uint64_t st = 0; st <= (uint64_t)g->n[sps[i].proc]; st++)
			if (textsp_holds(g, &sps[i], st))
				cp->bits[k] |= 1ull << st;
	}
	ck_assert_msg(trace_pred_parse(text, &pred, &d) == 0, "%s: %s", text, d.msg);
	ck_assert_msg(ana_inf(g->s, pred, &out, &d) == 0, "%s: %s", text, d.msg);
	nt = brute_minimal(g, ok_dp, &dp, twin, 64);
	assert_same_cuts(g, &out, twin, nt, text);
	ana_cuts_free(&out);
	trace_pred_free(pred);
}

START_TEST(random_against_twin)
{
	struct unit_rng r;
	uint64_t seed = unit_seed() + (uint64_t)_i * 7919u;

	int waits = 0, sigs = 0, chlds = 0;

	unit_rng_seed(&r, seed);
	for (int iter = 0; iter < 500; iter++) {
		struct gen *g = malloc(sizeof(*g));
		int np = 2 + (int)unit_rng_below(&r, 3);
		int total = 3 + (int)unit_rng_below(&r, np == 4 ? 11 : 14);

		ck_assert_ptr_nonnull(g);
		gen_build(g, &r, np, total);
		for (int p = 0; p < np; p++)
			for (int k = 1; k <= g->n[p]; k++)
				waits += g->is_wait[p][k], sigs += g->is_sig[p][k],
				chlds += g->is_chld[p][k];
		check_hb_and_consistency(g);
		check_vclocks(g);
		check_races(g);
		for (int k = 0; k < 4; k++) {
			check_cp_dp(g, &r);
			check_general(g, &r);
			check_lp(g, &r);
			check_ariadne(g, &r);
			check_text(g, &r);
		}
		gen_free(g);
		free(g);
	}
	/* the executions hold children reaped by their parents (the wait edge is exercised) */
	ck_assert_msg(waits >= 10, "seed %llu: only %d waits in 500 executions",
	              (unsigned long long)seed, waits);
	/* and handler runs of signals sent by recorded processes (the signal edge) */
	ck_assert_msg(sigs >= 10, "seed %llu: only %d handler runs in 500 executions",
	              (unsigned long long)seed, sigs);
	/* and SIGCHLD handler runs for children that ended (the wait edge into a handler) */
	ck_assert_msg(chlds >= 10, "seed %llu: only %d SIGCHLD runs in 500 executions",
	              (unsigned long long)seed, chlds);
}
END_TEST

/* An event's own process: the bounds say what a bad reference is. */
START_TEST(cut_bad_refs)
{
	struct ana_session *s;
	struct ana_ref ref = {0, 5};
	struct ana_breakpoint bp;
	struct trace_diag d;

	ck_assert_int_eq(ana_new(&s), 0);
	ck_assert_int_eq(ana_add_process(s, "a", NULL, 0), 0);
	ck_assert_int_gt(ana_add_simple(s, 0, TRACE_EV_CLOCK, 0), 0);
	ck_assert_int_eq(ana_finish(s, NULL), 0);
	ck_assert_int_eq(ana_cut_after(s, &ref, 1, &bp, &d), TRACE_ENOENT);
	ck_assert_ptr_nonnull(strstr(d.msg, "numbered 1..1"));
	ref.index = 0;
	ck_assert_int_eq(ana_cut_before(s, &ref, 1, &bp, &d), TRACE_ENOENT);
	ref.proc = 3;
	ref.index = 1;
	ck_assert_int_eq(ana_cut_before(s, &ref, 1, &bp, &d), TRACE_ENOENT);
	ana_free(s);
}
END_TEST

/* Stop before two events where one happened before the other's predecessor: the request
 * cannot be met and moves back, saying so. */
START_TEST(cut_before_moves)
{
	struct ana_session *s;
	struct ana_ref refs[2] = {{0, 1}, {1, 2}};
	struct ana_breakpoint bp;
	int ch;

	ck_assert_int_eq(ana_new(&s), 0);
	ck_assert_int_eq(ana_add_process(s, "a", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(s, "b", NULL, 0), 1);
	ch = ana_add_channel(s, 0, 1);
	ck_assert_int_eq(ana_add_send(s, 0, ch, 1), 1);  /* a1 */
	ck_assert_int_eq(ana_add_recv(s, 1, ch, 1), 1);  /* b1 depends on a1 */
	ck_assert_int_eq(ana_add_simple(s, 1, TRACE_EV_CLOCK, 0), 2);
	ck_assert_int_eq(ana_finish(s, NULL), 0);
	/* before a1 and before b2: b would stop at 1, but b1 needs a1 */
	ck_assert_int_eq(ana_cut_before(s, refs, 2, &bp, NULL), 0);
	ck_assert_int_eq(bp.moved, 1);
	ck_assert_uint_eq(bp.moved_proc, 1);
	ck_assert_uint_eq(bp.moved_from, 1);
	ck_assert_uint_eq(bp.cut[0], 0);
	ck_assert_uint_eq(bp.cut[1], 0);
	ck_assert_uint_eq(bp.ariadne[0], 0);
	ck_assert_uint_eq(bp.ariadne[1], 0);
	ana_breakpoint_free(&bp);
	/* before b2 alone: a is influence (a1 -> b1), stops after a1 */
	ck_assert_int_eq(ana_cut_before(s, &refs[1], 1, &bp, NULL), 0);
	ck_assert_int_eq(bp.moved, 0);
	ck_assert_uint_eq(bp.cut[0], 1);
	ck_assert_uint_eq(bp.cut[1], 1);
	ck_assert_uint_eq(bp.ariadne[0], 1);
	ck_assert_uint_eq(bp.ariadne[1], 1);
	ck_assert_int_eq(bp.role[0], ANA_ROLE_INFLUENCE);
	ck_assert_int_eq(bp.role[1], ANA_ROLE_CORE);
	ana_breakpoint_free(&bp);
	/* before a1 alone: b cannot have received it, so the greatest cut stops b before b1;
	 * Ariadne's stop keeps nobody but a (b is in the other set) */
	ck_assert_int_eq(ana_cut_before(s, &refs[0], 1, &bp, NULL), 0);
	ck_assert_int_eq(bp.moved, 0);
	ck_assert_uint_eq(bp.cut[0], 0);
	ck_assert_uint_eq(bp.cut[1], 0);
	ck_assert_int_eq(bp.role[0], ANA_ROLE_CORE);
	ck_assert_int_eq(bp.role[1], ANA_ROLE_OTHER);
	ana_breakpoint_free(&bp);
	ana_free(s);
}
END_TEST

/* A general predicate searched with a bound too small says so. */
START_TEST(general_bound_hit)
{
	struct ana_session *s;
	uint64_t b[4] = {2, 2, 2, 2};
	struct ana_sp sps[4] = {{0, &b[0]}, {0, &b[1]}, {0, &b[2]}, {0, &b[3]}};
	struct genpred gp = {.form = 0};
	struct ana_cuts out;

	ck_assert_int_eq(ana_new(&s), 0);
	ck_assert_int_eq(ana_add_process(s, "a", NULL, 0), 0);
	ck_assert_int_gt(ana_add_simple(s, 0, TRACE_EV_CLOCK, 0), 0);
	ck_assert_int_eq(ana_finish(s, NULL), 0);
	/* (t0 || t1) && (t2 || t3): no single SP makes it true, so 4 sets are examined first */
	ck_assert_int_eq(ana_inf_general(s, sps, 4, general_eval, &gp, 3, &out), 0);
	ck_assert_int_eq(out.bound_hit, 1);
	ck_assert_uint_eq(out.ncuts, 0);
	ana_cuts_free(&out);
	ck_assert_int_eq(ana_inf_general(s, sps, 4, general_eval, &gp, 0, &out), 0);
	ck_assert_int_eq(out.bound_hit, 0);
	ck_assert_uint_eq(out.ncuts, 1);
	ck_assert_uint_eq(out.cuts[0], 1);
	ana_cuts_free(&out);
	ana_free(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ana_inf");
	TCase *tc = tcase_create("inf");

	tcase_add_test(tc, mi_fig2_cp);
	tcase_add_test(tc, mi_thm1_dp);
	tcase_add_test(tc, cp_true_at_start);
	tcase_add_test(tc, cp_predicate_process_pulled_past_send);
	tcase_add_test(tc, cut_bad_refs);
	tcase_add_test(tc, cut_before_moves);
	tcase_add_test(tc, general_bound_hit);
	tcase_add_loop_test(tc, random_against_twin, 0, 6);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(suite)
