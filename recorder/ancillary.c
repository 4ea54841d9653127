/*
 * ancillary.c: descriptor passing (SCM_RIGHTS) through sendmsg and recvmsg.
 *
 * A descriptor passed over a Unix socket is a dup across processes: the receiver's new
 * descriptor refers to the sender's open file, a passed TCP socket is the same connection.
 * So each side logs one PASS event per descriptor, right after the send or receive event of
 * the call (schemas/trace-format.md, "Descriptor passing"):
 *   - the sender: the descriptor, its channel (0 when it is none: a file, an epoll...), what
 *     it is, and the channel's byte counts so far, with which the analyzer continues the
 *     offsets of the receiver's end where the sender's stopped;
 *   - the receiver: the new descriptor, made a channel end of this process at once (a new
 *     channel id, the endpoint as the kernel describes it), which the analyzer merges with
 *     the sender's end: the traffic the receiver then has on it matches the other side's.
 * The ancillary data the receiver got (descriptor numbers, SCM_CREDENTIALS' pid, uid and gid)
 * is kept in the receive event's data, as input's is: replay gives it back as recorded.
 *
 * Runs inside the data interposers (chan.c, DATA_BODY_ANC) with the guard held; allocates
 * nothing.
 */
#include <string.h>
#include <sys/stat.h>

#include "rec.h"

/* The descriptors of every SCM_RIGHTS message of m, one at a time: *cm and *i keep the
 * place (start with *cm = NULL).  Returns the next descriptor, or -1 at the end. */
static int next_fd(const struct msghdr *m, struct cmsghdr **cm, size_t *i)
{
	struct msghdr *mm = (struct msghdr *)m;

	if (!*cm) {
		*cm = CMSG_FIRSTHDR(mm);
		*i = 0;
	}
	while (*cm) {
		struct cmsghdr *c = *cm;

		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len >= CMSG_LEN(0) &&
		    *i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int)) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + *i * sizeof(int), sizeof(int));
			(*i)++;
			return fd;
		}
		*cm = CMSG_NXTHDR(mm, c);
		*i = 0;
	}
	return -1;
}

void rec_anc_classify(const struct msghdr *m)
{
	struct cmsghdr *cm = NULL;
	size_t i = 0;
	int pfd;

	while ((pfd = next_fd(m, &cm, &i)) >= 0)
		(void)rec_fd_chan(pfd);
}

/* What a descriptor the sender passes is, judged as rec_chan_adopt judges it. */
static int what_of(int fd)
{
	struct stat st;
	int acc = 0;
	socklen_t len = sizeof(acc);

	if (fstat(fd, &st) != 0)
		return TRACE_PASS_OTHER;
	if (S_ISSOCK(st.st_mode))
		return IP_REAL(getsockopt)(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len) == 0 && acc
		               ? TRACE_PASS_LISTENER
		               : TRACE_PASS_SOCKET;
	if (S_ISFIFO(st.st_mode))
		return TRACE_PASS_PIPE;
	if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
		return TRACE_PASS_FILE;
	if (S_ISCHR(st.st_mode))
		return TRACE_PASS_CHAR;
	return TRACE_PASS_OTHER;
}

static void put_u64(uint8_t *p, uint64_t v)
{
	for (int k = 0; k < 8; k++)
		p[k] = (uint8_t)(v >> (8 * k));
}

void rec_anc_log(int fd, int dir, const struct msghdr *m, void *ra)
{
	uint32_t via = rec_fd_channel_id(fd);
	struct cmsghdr *cm = NULL;
	size_t i = 0;
	int pfd;

	if (!via)
		return; /* the call was not logged: the descriptors are met at first use */
	while ((pfd = next_fd(m, &cm, &i)) >= 0) {
		struct trace_event ev;
		uint8_t buf[TRACE_ENDPOINT_MAX];
		struct trace_endpoint ep;
		struct rec_chan *c;
		int what, n;

		rec_event_init(&ev, TRACE_EV_PASS, dir == REC_OUT ? TRACE_CALL_SENDMSG :
		                                                    TRACE_CALL_RECVMSG, pfd);
		ev.result = pfd;
		ev.naux = 3;
		ev.aux[0] = dir == REC_OUT ? TRACE_PASS_OUT : TRACE_PASS_IN;
		ev.aux[1] = via;
		if (dir == REC_OUT) {
			c = rec_fd_chan(pfd);
			ev.aux[2] = what_of(pfd);
			if (c) {
				ev.channel = c->id;
				put_u64(buf, c->bytes[REC_OUT]);
				put_u64(buf + 8, c->bytes[REC_IN]);
				ev.data = buf;
				ev.data_len = 16;
			}
		} else {
			c = rec_chan_adopt(pfd, &ep, &what, ra);
			ev.aux[2] = what;
			if (c) {
				ev.channel = c->id;
				if ((n = trace_endpoint_encode(&ep, buf, sizeof(buf))) > 0) {
					ev.data = buf;
					ev.data_len = (uint32_t)n;
				}
			}
		}
		rec_log(&ev, ra);
	}
}
