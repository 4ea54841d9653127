/*
 * sandbox.c: when a call installs a seccomp sandbox, the moment both preload libraries must
 * step aside (interpose/sandbox.h has the interposers).
 */
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "interpose.h"

int ip_sandbox_install(long nr, long a0, long a1)
{
	if (nr == SYS_seccomp && ((unsigned long)a0 == SECCOMP_SET_MODE_STRICT ||
	                          (unsigned long)a0 == SECCOMP_SET_MODE_FILTER))
		return (unsigned long)a0 == SECCOMP_SET_MODE_STRICT;
	if (nr == SYS_prctl && (int)a0 == PR_SET_SECCOMP &&
	    ((unsigned long)a1 == SECCOMP_MODE_STRICT || (unsigned long)a1 == SECCOMP_MODE_FILTER))
		return (unsigned long)a1 == SECCOMP_MODE_STRICT;
	return -1;
}
