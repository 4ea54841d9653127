/* system_pair.c: a child that libc starts (system()) reads, as its stdin, one end of a
 * socketpair its parent made, and writes its answer to the same socket: socat's SYSTEM
 * address, varnish's system() child.  The child's recorder did not see the fork, so the
 * socket is new to it; the analyzer must see the parent's socket in it (the same inode,
 * analyzer/match.c, link_same_inode), or the child's receives look external and its
 * parent's replies unmatched. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void)
{
	int sv[2], st;
	char buf[64];
	ssize_t n;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return perror("socketpair"), 1;
	if (write(sv[0], "hello\n", 6) != 6)
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* the child's stdin and stdout: the pair's second end */
	int in = dup(0), out = dup(1);

	if (in < 0 || out < 0 || dup2(sv[1], 0) < 0 || dup2(sv[1], 1) < 0)
		return 1;
	st = system("read l; echo \"sh got $l\"");
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0)
		return 1;
	n = read(sv[0], buf, sizeof(buf) - 1);
	if (n <= 0)
		return 1;
	buf[n] = '\0';
	printf("status %d, answer: %s", st, buf);
	return 0;
}
