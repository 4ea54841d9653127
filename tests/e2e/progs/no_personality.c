/*
 * no_personality.c: run a command where personality(2) may only be read, as in a container
 * whose seccomp policy (Docker's default) refuses ADDR_NO_RANDOMIZE: a seccomp filter makes
 * personality with any argument but 0xffffffff (the query) fail with EPERM, for the command
 * and everything it starts.
 *
 *     no_personality CMD ARGS...
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_personality, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffu, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (argc < 2) {
		fprintf(stderr, "usage: no_personality CMD ARGS...\n");
		return 2;
	}
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0 &&
	    (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	     prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)) {
		fprintf(stderr, "no_personality: cannot install the seccomp filter: %s\n",
		        strerror(errno));
		return 1;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "no_personality: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
