/*
 * test_ana_dgram.c: datagram matching (analyzer/dgram.c, analyzer/README.md "Datagrams")
 * against the truth of generated traces.  Processes with one UDP socket each (127.0.0.1,
 * port 5000 + p) exchange datagrams through a simulated network that loses some and
 * delivers the rest in any order; the events are logged as the recorder logs them (a send
 * with its hash and addresses, a receive as INPUT with its bytes and source address).
 *   - every receive is linked to the send it came from (the brute-force twin: the
 *     simulator knows it), lost sends to none, and happened-before (ana_hb) is the closure
 *     of program order and those edges, computed here by brute force;
 *   - identical datagrams in one flow: each receive gets a send of the same flow and
 *     content, no send twice, always one sent before the receive;
 *   - connected sockets (no address in the receive), a receive cut short by a small
 *     buffer, a datagram from outside (external input), and a poll that found a datagram
 *     there (after its send) by hand;
 *   - Unix datagram sockets: by path, and from a sender without a name;
 *   - message races on a datagram socket: another process's datagram not received yet,
 *     unless the receive happened before its send.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "ana.h"
#include "trace.h"
#include "unit.h"

#define NP_MAX 5
#define NDG_MAX 400

struct dg {
	int from, to;
	uint64_t send_idx;   /* sender's event */
	uint64_t recv_idx;   /* receiver's event, 0 when lost or not received */
	char text[32];
	int state;           /* 0 in flight, 1 received, 2 lost */
};

struct sim {
	struct ana_session *s;
	int np;
	uint64_t nev[NP_MAX];
	struct dg d[NDG_MAX];
	int nd;
};

static struct sockaddr_in addr_of(int p)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)(5000 + p));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

static uint64_t add(struct sim *m, int p, struct trace_event *ev)
{
	int64_t k = ana_add_trace_event(m->s, p, ev);

	ck_assert_int_gt(k, 0);
	m->nev[p] = (uint64_t)k;
	return (uint64_t)k;
}

/* SOCKET then BIND (or CONNECT to `peer` >= 0) of a UDP socket, channel 1. */
static void sock(struct sim *m, int p, int peer)
{
	struct trace_endpoint ep;
	struct trace_event ev;
	struct sockaddr_in a = addr_of(p), b;
	uint8_t buf[TRACE_ENDPOINT_MAX];
	int n;

	memset(&ev, 0, sizeof(ev));
	memset(&ep, 0, sizeof(ep));
	ep.type = TRACE_CHAN_UDP;
	n = trace_endpoint_encode(&ep, buf, sizeof(buf));
	ev.kind = TRACE_EV_SOCKET;
	ev.channel = 1;
	ev.fd = 3;
	ev.result = 3;
	ev.data = buf;
	ev.data_len = (uint32_t)n;
	add(m, p, &ev);
	memcpy(ep.local, &a, sizeof(a));
	ep.local_len = sizeof(a);
	if (peer >= 0) {
		b = addr_of(peer);
		memcpy(ep.peer, &b, sizeof(b));
		ep.peer_len = sizeof(b);
	}
	n = trace_endpoint_encode(&ep, buf, sizeof(buf));
	ev.kind = peer >= 0 ? TRACE_EV_CONNECT : TRACE_EV_BIND;
	ev.result = 0;
	ev.data = buf;
	ev.data_len = (uint32_t)n;
	add(m, p, &ev);
}

/* A datagram send as recorder/chan.c logs it; to < 0: on a connected socket. */
static uint64_t send_dg(struct sim *m, int p, int to, const char *text)
{
	struct trace_event ev;
	struct sockaddr_in b;
	uint8_t data[sizeof(b)];
	size_t n = strlen(text);

	memset(&ev, 0, sizeof(ev));
	ev.kind = TRACE_EV_SEND;
	ev.call = to >= 0 ? TRACE_CALL_SENDTO : TRACE_CALL_SEND;
	ev.channel = 1;
	ev.fd = 3;
	ev.result = (int64_t)n;
	ev.len = n;
	ev.naux = 3;
	ev.aux[0] = trace_hash(0, text, n);
	if (to >= 0) {
		b = addr_of(to);
		memcpy(data, &b, sizeof(b));
		ev.aux[1] = sizeof(b);
		ev.data = data;
		ev.data_len = sizeof(b);
	}
	return add(m, p, &ev);
}

/* A datagram receive of an unrecorded-looking kind (INPUT): the first `keep` bytes of text,
 * result `result`, then the source address when from >= 0. */
static uint64_t recv_dg(struct sim *m, int p, int from, const char *text, size_t keep,
                        int64_t result, uint32_t flags)
{
	struct trace_event ev;
	struct sockaddr_in a;
	uint8_t data[64 + sizeof(a)];

	memset(&ev, 0, sizeof(ev));
	ev.kind = TRACE_EV_INPUT;
	ev.call = from >= 0 ? TRACE_CALL_RECVFROM : TRACE_CALL_RECV;
	ev.channel = 1;
	ev.fd = 3;
	ev.result = result;
	ev.len = keep < strlen(text) ? keep : 64; /* cut: it filled the room */
	ev.flags = flags;
	memcpy(data, text, keep);
	ev.data = data;
	ev.data_len = (uint32_t)keep;
	if (from >= 0) {
		a = addr_of(from);
		memcpy(data + keep, &a, sizeof(a));
		ev.naux = 2;
		ev.aux[0] = sizeof(a);
		ev.aux[1] = 0;
		ev.data_len += sizeof(a);
	}
	return add(m, p, &ev);
}

static void sim_start(struct sim *m, int np)
{
	char name[16];

	memset(m, 0, sizeof(*m));
	ck_assert_int_eq(ana_new(&m->s), 0);
	m->np = np;
	for (int p = 0; p < np; p++) {
		snprintf(name, sizeof(name), "p%d", p);
		ck_assert_int_eq(ana_add_process(m->s, name, NULL, 0), p);
		sock(m, p, -1);
	}
}

/* A random run: at each step a process sends a new datagram to another, receives one of
 * those in flight to it (any of them: reordering), or the network loses one.  dup: the
 * percentage of datagrams repeating the content of an earlier one of the same flow. */
static void sim_run(struct sim *m, struct unit_rng *r, int steps, int dup)
{
	for (int t = 0; t < steps && m->nd < NDG_MAX; t++) {
		int p = (int)unit_rng_below(r, (uint64_t)m->np), act = (int)unit_rng_below(r, 10);
		int inflight[NDG_MAX], ni = 0;

		for (int i = 0; i < m->nd; i++)
			if (m->d[i].state == 0 && m->d[i].to == p)
				inflight[ni++] = i;
		if (act < 4 || ni == 0) {
			struct dg *d = &m->d[m->nd];
			int to = (int)unit_rng_below(r, (uint64_t)m->np - 1);

			d->from = p;
			d->to = to >= p ? to + 1 : to;
			snprintf(d->text, sizeof(d->text), "dg %d", m->nd);
			if ((int)unit_rng_below(r, 100) < dup)
				for (int i = m->nd - 1; i >= 0; i--)
					if (m->d[i].from == d->from && m->d[i].to == d->to) {
						memcpy(d->text, m->d[i].text, sizeof(d->text));
						break;
					}
			d->send_idx = send_dg(m, p, d->to, d->text);
			m->nd++;
		} else if (act < 9) {
			struct dg *d = &m->d[inflight[unit_rng_below(r, (uint64_t)ni)]];
			size_t n = strlen(d->text);

			d->recv_idx = recv_dg(m, p, d->from, d->text, n, (int64_t)n, 0);
			d->state = 1;
		} else {
			m->d[inflight[unit_rng_below(r, (uint64_t)ni)]].state = 2;
		}
	}
	ck_assert_int_eq(ana_finish(m->s, NULL), 0);
}

/* Brute force: happened-before as the transitive closure of program order and the true
 * message edges, over every pair of events. */
static void check_hb(struct sim *m)
{
	static uint8_t hb[NP_MAX * 600][NP_MAX * 600];
	uint64_t base[NP_MAX + 1], n;
	int changed = 1;

	base[0] = 0;
	for (int p = 0; p < m->np; p++)
		base[p + 1] = base[p] + m->nev[p];
	n = base[m->np];
	ck_assert_uint_le(n, NP_MAX * 600);
	for (uint64_t i = 0; i < n; i++)
		memset(hb[i], 0, n);
	for (int p = 0; p < m->np; p++)
		for (uint64_t k = 1; k < m->nev[p]; k++)
			hb[base[p] + k - 1][base[p] + k] = 1;
	for (int i = 0; i < m->nd; i++)
		if (m->d[i].state == 1)
			hb[base[m->d[i].from] + m->d[i].send_idx - 1][base[m->d[i].to] + m->d[i].recv_idx - 1] = 1;
	while (changed) { /* Warshall would do; the traces are small */
		changed = 0;
		for (uint64_t a = 0; a < n; a++)
			for (uint64_t b = 0; b < n; b++)
				if (hb[a][b])
					for (uint64_t c = 0; c < n; c++)
						if (hb[b][c] && !hb[a][c])
							hb[a][c] = changed = 1;
	}
	for (int p = 0; p < m->np; p++)
		for (uint64_t i = 1; i <= m->nev[p]; i++)
			for (int q = 0; q < m->np; q++)
				for (uint64_t j = 1; j <= m->nev[q]; j++)
					ck_assert_msg(ana_hb(m->s, (size_t)p, i, (size_t)q, j) ==
					              hb[base[p] + i - 1][base[q] + j - 1],
					              "hb(p%d.%llu, p%d.%llu) differs from the brute force", p,
					              (unsigned long long)i, q, (unsigned long long)j);
}

START_TEST(random_unique)
{
	struct unit_rng r;

	unit_rng_seed(&r, unit_seed() + (uint64_t)_i);
	for (int round = 0; round < 8; round++) {
		struct sim m;
		int linked = 0, lost = 0;
		struct ana_stats st;

		sim_start(&m, 2 + (int)unit_rng_below(&r, NP_MAX - 1));
		sim_run(&m, &r, 40 + (int)unit_rng_below(&r, 160), 0);
		for (int i = 0; i < m.nd; i++) {
			struct ana_event ev;
			const struct dg *d = &m.d[i];

			if (d->state != 1) {
				ck_assert_int_eq(ana_event_get(m.s, (size_t)d->from, d->send_idx, &ev), 0);
				ck_assert_uint_eq(ev.src_proc, ANA_NO_PROC); /* no receive took it */
				lost++;
				continue;
			}
			ck_assert_int_eq(ana_event_get(m.s, (size_t)d->to, d->recv_idx, &ev), 0);
			ck_assert_msg(ev.kind == TRACE_EV_RECV && ev.src_proc == (uint32_t)d->from &&
			              ev.src_index == d->send_idx,
			              "round %d: datagram %d (p%d.%llu -> p%d.%llu) linked to %u.%llu",
			              round, i, d->from, (unsigned long long)d->send_idx, d->to,
			              (unsigned long long)d->recv_idx, ev.src_proc,
			              (unsigned long long)ev.src_index);
			ck_assert_int_eq(ev.external, 0);
			linked++;
		}
		ck_assert_int_eq(ana_stats(m.s, &st), 0);
		ck_assert_uint_eq(st.messages, (uint64_t)linked);
		ck_assert_uint_eq(st.external_recvs, 0);
		if (round < 3)
			check_hb(&m);
		(void)lost;
		ana_free(m.s);
	}
}
END_TEST

START_TEST(random_duplicates)
{
	struct unit_rng r;

	unit_rng_seed(&r, unit_seed() * 7 + (uint64_t)_i);
	for (int round = 0; round < 8; round++) {
		struct sim m;
		uint8_t taken[NP_MAX][2048];

		memset(taken, 0, sizeof(taken));
		sim_start(&m, 2 + (int)unit_rng_below(&r, NP_MAX - 1));
		sim_run(&m, &r, 60 + (int)unit_rng_below(&r, 200), 50);
		for (int i = 0; i < m.nd; i++) {
			struct ana_event ev;
			const struct dg *d = &m.d[i];
			const struct dg *s = NULL;

			if (d->state != 1)
				continue;
			ck_assert_int_eq(ana_event_get(m.s, (size_t)d->to, d->recv_idx, &ev), 0);
			ck_assert_int_eq(ev.kind, TRACE_EV_RECV);
			ck_assert_uint_eq(ev.src_proc, (uint32_t)d->from);
			for (int j = 0; j < m.nd; j++)
				if (m.d[j].from == d->from && m.d[j].send_idx == ev.src_index)
					s = &m.d[j];
			ck_assert_ptr_nonnull(s);
			ck_assert_int_eq(s->to, d->to);
			ck_assert_str_eq(s->text, d->text);
			/* not always the true one, but always sent before this receive: the m-th
			 * receive of a flow's content takes the m-th earliest send of it */
			ck_assert_int_eq(ana_hb(m.s, (size_t)s->from, s->send_idx, (size_t)d->to,
			                        d->recv_idx), 1);
			ck_assert_int_eq(taken[s->from][s->send_idx], 0);
			taken[s->from][s->send_idx] = 1;
		}
		ana_free(m.s);
	}
}
END_TEST

/* By hand: a connected client (send and recv without addresses), a reply read into a small
 * buffer (cut short, no MSG_TRUNC), one with MSG_TRUNC, one datagram from outside, one
 * lost, two received in the other order than sent, and a reply read with recv on a socket
 * not connected (no source address). */
START_TEST(by_hand)
{
	struct sim m;
	struct ana_event ev;
	uint64_t s1, s2, s3, s4, s5, lostk, r1, r2, r3, r4, r5, rx, py1, py2, pr1, pr2, ready;
	const char *big = "a rather long answer";

	memset(&m, 0, sizeof(m));
	ck_assert_int_eq(ana_new(&m.s), 0);
	ck_assert_int_eq(ana_add_process(m.s, "srv", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(m.s, "cli", NULL, 0), 1);
	ck_assert_int_eq(ana_add_process(m.s, "py", NULL, 0), 2);
	sock(&m, 0, -1);
	sock(&m, 1, 0);                          /* connected to the server */
	sock(&m, 2, -1);
	s1 = send_dg(&m, 1, -1, "hello");
	lostk = send_dg(&m, 1, -1, "lost one");
	s2 = send_dg(&m, 1, -1, "first");
	s3 = send_dg(&m, 1, -1, "second");
	{
		/* poll found the socket readable: after the send of what the next receive took */
		struct trace_event rd;

		memset(&rd, 0, sizeof(rd));
		rd.kind = TRACE_EV_READY;
		rd.fd = -1;
		rd.result = 1;
		rd.naux = 1;
		rd.aux[0] = 1; /* channel 1 */
		ready = add(&m, 0, &rd);
	}
	r1 = recv_dg(&m, 0, 1, "hello", 5, 5, 0);
	r3 = recv_dg(&m, 0, 1, "second", 6, 6, 0);
	r2 = recv_dg(&m, 0, 1, "first", 5, 5, 0);
	rx = recv_dg(&m, 0, 3, "from outside", 12, 12, 0);  /* port 5003: nobody recorded */
	s4 = send_dg(&m, 0, 1, big);
	s5 = send_dg(&m, 0, 1, big);
	r4 = recv_dg(&m, 1, -1, big, 4, 4, 0);               /* cut to 4 bytes of room */
	r5 = recv_dg(&m, 1, -1, big, 4, (int64_t)strlen(big), TRACE_FL_TRUNC);
	/* sendto, then recv without the source on a socket not connected (Python's s.recv) */
	py1 = send_dg(&m, 2, 0, "query");
	pr1 = recv_dg(&m, 0, 2, "query", 5, 5, 0);
	py2 = send_dg(&m, 0, 2, "reply");
	pr2 = recv_dg(&m, 2, -1, "reply", 5, 5, 0);
	ck_assert_int_eq(ana_finish(m.s, NULL), 0);
	ck_assert_int_eq(ana_event_get(m.s, 0, pr1, &ev), 0);
	ck_assert_uint_eq(ev.src_proc, 2);
	ck_assert_uint_eq(ev.src_index, py1);
	ck_assert_int_eq(ana_event_get(m.s, 2, pr2, &ev), 0);
	ck_assert_uint_eq(ev.src_proc, 0);
	ck_assert_uint_eq(ev.src_index, py2);

	ck_assert_int_eq(ana_event_get(m.s, 0, r1, &ev), 0);
	ck_assert_uint_eq(ev.src_proc, 1);
	ck_assert_uint_eq(ev.src_index, s1);
	ck_assert_int_eq(ana_event_get(m.s, 0, r2, &ev), 0);
	ck_assert_uint_eq(ev.src_index, s2);
	ck_assert_int_eq(ana_event_get(m.s, 0, r3, &ev), 0);
	ck_assert_uint_eq(ev.src_index, s3);
	ck_assert_int_eq(ana_event_get(m.s, 0, rx, &ev), 0);
	ck_assert_uint_eq(ev.kind, TRACE_EV_INPUT);
	ck_assert_uint_eq(ev.src_proc, ANA_NO_PROC);
	ck_assert_int_eq(ana_event_get(m.s, 1, lostk, &ev), 0);
	ck_assert_uint_eq(ev.src_proc, ANA_NO_PROC);
	ck_assert_int_eq(ana_event_get(m.s, 1, r4, &ev), 0);
	ck_assert_uint_eq(ev.src_proc, 0);
	ck_assert_uint_eq(ev.src_index, s4);
	ck_assert_int_eq(ana_event_get(m.s, 1, r5, &ev), 0);
	ck_assert_uint_eq(ev.src_proc, 0);
	ck_assert_uint_eq(ev.src_index, s5);
	/* the reply went after the requests were received */
	ck_assert_int_eq(ana_hb(m.s, 1, s1, 1, r4), 1);
	ck_assert_int_eq(ana_hb(m.s, 1, s3, 0, s4), 1);
	ck_assert_int_eq(ana_hb(m.s, 1, lostk, 0, r1), 0);
	ck_assert_int_eq(ana_hb(m.s, 1, s1, 0, ready), 1);
	ck_assert_int_eq(ana_hb(m.s, 1, s2, 0, ready), 0);
	ana_free(m.s);
}
END_TEST

/* A Unix datagram socket of process p, channel 1, bound to `path` unless NULL. */
static void usock(struct sim *m, int p, const char *path)
{
	struct trace_endpoint ep;
	struct trace_event ev;
	struct sockaddr_un u;
	uint8_t buf[TRACE_ENDPOINT_MAX];
	int n;

	memset(&ev, 0, sizeof(ev));
	memset(&ep, 0, sizeof(ep));
	ep.type = TRACE_CHAN_OTHER; /* as the recorder types AF_UNIX SOCK_DGRAM */
	n = trace_endpoint_encode(&ep, buf, sizeof(buf));
	ev.kind = TRACE_EV_SOCKET;
	ev.channel = 1;
	ev.fd = 3;
	ev.result = 3;
	ev.naux = 2;
	ev.aux[0] = AF_UNIX;
	ev.aux[1] = SOCK_DGRAM | SOCK_CLOEXEC;
	ev.data = buf;
	ev.data_len = (uint32_t)n;
	add(m, p, &ev);
	if (!path)
		return;
	memset(&u, 0, sizeof(u));
	u.sun_family = AF_UNIX;
	snprintf(u.sun_path, sizeof(u.sun_path), "%s", path);
	memcpy(ep.local, &u, sizeof(u));
	ep.local_len = sizeof(u);
	n = trace_endpoint_encode(&ep, buf, sizeof(buf));
	memset(&ev, 0, sizeof(ev));
	ev.kind = TRACE_EV_BIND;
	ev.channel = 1;
	ev.fd = 3;
	ev.data = buf;
	ev.data_len = (uint32_t)n;
	add(m, p, &ev);
}

/* A Unix datagram send to `path`, or its receive from `path` (NULL: a sender without a name,
 * whose address is the family alone). */
static uint64_t udg(struct sim *m, int p, int send, const char *path, const char *text)
{
	struct trace_event ev;
	struct sockaddr_un u;
	uint8_t data[64 + sizeof(u)];
	size_t n = strlen(text), al = path ? sizeof(u) : offsetof(struct sockaddr_un, sun_path);

	memset(&u, 0, sizeof(u));
	u.sun_family = AF_UNIX;
	if (path)
		snprintf(u.sun_path, sizeof(u.sun_path), "%s", path);
	memset(&ev, 0, sizeof(ev));
	ev.kind = send ? TRACE_EV_SEND : TRACE_EV_INPUT;
	ev.channel = 1;
	ev.fd = 3;
	ev.result = (int64_t)n;
	ev.len = n;
	if (send) {
		ev.naux = 3;
		ev.aux[0] = trace_hash(0, text, n);
		ev.aux[1] = (int64_t)al;
		memcpy(data, &u, al);
		ev.data_len = (uint32_t)al;
	} else {
		memcpy(data, text, n);
		memcpy(data + n, &u, al);
		ev.naux = 2;
		ev.aux[0] = (int64_t)al;
		ev.data_len = (uint32_t)(n + al);
	}
	ev.data = data;
	return add(m, p, &ev);
}

START_TEST(unix_dgram)
{
	struct sim m;
	struct ana_event ev;
	uint64_t s1, s2, s3, r1, r2, r3;

	memset(&m, 0, sizeof(m));
	ck_assert_int_eq(ana_new(&m.s), 0);
	ck_assert_int_eq(ana_add_process(m.s, "srv", NULL, 0), 0);
	ck_assert_int_eq(ana_add_process(m.s, "cli", NULL, 0), 1);
	ck_assert_int_eq(ana_add_process(m.s, "anon", NULL, 0), 2);
	usock(&m, 0, "/run/s");
	usock(&m, 1, "/run/c");
	usock(&m, 2, NULL);
	s1 = udg(&m, 1, 1, "/run/s", "ping");
	s3 = udg(&m, 2, 1, "/run/s", "ping");   /* the same bytes, from a socket with no name */
	r3 = udg(&m, 0, 0, NULL, "ping");
	r1 = udg(&m, 0, 0, "/run/c", "ping");
	s2 = udg(&m, 0, 1, "/run/c", "pong");
	r2 = udg(&m, 1, 0, "/run/s", "pong");
	ck_assert_int_eq(ana_finish(m.s, NULL), 0);
	ck_assert_int_eq(ana_event_get(m.s, 0, r1, &ev), 0);
	ck_assert_uint_eq(ev.src_proc, 1);
	ck_assert_uint_eq(ev.src_index, s1);
	ck_assert_int_eq(ana_event_get(m.s, 0, r3, &ev), 0);
	ck_assert_uint_eq(ev.src_proc, 2);
	ck_assert_uint_eq(ev.src_index, s3);
	ck_assert_int_eq(ana_event_get(m.s, 1, r2, &ev), 0);
	ck_assert_uint_eq(ev.src_proc, 0);
	ck_assert_uint_eq(ev.src_index, s2);
	ana_free(m.s);
}
END_TEST

/* srv receives A1 from a, then answers b, which then sends B2; with early, b sent B1 first:
 * A1's receive could have taken B1 instead (a race), never B2 (sent after it). */
static void race_case(int early)
{
	struct sim m;
	struct ana_race *v = NULL;
	size_t n = 0;
	uint64_t a1, b1 = 0, r1;

	memset(&m, 0, sizeof(m));
	ck_assert_int_eq(ana_new(&m.s), 0);
	for (int p = 0; p < 3; p++) {
		char name[8];

		snprintf(name, sizeof(name), "p%d", p);
		ck_assert_int_eq(ana_add_process(m.s, name, NULL, 0), p);
		sock(&m, p, -1);
	}
	a1 = send_dg(&m, 1, 0, "A1");
	if (early)
		b1 = send_dg(&m, 2, 0, "B1");
	r1 = recv_dg(&m, 0, 1, "A1", 2, 2, 0);
	send_dg(&m, 0, 2, "go");
	recv_dg(&m, 2, 0, "go", 2, 2, 0);
	send_dg(&m, 2, 0, "B2");
	if (early)
		recv_dg(&m, 0, 2, "B1", 2, 2, 0);
	recv_dg(&m, 0, 2, "B2", 2, 2, 0);
	ck_assert_int_eq(ana_finish(m.s, NULL), 0);
	ck_assert_int_eq(ana_races(m.s, &v, &n), 0);
	ck_assert_uint_eq(n, early ? 1 : 0);
	if (early) {
		ck_assert_uint_eq(v[0].proc, 0);
		ck_assert_uint_eq(v[0].recv, r1);
		ck_assert_uint_eq(v[0].src_proc, 1);
		ck_assert_uint_eq(v[0].src_send, a1);
		ck_assert_uint_eq(v[0].rival_proc, 2);
		ck_assert_uint_eq(v[0].rival_send, b1);
	}
	free(v);
	ana_free(m.s);
}

START_TEST(races)
{
	race_case(1);
	race_case(0);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ana_dgram");
	TCase *tc = tcase_create("dgram");

	tcase_add_loop_test(tc, random_unique, 0, 4);
	tcase_add_loop_test(tc, random_duplicates, 0, 4);
	tcase_add_test(tc, by_hand);
	tcase_add_test(tc, unix_dgram);
	tcase_add_test(tc, races);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(suite)
