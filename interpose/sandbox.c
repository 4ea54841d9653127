/*
 * sandbox.c: raw system calls both preload libraries must tell apart alike: when a call
 * installs a seccomp sandbox, the moment they must step aside (interpose/sandbox.h has the
 * interposers), and a clone that is a fork by another name.
 */
#include <linux/seccomp.h>
#include <sched.h>
#include <stdint.h>
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

int ip_clone_is_fork(long nr, const long *a)
{
	const unsigned long shared = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
	                             CLONE_THREAD | CLONE_VFORK | CLONE_SETTLS;
	/* the head of the kernel's struct clone_args (linux/sched.h, whose CLONE_ macros clash
	 * with sched.h's) */
	const struct { uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack; } *ca;

	if (nr == SYS_clone)
		return !((unsigned long)a[0] & shared) && !a[1];
	if (nr != SYS_clone3 || !a[0] || (unsigned long)a[1] < 64) /* CLONE_ARGS_SIZE_VER0 */
		return 0;
	ca = (const void *)a[0];
	return !(ca->flags & shared) && !ca->stack;
}
