/*
 * test_ana_pass.c: descriptors passed with SCM_RIGHTS in the analyzer (analyzer/match.c,
 * schemas/trace-format.md "Descriptor passing"): the receiver's end joins the sender's, its
 * offsets continuing from the sender's counts at the pass; passes pair in order per side of
 * the channel they travel on; a received end whose sender is not recorded is matched by its
 * addresses like any other.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "unit.h"

#include "ana.h"

struct raw {
	struct ana_session *s;
	uint64_t off[8][16][2]; /* per process and channel id: derived offsets out, in */
};

static int64_t ev_add(struct raw *r, int p, uint32_t kind, uint32_t chan, int64_t result,
                      const struct trace_endpoint *ep, uint32_t naux, const int64_t *aux,
                      const uint8_t *data, uint32_t data_len)
{
	struct trace_event ev;
	uint8_t buf[TRACE_ENDPOINT_MAX];

	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.fd = -1;
	ev.channel = chan;
	ev.result = result;
	ev.len = result > 0 ? (uint64_t)result : 1;
	if (ep) {
		int n = trace_endpoint_encode(ep, buf, sizeof(buf));

		ck_assert_int_gt(n, 0);
		ev.data = buf;
		ev.data_len = (uint32_t)n;
	} else if (data) {
		ev.data = data;
		ev.data_len = data_len;
	}
	ev.naux = naux;
	for (uint32_t i = 0; i < naux; i++)
		ev.aux[i] = aux[i];
	if (kind == TRACE_EV_SEND || kind == TRACE_EV_RECV) {
		int d = kind == TRACE_EV_RECV;

		ev.offset = r->off[p][chan][d];
		r->off[p][chan][d] += result > 0 ? (uint64_t)result : 0;
	}
	return ana_add_trace_event(r->s, p, &ev);
}

static int64_t io(struct raw *r, int p, uint32_t kind, uint32_t chan, int64_t n)
{
	return ev_add(r, p, kind, chan, n, NULL, 0, NULL, NULL, 0);
}

/* A PASS event: sent (counts of the passed channel in the data) or received (endpoint). */
static int64_t pass_ev(struct raw *r, int p, int in, uint32_t chan, uint32_t via,
                       uint64_t sent, uint64_t received, const struct trace_endpoint *ep)
{
	int64_t aux[3] = { in ? TRACE_PASS_IN : TRACE_PASS_OUT, via, TRACE_PASS_SOCKET };
	uint8_t counts[16];

	for (int k = 0; k < 8; k++) {
		counts[k] = (uint8_t)(sent >> (8 * k));
		counts[8 + k] = (uint8_t)(received >> (8 * k));
	}
	return ev_add(r, p, TRACE_EV_PASS, chan, 5, in ? ep : NULL, 3, aux, in ? NULL : counts,
	              in ? 0 : 16);
}

static void tcp_ep(struct trace_endpoint *ep, uint16_t lport, uint16_t pport)
{
	struct sockaddr_in l = {0}, pr = {0};

	memset(ep, 0, sizeof(*ep));
	ep->type = TRACE_CHAN_TCP;
	l.sin_family = pr.sin_family = AF_INET;
	l.sin_addr.s_addr = pr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l.sin_port = htons(lport);
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
	ck_assert_msg(ev.src_proc == sp && (sp == ANA_NO_PROC || ev.src_index == sk),
	              "event %d:%llu: source %u:%llu, expected %u:%llu", p,
	              (unsigned long long)k, ev.src_proc, (unsigned long long)ev.src_index, sp,
	              (unsigned long long)sk);
}

/* A master accepts a client, greets it (8 bytes) and reads 6 bytes, then passes the
 * connection over a socketpair to its forked worker, which reads the other 14 bytes and
 * answers with 46: both directions continue across the pass.  The worker's child, forked
 * after, inherits the connection and writes 4 more (its offsets continue from the worker's,
 * which continue from the master's). */
START_TEST(pass_joins_the_senders_end)
{
	struct raw r = {0};
	struct trace_endpoint ep;
	struct ana_stats st;
	int64_t pair[2] = { 2, 3 };

	ck_assert_int_eq(ana_new(&r.s), 0);
	ck_assert_int_eq(ana_add_process(r.s, "m", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(r.s, "m.1", "m", 2), 1);
	ck_assert_int_eq(ana_add_process(r.s, "c", NULL, 0), 2);
	ck_assert_int_eq(ana_add_process(r.s, "m.1.1", "m.1", 5), 3);
	ck_assert_int_eq(ana_add_inherited(r.s, 1, 3), 0);
	ck_assert_int_eq(ana_add_inherited(r.s, 3, 9), 0);

	memset(&ep, 0, sizeof(ep));
	ep.type = TRACE_CHAN_SOCKETPAIR;
	ep.inode = 100;
	ep.peer_inode = 101;
	ck_assert_int_eq(ev_add(&r, 0, TRACE_EV_PIPE, 2, 0, &ep, 2, pair, NULL, 0), 1);
	ck_assert_int_eq(ev_add(&r, 0, TRACE_EV_FORK, 0, 77, NULL, 0, NULL, NULL, 0), 2);
	tcp_ep(&ep, 80, 5000);
	ck_assert_int_eq(ev_add(&r, 0, TRACE_EV_ACCEPT, 4, 5, &ep, 0, NULL, NULL, 0), 3);
	ck_assert_int_eq(io(&r, 0, TRACE_EV_SEND, 4, 8), 4);          /* greeting [0,8) */
	ck_assert_int_eq(io(&r, 0, TRACE_EV_RECV, 4, 6), 5);          /* request [0,6) */
	ck_assert_int_eq(io(&r, 0, TRACE_EV_SEND, 2, 1), 6);          /* the command byte */
	ck_assert_int_eq(pass_ev(&r, 0, 0, 4, 2, 8, 6, NULL), 7);
	ck_assert_int_eq(ev_add(&r, 0, TRACE_EV_CLOSE, 4, 0, NULL, 0, NULL, NULL, 0), 8);

	ck_assert_int_eq(io(&r, 1, TRACE_EV_RECV, 3, 1), 1);
	tcp_ep(&ep, 80, 5000); /* the same socket: the sender's 4-tuple */
	ck_assert_int_eq(pass_ev(&r, 1, 1, 9, 3, 0, 0, &ep), 2);
	ck_assert_int_eq(io(&r, 1, TRACE_EV_RECV, 9, 14), 3);         /* [6,20) */
	ck_assert_int_eq(io(&r, 1, TRACE_EV_SEND, 9, 46), 4);         /* [8,54) */
	ck_assert_int_eq(ev_add(&r, 1, TRACE_EV_FORK, 0, 78, NULL, 0, NULL, NULL, 0), 5);
	ck_assert_int_eq(ev_add(&r, 1, TRACE_EV_CLOSE, 9, 0, NULL, 0, NULL, NULL, 0), 6);
	r.off[3][9][0] = 46; /* the reader continues the inherited counts (trace_writer_inherit) */
	r.off[3][9][1] = 14;
	ck_assert_int_eq(io(&r, 3, TRACE_EV_SEND, 9, 4), 1);          /* [54,58) */

	tcp_ep(&ep, 5000, 80);
	ck_assert_int_eq(ev_add(&r, 2, TRACE_EV_CONNECT, 3, 0, &ep, 0, NULL, NULL, 0), 1);
	ck_assert_int_eq(io(&r, 2, TRACE_EV_SEND, 3, 20), 2);
	ck_assert_int_eq(io(&r, 2, TRACE_EV_RECV, 3, 8), 3);
	ck_assert_int_eq(io(&r, 2, TRACE_EV_RECV, 3, 46), 4);
	ck_assert_int_eq(io(&r, 2, TRACE_EV_RECV, 3, 4), 5);
	ck_assert_int_eq(ana_finish(r.s, NULL), 0);

	src_is(r.s, 0, 5, 2, 2);   /* the master's 6 bytes: the client's send */
	src_is(r.s, 1, 1, 0, 6);   /* the command byte that carried the descriptor */
	src_is(r.s, 1, 3, 2, 2);   /* the worker's 14: the same send, its last byte 19 */
	src_is(r.s, 2, 3, 0, 4);   /* the greeting */
	src_is(r.s, 2, 4, 1, 4);   /* the answer, offset 8 on: the worker's send */
	src_is(r.s, 2, 5, 3, 1);   /* the worker's child's 4 bytes, offset 54 on */
	/* the send that carried the descriptor happened before the worker had it */
	ck_assert_int_eq(ana_hb(r.s, 0, 6, 1, 2), 1);
	ck_assert_int_eq(ana_stats(r.s, &st), 0);
	ck_assert_uint_eq(st.external_recvs, 0);
	ck_assert_uint_eq(st.channels, 2);
	ck_assert_uint_eq(st.channels_matched, 2);
	ana_free(r.s);
}
END_TEST

/* Two connections passed one after the other pair in order; the first goes to a worker that
 * passes it on to another worker (a descriptor passed twice). */
START_TEST(passes_pair_in_order_and_chain)
{
	struct raw r = {0};
	struct trace_endpoint ep;
	struct ana_stats st;
	int64_t pair1[2] = { 2, 3 }, pair2[2] = { 5, 6 };

	ck_assert_int_eq(ana_new(&r.s), 0);
	ck_assert_int_eq(ana_add_process(r.s, "m", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(r.s, "m.1", "m", 3), 1);   /* worker 1 */
	ck_assert_int_eq(ana_add_process(r.s, "m.2", "m", 3), 2);   /* worker 2 */
	ck_assert_int_eq(ana_add_process(r.s, "a", NULL, 0), 3);    /* client a: port 5001 */
	ck_assert_int_eq(ana_add_process(r.s, "b", NULL, 0), 4);    /* client b: port 5002 */
	ck_assert_int_eq(ana_add_inherited(r.s, 1, 3), 0);
	ck_assert_int_eq(ana_add_inherited(r.s, 1, 5), 0);
	ck_assert_int_eq(ana_add_inherited(r.s, 2, 6), 0);

	memset(&ep, 0, sizeof(ep));
	ep.type = TRACE_CHAN_SOCKETPAIR;
	ep.inode = 100;
	ep.peer_inode = 101;
	ck_assert_int_eq(ev_add(&r, 0, TRACE_EV_PIPE, 2, 0, &ep, 2, pair1, NULL, 0), 1);
	ep.inode = 102;
	ep.peer_inode = 103;
	ck_assert_int_eq(ev_add(&r, 0, TRACE_EV_PIPE, 5, 0, &ep, 2, pair2, NULL, 0), 2);
	ck_assert_int_eq(ev_add(&r, 0, TRACE_EV_FORK, 0, 77, NULL, 0, NULL, NULL, 0), 3);
	tcp_ep(&ep, 80, 5001);
	ck_assert_int_eq(ev_add(&r, 0, TRACE_EV_ACCEPT, 7, 5, &ep, 0, NULL, NULL, 0), 4);
	tcp_ep(&ep, 80, 5002);
	ck_assert_int_eq(ev_add(&r, 0, TRACE_EV_ACCEPT, 8, 6, &ep, 0, NULL, NULL, 0), 5);
	/* both connections passed to worker 1 in one message: a's first, then b's */
	ck_assert_int_eq(io(&r, 0, TRACE_EV_SEND, 2, 1), 6);
	ck_assert_int_eq(pass_ev(&r, 0, 0, 7, 2, 0, 0, NULL), 7);
	ck_assert_int_eq(pass_ev(&r, 0, 0, 8, 2, 0, 0, NULL), 8);

	ck_assert_int_eq(io(&r, 1, TRACE_EV_RECV, 3, 1), 1);
	tcp_ep(&ep, 80, 5001);
	ck_assert_int_eq(pass_ev(&r, 1, 1, 10, 3, 0, 0, &ep), 2);
	tcp_ep(&ep, 80, 5002);
	ck_assert_int_eq(pass_ev(&r, 1, 1, 11, 3, 0, 0, &ep), 3);
	ck_assert_int_eq(io(&r, 1, TRACE_EV_RECV, 11, 4), 4);         /* b's request */
	ck_assert_int_eq(io(&r, 1, TRACE_EV_RECV, 10, 3), 5);         /* a's first 3 bytes */
	/* a's connection goes on to worker 2, over the master's second socketpair */
	ck_assert_int_eq(io(&r, 1, TRACE_EV_SEND, 5, 1), 6);
	ck_assert_int_eq(pass_ev(&r, 1, 0, 10, 5, 0, 3, NULL), 7);

	ck_assert_int_eq(io(&r, 2, TRACE_EV_RECV, 6, 1), 1);
	tcp_ep(&ep, 80, 5001);
	ck_assert_int_eq(pass_ev(&r, 2, 1, 12, 6, 0, 0, &ep), 2);
	ck_assert_int_eq(io(&r, 2, TRACE_EV_RECV, 12, 5), 3);         /* a's bytes [3,8) */
	ck_assert_int_eq(io(&r, 2, TRACE_EV_SEND, 12, 2), 4);

	tcp_ep(&ep, 5001, 80);
	ck_assert_int_eq(ev_add(&r, 3, TRACE_EV_CONNECT, 3, 0, &ep, 0, NULL, NULL, 0), 1);
	ck_assert_int_eq(io(&r, 3, TRACE_EV_SEND, 3, 3), 2);          /* [0,3) */
	ck_assert_int_eq(io(&r, 3, TRACE_EV_SEND, 3, 5), 3);          /* [3,8) */
	ck_assert_int_eq(io(&r, 3, TRACE_EV_RECV, 3, 2), 4);
	tcp_ep(&ep, 5002, 80);
	ck_assert_int_eq(ev_add(&r, 4, TRACE_EV_CONNECT, 3, 0, &ep, 0, NULL, NULL, 0), 1);
	ck_assert_int_eq(io(&r, 4, TRACE_EV_SEND, 3, 4), 2);
	ck_assert_int_eq(ana_finish(r.s, NULL), 0);

	src_is(r.s, 1, 4, 4, 2);   /* b's request reached worker 1 on b's connection */
	src_is(r.s, 1, 5, 3, 2);   /* a's first send */
	src_is(r.s, 2, 1, 1, 6);   /* worker 2's command byte: worker 1's */
	src_is(r.s, 2, 3, 3, 3);   /* a's second send, after worker 1's 3 bytes */
	src_is(r.s, 3, 4, 2, 4);   /* worker 2's answer */
	ck_assert_int_eq(ana_stats(r.s, &st), 0);
	ck_assert_uint_eq(st.external_recvs, 0);
	ana_free(r.s);
}
END_TEST

/* A descriptor received from a process that is not recorded: its end is paired by its
 * addresses, as an end met at first use would be. */
START_TEST(pass_from_an_unrecorded_sender)
{
	struct raw r = {0};
	struct trace_endpoint ep;
	struct ana_stats st;
	int64_t aux[2] = { 2, 1 };

	ck_assert_int_eq(ana_new(&r.s), 0);
	ck_assert_int_eq(ana_add_process(r.s, "w", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(r.s, "c", NULL, 0), 1);
	memset(&ep, 0, sizeof(ep));
	ep.type = TRACE_CHAN_UNIX;
	ep.inode = 300;
	ck_assert_int_eq(ev_add(&r, 0, TRACE_EV_SOCKET, 2, 3, &ep, 2, aux, NULL, 0), 1);
	ck_assert_int_eq(io(&r, 0, TRACE_EV_RECV, 2, 1), 2);
	tcp_ep(&ep, 80, 5000);
	ck_assert_int_eq(pass_ev(&r, 0, 1, 4, 2, 0, 0, &ep), 3);
	ck_assert_int_eq(io(&r, 0, TRACE_EV_RECV, 4, 5), 4);
	tcp_ep(&ep, 5000, 80);
	ck_assert_int_eq(ev_add(&r, 1, TRACE_EV_CONNECT, 3, 0, &ep, 0, NULL, NULL, 0), 1);
	ck_assert_int_eq(io(&r, 1, TRACE_EV_SEND, 3, 5), 2);
	ck_assert_int_eq(ana_finish(r.s, NULL), 0);
	src_is(r.s, 0, 4, 1, 2);
	ck_assert_int_eq(ana_stats(r.s, &st), 0);
	ck_assert_uint_eq(st.external_recvs, 1); /* the command byte from outside */
	ana_free(r.s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ana_pass");
	TCase *t = tcase_create("pass");

	tcase_add_test(t, pass_joins_the_senders_end);
	tcase_add_test(t, passes_pair_in_order_and_chain);
	tcase_add_test(t, pass_from_an_unrecorded_sender);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)
