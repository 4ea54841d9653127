/*
 * ifaddrs.c: the machine's network interfaces as a process sees them.
 *
 * glibc's getifaddrs and if_nameindex ask the kernel over a netlink socket of their own,
 * through internal calls no interposer sees, and if_nametoindex and if_indextoname through
 * an ioctl on one: what they return is this machine's, and a replay elsewhere (or in another
 * network namespace) would get another list without any divergence.  So each is an INPUT
 * event of its own call (getifaddrs, if_nameindex, if_nametoindex, if_indextoname) with
 * what the call returned, in the layout of schemas/trace-format.md ("Interfaces"), and the
 * replayer gives it back (replayer/lc_ifaddrs.c).  Rare calls, not hot paths: the buffer
 * of a list is mapped for the call and unmapped after it is logged (no malloc).
 */
#include <ifaddrs.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/mman.h>

#include "rec.h"

#define RA() __builtin_return_address(0)

/* The bytes of a sockaddr of getifaddrs's list: by family, as glibc fills them. */
static size_t sa_size(const struct sockaddr *sa)
{
	if (!sa)
		return 0;
	switch (sa->sa_family) {
	case AF_INET: return sizeof(struct sockaddr_in);
	case AF_INET6: return sizeof(struct sockaddr_in6);
	case AF_PACKET: return sizeof(struct sockaddr_ll);
	}
	return sizeof(struct sockaddr);
}

/* One field: u16 length (little-endian, as every integer of a trace) then the bytes; into
 * out when it is not NULL.  The bytes it takes. */
static size_t put_field(uint8_t *out, const void *p, size_t n)
{
	if (n > 0xffff)
		n = 0xffff;
	if (out) {
		out[0] = (uint8_t)n;
		out[1] = (uint8_t)(n >> 8);
		if (n)
			memcpy(out + 2, p, n);
	}
	return 2 + n;
}

static size_t put_u32(uint8_t *out, uint32_t v)
{
	if (out)
		for (int i = 0; i < 4; i++)
			out[i] = (uint8_t)(v >> (8 * i));
	return 4;
}

/* The list in the trace's layout, into out (NULL: only its size). */
static size_t encode_ifaddrs(const struct ifaddrs *list, uint8_t *out)
{
	size_t o = 0;

	for (const struct ifaddrs *i = list; i; i = i->ifa_next) {
		/* glibc's ifa_data: the link's counters, on AF_PACKET entries only */
		size_t nd = i->ifa_data && i->ifa_addr && i->ifa_addr->sa_family == AF_PACKET ?
		            sizeof(struct rtnl_link_stats) : 0;

		o += put_u32(out ? out + o : NULL, i->ifa_flags);
		o += put_field(out ? out + o : NULL, i->ifa_name, i->ifa_name ? strlen(i->ifa_name) : 0);
		o += put_field(out ? out + o : NULL, i->ifa_addr, sa_size(i->ifa_addr));
		o += put_field(out ? out + o : NULL, i->ifa_netmask, sa_size(i->ifa_netmask));
		o += put_field(out ? out + o : NULL, i->ifa_broadaddr, sa_size(i->ifa_broadaddr));
		o += put_field(out ? out + o : NULL, i->ifa_data, nd);
	}
	return o;
}

static size_t encode_nameindex(const struct if_nameindex *ni, uint8_t *out, uint32_t *count)
{
	size_t o = 0;

	*count = 0;
	for (; ni && (ni->if_index || ni->if_name); ni++, (*count)++) {
		o += put_u32(out ? out + o : NULL, ni->if_index);
		o += put_field(out ? out + o : NULL, ni->if_name, ni->if_name ? strlen(ni->if_name) : 0);
	}
	return o;
}

/* An INPUT event of `call` with result r (errno e) and n bytes made by fill into a mapped
 * buffer; logged without its list when no memory can be mapped (replay then diverges there,
 * saying the list is missing, rather than the recording failing the program). */
static void log_list(uint32_t call, long r, int e, size_t n, const void *list, void *ra)
{
	struct trace_event ev;
	uint8_t *buf = NULL;
	uint32_t count;

	rec_event_init(&ev, TRACE_EV_INPUT, call, -1);
	ev.result = r;
	ev.err = r < 0 ? e : 0;
	if (r >= 0 && n && n <= UINT32_MAX) {
		buf = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (buf == MAP_FAILED)
			buf = NULL;
	}
	if (buf) {
		if (call == TRACE_CALL_GETIFADDRS)
			encode_ifaddrs(list, buf);
		else
			encode_nameindex(list, buf, &count);
		ev.data = buf;
		ev.data_len = (uint32_t)n;
	}
	rec_log(&ev, ra);
	if (buf)
		munmap(buf, n);
}

REC_EXPORT int getifaddrs(struct ifaddrs **ifap)
{
	int r = IP_REAL(getifaddrs)(ifap), e = errno;

	if (!rec_enter())
		return r;
	log_list(TRACE_CALL_GETIFADDRS, r, e, r == 0 ? encode_ifaddrs(*ifap, NULL) : 0,
	         r == 0 ? *ifap : NULL, RA());
	rec_leave();
	errno = e;
	return r;
}

REC_EXPORT struct if_nameindex *if_nameindex(void)
{
	struct if_nameindex *r = IP_REAL(if_nameindex)();
	int e = errno;
	uint32_t count = 0;
	size_t n;

	if (!rec_enter())
		return r;
	n = r ? encode_nameindex(r, NULL, &count) : 0;
	log_list(TRACE_CALL_IF_NAMEINDEX, r ? (long)count : -1, e, n, r, RA());
	rec_leave();
	errno = e;
	return r;
}

/* if_nametoindex: result = the index (0: none, errno). */
REC_EXPORT unsigned int if_nametoindex(const char *name)
{
	unsigned int r = IP_REAL(if_nametoindex)(name);
	int e = errno;
	struct trace_event ev;

	if (!rec_enter())
		return r;
	rec_event_init(&ev, TRACE_EV_INPUT, TRACE_CALL_IF_NAMETOINDEX, -1);
	ev.result = r;
	ev.err = r ? 0 : e;
	rec_log(&ev, RA());
	rec_leave();
	errno = e;
	return r;
}

/* if_indextoname: result 0 and data = the name (without its NUL), or -1 and errno. */
REC_EXPORT char *if_indextoname(unsigned int index, char name[IF_NAMESIZE])
{
	char *r = IP_REAL(if_indextoname)(index, name);
	int e = errno;
	struct trace_event ev;

	if (!rec_enter())
		return r;
	rec_event_init(&ev, TRACE_EV_INPUT, TRACE_CALL_IF_INDEXTONAME, -1);
	ev.result = r ? 0 : -1;
	ev.err = r ? 0 : e;
	if (r) {
		ev.data = (const uint8_t *)r;
		ev.data_len = (uint32_t)strnlen(r, IF_NAMESIZE);
	}
	rec_log(&ev, RA());
	rec_leave();
	errno = e;
	return r;
}
