/*
 * proto.c: the framing of the messages between the global debugger and the local controllers
 * (struct rep_msg over the SOCK_SEQPACKET control socket, proto.h), written once for both
 * sides: compiled into the GD's library (gd*.c) and into libencore-replay.so (lc.c).
 *
 * A message is one packet: the fixed header of struct rep_msg, then `len` bytes of text and
 * a NUL, so a packet is never longer than it needs to be.  Both functions make the system
 * calls directly (syscall(2)): inside a replayed process the LC must not go through the
 * send/recv interposers it defines itself, nor allocate.  They leave errno alone on success.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proto.h"

#define HDR offsetof(struct rep_msg, text)

int rep_proto_send(int fd, uint32_t type, int64_t a, int64_t b, uint32_t flags,
                   const char *text)
{
	struct rep_msg m;
	size_t n = text ? strnlen(text, REP_TEXT_MAX - 1) : 0;

	memset(&m, 0, HDR);
	m.type = type;
	m.a = a;
	m.b = b;
	m.flags = flags;
	m.len = (uint32_t)n;
	if (n)
		memcpy(m.text, text, n);
	m.text[n] = '\0';
	return syscall(SYS_sendto, fd, &m, HDR + n + 1, MSG_NOSIGNAL, NULL, 0) < 0 ? -1 : 0;
}

long rep_proto_recv(int fd, struct rep_msg *m, int flags)
{
	long n = syscall(SYS_recvfrom, fd, m, sizeof(*m), flags, NULL, NULL);

	if (n < 0)
		return -1;
	if (n < (long)HDR) {
		errno = EPIPE; /* the peer closed (0), or a packet shorter than a header */
		return -1;
	}
	/* the text is NUL-terminated whatever the peer sent */
	m->text[n > (long)HDR ? (size_t)(n - (long)HDR) - 1 : 0] = '\0';
	m->text[REP_TEXT_MAX - 1] = '\0';
	return n;
}
