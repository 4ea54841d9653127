/*
 * unwind.h: libunwind for both preloads, opened with RTLD_LOCAL rather than linked.
 *
 * A library linked into a preload is loaded into the program's global symbol scope, ahead of
 * the program's own libraries, and libunwind.so defines _Unwind_RaiseException and the rest of
 * the C++ exception ABI: every exception the program threw (C++ throw, LuaJIT's error
 * unwinding through lua_pcall) went through libunwind's implementation instead of libgcc's,
 * which does not know the frames LuaJIT registers for its machine code: knot-resolver's kresd
 * crashed at start when recorded.  Opened with RTLD_LOCAL, libunwind is the preloads' own:
 * its functions are reached through ip_unw only, and the program's exceptions keep libgcc.
 * (Debian's libunwind.a is not position-independent, so it cannot be linked in hidden.)
 */
#ifndef ENCORE_INTERPOSE_UNWIND_H
#define ENCORE_INTERPOSE_UNWIND_H

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "interpose.h"

struct ip_unwind {
	int ok; /* every function below was found */
	int (*getcontext)(unw_context_t *);
	int (*init_local)(unw_cursor_t *, unw_context_t *);
	int (*step)(unw_cursor_t *);
	int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
	int (*get_proc_name)(unw_cursor_t *, char *, size_t, unw_word_t *);
	unw_accessors_t *(*get_accessors)(unw_addr_space_t);
	int (*set_caching_policy)(unw_addr_space_t, unw_caching_policy_t);
	unw_addr_space_t *local_addr_space;
};

IP_HIDDEN extern struct ip_unwind ip_unw;

/* Open libunwind (at the preload's start, where the loader may be entered: a constructor)
 * and find its functions; 0, or -1 (ip_unw.ok stays 0: no call-site walk, no backtrace). */
IP_HIDDEN int ip_unwind_load(void);

#endif
