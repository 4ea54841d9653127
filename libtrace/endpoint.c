/*
 * endpoint.c: the description of one channel end that SOCKET, BIND, CONNECT, ACCEPT and PIPE
 * events carry, so that the analyzer can pair the two ends of a channel from what each end
 * logged (addresses, inodes, peer credentials), never from timestamps.  TLV-encoded so later
 * versions can add fields.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "format.h"

int trace_endpoint_encode(const struct trace_endpoint *ep, uint8_t *buf, size_t cap)
{
	uint8_t tmp[TRACE_ENDPOINT_MAX];
	size_t n = 0;

	if (ep->local_len > sizeof(ep->local) || ep->peer_len > sizeof(ep->peer))
		return TRACE_EINVAL;
#define INT_FIELD(tag, v)                                                    \
	do {                                                                     \
		uint8_t vb[10];                                                      \
		size_t vl = put_varint(vb, (v));                                     \
		n += put_varint(tmp + n, (tag));                                     \
		n += put_varint(tmp + n, vl);                                        \
		memcpy(tmp + n, vb, vl);                                             \
		n += vl;                                                             \
	} while (0)
	INT_FIELD(EP_TYPE, ep->type);
	if (ep->dir)
		INT_FIELD(EP_DIR, ep->dir);
	if (ep->inode)
		INT_FIELD(EP_INODE, ep->inode);
	if (ep->peer_inode)
		INT_FIELD(EP_PEER_INODE, ep->peer_inode);
	if (ep->peer_pid)
		INT_FIELD(EP_PEER_PID, zigzag(ep->peer_pid));
#undef INT_FIELD
	if (ep->local_len) {
		n += put_varint(tmp + n, EP_LOCAL);
		n += put_varint(tmp + n, ep->local_len);
		memcpy(tmp + n, ep->local, ep->local_len);
		n += ep->local_len;
	}
	if (ep->peer_len) {
		n += put_varint(tmp + n, EP_PEER);
		n += put_varint(tmp + n, ep->peer_len);
		memcpy(tmp + n, ep->peer, ep->peer_len);
		n += ep->peer_len;
	}
	if (n > cap)
		return TRACE_EINVAL;
	memcpy(buf, tmp, n);
	return (int)n;
}

int trace_endpoint_decode(const uint8_t *buf, size_t len, struct trace_endpoint *ep)
{
	struct cursor c = { buf, buf + len, 0, 0 };

	memset(ep, 0, sizeof(*ep));
	while (c.p < c.end) {
		uint64_t tag = cur_varint(&c), vlen = cur_varint(&c), v = 0;
		const uint8_t *val = cur_bytes(&c, vlen);
		struct cursor vc;

		if (c.short_read || c.bad)
			return TRACE_ECORRUPT;
		vc = (struct cursor){ val, val + vlen, 0, 0 };
		switch (tag) {
		case EP_TYPE: case EP_DIR: case EP_INODE: case EP_PEER_INODE: case EP_PEER_PID:
			v = cur_varint(&vc);
			if (vc.short_read || vc.bad || vc.p != vc.end)
				return TRACE_ECORRUPT;
			if (tag == EP_TYPE)
				ep->type = (uint32_t)v;
			else if (tag == EP_DIR)
				ep->dir = (uint32_t)v;
			else if (tag == EP_INODE)
				ep->inode = v;
			else if (tag == EP_PEER_INODE)
				ep->peer_inode = v;
			else
				ep->peer_pid = unzigzag(v);
			break;
		case EP_LOCAL:
			if (vlen > sizeof(ep->local))
				return TRACE_ECORRUPT;
			memcpy(ep->local, val, vlen);
			ep->local_len = (uint32_t)vlen;
			break;
		case EP_PEER:
			if (vlen > sizeof(ep->peer))
				return TRACE_ECORRUPT;
			memcpy(ep->peer, val, vlen);
			ep->peer_len = (uint32_t)vlen;
			break;
		default:
			break;
		}
	}
	return 0;
}

static void format_sockaddr(const uint8_t *raw, uint32_t len, char *out, size_t cap)
{
	struct sockaddr_storage ss;
	char host[INET6_ADDRSTRLEN];

	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, raw, len < sizeof(ss) ? len : sizeof(ss));
	if (len == 0) {
		snprintf(out, cap, "?");
	} else if (ss.ss_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(out, cap, "%s:%u", host, ntohs(in->sin_port));
	} else if (ss.ss_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(out, cap, "[%s]:%u", host, ntohs(in6->sin6_port));
	} else if (ss.ss_family == AF_UNIX) {
		const struct sockaddr_un *un = (const struct sockaddr_un *)&ss;
		size_t plen = len > offsetof(struct sockaddr_un, sun_path)
		                  ? len - offsetof(struct sockaddr_un, sun_path) : 0;

		if (plen == 0)
			snprintf(out, cap, "unix:(unnamed)");
		else if (un->sun_path[0] == '\0')
			snprintf(out, cap, "unix:@%.*s", (int)(plen - 1), un->sun_path + 1);
		else
			snprintf(out, cap, "unix:%.*s", (int)strnlen(un->sun_path, plen), un->sun_path);
	} else {
		snprintf(out, cap, "family%u", (unsigned)ss.ss_family);
	}
}

void trace_endpoint_format(const struct trace_endpoint *ep, int peer, char *out, size_t cap)
{
	if (ep->type == TRACE_CHAN_PIPE) {
		snprintf(out, cap, "pipe:%llu", (unsigned long long)ep->inode);
		return;
	}
	if (ep->type == TRACE_CHAN_SOCKETPAIR) {
		snprintf(out, cap, "socketpair:%llu",
		         (unsigned long long)(peer ? ep->peer_inode : ep->inode));
		return;
	}
	if (peer)
		format_sockaddr(ep->peer, ep->peer_len, out, cap);
	else
		format_sockaddr(ep->local, ep->local_len, out, cap);
}
