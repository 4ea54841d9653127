/*
 * sandbox.h: the prctl and seccomp interposers, the same in both preload libraries.  A
 * seccomp filter may forbid the preload's own system calls, so each side must step aside
 * just before one goes in: the recorder stops its trace there (recorder/guard.c), the
 * replayer's controller runs free from there (replayer/lc_proc.c).  The rest is the real
 * call, untouched.
 *
 * Included once by each side, after it defines IP_SANDBOX_BEFORE(strict) (1 for strict
 * mode, 0 for a filter), in a file that includes interpose.h.  ip_sandbox_install (in
 * interpose.h) judges the syscall(2) forms with the same rule.
 */
#ifndef IP_SANDBOX_BEFORE
#error "define IP_SANDBOX_BEFORE(strict) before including sandbox.h"
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
	if ((strict = ip_sandbox_install(SYS_prctl, option, (long)a[0])) >= 0)
		IP_SANDBOX_BEFORE(strict);
	return IP_REAL(prctl)(option, a[0], a[1], a[2], a[3]);
}

IP_EXPORT int seccomp(unsigned int op, unsigned int flags, void *args)
{
	int strict;

	if ((strict = ip_sandbox_install(SYS_seccomp, (long)op, 0)) >= 0)
		IP_SANDBOX_BEFORE(strict);
	return (int)IP_REAL(syscall)(SYS_seccomp, (long)op, (long)flags, (long)args);
}
