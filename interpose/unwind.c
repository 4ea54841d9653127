/*
 * unwind.c: libunwind opened with RTLD_LOCAL for the preloads (see unwind.h for why).  The
 * names are the ones libunwind.h's macros give the calls under UNW_LOCAL_ONLY
 * (_ULx86_64_step...), so that any architecture libunwind supports finds its own.
 */
#include <dlfcn.h>
#include <stddef.h>

#include "unwind.h"

struct ip_unwind ip_unw;

#define IP_UNW_STR_(x) #x
#define IP_UNW_STR(x) IP_UNW_STR_(x)

int ip_unwind_load(void)
{
	void *h;

	if (ip_unw.ok)
		return 0;
	ip_guard(1); /* (dlopen's own calls into libc are not the program's) */
	h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
	if (h) {
		/* (unw_getcontext is a function-like macro: its object-like target is named) */
		*(void **)&ip_unw.getcontext = dlsym(h, IP_UNW_STR(unw_tdep_getcontext));
		*(void **)&ip_unw.init_local = dlsym(h, IP_UNW_STR(unw_init_local));
		*(void **)&ip_unw.step = dlsym(h, IP_UNW_STR(unw_step));
		*(void **)&ip_unw.get_reg = dlsym(h, IP_UNW_STR(unw_get_reg));
		*(void **)&ip_unw.get_proc_name = dlsym(h, IP_UNW_STR(unw_get_proc_name));
		*(void **)&ip_unw.get_accessors = dlsym(h, IP_UNW_STR(unw_get_accessors));
		*(void **)&ip_unw.set_caching_policy = dlsym(h, IP_UNW_STR(unw_set_caching_policy));
		ip_unw.local_addr_space = dlsym(h, IP_UNW_STR(unw_local_addr_space));
	}
	ip_guard(-1);
	ip_unw.ok = h && ip_unw.getcontext && ip_unw.init_local && ip_unw.step && ip_unw.get_reg &&
	            ip_unw.get_proc_name && ip_unw.get_accessors && ip_unw.set_caching_policy &&
	            ip_unw.local_addr_space;
	return ip_unw.ok ? 0 : -1;
}
