/*
 * test_ana_model.c: the analyzer's model from recorded events: channel matching from what
 * both ends logged (pipe events, inodes, TCP 4-tuples, Unix paths and peer pids, fork
 * inheritance), the last-byte rule for messages, loading real trace files through libtrace,
 * predicates evaluated on recorded states, and message races.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "unit.h"

#include "ana.h"

/* ---------------------------------------------------------------------------------------
 * Building raw events as the trace reader returns them
 */
struct raw {
	struct ana_session *s;
	uint64_t off_out[8][64], off_in[8][64]; /* per process and channel id: derived offsets */
};

static int64_t raw_event(struct raw *r, int p, uint32_t kind, uint32_t chan, int64_t result,
                         const struct trace_endpoint *ep, int64_t aux0, int64_t aux1,
                         uint32_t flags)
{
	struct trace_event ev;
	uint8_t buf[TRACE_ENDPOINT_MAX];
	int n;

	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.fd = -1;
	ev.channel = chan;
	ev.result = result;
	ev.flags = flags;
	if (ep) {
		n = trace_endpoint_encode(ep, buf, sizeof(buf));
		ck_assert_int_gt(n, 0);
		ev.data = buf;
		ev.data_len = (uint32_t)n;
	}
	if (aux0 || aux1) {
		ev.naux = 2;
		ev.aux[0] = aux0;
		ev.aux[1] = aux1;
	}
	if (kind == TRACE_EV_SEND) {
		ev.offset = r->off_out[p][chan];
		r->off_out[p][chan] += result > 0 ? (uint64_t)result : 0;
	} else if (kind == TRACE_EV_RECV) {
		ev.offset = r->off_in[p][chan];
		if (!(flags & TRACE_FL_PEEK))
			r->off_in[p][chan] += result > 0 ? (uint64_t)result : 0;
	}
	return ana_add_trace_event(r->s, p, &ev);
}

static void tcp_ep(struct trace_endpoint *ep, uint16_t lport, uint16_t pport, uint32_t paddr)
{
	struct sockaddr_in l = {0}, pr = {0};

	memset(ep, 0, sizeof(*ep));
	ep->type = TRACE_CHAN_TCP;
	l.sin_family = AF_INET;
	l.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l.sin_port = htons(lport);
	pr.sin_family = AF_INET;
	pr.sin_addr.s_addr = htonl(paddr);
	pr.sin_port = htons(pport);
	memcpy(ep->local, &l, sizeof(l));
	ep->local_len = sizeof(l);
	memcpy(ep->peer, &pr, sizeof(pr));
	ep->peer_len = sizeof(pr);
}

static void src_is(struct ana_session *s, int p, uint64_t k, uint32_t sp, uint64_t sk)
{
	struct ana_event ev;

	ck_assert_int_eq(ana_event_get(s, (size_t)p, k, &ev), 0);
	ck_assert_uint_eq(ev.src_proc, sp);
	if (sp != ANA_NO_PROC)
		ck_assert_uint_eq(ev.src_index, sk);
}

/* TCP: client (local 5000 -> peer 80) and server (local 80 -> peer 5000) on one host. */
START_TEST(match_tcp_and_last_byte)
{
	struct raw r = {0};
	struct trace_endpoint ep;
	struct ana_stats st;

	ck_assert_int_eq(ana_new(&r.s), 0);
	ck_assert_int_eq(ana_add_process(r.s, "client", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(r.s, "server", NULL, 0), 1);
	tcp_ep(&ep, 5000, 80, INADDR_LOOPBACK);
	ck_assert_int_eq(raw_event(&r, 0, TRACE_EV_CONNECT, 3, 0, &ep, 0, 0, 0), 1);
	ck_assert_int_eq(raw_event(&r, 0, TRACE_EV_SEND, 3, 4, NULL, 0, 0, 0), 2);   /* [0,4) */
	ck_assert_int_eq(raw_event(&r, 0, TRACE_EV_SEND, 3, 4, NULL, 0, 0, 0), 3);   /* [4,8) */
	tcp_ep(&ep, 80, 5000, INADDR_LOOPBACK);
	ck_assert_int_eq(raw_event(&r, 1, TRACE_EV_ACCEPT, 7, 0, &ep, 0, 0, 0), 1);
	/* peek the first 2 bytes, then read 3 (in the first send), then 5 (ends in the second) */
	ck_assert_int_eq(raw_event(&r, 1, TRACE_EV_RECV, 7, 2, NULL, 0, 0, TRACE_FL_PEEK), 2);
	ck_assert_int_eq(raw_event(&r, 1, TRACE_EV_RECV, 7, 3, NULL, 0, 0, 0), 3);
	ck_assert_int_eq(raw_event(&r, 1, TRACE_EV_RECV, 7, 5, NULL, 0, 0, 0), 4);
	ck_assert_int_eq(raw_event(&r, 1, TRACE_EV_SEND, 7, 1, NULL, 0, 0, 0), 5);
	ck_assert_int_eq(raw_event(&r, 0, TRACE_EV_RECV, 3, 1, NULL, 0, 0, 0), 4);
	ck_assert_int_eq(raw_event(&r, 0, TRACE_EV_RECV, 3, 0, NULL, 0, 0, 0), 5);  /* EOF */
	ck_assert_int_eq(ana_finish(r.s, NULL), 0);

	src_is(r.s, 1, 2, 0, 2);   /* peek: last byte (1) is in the first send */
	src_is(r.s, 1, 3, 0, 2);
	src_is(r.s, 1, 4, 0, 3);   /* bytes 3..7: the last one is in the second send */
	src_is(r.s, 0, 4, 1, 5);
	src_is(r.s, 0, 5, ANA_NO_PROC, 0); /* no bytes, no edge */
	src_is(r.s, 1, 1, 0, 1);   /* the accept took the client's connect */
	src_is(r.s, 0, 1, ANA_NO_PROC, 0); /* only receives and accepts have a source */
	ck_assert_int_eq(ana_hb(r.s, 0, 1, 1, 1), 1);
	ck_assert_int_eq(ana_stats(r.s, &st), 0);
	ck_assert_uint_eq(st.channels, 1);
	ck_assert_uint_eq(st.channels_matched, 1);
	ck_assert_uint_eq(st.messages, 4);
	ck_assert_uint_eq(st.external_recvs, 0);
	/* happened-before follows: the server's reply came after the client's second send */
	ck_assert_int_eq(ana_hb(r.s, 0, 3, 1, 5), 1);
	ck_assert_int_eq(ana_hb(r.s, 1, 2, 0, 3), 0);
	ana_free(r.s);
}
END_TEST

/* The same loopback 4-tuple on two hosts is two different connections; a peer that is not
 * recorded makes the receives external. */
START_TEST(match_tcp_hosts_and_external)
{
	struct raw r = {0};
	struct trace_endpoint ep;
	struct ana_stats st;
	struct ana_event ev;

	ck_assert_int_eq(ana_new(&r.s), 0);
	ck_assert_int_eq(ana_add_process(r.s, "a", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(r.s, "b", NULL, 0), 1);
	ck_assert_int_eq(ana_add_process(r.s, "c", NULL, 0), 2);
	/* a and b form a pair; c talks to 10.0.0.9, which is not recorded */
	tcp_ep(&ep, 4000, 4001, INADDR_LOOPBACK);
	ck_assert_int_eq(raw_event(&r, 0, TRACE_EV_CONNECT, 1, 0, &ep, 0, 0, 0), 1);
	ck_assert_int_eq(raw_event(&r, 0, TRACE_EV_SEND, 1, 3, NULL, 0, 0, 0), 2);
	tcp_ep(&ep, 4001, 4000, INADDR_LOOPBACK);
	ck_assert_int_eq(raw_event(&r, 1, TRACE_EV_ACCEPT, 1, 0, &ep, 0, 0, 0), 1);
	ck_assert_int_eq(raw_event(&r, 1, TRACE_EV_RECV, 1, 3, NULL, 0, 0, 0), 2);
	tcp_ep(&ep, 4002, 80, 0x0a000009);
	ck_assert_int_eq(raw_event(&r, 2, TRACE_EV_CONNECT, 1, 0, &ep, 0, 0, 0), 1);
	ck_assert_int_eq(raw_event(&r, 2, TRACE_EV_RECV, 1, 10, NULL, 0, 0, 0), 2);
	/* what the recorder logs when it knows the peer is not recorded */
	ck_assert_int_eq(raw_event(&r, 2, TRACE_EV_INPUT, 1, 5, NULL, 0, 0, 0), 3);
	ck_assert_int_eq(ana_finish(r.s, NULL), 0);
	src_is(r.s, 1, 2, 0, 2);
	ck_assert_int_eq(ana_event_get(r.s, 2, 2, &ev), 0);
	ck_assert_int_eq(ev.external, 1);
	ck_assert_int_eq(ana_stats(r.s, &st), 0);
	ck_assert_uint_eq(st.channels_matched, 1);
	ck_assert_uint_eq(st.channels_external, 1);
	ck_assert_uint_eq(st.external_recvs, 2);
	ck_assert_uint_eq(st.recvs, 3);
	{
		/* both count as received by the predicate terms */
		struct trace_pred *p;
		struct ana_cuts out;

		ck_assert_int_eq(trace_pred_parse("c: received == 2 and bytes_received == 15", &p,
		                                  NULL), 0);
		ck_assert_int_eq(ana_inf(r.s, p, &out, NULL), 0);
		ck_assert_uint_eq(out.ncuts, 1);
		ck_assert_uint_eq(out.cuts[2], 3);
		ana_cuts_free(&out);
		trace_pred_free(p);
	}
	ana_free(r.s);
}
END_TEST

/* A socketpair and a pipe made by the parent, used by the child it forks: the child's
 * inherited channel ids are the parent's, and its first event comes after the fork. */
START_TEST(match_fork_inheritance)
{
	struct raw r = {0};
	struct trace_endpoint ep;

	ck_assert_int_eq(ana_new(&r.s), 0);
	ck_assert_int_eq(ana_add_process(r.s, "par", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(r.s, "par.1", "par", 3), 1);
	memset(&ep, 0, sizeof(ep));
	ep.type = TRACE_CHAN_SOCKETPAIR;
	ep.inode = 100;
	ep.peer_inode = 101;
	ck_assert_int_eq(raw_event(&r, 0, TRACE_EV_PIPE, 1, 0, &ep, 1, 2, 0), 1);
	memset(&ep, 0, sizeof(ep));
	ep.type = TRACE_CHAN_PIPE;
	ep.inode = 200;
	ck_assert_int_eq(raw_event(&r, 0, TRACE_EV_PIPE, 3, 0, &ep, 3, 4, 0), 2);
	ck_assert_int_eq(ana_add_simple(r.s, 0, TRACE_EV_FORK, 0), 3);
	ck_assert_int_eq(raw_event(&r, 0, TRACE_EV_SEND, 1, 4, NULL, 0, 0, 0), 4);
	ck_assert_int_eq(raw_event(&r, 0, TRACE_EV_RECV, 3, 6, NULL, 0, 0, 0), 5);
	/* the child: channels 2 (socketpair end) and 4 (pipe write end) */
	ck_assert_int_eq(ana_add_inherited(r.s, 1, 1), 0);
	ck_assert_int_eq(ana_add_inherited(r.s, 1, 2), 0);
	ck_assert_int_eq(ana_add_inherited(r.s, 1, 3), 0);
	ck_assert_int_eq(ana_add_inherited(r.s, 1, 4), 0);
	ck_assert_int_eq(ana_add_simple(r.s, 1, TRACE_EV_CLOCK, 0), 1);
	ck_assert_int_eq(raw_event(&r, 1, TRACE_EV_RECV, 2, 4, NULL, 0, 0, 0), 2);
	ck_assert_int_eq(raw_event(&r, 1, TRACE_EV_SEND, 4, 6, NULL, 0, 0, 0), 3);
	ck_assert_int_eq(ana_finish(r.s, NULL), 0);

	src_is(r.s, 1, 2, 0, 4);
	src_is(r.s, 0, 5, 1, 3);
	/* fork: the parent's fork happened before the child's first event, not its own next */
	ck_assert_int_eq(ana_hb(r.s, 0, 3, 1, 1), 1);
	ck_assert_int_eq(ana_hb(r.s, 0, 2, 1, 1), 1);
	ck_assert_int_eq(ana_hb(r.s, 1, 1, 0, 4), 0);
	{
		uint64_t cut[2] = {2, 1};

		ck_assert_int_eq(ana_consistent(r.s, cut), 0); /* child before its fork */
		cut[0] = 3;
		ck_assert_int_eq(ana_consistent(r.s, cut), 1);
		cut[0] = 0;
		ck_assert_int_eq(ana_close_down(r.s, cut), 0);
		ck_assert_uint_eq(cut[0], 3);
	}
	ana_free(r.s);
}
END_TEST

/* Unix stream sockets: the client names the server's path; SO_PEERCRED pids tell two
 * clients of one server apart. */
START_TEST(match_unix_paths)
{
	struct raw r = {0};
	struct trace_endpoint ep;
	struct sockaddr_un un = {0};
	size_t plen;

	un.sun_family = AF_UNIX;
	strcpy(un.sun_path, "/tmp/srv.sock");
	plen = offsetof(struct sockaddr_un, sun_path) + strlen(un.sun_path) + 1;
	ck_assert_int_eq(ana_new(&r.s), 0);
	ck_assert_int_eq(ana_add_process(r.s, "srv", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(r.s, "c1", NULL, 0), 1);
	ck_assert_int_eq(ana_add_process(r.s, "c2", NULL, 0), 2);
	/* pids are only known from loaded traces; here the order of creation pairs them */
	memset(&ep, 0, sizeof(ep));
	ep.type = TRACE_CHAN_UNIX;
	memcpy(ep.peer, &un, plen);
	ep.peer_len = (uint32_t)plen;
	ck_assert_int_eq(raw_event(&r, 1, TRACE_EV_CONNECT, 1, 0, &ep, 0, 0, 0), 1);
	ck_assert_int_eq(raw_event(&r, 1, TRACE_EV_SEND, 1, 2, NULL, 0, 0, 0), 2);
	memset(&ep, 0, sizeof(ep));
	ep.type = TRACE_CHAN_UNIX;
	memcpy(ep.local, &un, plen);
	ep.local_len = (uint32_t)plen;
	ck_assert_int_eq(raw_event(&r, 0, TRACE_EV_ACCEPT, 5, 0, &ep, 0, 0, 0), 1);
	ck_assert_int_eq(raw_event(&r, 0, TRACE_EV_RECV, 5, 2, NULL, 0, 0, 0), 2);
	ck_assert_int_eq(ana_finish(r.s, NULL), 0);
	src_is(r.s, 0, 2, 1, 2);
	ana_free(r.s);
}
END_TEST

/* Parent and child writing one inherited socket at the same time: their offsets overlap,
 * so the analyzer refuses to guess and says so. */
START_TEST(concurrent_writers_not_linked)
{
	struct raw r = {0};
	struct trace_endpoint ep;
	int warned = 0;

	ck_assert_int_eq(ana_new(&r.s), 0);
	ck_assert_int_eq(ana_add_process(r.s, "p", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(r.s, "p.1", "p", 2), 1);
	ck_assert_int_eq(ana_add_process(r.s, "q", NULL, 0), 2);
	tcp_ep(&ep, 7000, 7001, INADDR_LOOPBACK);
	ck_assert_int_eq(raw_event(&r, 0, TRACE_EV_CONNECT, 1, 0, &ep, 0, 0, 0), 1);
	ck_assert_int_eq(ana_add_simple(r.s, 0, TRACE_EV_FORK, 0), 2);
	ck_assert_int_eq(raw_event(&r, 0, TRACE_EV_SEND, 1, 4, NULL, 0, 0, 0), 3);
	ck_assert_int_eq(ana_add_inherited(r.s, 1, 1), 0);
	ck_assert_int_eq(raw_event(&r, 1, TRACE_EV_SEND, 1, 4, NULL, 0, 0, 0), 1);
	tcp_ep(&ep, 7001, 7000, INADDR_LOOPBACK);
	ck_assert_int_eq(raw_event(&r, 2, TRACE_EV_ACCEPT, 1, 0, &ep, 0, 0, 0), 1);
	ck_assert_int_eq(raw_event(&r, 2, TRACE_EV_RECV, 1, 8, NULL, 0, 0, 0), 2);
	ck_assert_int_eq(ana_finish(r.s, NULL), 0);
	src_is(r.s, 2, 2, ANA_NO_PROC, 0);
	for (size_t i = 0; i < ana_nwarnings(r.s); i++)
		warned |= strstr(ana_warning(r.s, i), "several processes at once") != NULL;
	ck_assert(warned);
	ana_free(r.s);
}
END_TEST

/* Parent and child reading one inherited socket at the same time (forked workers on one
 * task pipe): each counts only its own bytes, so their offsets overlap and which of the
 * writer's bytes each got is unknown: neither receive is linked, and the analyzer says so.
 * A child that took over reading where its parent stopped continues the offsets and is
 * linked as before. */
static void shared_reader(int handoff)
{
	struct raw r = {0};
	struct trace_endpoint ep;
	int warned = 0;

	ck_assert_int_eq(ana_new(&r.s), 0);
	ck_assert_int_eq(ana_add_process(r.s, "p", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(r.s, "p.1", "p", 2), 1);
	ck_assert_int_eq(ana_add_process(r.s, "q", NULL, 0), 2);
	tcp_ep(&ep, 7000, 7001, INADDR_LOOPBACK);
	ck_assert_int_eq(raw_event(&r, 0, TRACE_EV_CONNECT, 1, 0, &ep, 0, 0, 0), 1);
	ck_assert_int_eq(ana_add_simple(r.s, 0, TRACE_EV_FORK, 0), 2);
	ck_assert_int_eq(raw_event(&r, 0, TRACE_EV_RECV, 1, 4, NULL, 0, 0, 0), 3);
	ck_assert_int_eq(ana_add_inherited(r.s, 1, 1), 0);
	if (handoff)
		r.off_in[1][1] = 4; /* the child's offsets continue its parent's */
	ck_assert_int_eq(raw_event(&r, 1, TRACE_EV_RECV, 1, 4, NULL, 0, 0, 0), 1);
	tcp_ep(&ep, 7001, 7000, INADDR_LOOPBACK);
	ck_assert_int_eq(raw_event(&r, 2, TRACE_EV_ACCEPT, 1, 0, &ep, 0, 0, 0), 1);
	ck_assert_int_eq(raw_event(&r, 2, TRACE_EV_SEND, 1, 4, NULL, 0, 0, 0), 2);
	ck_assert_int_eq(raw_event(&r, 2, TRACE_EV_SEND, 1, 4, NULL, 0, 0, 0), 3);
	ck_assert_int_eq(ana_finish(r.s, NULL), 0);
	for (size_t i = 0; i < ana_nwarnings(r.s); i++)
		warned |= strstr(ana_warning(r.s, i), "read by several processes at once") != NULL;
	if (handoff) {
		src_is(r.s, 0, 3, 2, 2);
		src_is(r.s, 1, 1, 2, 3);
		ck_assert(!warned);
	} else {
		src_is(r.s, 0, 3, ANA_NO_PROC, 0);
		src_is(r.s, 1, 1, ANA_NO_PROC, 0);
		ck_assert(warned);
	}
	ana_free(r.s);
}

START_TEST(concurrent_readers_not_linked)
{
	shared_reader(0);
}
END_TEST

START_TEST(handed_over_reader_linked)
{
	shared_reader(1);
}
END_TEST

/* Receives that depend on each other's sends cannot come from a real run.  The message names
 * the cycle's processes, not the first one stuck (here "sh", waiting outside the cycle for a
 * send of a's after it, as a shell waits for a child). */
START_TEST(cycle_is_corrupt)
{
	struct ana_session *s;
	struct trace_diag d;
	int ab, ba, ash;

	ck_assert_int_eq(ana_new(&s), 0);
	ck_assert_int_eq(ana_add_process(s, "sh", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(s, "a", NULL, 0), 1);
	ck_assert_int_eq(ana_add_process(s, "b", NULL, 0), 2);
	ab = ana_add_channel(s, 1, 2);
	ba = ana_add_channel(s, 2, 1);
	ash = ana_add_channel(s, 1, 0);
	ck_assert_int_eq(ana_add_recv(s, 0, ash, 1), 1);
	ck_assert_int_eq(ana_add_recv(s, 1, ba, 1), 1);
	ck_assert_int_eq(ana_add_send(s, 1, ab, 1), 2);
	ck_assert_int_eq(ana_add_send(s, 1, ash, 1), 3);
	ck_assert_int_eq(ana_add_recv(s, 2, ab, 1), 1);
	ck_assert_int_eq(ana_add_send(s, 2, ba, 1), 2);
	ck_assert_int_eq(ana_finish(s, &d), TRACE_ECORRUPT);
	ck_assert_ptr_nonnull(strstr(d.msg, "cycle"));
	ck_assert_msg(strstr(d.msg, "event 1 (recv) of a waits for event 2 of b") &&
	              strstr(d.msg, "event 1 (recv) of b waits for event 2 of a") &&
	              !strstr(d.msg, " of sh"), "%s", d.msg);
	ana_free(s);
}
END_TEST

/* An accept is ordered after its connect: a cut with the server past its accept holds the
 * client past its connect, and a forked client's fork too.  A connect logged after an event
 * that depends on the accept (a signal handler's receive while connect blocked) would make a
 * cycle: that edge gives way with a warning, the messages stay. */
START_TEST(accept_after_connect)
{
	struct ana_session *s;
	uint64_t cut[3];
	int x, y;

	ck_assert_int_eq(ana_new(&s), 0);
	ck_assert_int_eq(ana_add_process(s, "server", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(s, "parent", NULL, 0), 1);
	ck_assert_int_eq(ana_add_process(s, "parent.1", "parent", 2), 2);
	x = ana_add_channel(s, 2, 0);
	ck_assert_int_eq(ana_add_simple(s, 0, TRACE_EV_CLOCK, 0), 1);
	ck_assert_int_eq(ana_add_accept(s, 0, x), 2);
	ck_assert_int_eq(ana_add_simple(s, 1, TRACE_EV_CLOCK, 0), 1);
	ck_assert_int_eq(ana_add_simple(s, 1, TRACE_EV_FORK, 0), 2);
	ck_assert_int_eq(ana_add_simple(s, 2, TRACE_EV_CLOCK, 0), 1);
	ck_assert_int_eq(ana_add_connect(s, 2, x), 2);
	ck_assert_int_eq(ana_finish(s, NULL), 0);
	ck_assert_uint_eq(ana_nwarnings(s), 0);
	src_is(s, 0, 2, 2, 2);
	ck_assert_int_eq(ana_hb(s, 2, 2, 0, 2), 1);
	ck_assert_int_eq(ana_hb(s, 1, 2, 0, 2), 1);   /* through the fork */
	ck_assert_int_eq(ana_hb(s, 0, 1, 2, 2), 0);
	cut[0] = 2;
	cut[1] = cut[2] = 0;
	ck_assert_int_eq(ana_consistent(s, cut), 0);
	ck_assert_int_eq(ana_close_down(s, cut), 0);
	ck_assert_uint_eq(cut[0], 2);
	ck_assert_uint_eq(cut[1], 2);
	ck_assert_uint_eq(cut[2], 2);
	cut[0] = 2;
	cut[1] = 2;
	cut[2] = 1;
	ck_assert_int_eq(ana_close_up(s, cut), 0); /* greatest below: the server before accept */
	ck_assert_uint_eq(cut[0], 1);
	ana_free(s);

	ck_assert_int_eq(ana_new(&s), 0);
	ck_assert_int_eq(ana_add_process(s, "a", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(s, "b", NULL, 0), 1);
	x = ana_add_channel(s, 0, 1);
	y = ana_add_channel(s, 1, 0);
	ck_assert_int_eq(ana_add_recv(s, 0, y, 1), 1);
	ck_assert_int_eq(ana_add_connect(s, 0, x), 2);
	ck_assert_int_eq(ana_add_accept(s, 1, x), 1);
	ck_assert_int_eq(ana_add_send(s, 1, y, 1), 2);
	ck_assert_int_eq(ana_finish(s, NULL), 0);
	ck_assert_uint_eq(ana_nwarnings(s), 1);
	ck_assert_ptr_nonnull(strstr(ana_warning(s, 0), "not ordered after the connect"));
	src_is(s, 1, 1, ANA_NO_PROC, 0);
	src_is(s, 0, 1, 1, 2);
	ck_assert_int_eq(ana_hb(s, 1, 2, 0, 1), 1);
	ck_assert_int_eq(ana_hb(s, 0, 2, 1, 1), 0);
	ana_free(s);
}
END_TEST

static int has_dep(struct ana_session *s, int p, uint64_t k, size_t q, uint64_t j)
{
	struct ana_ref deps[8];
	int64_t n = ana_event_deps(s, (size_t)p, k, deps, 8);

	ck_assert_int_ge(n, 0);
	for (int64_t i = 0; i < n && i < 8; i++)
		if (deps[i].proc == q && deps[i].index == j)
			return 1;
	return 0;
}

/* An end of file waits for every holder of the writing end to let go of it: here a pipe
 * made by a parent and inherited by two children; the parent closes both ends, the writer
 * exits without closing, the reader closes its write end, reads, then reads the end.  With a
 * shutdown(SHUT_WR) the end of file waits for the shutdown only. */
START_TEST(eof_after_every_release)
{
	struct raw r = {0};
	struct trace_endpoint ep;
	uint64_t cut[3];

	ck_assert_int_eq(ana_new(&r.s), 0);
	ck_assert_int_eq(ana_add_process(r.s, "sh", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(r.s, "sh.1", "sh", 2), 1);
	ck_assert_int_eq(ana_add_process(r.s, "sh.2", "sh", 3), 2);
	for (int c = 1; c <= 2; c++) {
		ck_assert_int_eq(ana_add_inherited(r.s, 1, (uint32_t)c), 0);
		ck_assert_int_eq(ana_add_inherited(r.s, 2, (uint32_t)c), 0);
	}
	memset(&ep, 0, sizeof(ep));
	ep.type = TRACE_CHAN_PIPE;
	ck_assert_int_eq(raw_event(&r, 0, TRACE_EV_PIPE, 0, 0, &ep, 1, 2, 0), 1);
	ck_assert_int_eq(raw_event(&r, 0, TRACE_EV_FORK, 0, 100, NULL, 0, 0, 0), 2);
	ck_assert_int_eq(raw_event(&r, 0, TRACE_EV_FORK, 0, 101, NULL, 0, 0, 0), 3);
	ck_assert_int_eq(raw_event(&r, 0, TRACE_EV_CLOSE, 1, 0, NULL, 0, 0, 0), 4);
	ck_assert_int_eq(raw_event(&r, 0, TRACE_EV_CLOSE, 2, 0, NULL, 0, 0, 0), 5);
	ck_assert_int_eq(raw_event(&r, 1, TRACE_EV_CLOSE, 1, 0, NULL, 0, 0, 0), 1);
	ck_assert_int_eq(raw_event(&r, 1, TRACE_EV_SEND, 2, 3, NULL, 0, 0, 0), 2);
	ck_assert_int_eq(raw_event(&r, 1, TRACE_EV_EXIT, 0, 0, NULL, 0, 0, 0), 3);
	ck_assert_int_eq(raw_event(&r, 2, TRACE_EV_CLOSE, 2, 0, NULL, 0, 0, 0), 1);
	ck_assert_int_eq(raw_event(&r, 2, TRACE_EV_RECV, 1, 3, NULL, 0, 0, 0), 2);
	{
		/* the end of file: 0 bytes for a 4096-byte request */
		struct trace_event ev;

		memset(&ev, 0, sizeof(ev));
		ev.kind = TRACE_EV_RECV;
		ev.fd = -1;
		ev.channel = 1;
		ev.len = 4096;
		ev.offset = 3;
		ck_assert_int_eq(ana_add_trace_event(r.s, 2, &ev), 3);
		ev.len = 0; /* a zero-byte request also gets 0: not an end of file */
		ck_assert_int_eq(ana_add_trace_event(r.s, 2, &ev), 4);
	}
	ck_assert_int_eq(ana_finish(r.s, NULL), 0);
	ck_assert_uint_eq(ana_nwarnings(r.s), 0);
	src_is(r.s, 2, 2, 1, 2);
	ck_assert(has_dep(r.s, 2, 3, 0, 5));   /* the parent's close of the write end */
	ck_assert(has_dep(r.s, 2, 3, 1, 3));   /* the writer's exit */
	ck_assert(!has_dep(r.s, 2, 3, 0, 4));  /* the read end's close: not a release of it */
	ck_assert_int_eq(ana_event_deps(r.s, 2, 3, NULL, 0), 2);
	ck_assert_int_eq(ana_event_deps(r.s, 2, 4, NULL, 0), 0);
	src_is(r.s, 2, 3, ANA_NO_PROC, 0);     /* ana_event_get's src stays the message one */
	ck_assert_int_eq(ana_hb(r.s, 1, 3, 2, 3), 1);
	ck_assert_int_eq(ana_hb(r.s, 0, 5, 2, 3), 1);
	ck_assert_int_eq(ana_hb(r.s, 1, 3, 2, 2), 0);
	/* the reader past its end of file holds the writer past its exit */
	cut[0] = 3;
	cut[1] = 0;
	cut[2] = 3;
	ck_assert_int_eq(ana_consistent(r.s, cut), 0);
	ck_assert_int_eq(ana_close_down(r.s, cut), 0);
	ck_assert_uint_eq(cut[0], 5);
	ck_assert_uint_eq(cut[1], 3);
	ana_free(r.s);

	/* a socketpair whose writer shuts down its sending side, then goes on */
	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(ana_new(&r.s), 0);
	ck_assert_int_eq(ana_add_process(r.s, "a", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(r.s, "a.1", "a", 2), 1);
	ck_assert_int_eq(ana_add_inherited(r.s, 1, 1), 0);
	ck_assert_int_eq(ana_add_inherited(r.s, 1, 2), 0);
	memset(&ep, 0, sizeof(ep));
	ep.type = TRACE_CHAN_SOCKETPAIR;
	ck_assert_int_eq(raw_event(&r, 0, TRACE_EV_PIPE, 0, 0, &ep, 1, 2, 0), 1);
	ck_assert_int_eq(raw_event(&r, 0, TRACE_EV_FORK, 0, 100, NULL, 0, 0, 0), 2);
	ck_assert_int_eq(raw_event(&r, 0, TRACE_EV_CLOSE, 2, 0, NULL, 0, 0, 0), 3);
	ck_assert_int_eq(raw_event(&r, 1, TRACE_EV_CLOSE, 1, 0, NULL, 0, 0, 0), 1);
	{
		struct trace_event ev;

		memset(&ev, 0, sizeof(ev));
		ev.kind = TRACE_EV_SHUTDOWN;
		ev.fd = -1;
		ev.channel = 2;
		ev.naux = 1;
		ev.aux[0] = SHUT_WR;
		ck_assert_int_eq(ana_add_trace_event(r.s, 1, &ev), 2);
		ck_assert_int_eq(raw_event(&r, 1, TRACE_EV_CLOCK, 0, 0, NULL, 0, 0, 0), 3);
		memset(&ev, 0, sizeof(ev));
		ev.kind = TRACE_EV_RECV;
		ev.fd = -1;
		ev.channel = 1;
		ev.len = 10;
		ck_assert_int_eq(ana_add_trace_event(r.s, 0, &ev), 4);
	}
	ck_assert_int_eq(ana_finish(r.s, NULL), 0);
	ck_assert_int_eq(ana_event_deps(r.s, 0, 4, NULL, 0), 1);
	ck_assert(has_dep(r.s, 0, 4, 1, 2));
	ck_assert_int_eq(ana_hb(r.s, 1, 3, 0, 4), 0); /* the writer went on after its shutdown */
	ana_free(r.s);
}
END_TEST

/* A poll that found a channel readable happened after the send of the first byte the next
 * receive takes, or after the peer's close when that receive is the end of file; a poll
 * followed by no receive on the channel gets no edge. */
START_TEST(ready_after_send)
{
	struct ana_session *s;
	int c, x, y;

	ck_assert_int_eq(ana_new(&s), 0);
	ck_assert_int_eq(ana_add_process(s, "a", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(s, "b", NULL, 0), 1);
	c = ana_add_channel(s, 0, 1);
	x = ana_add_channel(s, 0, 1);
	y = ana_add_channel(s, 0, 1);
	ck_assert_int_eq(ana_add_send(s, 0, c, 2), 1);
	ck_assert_int_eq(ana_add_send(s, 0, c, 3), 2);
	ck_assert_int_eq(ana_add_close(s, 0, c), 3);
	ck_assert_int_eq(ana_add_send(s, 0, x, 1), 4);
	ck_assert_int_eq(ana_add_send(s, 0, y, 1), 5);
	ck_assert_int_eq(ana_add_ready(s, 1, c), 1);   /* sees the first send's bytes */
	ck_assert_int_eq(ana_add_recv(s, 1, c, 1), 2);
	ck_assert_int_eq(ana_add_ready(s, 1, c), 3);   /* byte 1: still the first send */
	ck_assert_int_eq(ana_add_recv(s, 1, c, 4), 4);
	ck_assert_int_eq(ana_add_ready(s, 1, c), 5);   /* the end of the stream */
	ck_assert_int_eq(ana_add_eof(s, 1, c), 6);
	ck_assert_int_eq(ana_add_ready(s, 1, x), 7);   /* never read: no edge */
	{
		/* a result naming one channel twice (two descriptors of it): one edge */
		struct trace_event ev;
		uint64_t id = 0x80000000u | (uint32_t)y;

		memset(&ev, 0, sizeof(ev));
		ev.kind = TRACE_EV_READY;
		ev.fd = -1;
		ev.result = 2;
		ev.naux = 1;
		ev.aux[0] = (int64_t)(id | (id << 32));
		ck_assert_int_eq(ana_add_trace_event(s, 1, &ev), 8);
	}
	ck_assert_int_eq(ana_add_recv(s, 1, y, 1), 9);
	ck_assert_int_eq(ana_finish(s, NULL), 0);
	ck_assert_int_eq(ana_event_deps(s, 1, 8, NULL, 0), 1);
	ck_assert(has_dep(s, 1, 8, 0, 5));
	ck_assert_int_eq(ana_event_deps(s, 1, 1, NULL, 0), 1);
	ck_assert(has_dep(s, 1, 1, 0, 1));
	ck_assert(has_dep(s, 1, 3, 0, 1));
	ck_assert(!has_dep(s, 1, 3, 0, 2));
	ck_assert(has_dep(s, 1, 5, 0, 3));
	ck_assert_int_eq(ana_event_deps(s, 1, 7, NULL, 0), 0);
	ck_assert_int_eq(ana_hb(s, 0, 1, 1, 1), 1);
	ck_assert_int_eq(ana_hb(s, 0, 2, 1, 3), 0);
	ck_assert_int_eq(ana_hb(s, 0, 3, 1, 5), 1);
	ana_free(s);
}
END_TEST

/* The builder refuses what makes no sense. */
START_TEST(builder_errors)
{
	struct ana_session *s;
	int ch;

	ck_assert_int_eq(ana_new(&s), 0);
	ck_assert_int_eq(ana_add_process(s, "a", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(s, "a", NULL, 0), TRACE_EINVAL);
	ck_assert_int_eq(ana_add_process(s, "", NULL, 0), TRACE_EINVAL);
	ck_assert_int_eq(ana_add_process(s, "b", NULL, 0), 1);
	ck_assert_int_eq(ana_add_process(s, "c", NULL, 0), 2);
	ch = ana_add_channel(s, 0, 1);
	ck_assert_int_eq(ana_add_channel(s, 0, 0), TRACE_EINVAL);
	ck_assert_int_eq(ana_add_send(s, 2, ch, 1), TRACE_EINVAL); /* c is not on it */
	ck_assert_int_eq(ana_add_send(s, 0, 99, 1), TRACE_EINVAL);
	ck_assert_int_eq(ana_add_simple(s, 0, TRACE_EV_SEND, 0), TRACE_EINVAL);
	ck_assert_int_eq(ana_proc_find(s, "zz"), TRACE_ENOENT);
	ck_assert_int_eq(ana_finish(s, NULL), 0);
	ck_assert_int_eq(ana_add_process(s, "d", NULL, 0), TRACE_EINVAL); /* finished */
	ck_assert_int_eq(ana_hb(s, 0, 1, 1, 1), TRACE_EINVAL);            /* no such events */
	ana_free(s);
	ana_free(NULL);
}
END_TEST

/* ---------------------------------------------------------------------------------------
 * Real trace files, written with libtrace's writer and loaded with ana_load
 */
static void write_segment(const char *dir, const char *name, const char *parent,
                          uint64_t fork_index, uint32_t segment, uint64_t first_index,
                          const struct trace_event *evs, size_t n, const uint32_t *inherit,
                          const uint64_t *sent, size_t ninherit)
{
	struct trace_process p;
	struct trace_writer *w;
	struct trace_diag d;
	char file[256], path[4400];

	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "%s", name);
	snprintf(p.parent, sizeof(p.parent), "%s", parent);
	snprintf(p.host, sizeof(p.host), "testhost");
	snprintf(p.host_id, sizeof(p.host_id), "h1");
	p.fork_index = fork_index;
	p.segment = segment;
	p.first_index = first_index;
	ck_assert_int_eq(trace_file_name(name, segment, file, sizeof(file)), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	ck_assert_int_eq(trace_writer_open(AT_FDCWD, path, &p, NULL, 0, &w, &d), 0);
	for (size_t i = 0; i < ninherit; i++)
		ck_assert_int_eq(trace_writer_inherit(w, inherit[i], sent ? sent[i] : 0, 0), 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(trace_writer_event(w, &evs[i]), 0);
	ck_assert_int_eq(trace_writer_close(w), 0);
}

static void write_trace(const char *dir, const char *name, const char *parent,
                        uint64_t fork_index, const struct trace_event *evs, size_t n,
                        const uint32_t *inherit, size_t ninherit)
{
	write_segment(dir, name, parent, fork_index, 0, 0, evs, n, inherit, NULL, ninherit);
}

static struct trace_event mkev(uint32_t kind, uint32_t chan, int64_t result)
{
	struct trace_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.fd = -1;
	ev.channel = chan;
	ev.result = result;
	ev.len = result > 0 ? (uint64_t)result : 0;
	return ev;
}

START_TEST(load_session_dir)
{
	char dir[1024];
	struct trace_event pe[5], ce[3];
	uint32_t inh[] = {1, 2};
	uint8_t epbuf[TRACE_ENDPOINT_MAX];
	struct trace_endpoint ep;
	struct ana_session *s;
	struct trace_diag d;
	struct ana_stats st;
	int n, p, c;

	unit_tmpdir(dir, sizeof(dir));
	memset(&ep, 0, sizeof(ep));
	ep.type = TRACE_CHAN_SOCKETPAIR;
	ep.inode = 11;
	ep.peer_inode = 12;
	n = trace_endpoint_encode(&ep, epbuf, sizeof(epbuf));
	ck_assert_int_gt(n, 0);
	pe[0] = mkev(TRACE_EV_PIPE, 1, 0);
	pe[0].call = TRACE_CALL_SOCKETPAIR;
	pe[0].naux = 2;
	pe[0].aux[0] = 1;
	pe[0].aux[1] = 2;
	pe[0].data = epbuf;
	pe[0].data_len = (uint32_t)n;
	pe[1] = mkev(TRACE_EV_FORK, 0, 42);
	pe[1].naux = 1;
	pe[1].aux[0] = 1;
	pe[2] = mkev(TRACE_EV_SEND, 1, 5);
	pe[3] = mkev(TRACE_EV_RECV, 1, 2);
	pe[4] = mkev(TRACE_EV_EXIT, 0, 0);
	write_trace(dir, "par", "", 0, pe, 5, NULL, 0);
	ce[0] = mkev(TRACE_EV_RECV, 2, 5);
	ce[1] = mkev(TRACE_EV_SEND, 2, 2);
	ce[2] = mkev(TRACE_EV_EXIT, 0, 0);
	write_trace(dir, "par.1", "par", 2, ce, 3, inh, 2);

	ck_assert_int_eq(ana_load(dir, &s, &d), 0);
	ck_assert_uint_eq(ana_nprocs(s), 2);
	p = ana_proc_find(s, "par");
	c = ana_proc_find(s, "par.1");
	ck_assert_int_ge(p, 0);
	ck_assert_int_ge(c, 0);
	ck_assert_uint_eq(ana_nevents(s, (size_t)p), 5);
	src_is(s, c, 1, (uint32_t)p, 3);
	src_is(s, p, 4, (uint32_t)c, 2);
	ck_assert_int_eq(ana_stats(s, &st), 0);
	ck_assert_uint_eq(st.messages, 2);
	ck_assert_uint_eq(st.channels_matched, 1);
	ck_assert_int_eq(ana_hb(s, (size_t)p, 2, (size_t)c, 1), 1); /* the fork */
	ana_free(s);

	/* a directory with no traces says what to do */
	unit_rmdir(dir);
	unit_tmpdir(dir, sizeof(dir));
	ck_assert_int_ne(ana_load(dir, &s, &d), 0);
	ck_assert_ptr_null(s);
	ck_assert_msg(d.msg[0] != '\0', "an empty directory fails without saying why");
	unit_rmdir(dir);
}
END_TEST

/* A wait that reaped a child that ended comes after the child's end: its exit, or its last
 * event when it was killed outright; the child is the one forked latest with the pid the wait
 * returned (pids are reused).  A stopped child, and WNOHANG with none ready, order nothing. */
static struct trace_event wait_ev(int64_t pid, int64_t status, int64_t code)
{
	struct trace_event ev = mkev(TRACE_EV_WAIT, 0, pid);

	ev.call = TRACE_CALL_WAITPID;
	ev.len = 0;
	if (pid > 0) {
		ev.naux = 2;
		ev.aux[0] = status;
		ev.aux[1] = code;
	}
	return ev;
}

static void write_pid_trace(const char *dir, const char *name, const char *parent,
                            uint64_t fork_index, int64_t pid, const struct trace_event *evs,
                            size_t n)
{
	struct trace_process p;
	struct trace_writer *w;
	struct trace_diag d;
	char file[256], path[4400];

	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "%s", name);
	snprintf(p.parent, sizeof(p.parent), "%s", parent);
	snprintf(p.host, sizeof(p.host), "testhost");
	snprintf(p.host_id, sizeof(p.host_id), "h1");
	p.fork_index = fork_index;
	p.pid = pid;
	ck_assert_int_eq(trace_file_name(name, 0, file, sizeof(file)), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	ck_assert_int_eq(trace_writer_open(AT_FDCWD, path, &p, NULL, 0, &w, &d), 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(trace_writer_event(w, &evs[i]), 0);
	ck_assert_int_eq(trace_writer_close(w), 0);
}

static void deps_are(struct ana_session *s, int p, uint64_t k, int q, uint64_t j)
{
	struct ana_ref deps[4];
	int64_t nd = ana_event_deps(s, (size_t)p, k, deps, 4);

	if (q < 0) {
		ck_assert_int_eq(nd, 0);
		return;
	}
	ck_assert_int_eq(nd, 1);
	ck_assert_uint_eq(deps[0].proc, (size_t)q);
	ck_assert_uint_eq(deps[0].index, j);
}

START_TEST(wait_after_child_end)
{
	char dir[1024];
	struct trace_event pe[9], c1[2], c2[2], c3[2];
	struct ana_session *s;
	struct trace_diag d;
	uint64_t cut[4];
	int p, a, b, c;

	unit_tmpdir(dir, sizeof(dir));
	pe[0] = mkev(TRACE_EV_FORK, 0, 101);
	pe[1] = wait_ev(101, 0x137f, CLD_STOPPED);   /* stopped: not its end */
	pe[2] = wait_ev(101, 9, CLD_KILLED);         /* killed by SIGKILL */
	pe[3] = mkev(TRACE_EV_FORK, 0, 102);
	pe[4] = wait_ev(0, 0, 0);                    /* WNOHANG, none ready */
	pe[5] = wait_ev(102, 0x300, CLD_EXITED);
	pe[6] = mkev(TRACE_EV_FORK, 0, 102);         /* the pid again */
	pe[7] = wait_ev(102, 0, CLD_EXITED);
	pe[8] = wait_ev(-1, 0, 0);                   /* ECHILD */
	pe[8].err = 10;
	write_pid_trace(dir, "sh", "", 0, 100, pe, 9);
	c1[0] = mkev(TRACE_EV_CLOCK, 0, 0);
	c1[1] = mkev(TRACE_EV_CLOCK, 0, 0);          /* then SIGKILL: no event */
	write_pid_trace(dir, "sh.1", "sh", 1, 101, c1, 2);
	c2[0] = mkev(TRACE_EV_CLOCK, 0, 0);
	c2[1] = mkev(TRACE_EV_EXIT, 0, 3);
	write_pid_trace(dir, "sh.2", "sh", 4, 102, c2, 2);
	c3[0] = mkev(TRACE_EV_CLOCK, 0, 0);
	c3[1] = mkev(TRACE_EV_EXIT, 0, 0);
	write_pid_trace(dir, "sh.3", "sh", 7, 102, c3, 2);

	ck_assert_int_eq(ana_load(dir, &s, &d), 0);
	p = ana_proc_find(s, "sh");
	a = ana_proc_find(s, "sh.1");
	b = ana_proc_find(s, "sh.2");
	c = ana_proc_find(s, "sh.3");
	ck_assert_int_ge(p, 0);
	deps_are(s, p, 2, -1, 0);
	deps_are(s, p, 3, a, 2);
	deps_are(s, p, 5, -1, 0);
	deps_are(s, p, 6, b, 2);
	deps_are(s, p, 8, c, 2);
	deps_are(s, p, 9, -1, 0);
	ck_assert_int_eq(ana_hb(s, (size_t)a, 2, (size_t)p, 3), 1);
	ck_assert_int_eq(ana_hb(s, (size_t)a, 2, (size_t)p, 2), 0);
	ck_assert_int_eq(ana_hb(s, (size_t)b, 2, (size_t)p, 6), 1);
	ck_assert_int_eq(ana_hb(s, (size_t)c, 2, (size_t)p, 7), 0);
	/* a cut past the parent's wait holds the child's end */
	memset(cut, 0, sizeof(cut));
	cut[p] = 3;
	ck_assert_int_eq(ana_consistent(s, cut), 0);
	ck_assert_int_eq(ana_close_down(s, cut), 0);
	ck_assert_uint_eq(cut[a], 2);
	ck_assert_uint_eq(cut[b], 0);
	ana_free(s);
	unit_rmdir(dir);
}
END_TEST

/* A child that execs: its second image continues the numbering, and the channels it says
 * survived the exec are its own, not its parent's channels with the same numbers. */
START_TEST(load_exec_segments)
{
	char dir[1024];
	struct trace_event pe[5], c0[3], c1[2];
	uint32_t inh0[] = {1}, inh1[] = {1, 5, 6};
	uint64_t sent1[] = {0, 7, 0}; /* bytes image 0 sent on each: offsets continue */
	struct ana_session *s;
	struct trace_diag d;
	int p, c;

	unit_tmpdir(dir, sizeof(dir));
	/* parent: pipe 1 (unused here), fork, then its own socketpair 5/6 and a message on it */
	pe[0] = mkev(TRACE_EV_PIPE, 1, 0);
	pe[0].naux = 2;
	pe[0].aux[0] = 1;
	pe[0].aux[1] = 2;
	pe[1] = mkev(TRACE_EV_FORK, 0, 99);
	pe[2] = mkev(TRACE_EV_PIPE, 5, 0);
	pe[2].naux = 2;
	pe[2].aux[0] = 5;
	pe[2].aux[1] = 6;
	pe[3] = mkev(TRACE_EV_SEND, 5, 3);
	pe[4] = mkev(TRACE_EV_RECV, 6, 3);
	write_trace(dir, "r", "", 0, pe, 5, NULL, 0);
	/* child image 0: its own socketpair 5/6 (same numbers as the parent's), then exec */
	c0[0] = mkev(TRACE_EV_PIPE, 5, 0);
	c0[0].naux = 2;
	c0[0].aux[0] = 5;
	c0[0].aux[1] = 6;
	c0[1] = mkev(TRACE_EV_SEND, 5, 7);
	c0[2] = mkev(TRACE_EV_EXEC, 0, 0);
	write_segment(dir, "r.1", "r", 2, 0, 0, c0, 3, inh0, NULL, 1);
	/* child image 1: reads what image 0 sent, and sends once more */
	c1[0] = mkev(TRACE_EV_RECV, 6, 7);
	c1[1] = mkev(TRACE_EV_SEND, 5, 1);
	write_segment(dir, "r.1", "r", 2, 1, 3, c1, 2, inh1, sent1, 3);

	ck_assert_int_eq(ana_load(dir, &s, &d), 0);
	p = ana_proc_find(s, "r");
	c = ana_proc_find(s, "r.1");
	ck_assert_uint_eq(ana_nevents(s, (size_t)c), 5);
	src_is(s, c, 4, (uint32_t)c, 2); /* within the child, across its exec */
	src_is(s, p, 5, (uint32_t)p, 4); /* within the parent */
	for (size_t i = 0; i < ana_nwarnings(s); i++)
		ck_assert_msg(strstr(ana_warning(s, i), "several processes") == NULL, "%s",
		              ana_warning(s, i));
	ana_free(s);
	unit_rmdir(dir);
}
END_TEST

/* ---------------------------------------------------------------------------------------
 * Predicates on recorded states
 */
static struct ana_session *pred_session(void)
{
	struct ana_session *s;
	const char *fns[] = {"do_commit", "main"};
	int ab, ba;

	ck_assert_int_eq(ana_new(&s), 0);
	ck_assert_int_eq(ana_add_process(s, "a", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(s, "b", NULL, 0), 1);
	ck_assert_int_eq(ana_add_stack(s, 0, 7, fns, 2), 0);
	ab = ana_add_channel(s, 0, 1);
	ba = ana_add_channel(s, 1, 0);
	ck_assert_int_eq(ana_add_mark(s, 0, "phase", 1), 1);     /* a1 */
	ck_assert_int_eq(ana_add_send(s, 0, ab, 10), 2);         /* a2 */
	ck_assert_int_eq(ana_add_simple(s, 0, TRACE_EV_CLOCK, 7), 3); /* a3 in do_commit */
	ck_assert_int_eq(ana_add_mark(s, 0, "phase", 2), 4);     /* a4 */
	ck_assert_int_eq(ana_add_recv(s, 0, ba, 3), 5);          /* a5 <- b3 */
	ck_assert_int_eq(ana_add_simple(s, 0, TRACE_EV_EXIT, 0), 6);
	ck_assert_int_eq(ana_add_simple(s, 1, TRACE_EV_CLOCK, 0), 1);
	ck_assert_int_eq(ana_add_recv(s, 1, ab, 10), 2);         /* b2 <- a2 */
	ck_assert_int_eq(ana_add_send(s, 1, ba, 3), 3);          /* b3 */
	ck_assert_int_eq(ana_add_simple(s, 1, TRACE_EV_CLOCK, 0), 4);
	{
		struct trace_event ev;

		memset(&ev, 0, sizeof(ev));
		ev.kind = TRACE_EV_SIGNAL;
		ev.fd = -1;
		ev.result = 10; /* SIGUSR1, handled */
		ck_assert_int_eq(ana_add_trace_event(s, 1, &ev), 5);
		ev.result = 9;  /* SIGKILL */
		ev.naux = 1;
		ev.aux[0] = 1;
		ck_assert_int_eq(ana_add_trace_event(s, 1, &ev), 6);
	}
	ck_assert_int_eq(ana_finish(s, NULL), 0);
	return s;
}

static void inf_is(struct ana_session *s, const char *text, int shape, size_t ncuts,
                   const uint64_t *cuts)
{
	struct trace_pred *p;
	struct trace_diag d;
	struct ana_cuts out;

	ck_assert_msg(trace_pred_parse(text, &p, &d) == 0, "%s: %s", text, d.msg);
	ck_assert_int_eq(trace_pred_shape(p), shape);
	ck_assert_msg(ana_inf(s, p, &out, &d) == 0, "%s: %s", text, d.msg);
	ck_assert_msg(out.ncuts == ncuts, "%s: %zu cuts, expected %zu", text, out.ncuts, ncuts);
	for (size_t i = 0; i < ncuts * 2; i++)
		ck_assert_msg(out.cuts[i] == cuts[i], "%s: cut value %zu is %llu, expected %llu", text,
		              i, (unsigned long long)out.cuts[i], (unsigned long long)cuts[i]);
	ana_cuts_free(&out);
	trace_pred_free(p);
}

START_TEST(predicates_offline)
{
	struct ana_session *s = pred_session();

	/* b received its message at b2; a is pulled to the send a2 */
	inf_is(s, "b: received >= 1", TRACE_PRED_CONJUNCTIVE, 1, (uint64_t[]){2, 2});
	inf_is(s, "a: mark.phase == 2 && b: sent(a) >= 1", TRACE_PRED_CONJUNCTIVE, 1,
	       (uint64_t[]){4, 3});
	inf_is(s, "a: mark.nokey == 0", TRACE_PRED_CONJUNCTIVE, 1, (uint64_t[]){0, 0});
	inf_is(s, "a: in(do_commit)", TRACE_PRED_CONJUNCTIVE, 1, (uint64_t[]){3, 0});
	inf_is(s, "a: last(recv) && b: bytes_received == 10", TRACE_PRED_CONJUNCTIVE, 1,
	       (uint64_t[]){5, 3});
	inf_is(s, "a: received(b) >= 1 and bytes_sent > 5", TRACE_PRED_CONJUNCTIVE, 1,
	       (uint64_t[]){5, 3});
	inf_is(s, "a: exited", TRACE_PRED_CONJUNCTIVE, 1, (uint64_t[]){6, 3});
	/* b was killed by a signal at b6, after a handled one at b5 */
	inf_is(s, "b: exited", TRACE_PRED_CONJUNCTIVE, 1, (uint64_t[]){2, 6});
	inf_is(s, "a: events > 100", TRACE_PRED_CONJUNCTIVE, 0, NULL);
	/* one minimal cut per disjunct, when they are not ordered */
	inf_is(s, "a: mark.phase == 2 || b: events >= 1", TRACE_PRED_DISJUNCTIVE, 2,
	       (uint64_t[]){4, 0, 0, 1});
	/* ordered ones collapse to the least */
	inf_is(s, "a: exited || b: received >= 1", TRACE_PRED_DISJUNCTIVE, 1, (uint64_t[]){2, 2});
	/* linked: a's send, then b's state after it, then a's exit after that */
	inf_is(s, "a: last(send) -> b: sent >= 1 -> a: exited", TRACE_PRED_LINKED, 1,
	       (uint64_t[]){6, 3});
	/* b's first event is not after a's send: linked waits for b2 at least */
	inf_is(s, "a: sent >= 1 -> b: events >= 1", TRACE_PRED_LINKED, 1, (uint64_t[]){2, 2});
	/* general: (a3 or b4) and (a in phase 1 or b2).  a3 is still phase 1: (3,0); b4 needs
	 * a2, where a is in phase 1: (2,4); the two are not ordered, both are minimal */
	inf_is(s, "(a: in(do_commit) || b: events == 4) && (a: mark.phase == 1 || b: received >= 1)",
	       TRACE_PRED_GENERAL, 2, (uint64_t[]){3, 0, 2, 4});
	ana_free(s);
}
END_TEST

START_TEST(predicate_errors)
{
	struct ana_session *s = pred_session();
	struct trace_pred *p;
	struct trace_diag d;
	struct ana_cuts out;

	ck_assert_int_eq(trace_pred_parse("a: var.counter > 3", &p, &d), 0);
	ck_assert_int_eq(ana_inf(s, p, &out, &d), TRACE_EINVAL);
	ck_assert_ptr_nonnull(strstr(d.msg, "var.counter"));
	ck_assert_ptr_nonnull(strstr(d.msg, "encore replay"));
	trace_pred_free(p);

	ck_assert_int_eq(trace_pred_parse("zed: events > 1", &p, &d), 0);
	ck_assert_int_eq(ana_inf(s, p, &out, &d), TRACE_ENOENT);
	ck_assert_ptr_nonnull(strstr(d.msg, "'zed'"));
	trace_pred_free(p);

	ck_assert_int_eq(trace_pred_parse("a: sent(zed) > 1", &p, &d), 0);
	ck_assert_int_eq(ana_inf(s, p, &out, &d), TRACE_ENOENT);
	ck_assert_ptr_nonnull(strstr(d.msg, "'zed'"));
	trace_pred_free(p);
	ana_free(s);
}
END_TEST

/* Races: c receives a1, then asks b (c2 -> b1), and b answers with b2.  b2 was sent after
 * c1, so c1 could not have received it: no race.  c3 receives a2, which is concurrent with
 * b2 waiting on the other channel: c3 could have received b2 instead. */
START_TEST(races_found)
{
	struct ana_session *s;
	struct ana_race *races;
	size_t n;
	int ac, bc, cb;

	ck_assert_int_eq(ana_new(&s), 0);
	ck_assert_int_eq(ana_add_process(s, "a", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(s, "b", NULL, 0), 1);
	ck_assert_int_eq(ana_add_process(s, "c", NULL, 0), 2);
	ac = ana_add_channel(s, 0, 2);
	bc = ana_add_channel(s, 1, 2);
	cb = ana_add_channel(s, 2, 1);
	ck_assert_int_eq(ana_add_send(s, 0, ac, 1), 1);  /* a1 */
	ck_assert_int_eq(ana_add_send(s, 0, ac, 1), 2);  /* a2 */
	ck_assert_int_eq(ana_add_recv(s, 2, ac, 1), 1);  /* c1 <- a1 */
	ck_assert_int_eq(ana_add_send(s, 2, cb, 1), 2);  /* c2 */
	ck_assert_int_eq(ana_add_recv(s, 1, cb, 1), 1);  /* b1 <- c2 */
	ck_assert_int_eq(ana_add_send(s, 1, bc, 1), 2);  /* b2 */
	ck_assert_int_eq(ana_add_recv(s, 2, ac, 1), 3);  /* c3 <- a2, races with b2 */
	ck_assert_int_eq(ana_add_recv(s, 2, bc, 1), 4);  /* c4 <- b2: a has nothing more */
	ck_assert_int_eq(ana_finish(s, NULL), 0);
	ck_assert_int_eq(ana_races(s, &races, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(races[0].proc, 2);
	ck_assert_uint_eq(races[0].recv, 3);
	ck_assert_uint_eq(races[0].src_proc, 0);
	ck_assert_uint_eq(races[0].src_send, 2);
	ck_assert_uint_eq(races[0].rival_proc, 1);
	ck_assert_uint_eq(races[0].rival_send, 2);
	free(races);
	ana_free(s);
}
END_TEST

/* A relay p0 -> p1 -> ... -> p6: more processes than cached columns, queried in an order
 * that evicts them, must keep answering from the right column. */
START_TEST(hb_columns_evicted)
{
	struct ana_session *s;
	int ch[6];

	ck_assert_int_eq(ana_new(&s), 0);
	for (int p = 0; p < 7; p++) {
		char name[8];

		snprintf(name, sizeof(name), "p%d", p);
		ck_assert_int_eq(ana_add_process(s, name, NULL, 0), p);
	}
	for (int p = 0; p < 6; p++)
		ch[p] = ana_add_channel(s, p, p + 1);
	for (int p = 0; p < 7; p++) {
		/* event 1: receive from the previous (p0: a local event), event 2: send on */
		if (p)
			ck_assert_int_eq(ana_add_recv(s, p, ch[p - 1], 1), 1);
		else
			ck_assert_int_eq(ana_add_simple(s, p, TRACE_EV_CLOCK, 0), 1);
		if (p < 6)
			ck_assert_int_eq(ana_add_send(s, p, ch[p], 1), 2);
	}
	ck_assert_int_eq(ana_finish(s, NULL), 0);
	/* (a,1) happened before (b,1) exactly when a < b along the relay; the inner loop
	 * changes the column every query */
	for (int round = 0; round < 3; round++)
		for (int q = 0; q < 7; q++)
			for (int p = 0; p < 7; p++) {
				int a = (p + round) % 7, b = (q + 2 * round) % 7;

				ck_assert_int_eq(ana_hb(s, (size_t)a, 1, (size_t)b, 1), a < b);
			}
	ana_free(s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ana_model");
	TCase *tc = tcase_create("model");

	tcase_add_test(tc, match_tcp_and_last_byte);
	tcase_add_test(tc, match_tcp_hosts_and_external);
	tcase_add_test(tc, match_fork_inheritance);
	tcase_add_test(tc, match_unix_paths);
	tcase_add_test(tc, concurrent_writers_not_linked);
	tcase_add_test(tc, concurrent_readers_not_linked);
	tcase_add_test(tc, handed_over_reader_linked);
	tcase_add_test(tc, cycle_is_corrupt);
	tcase_add_test(tc, accept_after_connect);
	tcase_add_test(tc, eof_after_every_release);
	tcase_add_test(tc, ready_after_send);
	tcase_add_test(tc, builder_errors);
	tcase_add_test(tc, load_session_dir);
	tcase_add_test(tc, load_exec_segments);
	tcase_add_test(tc, wait_after_child_end);
	tcase_add_test(tc, predicates_offline);
	tcase_add_test(tc, predicate_errors);
	tcase_add_test(tc, races_found);
	tcase_add_test(tc, hb_columns_evicted);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(suite)
