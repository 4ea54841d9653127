/*
 * sandbox.h: the prctl and seccomp interposers, the same in both preload libraries.  A
 * seccomp filter may forbid the preload's own system calls, so each side decides what to do
 * around the call: the recorder stops its trace just before it, or goes on under it and logs
 * it (recorder/guard.c); the replayer's controller returns the recorded result without
 * installing the filter, or runs free from there where the trace stopped (replayer/lc_proc.c).
 * Other prctl options and seccomp operations are the real call, untouched.
 *
 * Included once by each side, after it defines IP_SANDBOX_CALL(nr, a, strict): make the call
 * nr (SYS_prctl or SYS_seccomp) with the arguments a[5] of its syscall(2) form, installing a
 * sandbox in strict mode (strict 1) or a filter (0), and return its result as a long (-1 and
 * errno on failure).  In a file that includes interpose.h.  ip_sandbox_install (interpose.h)
 * judges the syscall(2) forms with the same rule.
 */
#ifndef IP_SANDBOX_CALL
#error "define IP_SANDBOX_CALL(nr, a, strict) before including sandbox.h"
#endif

#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

int seccomp(unsigned int op, unsigned int flags, void *args); /* glibc declares none */

IP_EXPORT int prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;
	int i, strict;

	/* prctl's arguments are unsigned longs after the option (the kernel reads 4 of them) */
	va_start(ap, option);
	for (i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if ((strict = ip_sandbox_install(SYS_prctl, option, (long)a[0])) >= 0) {
		long s[5] = { option, (long)a[0], (long)a[1], (long)a[2], (long)a[3] };

		return (int)IP_SANDBOX_CALL(SYS_prctl, s, strict);
	}
	return IP_REAL(prctl)(option, a[0], a[1], a[2], a[3]);
}

IP_EXPORT int seccomp(unsigned int op, unsigned int flags, void *args)
{
	int strict;

	if ((strict = ip_sandbox_install(SYS_seccomp, (long)op, 0)) >= 0) {
		long s[5] = { (long)op, (long)flags, (long)args, 0, 0 };

		return (int)IP_SANDBOX_CALL(SYS_seccomp, s, strict);
	}
	return (int)IP_REAL(syscall)(SYS_seccomp, (long)op, (long)flags, (long)args);
}
