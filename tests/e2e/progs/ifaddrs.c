/*
 * ifaddrs.c: prints the machine's network interfaces as glibc gives them (getifaddrs,
 * if_nameindex, if_nametoindex, if_indextoname), for tests/e2e/replay_ifaddrs.sh: a replay
 * in another network namespace must print what the recorded run printed
 * (schemas/trace-format.md, "Interfaces").
 *
 *   ifaddrs
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>

static void addr(const char *what, const struct sockaddr *sa)
{
	char buf[INET6_ADDRSTRLEN] = "";

	if (!sa)
		return;
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf, sizeof(buf));
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf, sizeof(buf));
	printf(" %s=%d/%s", what, sa->sa_family, buf);
}

int main(void)
{
	struct ifaddrs *list, *i;
	struct if_nameindex *ni, *n;
	char name[IF_NAMESIZE];

	if (getifaddrs(&list) != 0) {
		perror("getifaddrs");
		return 1;
	}
	for (i = list; i; i = i->ifa_next) {
		printf("%s flags=%x", i->ifa_name, i->ifa_flags);
		addr("addr", i->ifa_addr);
		addr("mask", i->ifa_netmask);
		if (i->ifa_data && i->ifa_addr && i->ifa_addr->sa_family == AF_PACKET)
			printf(" received=%s",
		       ((struct rtnl_link_stats *)i->ifa_data)->rx_packets ? "yes" : "no");
		printf("\n");
	}
	freeifaddrs(list);
	if (!(ni = if_nameindex())) {
		perror("if_nameindex");
		return 1;
	}
	for (n = ni; n->if_index; n++)
		printf("index %u %s -> %u %s\n", n->if_index, n->if_name, if_nametoindex(n->if_name),
		       if_indextoname(n->if_index, name) ? name : "?");
	if_freenameindex(ni);
	printf("no such interface: %u\n", if_nametoindex("encore-none0"));
	printf("index 9999: %s\n", if_indextoname(9999, name) ? name : "none");
	return 0;
}
