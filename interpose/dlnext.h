/*
 * dlnext.h: threads made through dlsym(RTLD_NEXT, "pthread_create").  A library loaded after
 * the preload that looks pthread_create up relative to itself (jemalloc's background thread,
 * a wrapper of the program's) gets libc's, past the preload's interposer, and its thread
 * would run unseen.  Each preload library includes this once, in the file that defines its
 * pthread_create, and writes IP_DLSYM(its_own_pthread_create): it then defines dlsym, which
 * answers that one lookup with the library's own pthread_create (which calls the real one)
 * when the caller comes after the library in the search order: not the library itself (its
 * real_* lookups want the real one), nor the executable or an earlier preload (which find
 * this library's, or an earlier one's, by themselves).  Every other lookup jumps to the real
 * dlsym with the caller's return address in place: dlsym looks RTLD_NEXT up relative to the
 * object that called it (and RTLD_DEFAULT in its namespace), so a call made from here would
 * change the answer; a jump keeps it exact.  x86-64 only (the jump is written in assembly);
 * elsewhere dlsym is not interposed and such threads run unseen (recorder/README.md,
 * "Threads").
 */
#ifndef ENCORE_IP_DLNEXT_H
#define ENCORE_IP_DLNEXT_H

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

/* The program's allocator, when it is a shared library of its own (Debian's redis-server and
 * dig link libjemalloc.so.2): the address range of that object, else [0, 0).  Both preload
 * libraries pass the allocator's own calls through (no event, nothing enforced): its locks,
 * clock reads and threads guard and serve its own state, which the program sees only
 * through the addresses it is given (never replayed: the preloads allocate differently
 * from each other), and whose course depends on that state (recorder/README.md, "Threads").
 * glibc's malloc does the same with locks encore never sees.  An allocator linked into the
 * executable itself is not told apart from the program. */
static inline void ip_alloc_range(uintptr_t *lo, uintptr_t *hi)
{
	struct dl_find_object m, c;
	void *mp = dlsym(RTLD_DEFAULT, "malloc"), *cp = dlsym(RTLD_DEFAULT, "gnu_get_libc_version");

	*lo = *hi = 0;
	if (!mp || !cp || _dl_find_object(mp, &m) != 0 || _dl_find_object(cp, &c) != 0)
		return;
	if (m.dlfo_link_map == c.dlfo_link_map || m.dlfo_link_map == _r_debug.r_map)
		return; /* libc's malloc, or the executable's own */
	*lo = (uintptr_t)m.dlfo_map_start;
	*hi = (uintptr_t)m.dlfo_map_end;
}

static inline int ip_in_range(const void *ra, uintptr_t lo, uintptr_t hi)
{
	return (uintptr_t)ra - lo < hi - lo;
}

#if defined(__x86_64__) && defined(__GLIBC__)
#define IP_DLSYM_ON 1

/* The real dlsym (libc's since glibc 2.34, libdl's before), found by version: dlsym itself
 * cannot be used to find it. */
__attribute__((used, visibility("hidden"))) void *ip_real_dlsym;

/* The stub below calls this for every lookup: the replacement, or NULL for the real dlsym's
 * answer.  ours: the library's own pthread_create. */
static inline void *ip_dlnext(void *h, const char *name, void *caller, void *ours)
{
	struct dl_find_object a, b;
	int e;

	if (__builtin_expect(!ip_real_dlsym, 0)) {
		e = errno;
		ip_real_dlsym = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
		if (!ip_real_dlsym)
			ip_real_dlsym = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
		errno = e;
	}
	if (h != RTLD_NEXT || !name || strcmp(name, "pthread_create") != 0)
		return NULL;
	/* the library's own lookups (ip_resolve) want the real one */
	if (_dl_find_object(caller, &a) != 0 || _dl_find_object(ours, &b) != 0 ||
	    a.dlfo_link_map == b.dlfo_link_map)
		return NULL;
	/* a caller before us in the search order (the executable, an earlier preload) finds us,
	 * or what comes before us, by itself: only one after us is answered here */
	for (const struct link_map *l = _r_debug.r_map; l; l = l->l_next) {
		if (l == a.dlfo_link_map)
			return NULL;
		if (l == b.dlfo_link_map)
			return ours;
	}
	return NULL;
}

/* dlsym(h, name): rdi h, rsi name; the hook gets the return address as its third argument.
 * The stack is 16-byte aligned at the call (8 for the return address, 16 pushed, 8 more). */
#define IP_DLSYM(ours) \
	__attribute__((used, visibility("hidden"))) void *ip_dlsym_hook(void *h, const char *name, \
	                                                               void *caller); \
	void *ip_dlsym_hook(void *h, const char *name, void *caller) \
	{ \
		return ip_dlnext(h, name, caller, (void *)(ours)); \
	} \
	__asm__(".text\n" \
	        ".globl dlsym\n" \
	        ".type dlsym, @function\n" \
	        "dlsym:\n" \
	        "\t.cfi_startproc\n" \
	        "\tpushq %rdi\n" \
	        "\t.cfi_adjust_cfa_offset 8\n" \
	        "\tpushq %rsi\n" \
	        "\t.cfi_adjust_cfa_offset 8\n" \
	        "\tsubq $8, %rsp\n" \
	        "\t.cfi_adjust_cfa_offset 8\n" \
	        "\tmovq 24(%rsp), %rdx\n" \
	        "\tcall ip_dlsym_hook\n" \
	        "\taddq $8, %rsp\n" \
	        "\t.cfi_adjust_cfa_offset -8\n" \
	        "\tpopq %rsi\n" \
	        "\t.cfi_adjust_cfa_offset -8\n" \
	        "\tpopq %rdi\n" \
	        "\t.cfi_adjust_cfa_offset -8\n" \
	        "\ttestq %rax, %rax\n" \
	        "\tjnz 1f\n" \
	        "\tjmp *ip_real_dlsym(%rip)\n" \
	        "1:\tret\n" \
	        "\t.cfi_endproc\n" \
	        ".size dlsym, .-dlsym\n")
#else
#define IP_DLSYM_ON 0
#define IP_DLSYM(ours)
#endif

#endif
