/*
 * resolve.c: the real functions behind the interposers, real_<name> for every row of
 * calls.def, found with dlsym(RTLD_NEXT).  Compiled into each preload library: each has its
 * own pointers, and its own ip_guard() that keeps dlsym's calls back into libc out of it.
 * Also the real calls both libraries make around their own descriptor.
 */
#include <dlfcn.h>
#include <string.h>

#include "interpose.h"

#define ENCORE_CALL(name, ret, params, args, kind, call, flags, shape) ret (*real_##name) params;
#include "calls.def"

void *ip_resolve(const char *name)
{
	void *p;

	ip_guard(1);
#if defined(__GLIBC__) && defined(__x86_64__)
	/* dlsym gives the condition variables' first version (GLIBC_2.2.5, the old layout);
	 * programs are linked against the current one */
	p = strncmp(name, "pthread_cond_", 13) == 0 ? dlvsym(RTLD_NEXT, name, "GLIBC_2.3.2") : NULL;
	if (!p)
#endif
		p = dlsym(RTLD_NEXT, name);
	ip_guard(-1);
	return p;
}

void ip_resolve_all(void)
{
#define ENCORE_CALL(name, ret, params, args, kind, call, flags, shape) \
	if (!real_##name) \
		real_##name = (ret(*) params)ip_resolve(#name);
#include "calls.def"
}

int ip_close_range_except(unsigned int first, unsigned int last, int flags, int own)
{
	int r = 0;

	if (own < 0 || (unsigned)own < first || (unsigned)own > last)
		return IP_REAL(close_range)(first, last, flags);
	if ((unsigned)own > first)
		r = IP_REAL(close_range)(first, (unsigned)own - 1, flags);
	if (r == 0 && (unsigned)own < last)
		r = IP_REAL(close_range)((unsigned)own + 1, last, flags);
	return r;
}
