/* dgram_other.c: a child sends its parent a datagram holding its pid read with a raw system
 * call (no interposer sees it: the replay's pid, not the recorded one), so the replay's
 * datagram differs from the recorded one and the parent's receive cannot be completed.  The
 * stall report must say that a datagram matching no recorded receive came (lc_chan.c,
 * dgram_wait), not only that the receive waits. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	char b[64];
	int s = socket(AF_INET, SOCK_DGRAM, 0), st;
	ssize_t n;
	pid_t c;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) || getsockname(s, (struct sockaddr *)&a, &al))
		return perror("bind"), 1;
	if ((c = fork()) == 0) {
		int t = socket(AF_INET, SOCK_DGRAM, 0);
		int l = snprintf(b, sizeof(b), "pid %010ld", (long)syscall(SYS_getpid));

		return t < 0 || sendto(t, b, (size_t)l, 0, (struct sockaddr *)&a, al) != l;
	}
	n = recv(s, b, sizeof(b), 0);
	printf("received a datagram of %zd bytes\n", n);
	return waitpid(c, &st, 0) != c;
}
