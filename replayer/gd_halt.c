/*
 * gd_halt.c: the halting protocol of the global debugger.  Offline, every LC halts at the
 * target of a cut precomputed by the analyzer (Inf(P), `--cut`), and single steps move to
 * the least consistent cut one event further (Manabe & Imase section 5.1).  Online (Manabe &
 * Imase section 3.2 and Appendix B), the processes a conjunctive predicate names run until
 * their simple predicate holds and the others only as far as the sends they ask for (REQ,
 * pulled here through the analyzer's edges); a disjunctive predicate halts with halt markers
 * (Miller & Choi section 2.2); a linked predicate goes step by step (Miller & Choi 3.4, 3.6).
 * Readiness waits that no running process can satisfy at a halt are released here too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gd_internal.h"

/* --- the online protocol (Manabe & Imase 3.2, Appendix B; Miller & Choi 2.2) ----------------- */

uint64_t rep__cur_index(struct rep *r, struct gd_proc *p)
{
	if (p->halted || p->done || !r->board)
		return p->index;
	return r->board[p - r->procs].index;
}

/* The floor a process starts with: an active one 0 (it runs until its predicate holds), a
 * passive one what has been asked of it so far (0: it halts at once); with markers, a
 * process without a predicate never halts on its own. */
uint64_t rep__start_floor(struct rep *r, struct gd_proc *p)
{
	if (r->mode == GD_MARKERS)
		return p->sp_text[0] ? 0 : REP_NO_TARGET;
	return p->need;
}

/* A process not started that will not start while things stay as they are: its parent is
 * halted or ended before forking it, or will not start either (a grandchild). */
static int never_starts(struct rep *r, struct gd_proc *p, size_t depth)
{
	struct gd_proc *par;

	if (p->started || depth > r->nprocs)
		return 0;
	par = rep__by_name(r, p->parent);
	if (!par)
		return 1;
	if (!par->started)
		return never_starts(r, par, depth + 1);
	return (par->halted || par->done || par->gone) &&
	       (rep__cur_index(r, par) < p->fork_index || !p->fork_index);
}

/* Make q send its event j: a passive process is asked to run that far (a control message
 * "requesting message n", 3.2); one not forked yet needs its parent to reach the fork. */
static void pull(struct rep *r, struct gd_proc *q, uint64_t j)
{
	if (j > q->need)
		q->need = j;
	if (!q->started) {
		struct gd_proc *par = rep__by_name(r, q->parent);

		if (par)
			pull(r, par, q->fork_index);
		return;
	}
	if (q->halted && q->index < q->need && q->conn >= 0) {
		q->halted = 0;
		rep_proto_send(q->conn, REP_MSG_CONT, (int64_t)q->need, 0, 0, NULL);
	}
}

/* The sender of receive event k of p, from the analyzer's matching. */
static struct gd_proc *sender_of(struct rep *r, struct gd_proc *p, uint64_t k, uint64_t *j)
{
	struct ana_event ev;

	if (p->ana < 0 || ana_event_get(r->ana, (size_t)p->ana, k, &ev) != 0 ||
	    ev.src_proc == ANA_NO_PROC)
		return NULL;
	*j = ev.src_index;
	return rep__by_name(r, ana_proc_name(r->ana, ev.src_proc));
}

/* First event of p after `from` on channel ch of kind `kind`; 0 when none. */
uint64_t rep__find_event(struct rep *r, struct gd_proc *p, uint64_t from, uint64_t to,
                           uint32_t ch, uint32_t kind, struct ana_event *out)
{
	for (uint64_t i = from; i <= to && i <= p->nevents && p->ana >= 0; i++)
		if (ana_event_get(r->ana, (size_t)p->ana, i, out) == 0 && out->channel == ch &&
		    out->kind == kind)
			return i;
	return 0;
}

/* Connections are not messages, but an accept needs its client's connect and a connect its
 * server's listen: online, the peer is pulled that far like the sender of a message.  The
 * peer is found through the first bytes received on the channel (the analyzer's matching). */
static void pull_peer(struct rep *r, struct gd_proc *p, uint64_t k)
{
	struct ana_event ev, first, x;
	struct gd_proc *q;
	uint64_t i;

	if (p->ana < 0 || ana_event_get(r->ana, (size_t)p->ana, k, &ev) != 0 || !ev.channel)
		return;
	if (!(i = rep__find_event(r, p, k + 1, p->nevents, ev.channel, TRACE_EV_RECV, &first)) ||
	    first.src_proc == ANA_NO_PROC)
		return;
	q = rep__by_name(r, ana_proc_name(r->ana, first.src_proc));
	if (!q || q->ana < 0 || ana_event_get(r->ana, (size_t)q->ana, first.src_index, &x) != 0)
		return;
	if (ev.kind == TRACE_EV_ACCEPT) {
		i = rep__find_event(r, q, 1, first.src_index, x.channel, TRACE_EV_CONNECT, &ev);
		if (i && rep__cur_index(r, q) < i)
			pull(r, q, i);
	} else {
		i = rep__find_event(r, q, 1, first.src_index, x.channel, TRACE_EV_ACCEPT, &ev);
		if (i > 1 && rep__cur_index(r, q) < i - 1)
			pull(r, q, i - 1);
	}
}

void rep__on_request(struct rep *r, struct gd_proc *p, uint64_t k)
{
	struct ana_ref deps[16];
	struct ana_event ev;
	int64_t nd = 0;

	/* A connect needs its server to listen, and an accept the analyzer does not order after
	 * its connect its client to connect: found through the first bytes on the connection
	 * (pull_peer).  Everything else follows the analyzer's edges into the event: the send of a
	 * receive's last byte, the connect of an accept, the writers' releases before an end of
	 * file, the child's end (exit) before a wait that reaped it: the child is pulled to its
	 * exit as the writers are to their releases; the kill before the handler run it caused
	 * (the LC asks before a HANDLER event: replayer/lc_signals.c): the sender is pulled to
	 * its kill; none into a readiness result (an answer, nothing pulled). */
	if (p->ana >= 0 && ana_event_get(r->ana, (size_t)p->ana, k, &ev) == 0 &&
	    (ev.kind == TRACE_EV_CONNECT ||
	     (ev.kind == TRACE_EV_ACCEPT && ev.src_proc == ANA_NO_PROC))) {
		rep_proto_send(p->conn, REP_MSG_GO, 0, 0, 0, NULL);
		if (r->mode == GD_ONLINE)
			pull_peer(r, p, k);
		return;
	}
	if (p->ana >= 0 && (nd = ana_event_deps(r->ana, (size_t)p->ana, k, deps, 16)) < 0)
		nd = 0;
	if (nd > 16)
		nd = 16;
	if (r->mode == GD_MARKERS) {
		/* Halt markers: q halted before the event p's needs; the marker q sent when it
		 * halted is what p finds on the channel first: p halts. */
		p->req_q = NULL;
		for (int64_t i = 0; i < nd; i++) {
			struct gd_proc *q = rep__by_name(r, ana_proc_name(r->ana, deps[i].proc));

			if (!q || q == p || rep__cur_index(r, q) >= deps[i].index)
				continue;
			if (q->halted || q->done) {
				rep_proto_send(p->conn, REP_MSG_STOP, 0, 0, 0, NULL);
				return;
			}
			if (!p->req_q) {
				p->req_k = k;
				p->req_q = q;
				p->req_j = deps[i].index;
			}
		}
		rep_proto_send(p->conn, REP_MSG_GO, 0, 0, 0, NULL);
		return;
	}
	rep_proto_send(p->conn, REP_MSG_GO, 0, 0, 0, NULL);
	for (int64_t i = 0; i < nd; i++) {
		struct gd_proc *q = rep__by_name(r, ana_proc_name(r->ana, deps[i].proc));

		if (q && q != p && rep__cur_index(r, q) < deps[i].index)
			pull(r, q, deps[i].index);
	}
}

/* Markers: processes blocked reading what a now halted process will never send halt too. */
void rep__release_markers(struct rep *r, struct gd_proc *q)
{
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];

		if (p->req_q != q || p->halted || p->done || p->conn < 0)
			continue;
		if (rep__cur_index(r, p) >= p->req_k || rep__cur_index(r, q) >= p->req_j)
			continue; /* that receive is done, or its send was */
		p->req_q = NULL;
		rep_proto_send(p->conn, REP_MSG_STOP, 0, 0, 0, NULL);
	}
}

void rep__on_halted(struct rep *r, struct gd_proc *p)
{
	if (r->mode == GD_MARKERS) {
		if (p->reason == REP_HALT_SP && !r->fired)
			r->fired = p;
		rep__release_markers(r, p);
		return;
	}
	/* Online CP: a request may have come while it was running to its own halt. */
	if (p->index < p->need && p->conn >= 0) {
		p->halted = 0;
		rep_proto_send(p->conn, REP_MSG_CONT, (int64_t)p->need, 0, 0, NULL);
	}
}

/* --- readiness waits ------------------------------------------------------------------------- */

/* An LC gives a recorded readiness result only once the data behind it has arrived (it waits,
 * the board says wait_kind READY).  The analyzer's cuts do not order a readiness result after
 * the send behind it, so at a halt that data may never come: when some process is halted and
 * every other one is halted, ended, waiting for readiness itself, or waiting for bytes from
 * one of those, no running process is left to send it, and each waiting LC is released to
 * give its recorded result at once.  (Online, where the analyzer orders a readiness result
 * after a send, on_request pulls that sender when the LC asks before waiting.)
 * A connect waiting for its server to listen (wait_kind CONNECT) is released the same way:
 * nor do the cuts order a listen before a connect, so a cut may hold the server short of
 * its listen (haproxy's connect to its backend, whose process the cut holds at its start);
 * the LC then connects to a stand-in listener whose end the GD holds for the server's
 * accept (replayer/lc_chan.c, connect).
 * Without a halt nothing is released: a wait that lasts is a stall, reported as such. */
static int ready_waiting(struct rep *r, struct gd_proc *p)
{
	struct rep_slot *s = &r->board[p - r->procs];

	return p->started && !p->halted && !p->done && !p->gone && p->conn >= 0 &&
	       s->state == REP_SLOT_WAITING &&
	       (s->wait_kind == TRACE_EV_READY || s->wait_kind == TRACE_EV_CONNECT);
}

/* p cannot move by itself: halted, ended, never to be forked, waiting for readiness, or
 * waiting for bytes whose sender has not sent them and cannot move either. */
static int blocked(struct rep *r, struct gd_proc *p, size_t depth)
{
	struct rep_slot *s = &r->board[p - r->procs];

	if (p->execing || depth > r->nprocs)
		return 0;
	if (p->halted || p->done || p->gone)
		return 1;
	if (!p->started)
		return never_starts(r, p, 0);
	if (ready_waiting(r, p))
		return 1;
	if (p->conn >= 0 && s->state == REP_SLOT_WAITING && s->wait_kind == TRACE_EV_RECV) {
		uint64_t j = 0;
		struct gd_proc *q = sender_of(r, p, s->index + 1, &j);

		return q && q != p && rep__cur_index(r, q) < j && blocked(r, q, depth + 1);
	}
	return 0;
}

/* Online: a process waiting in wait() for a child (board: wait_kind EXIT, wait_len its
 * recorded pid, or none for any child) whose children the protocol left halted where they
 * were (passive): the child must end first, and no edge of the analyzer says so (the trace
 * holds no wait event), so each such child is pulled to its end. */
static void pull_waited(struct rep *r)
{
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];
		struct rep_slot *s = &r->board[i];
		int64_t want = (int64_t)s->wait_len;

		if (!p->started || p->halted || p->done || p->gone || p->conn < 0 ||
		    s->state != REP_SLOT_WAITING || s->wait_kind != TRACE_EV_EXIT)
			continue;
		for (size_t k = 0; k < r->nprocs; k++) {
			struct gd_proc *c = &r->procs[k];

			if (strcmp(c->parent, p->name) != 0 || (want > 0 && c->rec_pid != (long)want))
				continue;
			if (c->started && !c->done && !c->gone && c->need < c->nevents)
				pull(r, c, c->nevents);
		}
	}
}

void rep__release_ready(struct rep *r)
{
	size_t waiting = 0;
	int any_halted = 0;

	if (!r->board || r->npending)
		return;
	if (r->mode == GD_ONLINE)
		pull_waited(r);
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];

		if (!blocked(r, p, 0))
			return;
		any_halted |= p->halted;
		waiting += (size_t)ready_waiting(r, p);
	}
	if (!waiting || !any_halted)
		return;
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];
		uint64_t idx = r->board[i].index;

		if (!ready_waiting(r, p) || p->released == idx + 1)
			continue;
		p->released = idx + 1;
		rep_proto_send(p->conn, REP_MSG_RELEASE, (int64_t)idx, 0, 0, NULL);
	}
}

/* --- is the replay halted? ------------------------------------------------------------------- */

/* Every process halted at its target, ended, or (target 0) never forked by a parent that is
 * halted or ended. */
static int all_halted_online(struct rep *r)
{
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];

		if (p->execing)
			return 0;
		if (p->halted || p->done || p->gone)
			continue;
		if (never_starts(r, p, 0))
			continue;
		return 0;
	}
	return 1;
}

/* Online halt reached: did every active process halt because its predicate holds? */
int rep__online_outcome(struct rep *r)
{
	if (r->mode == GD_MARKERS) {
		if (r->fired)
			return REP_HALTED;
		snprintf(r->message, sizeof(r->message),
		         "the predicate never held: every process halted or ended, no disjunct fired");
		r->never = 1;
		return REP_FAILED;
	}
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];

		if (!p->sp_text[0])
			continue;
		if ((p->halted && p->reason == REP_HALT_SP) || (p->done && p->sp_at_end))
			continue;
		snprintf(r->message, sizeof(r->message),
		         "the predicate never holds: process %s %s before its simple predicate held "
		         "(%s)", p->name, p->done || p->gone ? "ended" : "stopped", p->sp_text);
		r->never = 1;
		return REP_FAILED;
	}
	return REP_HALTED;
}

int rep__all_halted(struct rep *r)
{
	int any = 0;

	if (r->mode != GD_OFFLINE)
		return all_halted_online(r);

	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];

		if (p->target == REP_NO_TARGET || p->execing)
			return 0;
		any = 1;
		if (p->halted || p->done || p->gone)
			continue;
		if (!p->started && p->target == 0) {
			/* Not forked yet: it never will be if its parent halts before the fork.  If the
			 * fork is inside the cut, wait for the child to reach its state 0. */
			struct gd_proc *par = rep__by_name(r, p->parent);

			/* (fork_index 0: started inside libc, by no event of the parent: it would
			 * come after the parent's state 0 anyway) */
			if (!par || par->target < p->fork_index ||
			    (!p->fork_index && (par->halted || par->done || par->gone)))
				continue;
		}
		return 0;
	}
	return any;
}

/* --- linked predicates online (Miller & Choi 3.4, 3.6) --------------------------------------- */

/* The first state of q that is after the trigger (t, j) (its event happened after event j
 * of t, or q == t and it comes later), as the analyzer's linked predicates take it: a state
 * 0 trigger is before everything.  q->nevents + 1 when none. */
static uint64_t after_trigger(struct rep *r, struct gd_proc *t, uint64_t j, struct gd_proc *q)
{
	uint64_t lo = 1, hi = q->nevents + 1;

	if (j == 0)
		return q == t ? 1 : 0;
	if (q == t)
		return j + 1;
	if (t->ana < 0 || q->ana < 0)
		return 0;
	while (lo < hi) { /* happened-before is monotone along q's events */
		uint64_t mid = lo + (hi - lo) / 2;

		if (ana_hb(r->ana, (size_t)t->ana, j, (size_t)q->ana, mid) == 1)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Every process halted where step lp_stage holds (its Inf from the previous step's cut, the
 * conjunctive protocol): the processes of that step are the triggers.  Miller & Choi 3.6
 * pass the rest of the chain on in a predicate marker; here the GD gives each process of
 * the next step its simple predicate and a floor (its first state after every trigger, or
 * where it is), the others become passive where they are, and the protocol goes on from this
 * cut.  Returns -1 (go on), or REP_FAILED when the next step can never hold after these. */
int rep__lp_advance(struct rep *r)
{
	size_t d = ++r->lp_stage;
	uint64_t *floor = calloc(r->nprocs ? r->nprocs : 1, sizeof(*floor));

	if (!floor) {
		snprintf(r->message, sizeof(r->message), "out of memory");
		return REP_FAILED;
	}
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *q = &r->procs[i];
		uint64_t lb = 0;

		if (!q->lp_sp[d])
			continue;
		for (size_t k = 0; k < r->nprocs; k++) {
			struct gd_proc *t = &r->procs[k];
			uint64_t f;

			if (!t->lp_sp[d - 1])
				continue;
			f = after_trigger(r, t, rep__cur_index(r, t), q);
			if (f > lb)
				lb = f;
		}
		if (lb > q->nevents) {
			snprintf(r->message, sizeof(r->message),
			         "the predicate never holds: step %zu of the linked predicate held, but "
			         "process %s has no state after it where step %zu (%s) could hold", d,
			         q->name, d + 1, q->lp_sp[d]);
			free(floor);
			return REP_FAILED;
		}
		floor[i] = q->started && rep__cur_index(r, q) > lb ? rep__cur_index(r, q) : lb;
	}
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];
		const char *sp = p->lp_sp[d] ? p->lp_sp[d] : "";
		int had = p->sp_text[0] != '\0';

		snprintf(p->sp_text, sizeof(p->sp_text), "%s", sp);
		p->sp_at_end = 0;
		if (sp[0]) {
			if (!p->started || p->done || p->gone) {
				pull(r, p, floor[i]); /* its parent forks it; CONFIG gives it the step */
				continue;
			}
			p->need = floor[i];
			if (p->halted && p->conn >= 0) {
				p->halted = 0;
				rep_proto_send(p->conn, REP_MSG_STAGE, (int64_t)floor[i], 0, 0, sp);
			}
		} else if (had && p->halted && p->conn >= 0) {
			/* passive from now on: it halts again at once, where it is */
			p->halted = 0;
			rep_proto_send(p->conn, REP_MSG_STAGE, (int64_t)p->index, 0, 0, "");
		}
	}
	free(floor);
	rep__note_change(r);
	return -1;
}

/* --- setting the halt up: online predicates, single steps, terms ----------------------------- */

/* The channels of process p whose other end is held by process `peer`, as "PEER:c1,c2,...",
 * appended to out.  From the analyzer's messages: a receive's sender holds the other end of
 * its channel, and so does the receiver of a send.  Returns 0, or -1 when p sends on a
 * channel whose other end no receive tells (then the live count could differ). */
static int peer_channels(struct rep *r, struct gd_proc *p, const char *peer, char *out,
                         size_t cap)
{
	size_t pos = strlen(out), n = ana_nprocs(r->ana);
	uint32_t chans[256];
	size_t nch = 0;
	int q = ana_proc_find(r->ana, peer);

	if (p->ana < 0 || q < 0)
		return 0;
	/* receives of p from q; and receives of q whose bytes p sent */
	for (size_t pi = 0; pi < n; pi++) {
		size_t ne = ana_nevents(r->ana, pi);

		if ((int)pi != p->ana && (int)pi != q)
			continue;
		for (uint64_t k = 1; k <= ne; k++) {
			struct ana_event ev, sv;
			uint32_t ch = 0;

			if (ana_event_get(r->ana, pi, k, &ev) != 0 || ev.kind != TRACE_EV_RECV ||
			    ev.src_proc == ANA_NO_PROC)
				continue;
			if ((int)pi == p->ana && (int)ev.src_proc == q)
				ch = ev.channel;
			else if ((int)pi == q && (int)ev.src_proc == p->ana &&
			         ana_event_get(r->ana, (size_t)p->ana, ev.src_index, &sv) == 0)
				ch = sv.channel;
			if (!ch)
				continue;
			size_t i;

			for (i = 0; i < nch && chans[i] != ch; i++)
				;
			if (i == nch && nch < sizeof(chans) / sizeof(chans[0]))
				chans[nch++] = ch;
		}
	}
	pos += (size_t)snprintf(out + pos, cap > pos ? cap - pos : 0, "%s%s:", pos ? ";" : "", peer);
	for (size_t i = 0; i < nch && pos < cap; i++)
		pos += (size_t)snprintf(out + pos, cap - pos, "%s%u", i ? "," : "", chans[i]);
	return pos < cap ? 0 : -1;
}

/* "PEER:" is already an entry of a peers list. */
static int has_peer(const char *list, const char *peer)
{
	size_t n = strlen(peer);

	for (const char *p = list; *p;) {
		if (strncmp(p, peer, n) == 0 && p[n] == ':')
			return 1;
		p = strchr(p, ';');
		if (!p)
			break;
		p++;
	}
	return 0;
}

/* One simple predicate of P, for the online protocol: its process learns the channels of
 * the peers its sent(P)/received(P) terms name, and takes it as its simple predicate (of
 * step `step` for a linked P; two disjuncts on one process are joined with `or`). */
static int add_sp(struct rep *r, enum trace_pred_shape shape, size_t step,
                  const struct trace_pred_sp *sp, struct trace_diag *d)
{
	const struct trace_pred_term *const *terms;
	struct gd_proc *p = rep__by_name(r, trace_pred_sp_proc(sp));
	size_t nt = trace_pred_sp_terms(sp, &terms);
	char one[1024], both[1024];
	size_t skip;
	int w;

	if (!p) {
		rep__diag_set(d, TRACE_ENOENT, NULL, "the predicate names process '%s', which is "
		              "not in this session", trace_pred_sp_proc(sp));
		return TRACE_ENOENT;
	}
	for (size_t t = 0; t < nt; t++)
		if ((terms[t]->kind == TRACE_TERM_SENT_TO ||
		     terms[t]->kind == TRACE_TERM_RECEIVED_FROM) &&
		    !has_peer(p->peers, terms[t]->arg) &&
		    peer_channels(r, p, terms[t]->arg, p->peers, sizeof(p->peers)) != 0) {
			rep__diag_set(d, TRACE_EINVAL, NULL, "process %s: too many channels to %s "
			              "for a live sent(P)/received(P)", p->name, terms[t]->arg);
			return TRACE_EINVAL;
		}
	if (r->lp_n) {
		trace_pred_sp_format(sp, one, sizeof(one));
		if (!(p->lp_sp[step] = strdup(one)))
			return TRACE_ENOMEM;
		p->lp_named = 1;
		if (step == 0)
			snprintf(p->sp_text, sizeof(p->sp_text), "%s", one);
		return 0;
	}
	if (!p->sp_text[0]) {
		trace_pred_sp_format(sp, p->sp_text, sizeof(p->sp_text));
		return 0;
	}
	/* two disjuncts on one process: its simple predicate is their `or` */
	trace_pred_sp_format(sp, one, sizeof(one));
	skip = strlen(p->name) + 1;
	while (one[skip] == ' ')
		skip++;
	w = snprintf(both, sizeof(both), "%s: (%s) or (%s)", p->name,
	             p->sp_text + strlen(p->name) + 2, one + skip);
	if (w < 0 || (size_t)w >= sizeof(both) || shape != TRACE_PRED_DISJUNCTIVE) {
		rep__diag_set(d, TRACE_EINVAL, NULL, "process %s: its simple predicates "
		              "cannot be combined for the online protocol", p->name);
		return TRACE_EINVAL;
	}
	snprintf(p->sp_text, sizeof(p->sp_text), "%s", both);
	return 0;
}

int rep_set_online(struct rep *r, const char *text, struct trace_diag *d)
{
	struct trace_pred *pred = NULL;
	enum trace_pred_shape shape;
	size_t ncp = 0, ndp;
	int rc;

	if ((rc = trace_pred_parse(text, &pred, d)) != 0)
		return rc;
	shape = trace_pred_shape(pred);
	if (shape == TRACE_PRED_GENERAL) {
		rep__diag_set(d, TRACE_EINVAL, NULL, "the online protocol halts at conjunctive predicates "
		              "(Manabe & Imase), disjunctive ones (halt markers, Miller & Choi 2.2) and "
		              "linked chains of conjunctive steps (Miller & Choi 3.6); this one mixes && "
		              "and || (a general predicate: finding its first state is NP-hard, Miller & "
		              "Choi 6): drop --online (and var. terms) and the analyzer searches for it");
		rc = TRACE_EINVAL;
		goto out;
	}
	ndp = shape == TRACE_PRED_LINKED ? trace_pred_ndp(pred) : 1;
	for (size_t s2 = 0; shape == TRACE_PRED_LINKED && s2 < ndp; s2++)
		if (trace_pred_ncp(pred, s2) != 1) {
			rep__diag_set(d, TRACE_EINVAL, NULL, "online, each step of a linked predicate "
			              "must be conjunctive (one simple predicate, or several joined by "
			              "&&); step %zu is a disjunction (||): drop --online (and var. "
			              "terms) and the analyzer computes it", s2 + 1);
			rc = TRACE_EINVAL;
			goto out;
		}
	if (shape == TRACE_PRED_LINKED)
		for (size_t i = 0; i < r->nprocs; i++)
			if (!(r->procs[i].lp_sp = calloc(ndp, sizeof(char *)))) {
				rc = TRACE_ENOMEM;
				goto out;
			}
	r->lp_n = shape == TRACE_PRED_LINKED ? ndp : 0;
	for (size_t step = 0; step < ndp; step++) {
		ncp = trace_pred_ncp(pred, step);
		for (size_t c = 0; c < ncp; c++)
			for (size_t k = 0; k < trace_pred_nsp(pred, step, c); k++)
				if ((rc = add_sp(r, shape, step, trace_pred_get_sp(pred, step, c, k), d)) != 0)
					goto out;
	}
	r->mode = shape == TRACE_PRED_DISJUNCTIVE && ncp > 1 ? GD_MARKERS : GD_ONLINE;
	for (size_t i = 0; i < r->nprocs; i++)
		r->procs[i].target = REP_NO_TARGET;
	/* An active process must exist: its ancestors run at least to the forks that make it. */
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].sp_text[0])
			pull(r, &r->procs[i], 0);
	rc = 0;
out:
	trace_pred_free(pred);
	return rc;
}

/* `encore debug`: the online protocol from the halt where the processes are now (Manabe &
 * Imase 3.2 as in rep_set_online, every floor raised to the current state).  The active
 * processes' LCs kept their counters from the start (rep_options.live_terms): each takes its
 * simple predicate (REP_MSG_MODE) and runs until it holds at or after its floor; the others
 * halt where they are until a receive pulls them.  strict: the active processes move on by
 * one event at least (the next state where P becomes true again, not the current one). */
int rep_online_here(struct rep *r, const char *text, int strict, struct trace_diag *d)
{
	const struct trace_pred_sp *const *sps;
	struct trace_pred *pred = NULL;
	enum trace_pred_shape shape;
	size_t n;
	int rc;

	if (!r->started || r->lp_n) {
		rep__diag_set(d, TRACE_EINVAL, NULL, "the online protocol starts from a halt");
		return TRACE_EINVAL;
	}
	if ((rc = trace_pred_parse(text, &pred, d)) != 0)
		return rc;
	shape = trace_pred_shape(pred);
	if (shape != TRACE_PRED_CONJUNCTIVE && shape != TRACE_PRED_DISJUNCTIVE) {
		rep__diag_set(d, TRACE_EINVAL, NULL, "from a halt, the online protocol (var. terms) "
		              "takes conjunctive predicates (simple predicates joined by &&) and "
		              "disjunctive ones (||); linked (->) and general predicates with var. "
		              "terms: `encore replay --stop` takes the linked ones");
		rc = TRACE_EINVAL;
		goto out;
	}
	n = trace_pred_all_sps(pred, &sps);
	for (size_t i = 0; i < n; i++) {
		const struct trace_pred_term *const *terms;
		size_t nt = trace_pred_sp_terms(sps[i], &terms);

		for (size_t t = 0; t < nt; t++)
			if (terms[t]->kind == TRACE_TERM_SENT_TO ||
			    terms[t]->kind == TRACE_TERM_RECEIVED_FROM) {
				rep__diag_set(d, TRACE_EINVAL, NULL, "sent(P) and received(P) are counted "
				              "live from the start only: with var. terms, `encore replay "
				              "--stop` takes them");
				rc = TRACE_EINVAL;
				goto out;
			}
	}
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];

		p->sp_text[0] = '\0';
		p->sp_at_end = 0;
		p->req_q = NULL;
		p->need = p->started && !p->done && !p->gone ? rep__cur_index(r, p) : 0;
	}
	r->fired = NULL;
	r->never = 0;
	for (size_t i = 0; i < n; i++)
		if ((rc = add_sp(r, shape, 0, sps[i], d)) != 0)
			goto out;
	r->mode = shape == TRACE_PRED_DISJUNCTIVE && trace_pred_ncp(pred, 0) > 1 ? GD_MARKERS :
	          GD_ONLINE;
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];
		uint64_t floor;

		p->target = REP_NO_TARGET;
		if (!p->halted || p->conn < 0)
			continue;
		if (p->sp_text[0])
			floor = p->index + (strict && p->index < p->nevents ? 1 : 0);
		else
			floor = r->mode == GD_MARKERS ? REP_NO_TARGET : p->index;
		if (r->mode == GD_ONLINE)
			p->need = floor;
		p->halted = 0;
		rep_proto_send(p->conn, REP_MSG_MODE, (int64_t)floor, 0, REP_CF_ONLINE, p->sp_text);
	}
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].sp_text[0] && !r->procs[i].started)
			pull(r, &r->procs[i], 0);
	rep__note_change(r);
	rc = 0;
out:
	trace_pred_free(pred);
	return rc;
}

int rep_never_held(const struct rep *r)
{
	return r->never;
}

/* Back to precomputed cuts after an online halt (`encore debug`): every halted LC drops its
 * predicate and takes its target, target[i] (REP_MSG_MODE, offline). */
void rep__offline_here(struct rep *r)
{
	r->mode = GD_OFFLINE;
	r->fired = NULL;
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];

		p->sp_text[0] = '\0';
		p->need = 0;
		p->req_q = NULL;
		if (p->halted && p->conn >= 0) {
			p->halted = 0;
			rep_proto_send(p->conn, REP_MSG_MODE, (int64_t)p->target, 0, 0, "");
		}
	}
}

int rep_step(struct rep *r, size_t i, struct trace_diag *d)
{
	size_t n = ana_nprocs(r->ana);
	uint64_t *cut;
	struct gd_proc *p;
	int rc;

	if (i >= r->nprocs)
		return TRACE_EINVAL;
	p = &r->procs[i];
	if (r->mode != GD_OFFLINE) {
		rep__diag_set(d, TRACE_EINVAL, NULL, "single steps follow precomputed cuts: step after "
		              "--stop without --online, or after --cut");
		return TRACE_EINVAL;
	}
	if (p->ana < 0 || !(cut = calloc(n ? n : 1, sizeof(*cut))))
		return TRACE_ENOMEM;
	for (size_t k = 0; k < r->nprocs; k++) {
		struct gd_proc *q = &r->procs[k];

		if (q->ana >= 0)
			cut[q->ana] = q->done || q->gone ? q->nevents : q->started ? rep__cur_index(r, q) : 0;
	}
	if (cut[p->ana] >= p->nevents || p->done || p->gone) {
		rep__diag_set(d, TRACE_EINVAL, NULL, "process %s is at the end of its trace: nothing to "
		              "step", p->name);
		free(cut);
		return TRACE_EINVAL;
	}
	/* Section 5.1: one more event of p, and whatever that event needs (the sends of the
	 * receives it now includes): the least consistent cut above. */
	cut[p->ana]++;
	if ((rc = ana_close_down(r->ana, cut)) != 0) {
		free(cut);
		return rc;
	}
	for (size_t k = 0; k < r->nprocs; k++) {
		struct gd_proc *q = &r->procs[k];

		if (q->ana < 0)
			continue;
		q->target = cut[q->ana];
		if (q->halted && q->conn >= 0 && q->target != q->index) {
			q->halted = 0;
			rep_proto_send(q->conn, REP_MSG_CONT, (int64_t)q->target, 0, 0, NULL);
		}
	}
	free(cut);
	rep__note_change(r);
	return 0;
}

int rep_set_terms(struct rep *r, const char *text, struct trace_diag *d)
{
	const struct trace_pred_sp *const *sps;
	struct trace_pred *pred = NULL;
	size_t n;
	int rc;

	if ((rc = trace_pred_parse(text, &pred, d)) != 0)
		return rc;
	n = trace_pred_all_sps(pred, &sps);
	for (size_t i = 0; i < n; i++) {
		struct gd_proc *p = rep__by_name(r, trace_pred_sp_proc(sps[i]));

		if (p && !p->sp_text[0]) {
			const struct trace_pred_term *const *terms;
			size_t nt = trace_pred_sp_terms(sps[i], &terms);

			trace_pred_sp_format(sps[i], p->sp_text, sizeof(p->sp_text));
			for (size_t t = 0; t < nt; t++)
				if ((terms[t]->kind == TRACE_TERM_SENT_TO ||
				     terms[t]->kind == TRACE_TERM_RECEIVED_FROM) &&
				    !has_peer(p->peers, terms[t]->arg))
					peer_channels(r, p, terms[t]->arg, p->peers, sizeof(p->peers));
		}
	}
	trace_pred_free(pred);
	return 0;
}

const char *rep_fired(const struct rep *r)
{
	return r->fired ? r->fired->name : NULL;
}

int rep_continue(struct rep *r)
{
	r->mode = GD_OFFLINE;
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];

		p->target = REP_NO_TARGET;
		p->sp_text[0] = '\0';
		if (p->halted && p->conn >= 0) {
			p->halted = 0;
			rep_proto_send(p->conn, REP_MSG_CONT, (int64_t)REP_NO_TARGET, 0, 0, NULL);
		}
	}
	rep__note_change(r);
	return 0;
}
