/*
 * nons.c: run a command where no namespace can be made and nothing can be mounted, as on a
 * CI machine whose containers lack CAP_SYS_ADMIN or whose kernel forbids unprivileged user
 * namespaces: a seccomp filter makes unshare(2), setns(2), mount(2), umount2(2) and clone(2)
 * with a CLONE_NEW* flag fail with EPERM, and clone3(2) fail with ENOSYS (its flags are behind
 * a pointer a filter cannot read; glibc then falls back to clone).  The filter is inherited by
 * every process the command starts.
 *
 *     nons CMD ARGS...      e.g. meson test -C build --wrapper build/tests/e2e/nons
 *
 * The e2e suite must pass there: replays fall back to no isolation (ENCORE_NO_ISOLATE=auto,
 * set by tests/e2e/meson.build) and the tests that need namespaces or mounts skip (77).
 * As root the filter needs no PR_SET_NO_NEW_PRIVS (which would disarm set-user-ID programs).
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NEWNS_FLAGS (CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWPID | \
                     CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWCGROUP)
#define ARG0_LO offsetof(struct seccomp_data, args[0])
#define ERRNO(e) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (e))

int main(int argc, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
		ERRNO(ENOSYS),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_setns, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mount, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_umount2, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pivot_root, 0, 1),
		ERRNO(EPERM),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LO),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, NEWNS_FLAGS, 0, 1),
		ERRNO(EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (argc < 2) {
		fprintf(stderr, "usage: nons CMD ARGS...\n");
		return 2;
	}
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0 &&
	    (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	     prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)) {
		fprintf(stderr, "nons: cannot install the seccomp filter: %s\n", strerror(errno));
		return 1;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "nons: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
