/*
 * unwind_scope.c: which object the program's _Unwind_RaiseException (the C++ exception ABI,
 * LuaJIT's error unwinding) comes from, as the program's own lookup finds it.  The preloads
 * must not change that: libunwind, opened by them with RTLD_LOCAL, is not in the program's
 * scope (interpose/unwind.h); linked into them, it was, ahead of libgcc_s, and kresd's LuaJIT
 * crashed unwinding its errors through it.  Prints the object's base name, or "none".
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	void *f;
	Dl_info info;

	dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_GLOBAL); /* as a C++ program has it */
	f = dlsym(RTLD_DEFAULT, "_Unwind_RaiseException");
	if (!f || !dladdr(f, &info) || !info.dli_fname) {
		printf("none\n");
		return 0;
	}
	printf("%s\n", strrchr(info.dli_fname, '/') ? strrchr(info.dli_fname, '/') + 1 : info.dli_fname);
	return 0;
}
