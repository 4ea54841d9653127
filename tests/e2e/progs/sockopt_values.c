/* sockopt_values.c: socket options whose values are the kernel's state, not the program's,
 * printed: the peer's pid from SO_PEERCRED (a socketpair's peer is this process: its real pid,
 * which a replay's process does not share), the TCP_INFO of a loopback connection (its state,
 * round trip time and congestion window) and a failed read (an option of no such level).
 * A replay prints what the recording printed only when it gives the recorded values back
 * (recorder/chan.c, log_sockopt). */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void)
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a), len;
	struct tcp_info ti;
	struct ucred cred;
	int sp[2], l, c, s, v, r;
	char b = 'x';

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0)
		return perror("socketpair"), 1;
	len = sizeof(cred);
	if (getsockopt(sp[0], SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return perror("SO_PEERCRED"), 1;
	printf("peercred pid %ld len %u\n", (long)cred.pid, (unsigned)len);

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((l = socket(AF_INET, SOCK_STREAM, 0)) < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(l, 1) || getsockname(l, (struct sockaddr *)&a, &al))
		return perror("listen"), 1;
	if ((c = socket(AF_INET, SOCK_STREAM, 0)) < 0 || connect(c, (struct sockaddr *)&a, al) ||
	    (s = accept(l, NULL, NULL)) < 0)
		return perror("connect"), 1;
	if (write(c, &b, 1) != 1 || read(s, &b, 1) != 1)
		return perror("transfer"), 1;
	len = sizeof(ti);
	if (getsockopt(c, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0)
		return perror("TCP_INFO"), 1;
	printf("tcp_info state %u rtt %u rttvar %u cwnd %u rcv_space %u len %u\n",
	       (unsigned)ti.tcpi_state, ti.tcpi_rtt, ti.tcpi_rttvar, ti.tcpi_snd_cwnd,
	       ti.tcpi_rcv_space, (unsigned)len);
	len = sizeof(v);
	r = getsockopt(s, 12345, 1, &v, &len);
	printf("bad level %d\n", r);
	/* the client first: the TIME_WAIT is its port's, not the listening port a replay binds */
	close(c);
	close(s);
	close(l);
	close(sp[0]);
	close(sp[1]);
	return 0;
}
