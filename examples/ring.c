/*
 * ring.c: a token ring whose mutual exclusion sometimes breaks.
 *
 *     ring [--nodes N] [--hops H] [--seed S] [--bug]
 *
 * The root process `ring` forks N nodes (`ring.1` ... `ring.N`, N >= 2) joined in a ring of
 * TCP connections on 127.0.0.1: node i sends to node i+1, the last to node 1.  One token
 * circulates; a node may enter its critical section only while it holds the token, and
 * publishes that with encore_mark("holding", 1/0).  Every node also reports "enter" and
 * "leave" to the root over a pipe, stamped with the time; at the end the root prints them
 * in time order and checks mutual exclusion.
 *
 * THE BUG: a node that has seen the token once and then waits longer than a timeout for it
 * concludes that the token was lost and regenerates it.  But the token was only slow: some
 * node held it for a long time (a long critical section).  From then on two tokens
 * circulate and two nodes can be in their critical sections at once.  Long holds are rare
 * by default (about one hold in 150), so the bug shows in some runs only; --bug makes one
 * hold in six long.  Find it in a recording with
 *
 *     encore inf DIR 'ring.1: mark.holding == 1 && ring.2: mark.holding == 1'
 *
 * Output: nodes print what they regenerate; the root prints one line per enter/leave (in
 * time order, once every node has ended), then either
 *     ring: OK: mutual exclusion held (E entries)
 *     ring: BUG: ring.A and ring.B held the token at once
 * and exits 0, or 1 after a BUG line (2 on errors).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "ex.h"

#define MAX_NODES 16
#define TIMEOUT_MS 200       /* a node suspects loss after this long without the token */
#define LONG_HOLD_US 400000  /* a long critical section: well over the timeout */
#define FIRST_WAIT_MS 10000  /* start-up: nobody suspects a token it has never seen */

struct token {
	uint32_t hops;     /* critical sections entered with this token so far */
	uint32_t gen;      /* 1 for the original; 100 * i + k when node i regenerates */
};

struct report {            /* node -> root, one atomic pipe write each */
	int32_t node;
	int32_t what;      /* 'E' enter, 'L' leave, 'R' regenerated */
	uint32_t gen, hops;
	int64_t t_ns;      /* CLOCK_MONOTONIC: one clock for every process of the host */
};

static int report_fd = -1;

static void report(int node, int what, const struct token *t)
{
	struct report r = { node, what, t->gen, t->hops, 0 };
	struct timespec ts;

	/* The root reads the nodes' pipes in whatever order poll gives, so it orders the
	 * reports by this time: taken after entering and before leaving, it never makes two
	 * holds overlap that did not. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	r.t_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;

	if (write(report_fd, &r, sizeof(r)) != (ssize_t)sizeof(r))
		ex_die("cannot report to the root: %s", strerror(errno));
}

/* SO_REUSEADDR, as servers set it: a node that closes its accepted connection first leaves
 * it in TIME_WAIT on the listening port for a minute, and a replay started in that minute
 * binds the recorded port again; Linux lets it only when both sockets have the option (the
 * accepted one inherits it from here). */
static int listener(struct sockaddr_in *addr)
{
	socklen_t len = sizeof(*addr);
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(fd, (struct sockaddr *)addr, sizeof(*addr)) != 0 ||
	    listen(fd, 4) != 0 || getsockname(fd, (struct sockaddr *)addr, &len) != 0)
		ex_die("cannot listen on 127.0.0.1: %s", strerror(errno));
	return fd;
}

static int node(int i, int n, int hops_max, long long_num, long long_den, const int *lfd,
                const struct sockaddr_in *addr)
{
	struct token tok = { 0, 1 };
	int have = i == 1, seen = i == 1, regens = 0, one = 1;
	int out, in, succ = i % n + 1;
	long step;

	for (int k = 1; k <= n; k++)
		if (k != i)
			close(lfd[k]);
	out = socket(AF_INET, SOCK_STREAM, 0);
	if (out < 0 || connect(out, (const struct sockaddr *)&addr[succ], sizeof(addr[succ])) != 0)
		ex_die("cannot connect to ring.%d: %s", succ, strerror(errno));
	setsockopt(out, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if ((in = accept(lfd[i], NULL, NULL)) < 0)
		ex_die("accept from the predecessor failed: %s", strerror(errno));
	close(lfd[i]);

	/* Bounded: every step either passes a token on or ends the node. */
	for (step = 0; step < 4L * hops_max + 16; step++) {
		if (!have) {
			int r = ex_wait(in, seen ? TIMEOUT_MS : FIRST_WAIT_MS);

			if (r < 0)
				ex_die("poll: %s", strerror(errno));
			if (r == 0 && (!seen || regens)) {
				/* Never seen, or already regenerated once: the ring is gone, or so
				 * broken that going on would only repeat the bug. */
				ex_say("no token for %d ms; giving up", seen ? TIMEOUT_MS : FIRST_WAIT_MS);
				break;
			}
			if (r == 0) {
				/* The bug: silence is taken for loss, and a second token is made. */
				tok.gen = (uint32_t)(100 * i + ++regens);
				report(i, 'R', &tok);
				ex_say("no token for %d ms: regenerating it (gen %u)", TIMEOUT_MS, tok.gen);
			} else if (ex_recv_all(in, &tok, sizeof(tok)) != 1) {
				break;          /* the predecessor ended */
			}
			have = seen = 1;
		}
		if (tok.hops >= (uint32_t)hops_max) {
			/* Pass the final token on so that every node learns the run is over. */
			ex_send_all(out, &tok, sizeof(tok));
			break;
		}
		encore_mark("holding", 1);
		report(i, 'E', &tok);
		ex_work_us(ex_chance((unsigned)long_num, (unsigned)long_den) ? LONG_HOLD_US
		                                                            : 300 + ex_rand() % 700);
		report(i, 'L', &tok);
		encore_mark("holding", 0);
		tok.hops++;
		have = 0;
		if (ex_send_all(out, &tok, sizeof(tok)) != 0)
			break;          /* the successor ended */
	}
	close(out);
	close(in);
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct report *x = a, *y = b;

	if (x->t_ns != y->t_ns)
		return x->t_ns < y->t_ns ? -1 : 1;
	/* Same instant (coarse clocks): a leave first, so only a real overlap counts. */
	return (x->what == 'E') - (y->what == 'E');
}

/* What the root does with one report: print it, and check that nobody else holds. */
static void monitor(const struct report *r, int n, int *holder, int *entries, int *first_a,
                    int *first_b)
{
	if (r->what == 'R') {
		ex_say("ring.%d regenerated the token (gen %u)", r->node, r->gen);
	} else if (r->what == 'E') {
		(*entries)++;
		for (int k = 1; k <= n; k++)
			if (holder[k] && k != r->node && !*first_a) {
				*first_a = k < r->node ? k : r->node;
				*first_b = k < r->node ? r->node : k;
			}
		holder[r->node] = 1;
		ex_say("ring.%d enters (token gen %u, hop %u)", r->node, r->gen, r->hops);
	} else {
		holder[r->node] = 0;
		ex_say("ring.%d leaves", r->node);
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: ring [--nodes N] [--hops H] [--seed S] [--bug]\n"
	                "  a token ring whose mutual exclusion breaks when a slow token is taken\n"
	                "  for lost; --bug makes long critical sections (and so the bug) likely\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int n = 3, hops = 24, bug = 0, lfd[MAX_NODES + 1], entries = 0, bad = 0, open_pipes;
	int pfd[MAX_NODES + 1][2];
	struct pollfd pl[MAX_NODES + 1];
	int holder[MAX_NODES + 1] = {0}, first_a = 0, first_b = 0;
	struct sockaddr_in addr[MAX_NODES + 1];
	uint64_t seed = 0;
	int have_seed = 0;
	struct report *log = NULL;
	size_t nlog = 0, caplog = 0;

	snprintf(ex_name, sizeof(ex_name), "ring");
	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--bug"))
			bug = 1;
		else if (!strcmp(argv[a], "--nodes") && a + 1 < argc)
			n = (int)ex_num("--nodes", argv[++a], 2, MAX_NODES);
		else if (!strcmp(argv[a], "--hops") && a + 1 < argc)
			hops = (int)ex_num("--hops", argv[++a], 1, 100000);
		else if (!strcmp(argv[a], "--seed") && a + 1 < argc)
			seed = (uint64_t)ex_num("--seed", argv[++a], 0, 0x7fffffff), have_seed = 1;
		else
			usage();
	}
	if (!have_seed)
		seed = ex_default_seed();
	for (int i = 1; i <= n; i++)
		lfd[i] = listener(&addr[i]);
	/* One report pipe per node: encore links messages of a channel with one writer. */
	for (int i = 1; i <= n; i++)
		if (pipe(pfd[i]) != 0)
			ex_die("pipe: %s", strerror(errno));
	ex_say("%d nodes, %d hops, seed %llu%s", n, hops, (unsigned long long)seed,
	       bug ? ", long critical sections likely (--bug)" : "");
	for (int i = 1; i <= n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			ex_die("fork: %s", strerror(errno));
		if (pid == 0) {
			snprintf(ex_name, sizeof(ex_name), "ring.%d", i);
			for (int k = 1; k <= n; k++) {
				close(pfd[k][0]);
				if (k != i)
					close(pfd[k][1]);
			}
			report_fd = pfd[i][1];
			ex_seed(seed, (unsigned)i);
			exit(node(i, n, hops, 1, bug ? 6 : 150, lfd, addr));
		}
	}
	for (int i = 1; i <= n; i++) {
		close(pfd[i][1]);
		close(lfd[i]);
		pl[i - 1] = (struct pollfd){ .fd = pfd[i][0], .events = POLLIN };
	}
	open_pipes = n;

	/* The monitor: hears every enter and leave (pipe writes of one report are atomic). */
	while (open_pipes > 0) {
		struct report r;
		int got = poll(pl, (nfds_t)n, 30000);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			ex_say("no report for 30 s: giving up");
			break;
		}
		for (int k = 0; k < n; k++) {
			ssize_t len;

			if (pl[k].fd < 0 || !pl[k].revents)
				continue;
			len = read(pl[k].fd, &r, sizeof(r));
			if (len <= 0) {         /* the node has ended */
				close(pl[k].fd);
				pl[k].fd = -1;
				open_pipes--;
				continue;
			}
			if (len != (ssize_t)sizeof(r) || r.node != k + 1)
				ex_die("bad report from ring.%d", k + 1);
			if (nlog == caplog) {
				struct report *more;

				caplog = caplog ? 2 * caplog : 256;
				if (!(more = realloc(log, caplog * sizeof(*log))))
					ex_die("out of memory");
				log = more;
			}
			log[nlog++] = r;
		}
	}
	/* Replay the reports in time order (see report()) to print them and judge. */
	qsort(log, nlog, sizeof(*log), by_time);
	for (size_t j = 0; j < nlog; j++)
		monitor(&log[j], n, holder, &entries, &first_a, &first_b);
	free(log);
	for (int k = 0; k < n; k++)
		if (pl[k].fd >= 0)
			close(pl[k].fd);
	bad = ex_wait_children(n);
	if (bad)
		ex_say("%d node(s) failed", bad);
	if (first_a) {
		ex_say("BUG: ring.%d and ring.%d held the token at once", first_a, first_b);
		return 1;
	}
	ex_say("OK: mutual exclusion held (%d entries)", entries);
	return bad ? 2 : 0;
}
