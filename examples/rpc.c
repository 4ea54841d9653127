/*
 * rpc.c: an RPC chain (client -> frontend -> backend) that sometimes loses a reply.
 *
 *     rpc [--requests N] [--seed S] [--bug]
 *
 * The root process `rpc` is the client; it forks the frontend `rpc.1` and the backend
 * `rpc.2`.  All three talk over TCP on 127.0.0.1.  The client sends requests (id, x) and
 * expects (id, x*x) back; to hide latency it keeps up to two requests outstanding.  The
 * frontend forwards each request to the backend and each reply back to the client.
 * Published state (encore_mark): the client's `outstanding` and `lost`; the frontend's
 * `pending` (the id in its request slot), `inflight` (requests forwarded and not answered)
 * and `dropped`; the backend's `busy` (the id it is working on, 0 when idle).
 *
 * THE BUG: the frontend was written for one request at a time: it remembers the request it
 * is waiting for in a single `pending` slot and drops any reply whose id is not in that
 * slot as stale.  When the backend is slow (rarely: one request in 100) the client's next
 * request arrives first and overwrites the slot, so the reply to the slow request is
 * dropped and the client waits for it in vain.  --bug makes one request in three slow.
 * In a recording:
 *
 *     encore inf DIR 'rpc.1: mark.inflight == 2'       (the slot is overwritten)
 *     encore inf DIR 'rpc: mark.lost == 1'             (the client gives up on a reply)
 *
 * Output: the client prints every reply and every request it gave up on; the frontend every
 * reply it dropped; the client ends with
 *     rpc: OK: N requests, N replies
 *     rpc: BUG: K of N replies lost (first: request I)
 * and exits 0, or 1 after a BUG line (2 on errors).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "ex.h"

#define SLOW_US 120000         /* a slow backend call: longer than the client's patience */
#define THINK_MS 25            /* the client pipelines its next request after 25-40 ms */
#define REPLY_TIMEOUT_MS 500   /* the client's patience for its oldest request */
#define WAIT_MS 10000          /* start-up and shutdown waits: only a crash takes this long */

struct rpc_msg {
	uint32_t id;
	uint32_t value;        /* request: x; reply: x * x */
};

static int listener(struct sockaddr_in *addr)
{
	socklen_t len = sizeof(*addr);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)addr, sizeof(*addr)) != 0 ||
	    listen(fd, 2) != 0 || getsockname(fd, (struct sockaddr *)addr, &len) != 0)
		ex_die("cannot listen on 127.0.0.1: %s", strerror(errno));
	return fd;
}

static int dial(const struct sockaddr_in *addr, const char *whom)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (fd < 0 || connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) != 0)
		ex_die("cannot connect to the %s: %s", whom, strerror(errno));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static int take(int lfd, const char *whom)
{
	int fd, one = 1;

	if (ex_wait(lfd, WAIT_MS) <= 0 || (fd = accept(lfd, NULL, NULL)) < 0)
		ex_die("the %s did not connect", whom);
	close(lfd);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static int backend(int lfd, unsigned slow_num, unsigned slow_den)
{
	int fd = take(lfd, "frontend");
	struct rpc_msg m;

	for (int steps = 0; steps < 100000; steps++) {
		if (ex_wait(fd, WAIT_MS) <= 0 || ex_recv_all(fd, &m, sizeof(m)) != 1)
			break;          /* the frontend is done */
		encore_mark("busy", (long)m.id);
		ex_work_us(ex_chance(slow_num, slow_den) ? SLOW_US : 100 + ex_rand() % 300);
		m.value *= m.value;
		encore_mark("busy", 0);
		if (ex_send_all(fd, &m, sizeof(m)) != 0)
			break;
	}
	close(fd);
	return 0;
}

static int frontend(int lfd, const struct sockaddr_in *backend_addr)
{
	int cfd = take(lfd, "client"), bfd = dial(backend_addr, "backend");
	uint32_t pending = 0;
	long inflight = 0, dropped = 0;

	for (int steps = 0; steps < 100000; steps++) {
		struct pollfd pl[2] = { { .fd = cfd, .events = POLLIN },
		                        { .fd = bfd, .events = POLLIN } };
		struct rpc_msg m;
		int r = poll(pl, 2, WAIT_MS);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (pl[1].revents) {
			if (ex_recv_all(bfd, &m, sizeof(m)) != 1)
				break;
			encore_mark("inflight", --inflight);
			if (m.id != pending) {
				/* The bug: a reply that is not for the slot is taken for stale. */
				encore_mark("dropped", ++dropped);
				ex_say("dropping reply to request %u: not the pending one (%u)", m.id,
				       pending);
				continue;
			}
			pending = 0;
			encore_mark("pending", 0);
			if (ex_send_all(cfd, &m, sizeof(m)) != 0)
				break;
		}
		if (pl[0].revents) {
			if (ex_recv_all(cfd, &m, sizeof(m)) != 1)
				break;  /* the client is done */
			pending = m.id;  /* one slot: a pipelined request overwrites it */
			encore_mark("pending", (long)pending);
			encore_mark("inflight", ++inflight);
			if (ex_send_all(bfd, &m, sizeof(m)) != 0)
				break;
		}
	}
	close(cfd);
	close(bfd);
	return 0;
}

/* The client's side: outstanding request ids, oldest first. */
struct client {
	int fd;
	uint32_t out[2];
	int nout;
	int replies, lost;
	uint32_t first_lost;
};

static void got_reply(struct client *c, const struct rpc_msg *m)
{
	for (int i = 0; i < c->nout; i++) {
		if (c->out[i] != m->id)
			continue;
		c->out[i] = c->out[1];
		c->nout--;
		c->replies++;
		encore_mark("outstanding", c->nout);
		ex_say("reply to request %u: %u", m->id, m->value);
		return;
	}
	ex_say("reply to request %u, which was given up on", m->id);
}

/* Wait up to timeout_ms for one reply.  1 got one, 0 none in time. */
static int wait_reply(struct client *c, int timeout_ms)
{
	struct rpc_msg m;
	int r = ex_wait(c->fd, timeout_ms);

	if (r < 0)
		ex_die("poll: %s", strerror(errno));
	if (r == 0)
		return 0;
	if (ex_recv_all(c->fd, &m, sizeof(m)) != 1)
		ex_die("the frontend closed the connection");
	got_reply(c, &m);
	return 1;
}

static void give_up_oldest(struct client *c)
{
	uint32_t id = c->out[0];

	c->out[0] = c->out[1];
	c->nout--;
	if (!c->lost++)
		c->first_lost = id;
	encore_mark("lost", c->lost);
	encore_mark("outstanding", c->nout);
	ex_say("no reply to request %u within %d ms: lost", id, REPLY_TIMEOUT_MS);
}

static void usage(void)
{
	fprintf(stderr, "usage: rpc [--requests N] [--seed S] [--bug]\n"
	                "  client -> frontend -> backend; a reply is lost when the backend is slow\n"
	                "  and a pipelined request overtakes it; --bug makes slow calls likely\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int nreq = 12, bug = 0, have_seed = 0, bad, l1, l2;
	struct sockaddr_in a1, a2;
	struct client c = {0};
	uint64_t seed = 0;
	uint32_t next = 1;

	snprintf(ex_name, sizeof(ex_name), "rpc");
	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--bug"))
			bug = 1;
		else if (!strcmp(argv[a], "--requests") && a + 1 < argc)
			nreq = (int)ex_num("--requests", argv[++a], 1, 100000);
		else if (!strcmp(argv[a], "--seed") && a + 1 < argc)
			seed = (uint64_t)ex_num("--seed", argv[++a], 0, 0x7fffffff), have_seed = 1;
		else
			usage();
	}
	if (!have_seed)
		seed = ex_default_seed();
	l1 = listener(&a1);
	l2 = listener(&a2);
	ex_say("%d requests, seed %llu%s", nreq, (unsigned long long)seed,
	       bug ? ", slow backend calls likely (--bug)" : "");
	for (int k = 1; k <= 2; k++) {
		pid_t pid = fork();

		if (pid < 0)
			ex_die("fork: %s", strerror(errno));
		if (pid == 0) {
			snprintf(ex_name, sizeof(ex_name), "rpc.%d", k);
			ex_seed(seed, (unsigned)k);
			close(k == 1 ? l2 : l1);
			exit(k == 1 ? frontend(l1, &a2) : backend(l2, 1, bug ? 3 : 100));
		}
	}
	close(l2);
	c.fd = dial(&a1, "frontend");
	close(l1);
	ex_seed(seed, 0);

	/* Bounded: every pass sends a request, receives a reply or gives one up. */
	for (int steps = 0; steps < 4 * nreq + 8 && (next <= (uint32_t)nreq || c.nout); steps++) {
		if (next <= (uint32_t)nreq && c.nout < 2) {
			struct rpc_msg m = { next, next + 1 };

			if (ex_send_all(c.fd, &m, sizeof(m)) != 0)
				ex_die("the frontend went away");
			c.out[c.nout++] = next++;
			encore_mark("outstanding", c.nout);
			/* Wait a while for the reply; if it is slow, pipeline the next request
			 * (this is what overwrites the frontend's slot). */
			wait_reply(&c, THINK_MS + (int)(ex_rand() % 16));
		} else if (!wait_reply(&c, REPLY_TIMEOUT_MS)) {
			give_up_oldest(&c);
		}
	}
	close(c.fd);
	bad = ex_wait_children(2);
	if (bad)
		ex_say("%d process(es) failed", bad);
	if (c.lost) {
		ex_say("BUG: %d of %d replies lost (first: request %u)", c.lost, nreq, c.first_lost);
		return 1;
	}
	ex_say("OK: %d requests, %d replies", nreq, c.replies);
	return bad ? 2 : 0;
}
