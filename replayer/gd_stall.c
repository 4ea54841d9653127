/*
 * gd_stall.c: stall detection and its report.  Every LC bumps its slot of the status board
 * on each event and each batch of bytes moved (proto.h); a board whose sum stays the same
 * for stall_ms is a replay that makes no progress, and the report says, per process, who
 * waits for what: the next event, the sender of an awaited receive and how far it is, the
 * client of an awaited accept, the child of a wait(), the data behind a readiness result.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gd_internal.h"

uint64_t rep__board_sum(struct rep *r)
{
	uint64_t s = 0;

	for (size_t i = 0; i < r->nprocs && r->board; i++)
		s += r->board[i].index + r->board[i].progress;
	return s;
}

static const char *kind_name(uint32_t k)
{
	return trace_kind_name(k);
}

void rep__describe_event(struct rep *r, struct gd_proc *p, uint64_t k, char *buf, size_t cap)
{
	struct ana_event ev;
	const char *fn;

	if (k == 0 || k > p->nevents || p->ana < 0 || ana_event_get(r->ana, (size_t)p->ana, k, &ev)) {
		snprintf(buf, cap, "-");
		return;
	}
	fn = ana_site_function(r->ana, (size_t)p->ana, ev.site);
	if (ev.kind == TRACE_EV_SEND || ev.kind == TRACE_EV_RECV)
		snprintf(buf, cap, "#%llu %s %lld bytes, channel %u%s%s",
		         (unsigned long long)k, kind_name(ev.kind), (long long)ev.result, ev.channel,
		         fn[0] ? " in " : "", fn);
	else if (ev.kind == TRACE_EV_MARK)
		snprintf(buf, cap, "#%llu mark = %lld%s%s", (unsigned long long)k,
		         (long long)ev.result, fn[0] ? " in " : "", fn);
	else
		snprintf(buf, cap, "#%llu %s%s%s", (unsigned long long)k, kind_name(ev.kind),
		         fn[0] ? " in " : "", fn);
}

/* A waited receive: who sends it and how far that sender is. */
static void from_recv(struct rep *r, struct gd_proc *p, uint64_t idx, char *from, size_t cap)
{
	struct ana_event ev;
	const char *src;
	struct gd_proc *q;
	uint64_t qi;

	if (p->ana < 0 || ana_event_get(r->ana, (size_t)p->ana, idx + 1, &ev) != 0 ||
	    ev.src_proc == ANA_NO_PROC)
		return;
	src = ana_proc_name(r->ana, ev.src_proc);
	q = rep__by_name(r, src);
	qi = q && q->started ? r->board[q - r->procs].index : 0;
	snprintf(from, cap, ", from %s (its send, event #%llu; it is at "
	         "state %llu%s)", src, (unsigned long long)ev.src_index,
	         (unsigned long long)qi, q && q->halted ? ", halted" : "");
}

/* A waited accept: the recorded client and how far it is. */
static void from_accept(struct rep *r, struct gd_proc *p, uint64_t idx, char *from, size_t cap)
{
	struct gd_proc *c = rep__expected_client(r, p, idx + 1);
	struct ana_event ev;

	if (c && p->ana >= 0 && ana_event_get(r->ana, (size_t)p->ana, idx + 1, &ev) == 0 &&
	    ev.src_proc != ANA_NO_PROC)
		snprintf(from, cap, ", for the connect of %s (its event #%llu; it is "
		         "at state %llu%s)", c->name, (unsigned long long)ev.src_index,
		         (unsigned long long)rep__cur_index(r, c), c->halted ? ", halted" : "");
	else if (c)
		snprintf(from, cap, ", for a connection from %s", c->name);
}

/* A waited readiness result: the data behind it, the next receive on that channel. */
static void from_ready(struct rep *r, struct gd_proc *p, const struct rep_slot *s,
                       uint64_t idx, char *from, size_t cap)
{
	struct ana_event ev;
	uint64_t k = rep__find_event(r, p, idx + 2, p->nevents, s->wait_chan, TRACE_EV_RECV,
	                             &ev);
	const char *src = k && ev.src_proc != ANA_NO_PROC ?
	                  ana_proc_name(r->ana, ev.src_proc) : NULL;
	struct gd_proc *q = src ? rep__by_name(r, src) : NULL;

	if (q)
		snprintf(from, cap, ", for the data behind it on fd %d (channel %u), "
		         "from %s (its send, event #%llu; it is at state %llu%s)", s->wait_fd,
		         s->wait_chan, src, (unsigned long long)ev.src_index,
		         (unsigned long long)(q->started ? r->board[q - r->procs].index : 0),
		         q->halted ? ", halted" : "");
	else
		snprintf(from, cap, ", for the data behind it on fd %d (channel %u)",
		         s->wait_fd, s->wait_chan);
}

/* A process in wait()/waitpid(), outside any event: for which child. */
static int wait_line(struct rep *r, struct gd_proc *p, const struct rep_slot *s, uint64_t idx,
                     char *out, size_t cap)
{
	struct gd_proc *c = NULL;
	char from[200] = "";

	for (size_t k = 0; k < r->nprocs && (int64_t)s->wait_len > 0; k++)
		if (r->procs[k].rec_pid == (long)(int64_t)s->wait_len)
			c = &r->procs[k];
	if (c)
		snprintf(from, sizeof(from), "%s (at state %llu%s)", c->name,
		         (unsigned long long)rep__cur_index(r, c), c->halted ? ", halted" : "");
	return snprintf(out, cap, "  %s (pid %ld) at state %llu of %llu: waiting in wait() for "
	                "%s to end\n", p->name, p->pid, (unsigned long long)idx,
	                (unsigned long long)p->nevents, c ? from : "a child");
}

/* The report's line for process i: what it does, and for what it waits. */
static int stall_line(struct rep *r, size_t i, char *out, size_t cap)
{
	struct gd_proc *p = &r->procs[i];
	struct rep_slot *s = r->board ? &r->board[i] : NULL;
	char next[160], from[400] = "";
	uint64_t idx = s ? s->index : p->index;
	int waiting = s && s->state == REP_SLOT_WAITING;

	if (!p->started)
		return snprintf(out, cap, "  %s: not started (its parent has not forked it)\n",
		                p->name);
	if (p->done || p->gone)
		return snprintf(out, cap, "  %s: ended at state %llu\n", p->name,
		                (unsigned long long)idx);
	if (waiting && s->wait_kind == TRACE_EV_SIGNAL)
		return snprintf(out, cap, "  %s (pid %ld) at state %llu of %llu: waiting for a signal "
		                "(sigwait, sigsuspend or pause)\n", p->name, p->pid,
		                (unsigned long long)idx, (unsigned long long)p->nevents);
	if (waiting && s->wait_kind == TRACE_EV_EXIT)
		return wait_line(r, p, s, idx, out, cap);
	rep__describe_event(r, p, idx + 1, next, sizeof(next));
	if (waiting && s->wait_kind == TRACE_EV_THREAD) /* lc_sync.c: the turn never comes */
		return snprintf(out, cap, "  %s (pid %ld) at state %llu of %llu: %llu of its threads "
		                "wait for their turns; the next event, %s, is thread %d's, which "
		                "does not reach it (it runs outside interposed calls, or waits in "
		                "one that is no event: a data race or a lock encore does not see)\n",
		                p->name, p->pid, (unsigned long long)idx,
		                (unsigned long long)p->nevents, (unsigned long long)s->wait_len, next,
		                s->wait_fd);
	if (waiting && s->wait_kind == TRACE_EV_SYNC) /* lc_sync.c, sem_acquire */
		return snprintf(out, cap, "  %s (pid %ld) at state %llu of %llu: %s at its turn "
		                "blocks: the semaphore is taken, though every post recorded before "
		                "it was made (the thread waits on another semaphore than recorded "
		                "object %llu: a path decided by addresses, such as a Python set of "
		                "threads joined in its order, README.md Limits)\n", p->name,
		                p->pid, (unsigned long long)idx, (unsigned long long)p->nevents,
		                next, (unsigned long long)s->wait_len);
	if (waiting && s->wait_kind == TRACE_EV_RECV)
		from_recv(r, p, idx, from, sizeof(from));
	if (waiting && s->wait_kind == TRACE_EV_RECV && s->dgram_other) {
		size_t l = strlen(from);

		snprintf(from + l, sizeof(from) - l, "; %u datagram%s matching no recorded one arrived "
		         "instead (the last of %u bytes): lost when recorded, or its sender's replay "
		         "sent other bytes (a random id?)", s->dgram_other,
		         s->dgram_other == 1 ? "" : "s", s->dgram_other_len);
	}
	if (waiting && s->wait_kind == TRACE_EV_ACCEPT)
		from_accept(r, p, idx, from, sizeof(from));
	if (waiting && s->wait_kind == TRACE_EV_READY)
		from_ready(r, p, s, idx, from, sizeof(from));
	return snprintf(out, cap, "  %s (pid %ld) at state %llu of %llu: %s %s%s\n", p->name,
	                p->pid, (unsigned long long)idx, (unsigned long long)p->nevents,
	                waiting ? "waiting to complete" :
	                s && s->state == REP_SLOT_HALTED ? "halted before" : "running, next",
	                next, from);
}

/* Who waits for what, from the board and the analyzer (the sender of an awaited receive). */
void rep__stall_report(struct rep *r)
{
	size_t pos;

	pos = (size_t)snprintf(r->message, sizeof(r->message),
	                       "no progress for %u ms; the replay is stuck:\n", r->opt.stall_ms);
	for (size_t i = 0; i < r->nprocs && pos < sizeof(r->message) - 256; i++)
		pos += (size_t)stall_line(r, i, r->message + pos, sizeof(r->message) - pos);
	/* connections a process accepted for another's accept, which nobody took yet (gd_msg.c,
	 * REP_MSG_HOLD): an accept that waits for one of them says why it was not given */
	if (r->nheld && pos < sizeof(r->message) - 256) {
		pos += (size_t)snprintf(r->message + pos, sizeof(r->message) - pos,
		                        "  held for accepts to come: %zu connection%s, from", r->nheld,
		                        r->nheld == 1 ? "" : "s");
		for (size_t h = 0; h < r->nheld && pos < sizeof(r->message) - 32; h++)
			pos += (size_t)snprintf(r->message + pos, sizeof(r->message) - pos,
			                        r->held[h].port ? " port %ld" : " pid %ld",
			                        r->held[h].port ? (long)r->held[h].port : r->held[h].pid);
		if (pos < sizeof(r->message) - 2)
			pos += (size_t)snprintf(r->message + pos, sizeof(r->message) - pos, "\n");
	}
}
