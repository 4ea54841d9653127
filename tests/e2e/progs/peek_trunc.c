/*
 * peek_trunc.c: receives with MSG_PEEK, MSG_TRUNC, MSG_WAITALL and MSG_DONTWAIT, and the
 * result flags MSG_TRUNC, for the replay_peek_* tests (tests/e2e/meson.build, run through
 * replay_end.sh): a stream socketpair and a datagram socketpair between this process and its
 * child, a UDP socket the child sends to, and a netlink route socket read as dnsmasq reads
 * it (a peek with MSG_TRUNC and a small buffer says the datagram's length, then the real
 * read with a buffer that big, with its source address and ancillary data).  Prints what
 * each call returned; a faithful replay prints the same.
 * Usage: peek_trunc pair|dgram|udp|netlink
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void reap(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die("child");
}

/* A stream: a non-blocking receive before anything was sent, a peek that leaves the bytes,
 * then MSG_WAITALL for all of them. */
static void pair(void)
{
	int sv[2];
	char buf[64], go = 'g';
	ssize_t r;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		die("socketpair");
	if ((pid = fork()) == 0) {
		if (read(sv[1], &go, 1) != 1)
			_exit(1);
		if (write(sv[1], "hello ", 6) != 6 || write(sv[1], "world", 5) != 5)
			_exit(1);
		_exit(0);
	}
	r = recv(sv[0], buf, sizeof(buf), MSG_DONTWAIT);
	printf("dontwait: %zd %s\n", r, r < 0 && errno == EAGAIN ? "EAGAIN" : "?");
	if (write(sv[0], &go, 1) != 1)
		die("write");
	r = recv(sv[0], buf, 5, MSG_PEEK | MSG_WAITALL);
	printf("peek: %zd '%.*s'\n", r, (int)(r > 0 ? r : 0), buf);
	r = recv(sv[0], buf, 11, MSG_WAITALL);
	printf("waitall: %zd '%.*s'\n", r, (int)(r > 0 ? r : 0), buf);
	reap(pid);
}

/* Datagrams: a peek with MSG_TRUNC says the whole length; a read into less room says
 * MSG_TRUNC in msg_flags. */
static void dgram(void)
{
	char big[200], buf[50];
	struct iovec v = { buf, sizeof(buf) };
	struct msghdr m = { .msg_iov = &v, .msg_iovlen = 1 };
	int sv[2];
	ssize_t r;
	pid_t pid;

	memset(big, 'd', sizeof(big));
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv))
		die("socketpair");
	if ((pid = fork()) == 0)
		_exit(send(sv[1], big, sizeof(big), 0) == (ssize_t)sizeof(big) ? 0 : 1);
	r = recv(sv[0], buf, sizeof(buf), MSG_PEEK | MSG_TRUNC);
	printf("peek trunc: %zd\n", r);
	r = recvmsg(sv[0], &m, 0);
	printf("recvmsg: %zd flags%s '%.4s'\n", r, m.msg_flags & MSG_TRUNC ? " MSG_TRUNC" : "", buf);
	reap(pid);
}

/* UDP from the child: a peek, then the read, with the source address. */
static void udp(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET }, from;
	socklen_t len = sizeof(a);
	char buf[64];
	ssize_t r;
	pid_t pid;
	int s;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((s = socket(AF_INET, SOCK_DGRAM, 0)) < 0 || bind(s, (struct sockaddr *)&a, len) ||
	    getsockname(s, (struct sockaddr *)&a, &len))
		die("udp");
	if ((pid = fork()) == 0) {
		int c = socket(AF_INET, SOCK_DGRAM, 0);

		_exit(sendto(c, "datagram!", 9, 0, (struct sockaddr *)&a, sizeof(a)) == 9 ? 0 : 1);
	}
	memset(&from, 0, sizeof(from));
	len = sizeof(from);
	r = recvfrom(s, buf, 4, MSG_PEEK | MSG_TRUNC, (struct sockaddr *)&from, &len);
	printf("udp peek: %zd '%.4s' from %s len %u\n", r, buf, inet_ntoa(from.sin_addr),
	       (unsigned)len);
	memset(&from, 0, sizeof(from));
	len = sizeof(from);
	r = recvfrom(s, buf, sizeof(buf), 0, (struct sockaddr *)&from, &len);
	printf("udp read: %zd '%.*s' from %s len %u\n", r, (int)(r > 0 ? r : 0), buf,
	       inet_ntoa(from.sin_addr), (unsigned)len);
	reap(pid);
}

/* An RTM_GETLINK dump, read as dnsmasq reads netlink. */
static void netlink(void)
{
	struct {
		struct nlmsghdr h;
		struct rtgenmsg g;
	} req = { .h = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETLINK,
	                 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = 1 },
	          .g = { .rtgen_family = AF_UNSPEC } };
	struct sockaddr_nl k = { .nl_family = AF_NETLINK }, me = k, from;
	socklen_t len;
	size_t cap = 100;
	char *buf = malloc(cap);
	int s, links = 0, done = 0, one = 1;
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(struct nl_pktinfo))];
	} ctl;

	if ((s = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE)) < 0) {
		printf("no netlink\n");
		return;
	}
	/* bound as dnsmasq binds it: the replies name our port id, which it checks */
	len = sizeof(me);
	if (bind(s, (struct sockaddr *)&me, sizeof(me)) || getsockname(s, (struct sockaddr *)&me, &len))
		die("netlink bind");
	/* ancillary data on every reply, given back from the trace in replay */
	if (setsockopt(s, SOL_NETLINK, NETLINK_PKTINFO, &one, sizeof(one)))
		die("NETLINK_PKTINFO");
	if (sendto(s, &req, sizeof(req), 0, (struct sockaddr *)&k, sizeof(k)) < 0)
		die("sendto");
	while (!done) {
		struct iovec v = { buf, cap };
		struct msghdr m = { .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &v,
		                    .msg_iovlen = 1 };
		ssize_t r;

		memset(&from, 0xff, sizeof(from));
		r = recvmsg(s, &m, MSG_PEEK | MSG_TRUNC);
		if (r < 0)
			die("recvmsg peek");
		printf("peek: %zd into %zu%s\n", r, cap, m.msg_flags & MSG_TRUNC ? " MSG_TRUNC" : "");
		if ((size_t)r > cap && !(buf = realloc(buf, cap = (size_t)r)))
			die("realloc");
		v.iov_base = buf;
		v.iov_len = cap;
		m.msg_flags = 0;
		memset(&from, 0xff, sizeof(from));
		m.msg_namelen = sizeof(from);
		memset(&ctl, 0, sizeof(ctl));
		m.msg_control = &ctl;
		m.msg_controllen = sizeof(ctl);
		r = recvmsg(s, &m, 0);
		if (r < 0)
			die("recvmsg");
		printf("read: %zd from pid %u family %u namelen %u flags %d\n", r, from.nl_pid,
		       from.nl_family, (unsigned)m.msg_namelen, m.msg_flags);
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
			if (c->cmsg_level == SOL_NETLINK && c->cmsg_type == NETLINK_PKTINFO)
				printf("pktinfo: group %u\n",
				       ((struct nl_pktinfo *)(void *)CMSG_DATA(c))->group);
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)r);
		     h = NLMSG_NEXT(h, r)) {
			if (h->nlmsg_pid != me.nl_pid)
				printf("reply to port id %u, not ours\n", h->nlmsg_pid);
			if (h->nlmsg_type == NLMSG_DONE) {
				done = 1;
				break;
			}
			if (h->nlmsg_type == RTM_NEWLINK) {
				struct ifinfomsg *ifi = NLMSG_DATA(h);
				int alen = (int)IFLA_PAYLOAD(h);

				for (struct rtattr *a = IFLA_RTA(ifi); RTA_OK(a, alen); a = RTA_NEXT(a, alen))
					if (a->rta_type == IFLA_IFNAME)
						printf("link %d %s\n", ifi->ifi_index, (char *)RTA_DATA(a));
				links++;
			}
		}
	}
	printf("links: %d\n", links);
	free(buf);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "pair"))
		pair();
	else if (argc == 2 && !strcmp(argv[1], "dgram"))
		dgram();
	else if (argc == 2 && !strcmp(argv[1], "udp"))
		udp();
	else if (argc == 2 && !strcmp(argv[1], "netlink"))
		netlink();
	else
		return 2;
	return 0;
}
