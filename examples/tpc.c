/*
 * tpc.c: a two-phase commit whose coordinator sometimes commits after a "no".
 *
 *     tpc [--participants N] [--rounds R] [--seed S] [--bug]
 *
 * The root process `tpc` is the coordinator; it forks N participants (`tpc.1` ... `tpc.N`)
 * that connect to it over a Unix stream socket in a fresh temporary directory.  Each round
 * (transaction) the coordinator sends PREPARE, collects one vote per participant, decides
 * COMMIT only if every vote is yes, sends the decision and waits for every ACK.
 * Published state (encore_mark): the coordinator's `round` and `decision` (0 undecided,
 * 1 commit, 2 abort); each participant's `vote` (0 none, 1 yes, 2 no; back to 0 once the
 * decision is applied).
 *
 * THE BUG: the coordinator waits a bounded time for the votes and, when a vote is late,
 * *presumes* it is a yes ("nobody ever says no anyway").  A participant that is slow to
 * vote no (it takes a long time checking, rarely: about one no in 40) then receives COMMIT
 * for a transaction it refused.  --bug makes every other no slow.  In a recording:
 *
 *     encore inf DIR 'tpc: mark.decision == 1 && tpc.2: mark.vote == 2'
 *
 * Output: the coordinator prints each round's votes and decision; a participant told to
 * commit after voting no prints "tpc.K: BUG: ..."; the coordinator ends with
 *     tpc: OK: R rounds, every commit had only yes votes
 *     tpc: BUG: committed round X although tpc.K voted no
 * and exits 0, or 1 after a BUG line (2 on errors).
 */
#include <sys/stat.h>
#include <sys/un.h>

#include "ex.h"

#define MAX_PARTS 16
#define VOTE_TIMEOUT_MS 100   /* the coordinator's patience for the votes of a round */
#define SLOW_NO_US 300000     /* a slow "no": well over that patience */
#define WAIT_MS 10000         /* any other wait: only a crashed peer takes this long */

enum { PREPARE = 1, VOTE, DECISION, ACK, DONE, HELLO };
enum { YES = 1, NO = 2 };
enum { COMMIT = 1, ABORT = 2 };

struct msg {
	uint32_t type;
	uint32_t round;
	int32_t value;     /* HELLO: participant number; VOTE: YES/NO; DECISION: COMMIT/ABORT;
	                      ACK: 1 when the decision contradicted the vote */
};

static int recv_msg(int fd, struct msg *m, int timeout_ms)
{
	int r = ex_wait(fd, timeout_ms);

	if (r <= 0)
		return r < 0 ? -1 : 0;
	return ex_recv_all(fd, m, sizeof(*m)) == 1 ? 1 : -1;
}

static int participant(int k, const char *path, unsigned slow_num, unsigned slow_den)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct msg m = { HELLO, 0, k };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		ex_die("cannot connect to the coordinator at %s: %s", path, strerror(errno));
	if (ex_send_all(fd, &m, sizeof(m)) != 0)
		ex_die("the coordinator went away");
	for (int steps = 0; steps < 10000; steps++) {
		int vote, r = recv_msg(fd, &m, WAIT_MS);

		if (r <= 0) {
			ex_say("no word from the coordinator; giving up");
			break;
		}
		if (m.type == DONE)
			break;
		if (m.type != PREPARE)
			ex_die("expected PREPARE, got message type %u", m.type);
		vote = ex_chance(1, 4) ? NO : YES;
		/* Deciding to refuse sometimes takes long (checking constraints, logging why). */
		ex_work_us(vote == NO && ex_chance(slow_num, slow_den) ? SLOW_NO_US
		                                                     : 200 + ex_rand() % 600);
		encore_mark("vote", vote);
		m = (struct msg){ VOTE, m.round, vote };
		if (ex_send_all(fd, &m, sizeof(m)) != 0)
			break;
		if (recv_msg(fd, &m, WAIT_MS) <= 0 || m.type != DECISION) {
			ex_say("no decision from the coordinator; giving up");
			break;
		}
		if (m.value == COMMIT && vote == NO)
			ex_say("BUG: told to commit round %u after voting no", m.round);
		m = (struct msg){ ACK, m.round, m.value == COMMIT && vote == NO };
		encore_mark("vote", 0);
		if (ex_send_all(fd, &m, sizeof(m)) != 0)
			break;
	}
	close(fd);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: tpc [--participants N] [--rounds R] [--seed S] [--bug]\n"
	                "  two-phase commit whose coordinator presumes a late vote is yes;\n"
	                "  --bug makes slow \"no\" votes (and so the bug) likely\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int n = 3, rounds = 8, bug = 0, lfd, fd[MAX_PARTS + 1], bad_round = 0, bad_part = 0;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[] = "/tmp/encore-tpc.XXXXXX";
	uint64_t seed = 0;
	int have_seed = 0, bad;

	snprintf(ex_name, sizeof(ex_name), "tpc");
	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--bug"))
			bug = 1;
		else if (!strcmp(argv[a], "--participants") && a + 1 < argc)
			n = (int)ex_num("--participants", argv[++a], 1, MAX_PARTS);
		else if (!strcmp(argv[a], "--rounds") && a + 1 < argc)
			rounds = (int)ex_num("--rounds", argv[++a], 1, 100000);
		else if (!strcmp(argv[a], "--seed") && a + 1 < argc)
			seed = (uint64_t)ex_num("--seed", argv[++a], 0, 0x7fffffff), have_seed = 1;
		else
			usage();
	}
	if (!have_seed)
		seed = ex_default_seed();
	if (!mkdtemp(dir))
		ex_die("cannot make a directory for the socket: %s", strerror(errno));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/coordinator", dir);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, n) != 0)
		ex_die("cannot listen on %s: %s", sa.sun_path, strerror(errno));
	ex_say("%d participants, %d rounds, seed %llu%s", n, rounds, (unsigned long long)seed,
	       bug ? ", slow \"no\" votes likely (--bug)" : "");
	for (int k = 1; k <= n; k++) {
		pid_t pid = fork();

		if (pid < 0)
			ex_die("fork: %s", strerror(errno));
		if (pid == 0) {
			snprintf(ex_name, sizeof(ex_name), "tpc.%d", k);
			close(lfd);
			ex_seed(seed, (unsigned)k);
			exit(participant(k, sa.sun_path, 1, bug ? 2 : 40));
		}
	}
	/* Accept in whatever order they come; each says who it is first. */
	for (int k = 1; k <= n; k++)
		fd[k] = -1;
	for (int i = 0; i < n; i++) {
		struct msg m;
		int c;

		if (ex_wait(lfd, WAIT_MS) <= 0 || (c = accept(lfd, NULL, NULL)) < 0)
			ex_die("a participant did not connect");
		if (recv_msg(c, &m, WAIT_MS) != 1 || m.type != HELLO || m.value < 1 || m.value > n ||
		    fd[m.value] >= 0)
			ex_die("bad hello from a participant");
		fd[m.value] = c;
	}
	close(lfd);
	unlink(sa.sun_path);
	rmdir(dir);

	for (int r = 1; r <= rounds; r++) {
		int vote[MAX_PARTS + 1] = {0}, missing = n, decision = COMMIT;
		int64_t deadline;
		char line[256];
		size_t len = 0;

		encore_mark("round", r);
		encore_mark("decision", 0);
		for (int k = 1; k <= n; k++) {
			struct msg m = { PREPARE, (uint32_t)r, 0 };

			if (ex_send_all(fd[k], &m, sizeof(m)) != 0)
				ex_die("tpc.%d went away", k);
		}
		deadline = ex_now_ms() + VOTE_TIMEOUT_MS;
		while (missing > 0) {
			struct pollfd pl[MAX_PARTS];
			int np = 0, left = (int)(deadline - ex_now_ms()), got;

			if (left <= 0)
				break;
			for (int k = 1; k <= n; k++)
				if (!vote[k])
					pl[np++] = (struct pollfd){ .fd = fd[k], .events = POLLIN };
			got = poll(pl, (nfds_t)np, left);
			if (got < 0 && errno != EINTR)
				ex_die("poll: %s", strerror(errno));
			for (int k = 1, j = 0; k <= n && got > 0; k++) {
				struct msg m;

				if (vote[k])
					continue;
				if (pl[j++].revents == 0)
					continue;
				if (ex_recv_all(fd[k], &m, sizeof(m)) != 1)
					ex_die("tpc.%d went away", k);
				if (m.type != VOTE || m.round != (uint32_t)r)
					ex_die("tpc.%d: unexpected message type %u round %u", k, m.type,
					       m.round);
				vote[k] = m.value;
				missing--;
			}
		}
		for (int k = 1; k <= n; k++) {
			len += (size_t)snprintf(line + len, sizeof(line) - len, " tpc.%d=%s", k,
			                        vote[k] == YES ? "yes" : vote[k] == NO ? "no" : "late");
			/* The bug: a vote that did not come in time is presumed to be yes. */
			if (vote[k] == NO)
				decision = ABORT;
		}
		encore_mark("decision", decision);
		ex_say("round %d: votes%s: %s%s", r, line, decision == COMMIT ? "COMMIT" : "ABORT",
		       missing ? " (late votes presumed yes)" : "");
		for (int k = 1; k <= n; k++) {
			struct msg m = { DECISION, (uint32_t)r, decision };

			if (ex_send_all(fd[k], &m, sizeof(m)) != 0)
				ex_die("tpc.%d went away", k);
		}
		for (int k = 1; k <= n; k++) {
			struct msg m;

			/* A late vote comes before the ACK on the same connection. */
			do {
				if (recv_msg(fd[k], &m, WAIT_MS) != 1)
					ex_die("no acknowledgement from tpc.%d", k);
				if (m.type == VOTE)
					ex_say("round %d: late vote from tpc.%d: %s", r, k,
					       m.value == NO ? "no" : "yes");
			} while (m.type == VOTE);
			if (m.type != ACK || m.round != (uint32_t)r)
				ex_die("tpc.%d: expected ACK, got type %u", k, m.type);
			if (m.value && !bad_round)
				bad_round = r, bad_part = k;
		}
	}
	for (int k = 1; k <= n; k++) {
		struct msg m = { DONE, 0, 0 };

		ex_send_all(fd[k], &m, sizeof(m));
		close(fd[k]);
	}
	bad = ex_wait_children(n);
	if (bad)
		ex_say("%d participant(s) failed", bad);
	if (bad_round) {
		ex_say("BUG: committed round %d although tpc.%d voted no", bad_round, bad_part);
		return 1;
	}
	ex_say("OK: %d rounds, every commit had only yes votes", rounds);
	return bad ? 2 : 0;
}
