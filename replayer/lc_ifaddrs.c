/*
 * lc_ifaddrs.c: the LC's side of recorder/ifaddrs.c: getifaddrs, if_nameindex,
 * if_nametoindex and if_indextoname return the recorded machine's interfaces, not this
 * one's (schemas/trace-format.md, "Interfaces"), so that a replay elsewhere, or in another
 * network namespace, sees the list the recorded process saw.
 *
 * The lists are made as glibc makes them, so that the program's own freeifaddrs and
 * if_freenameindex (glibc's, not interposed) free them: getifaddrs's in one block starting
 * with the first entry (freeifaddrs is free(ifa)), if_nameindex's as an array whose names
 * are allocated one by one (if_freenameindex frees each, then the array).
 */
#include <errno.h>
#include <ifaddrs.h>
/* The lists are the program's to free (freeifaddrs, if_freenameindex): libc's allocator, not
 * the LC's arena (lc_alloc.h; lc_free gives libc's blocks back to libc). */
#undef malloc
#undef calloc
#undef realloc
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#include "lc.h"

/* The next recorded event when it is an INPUT of `call`; NULL otherwise: traces of
 * recorders before these calls were interposed have no such event, and the real call
 * answers, as it did then (a process that really went elsewhere diverges at its next
 * event). */
static const struct lc_ev *expect_call(uint32_t call, const char *what)
{
	const struct lc_ev *ev = lc_peek();

	if (!ev || ev->kind != TRACE_EV_INPUT || ev->call != call)
		return NULL;
	return lc_expect(TRACE_EV_INPUT, -1, what);
}

struct rd {
	const uint8_t *p;
	size_t n, o;
	int bad;
};

static uint32_t rd_u32(struct rd *r)
{
	uint32_t v = 0;

	if (r->n - r->o < 4) {
		r->bad = 1;
		return 0;
	}
	for (int i = 0; i < 4; i++)
		v |= (uint32_t)r->p[r->o + i] << (8 * i);
	r->o += 4;
	return v;
}

/* A field's bytes (*len of them); NULL when the data ends inside it. */
static const uint8_t *rd_field(struct rd *r, size_t *len)
{
	size_t n;

	if (r->n - r->o < 2) {
		r->bad = 1;
		return NULL;
	}
	n = (size_t)r->p[r->o] | (size_t)r->p[r->o + 1] << 8;
	r->o += 2;
	if (r->n - r->o < n) {
		r->bad = 1;
		return NULL;
	}
	*len = n;
	r->o += n;
	return r->p + r->o - n;
}

#define ALIGN8(x) (((x) + 7) & ~(size_t)7)
_Static_assert(sizeof(struct ifaddrs) % 8 == 0, "entries keep the addresses aligned");

/* Where the bytes of one field go in the block: a name with its NUL, the others aligned;
 * NULL for an empty field (but the name). */
static void *place(uint8_t *block, size_t *at, const uint8_t *src, size_t n, int name)
{
	void *dst;

	if (!n && !name)
		return NULL;
	*at = name ? *at : ALIGN8(*at);
	dst = block + *at;
	if (block) {
		memcpy(dst, src, n);
		if (name)
			((char *)dst)[n] = '\0';
	}
	*at += n + (name ? 1 : 0);
	return dst;
}

/* Decode the recorded list into block (NULL: only count its entries and bytes). */
static int decode_ifaddrs(const uint8_t *data, size_t len, uint8_t *block, size_t *count,
                          size_t *bytes)
{
	struct rd r = { data, len, 0, 0 };
	struct ifaddrs *ent = (struct ifaddrs *)block;
	size_t n = 0, at = *count * sizeof(struct ifaddrs);

	while (r.o < r.n && !r.bad) {
		const uint8_t *f[5];
		size_t fl[5] = { 0 };
		uint32_t flags = rd_u32(&r);

		for (int k = 0; k < 5 && !r.bad; k++)
			f[k] = rd_field(&r, &fl[k]);
		if (r.bad)
			break;
		if (block) {
			struct ifaddrs *e = &ent[n];

			memset(e, 0, sizeof(*e));
			e->ifa_next = n + 1 < *count ? &ent[n + 1] : NULL;
			e->ifa_flags = flags;
			e->ifa_name = place(block, &at, f[0], fl[0], 1);
			e->ifa_addr = place(block, &at, f[1], fl[1], 0);
			e->ifa_netmask = place(block, &at, f[2], fl[2], 0);
			e->ifa_broadaddr = place(block, &at, f[3], fl[3], 0);
			e->ifa_data = place(block, &at, f[4], fl[4], 0);
		} else {
			at += fl[0] + 1;
			for (int k = 1; k < 5; k++)
				at = fl[k] ? ALIGN8(at) + fl[k] : at;
		}
		n++;
	}
	if (r.bad)
		return -1;
	if (!block) {
		/* the entries come first, the names and addresses after them (sizeof(struct
		 * ifaddrs) is a multiple of 8: the alignment counted from 0 holds there) */
		*count = n;
		*bytes = n * sizeof(struct ifaddrs) + at;
	}
	return 0;
}

LC_EXPORT int getifaddrs(struct ifaddrs **ifap)
{
	const struct lc_ev *ev;
	size_t count = 0, bytes = 0;
	uint8_t *block;

	if (!lc_on())
		return IP_REAL(getifaddrs)(ifap);
	if (!(ev = expect_call(TRACE_CALL_GETIFADDRS, "getifaddrs")))
		return IP_REAL(getifaddrs)(ifap);
	if (ev->result < 0) {
		lc_commit();
		errno = ev->err;
		return -1;
	}
	if (decode_ifaddrs(lc.data + ev->data_off, ev->data_len, NULL, &count, &bytes) != 0)
		lc_diverge("getifaddrs: the recorded list of interfaces is damaged");
	if (!count) {
		*ifap = NULL;
		lc_commit();
		return 0;
	}
	if (!(block = calloc(1, bytes))) {
		errno = ENOMEM; /* not an event: the recorded call is still to come */
		return -1;
	}
	decode_ifaddrs(lc.data + ev->data_off, ev->data_len, block, &count, &bytes);
	*ifap = (struct ifaddrs *)block;
	lc_commit();
	return 0;
}

LC_EXPORT struct if_nameindex *if_nameindex(void)
{
	const struct lc_ev *ev;
	struct if_nameindex *ni;
	struct rd r;
	size_t n;

	if (!lc_on())
		return IP_REAL(if_nameindex)();
	if (!(ev = expect_call(TRACE_CALL_IF_NAMEINDEX, "if_nameindex")))
		return IP_REAL(if_nameindex)();
	if (ev->result < 0) {
		lc_commit();
		errno = ev->err;
		return NULL;
	}
	n = (size_t)ev->result;
	if (n > ev->data_len / 6)
		lc_diverge("if_nameindex: the recorded list of interfaces is damaged");
	if (!(ni = calloc(n + 1, sizeof(*ni)))) {
		errno = ENOBUFS; /* not an event: the recorded call is still to come */
		return NULL;
	}
	r = (struct rd){ lc.data + ev->data_off, ev->data_len, 0, 0 };
	for (size_t i = 0; i < n; i++) {
		const uint8_t *name;
		size_t len = 0;

		ni[i].if_index = rd_u32(&r);
		name = rd_field(&r, &len);
		if (r.bad)
			lc_diverge("if_nameindex: the recorded list of interfaces is damaged");
		if (!(ni[i].if_name = malloc(len + 1))) {
			if_freenameindex(ni);
			errno = ENOBUFS;
			return NULL;
		}
		memcpy(ni[i].if_name, name, len);
		ni[i].if_name[len] = '\0';
	}
	lc_commit();
	return ni;
}

LC_EXPORT unsigned int if_nametoindex(const char *name)
{
	const struct lc_ev *ev;
	unsigned int r;

	if (!lc_on())
		return IP_REAL(if_nametoindex)(name);
	if (!(ev = expect_call(TRACE_CALL_IF_NAMETOINDEX, "if_nametoindex")))
		return IP_REAL(if_nametoindex)(name);
	r = (unsigned int)ev->result;
	lc_commit();
	if (!r)
		errno = ev->err;
	return r;
}

LC_EXPORT char *if_indextoname(unsigned int index, char name[IF_NAMESIZE])
{
	const struct lc_ev *ev;
	size_t n;

	if (!lc_on())
		return IP_REAL(if_indextoname)(index, name);
	if (!(ev = expect_call(TRACE_CALL_IF_INDEXTONAME, "if_indextoname")))
		return IP_REAL(if_indextoname)(index, name);
	if (ev->result < 0) {
		lc_commit();
		errno = ev->err;
		return NULL;
	}
	n = ev->data_len < IF_NAMESIZE - 1 ? ev->data_len : IF_NAMESIZE - 1;
	memcpy(name, lc.data + ev->data_off, n);
	name[n] = '\0';
	lc_commit();
	return name;
}
