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
#include <sys/uio.h>
#include <unistd.h>

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
	struct { uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack; } ca;
	struct iovec local = { &ca, sizeof(ca) }, remote = { (void *)a[0], sizeof(ca) };

	if (nr == SYS_clone)
		return !((unsigned long)a[0] & shared) && !a[1];
	if (nr != SYS_clone3 || !a[0] || (unsigned long)a[1] < 64) /* CLONE_ARGS_SIZE_VER0 */
		return 0;
	/* The struct is the program's pointer, which the kernel reads with a check: read it so
	 * too (process_vm_readv on ourselves fails where a load would fault), and leave a struct
	 * we cannot read whole to the real call, whose EFAULT the program then gets.  The number
	 * goes to syscall(), not getpid(): the replay's getpid gives back the recorded pid. */
	if (syscall(SYS_process_vm_readv, syscall(SYS_getpid), &local, 1UL, &remote, 1UL, 0UL) !=
	    (long)sizeof(ca))
		return 0;
	return !(ca.flags & shared) && !ca.stack;
}
