/*
 * pipeline.c: a producer / filter / consumer pipeline that sometimes reorders its items.
 *
 *     pipeline [--items N] [--seed S] [--bug]
 *
 * The root process `pipeline` is the producer; it forks two filters (`pipeline.1`,
 * `pipeline.2`) and the consumer (`pipeline.3`), joined by Unix stream socket pairs.  The
 * producer deals items 1..N to the filters in turn (odd items to pipeline.1, even ones to
 * pipeline.2); each filter transforms an item and passes it on; the consumer writes the
 * items out, and they must come out in order.  Published state (encore_mark): the
 * producer's `produced`; each filter's `busy` (the item in hand, 0 when idle); the
 * consumer's `last` (the item it consumed last) and `reordered` (1 once an item came early).
 *
 * THE BUG: the consumer merges its two inputs by taking whichever is ready first, instead
 * of by sequence number.  That is right as long as filters are quick; when one is slow on
 * an item (rarely: one item in 150) the other filter's next item overtakes it.  --bug makes
 * one item in four slow.  In a recording, for "item 6 arrived before item 5":
 *
 *     encore inf DIR 'pipeline.3: mark.last == 6 && pipeline.1: mark.busy == 5'
 *
 * Output: the consumer prints every item it consumes and "pipeline.3: BUG: ..." for the
 * first item that comes early; the producer ends with
 *     pipeline: OK: N items in order
 *     pipeline: BUG: items came out of order (see pipeline.3)
 * and exits 0, or 1 after a BUG line (2 on errors).
 */
#include <sys/socket.h>

#include "ex.h"

#define SLOW_US 40000       /* a slow item: longer than the producer takes for two items */
#define WAIT_MS 10000       /* only a crashed peer is this slow */

struct item {
	uint32_t seq;
	uint32_t value;
};

static int filter(int in, int out, unsigned slow_num, unsigned slow_den)
{
	struct item it;

	for (int steps = 0; steps < 1000000; steps++) {
		if (ex_wait(in, WAIT_MS) <= 0 || ex_recv_all(in, &it, sizeof(it)) != 1)
			break;          /* the producer is done */
		encore_mark("busy", (long)it.seq);
		ex_work_us(ex_chance(slow_num, slow_den) ? SLOW_US : 50 + ex_rand() % 200);
		it.value = it.value * 3 + 1;
		encore_mark("busy", 0);
		if (ex_send_all(out, &it, sizeof(it)) != 0)
			break;
	}
	close(in);
	close(out);
	return 0;
}

/* Returns 1 when items came out of order, 0 when not. */
static int consumer(const int *in)
{
	struct pollfd pl[2] = { { .fd = in[0], .events = POLLIN }, { .fd = in[1], .events = POLLIN } };
	uint32_t expect = 1;
	int open_ins = 2, reordered = 0;

	while (open_ins > 0) {
		int r = poll(pl, 2, WAIT_MS);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			ex_say("no item for %d ms; giving up", WAIT_MS);
			break;
		}
		/* The bug: whichever input is ready goes first, whatever its sequence number. */
		for (int k = 0; k < 2; k++) {
			struct item it;

			if (pl[k].fd < 0 || !pl[k].revents)
				continue;
			if (ex_recv_all(pl[k].fd, &it, sizeof(it)) != 1) {
				close(pl[k].fd);
				pl[k].fd = -1;
				open_ins--;
				continue;
			}
			encore_mark("last", (long)it.seq);
			if (it.seq > expect && !reordered) {
				reordered = 1;
				encore_mark("reordered", 1);
				ex_say("BUG: item %u arrived before item %u", it.seq, expect);
			}
			ex_say("item %u: %u", it.seq, it.value);
			if (it.seq >= expect)
				expect = it.seq + 1;
		}
	}
	return reordered;
}

static void usage(void)
{
	fprintf(stderr, "usage: pipeline [--items N] [--seed S] [--bug]\n"
	                "  producer -> two filters -> consumer; the consumer takes whichever filter\n"
	                "  is ready, so a slow item is overtaken; --bug makes slow items likely\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int nitems = 20, bug = 0, have_seed = 0, pf[2][2], fc[2][2], st = 0, bad;
	pid_t consumer_pid = -1;
	uint64_t seed = 0;

	snprintf(ex_name, sizeof(ex_name), "pipeline");
	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--bug"))
			bug = 1;
		else if (!strcmp(argv[a], "--items") && a + 1 < argc)
			nitems = (int)ex_num("--items", argv[++a], 1, 1000000);
		else if (!strcmp(argv[a], "--seed") && a + 1 < argc)
			seed = (uint64_t)ex_num("--seed", argv[++a], 0, 0x7fffffff), have_seed = 1;
		else
			usage();
	}
	if (!have_seed)
		seed = ex_default_seed();
	/* pf[k]: producer <-> filter k+1; fc[k]: filter k+1 <-> consumer.  End 0 stays with the
	 * upstream process, end 1 goes downstream. */
	for (int k = 0; k < 2; k++)
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, pf[k]) != 0 ||
		    socketpair(AF_UNIX, SOCK_STREAM, 0, fc[k]) != 0)
			ex_die("socketpair: %s", strerror(errno));
	ex_say("%d items, seed %llu%s", nitems, (unsigned long long)seed,
	       bug ? ", slow items likely (--bug)" : "");
	for (int k = 1; k <= 3; k++) {
		pid_t pid = fork();

		if (pid < 0)
			ex_die("fork: %s", strerror(errno));
		if (pid == 0) {
			int mine = k - 1, in[2];

			snprintf(ex_name, sizeof(ex_name), "pipeline.%d", k);
			ex_seed(seed, (unsigned)k);
			for (int j = 0; j < 2; j++) {
				close(pf[j][0]);
				if (k == 3) {
					close(pf[j][1]);
					close(fc[j][0]);
				} else {
					close(fc[j][1]);
					if (j != mine) {
						close(pf[j][1]);
						close(fc[j][0]);
					}
				}
			}
			if (k < 3)
				exit(filter(pf[mine][1], fc[mine][0], 1, bug ? 4 : 150));
			in[0] = fc[0][1];
			in[1] = fc[1][1];
			exit(consumer(in));
		}
		if (k == 3)
			consumer_pid = pid;
	}
	for (int j = 0; j < 2; j++) {
		close(pf[j][1]);
		close(fc[j][0]);
		close(fc[j][1]);
	}
	ex_seed(seed, 0);
	for (int i = 1; i <= nitems; i++) {
		struct item it = { (uint32_t)i, (uint32_t)i };

		if (ex_send_all(pf[(i - 1) % 2][0], &it, sizeof(it)) != 0)
			ex_die("filter pipeline.%d went away", (i - 1) % 2 + 1);
		encore_mark("produced", i);
		ex_work_us(6000 + ex_rand() % 4000);   /* 6-10 ms between items */
	}
	close(pf[0][0]);
	close(pf[1][0]);
	if (waitpid(consumer_pid, &st, 0) != consumer_pid)
		ex_die("waitpid: %s", strerror(errno));
	bad = ex_wait_children(2);
	if (bad)
		ex_say("%d filter(s) failed", bad);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 1) {
		ex_say("BUG: items came out of order (see pipeline.3)");
		return 1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		bad++;
	ex_say("OK: %d items in order", nitems);
	return bad ? 2 : 0;
}
