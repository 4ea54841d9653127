/*
 * sandboxed.c: a process that sandboxes itself the way sshd's pre-auth child does (a filter
 * that allows only what its loop needs and kills the process on anything else), then
 * exchanges messages with a recorded peer over a socketpair made before (the peer is its
 * forked child, unfiltered).  For tests/e2e/record_seccomp.sh.
 *
 *   sandboxed prctl|syscall|tsync [newfd]
 *     prctl    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)
 *     syscall  syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)
 *     tsync    seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog), twice (two
 *              filters in force)
 *     newfd    the filter also allows pipe2, and the loop ends with a pipe made under it
 *
 * Prints "round trips: N" and "sum: S" (the peer's replies added up) and exits 0.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 3000

#define ALLOW(nr) \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define DENY(nr, e) \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (e))

static int install(const char *how, int newfd)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		DENY(SYS_openat, EACCES),
		DENY(SYS_fstat, EACCES),
		DENY(SYS_newfstatat, EACCES),
		ALLOW(SYS_read),
		ALLOW(SYS_write),
		ALLOW(SYS_poll),
		ALLOW(SYS_ppoll),
		ALLOW(SYS_clock_gettime),
		ALLOW(SYS_gettimeofday),
		ALLOW(SYS_getpid),
		ALLOW(SYS_rt_sigprocmask),
		ALLOW(SYS_brk),
		ALLOW(SYS_munmap),
		ALLOW(SYS_futex),
		ALLOW(SYS_close),
		ALLOW(SYS_wait4),
		ALLOW(SYS_exit),
		ALLOW(SYS_exit_group),
		ALLOW(SYS_seccomp), /* the second filter (tsync) */
		/* mmap with PROT_READ|PROT_WRITE at most, as sshd's filter allows it */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, ~(uint32_t)(PROT_READ | PROT_WRITE), 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pipe2, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pipe, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, newfd ? SECCOMP_RET_ALLOW : SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	if (strcmp(how, "syscall") == 0)
		return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
	if (strcmp(how, "tsync") == 0) {
		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog))
			return -1;
		return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC,
		                    &prog);
	}
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

static int peer(int fd)
{
	char buf[64];
	unsigned i;

	for (i = 0;; i++) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		int len;

		if (n <= 0)
			return 0;
		buf[n] = '\0';
		len = snprintf(buf, sizeof(buf), "%u", (unsigned)atoi(buf + 5) * 3 + i % 7);
		if (write(fd, buf, (size_t)len) != len)
			return 1;
	}
}

static void say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		_exit(2);
}

int main(int argc, char **argv)
{
	char line[128];
	unsigned long sum = 0;
	struct timespec ts;
	int sv[2], i, st, newfd = argc > 2 && strcmp(argv[2], "newfd") == 0;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: sandboxed prctl|syscall|tsync [newfd]\n");
		return 2;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		close(sv[0]);
		_exit(peer(sv[1]));
	}
	close(sv[1]);
	say("sandboxing\n"); /* stdout is used before the filter, as sshd's log is */
	if (install(argv[1], newfd) != 0) {
		perror("seccomp");
		return 1;
	}
	for (i = 0; i < ROUNDS; i++) {
		struct pollfd p = { sv[0], POLLIN, 0 };
		char buf[64];
		ssize_t n;
		int len = snprintf(buf, sizeof(buf), "ping %d", i);

		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (write(sv[0], buf, (size_t)len) != len || poll(&p, 1, -1) != 1)
			return 1;
		n = read(sv[0], buf, sizeof(buf) - 1);
		if (n <= 0)
			return 1;
		buf[n] = '\0';
		sum += strtoul(buf, NULL, 10);
	}
	if (newfd) {
		int p[2];
		char c = 0;

		if (pipe(p) != 0 || write(p[1], "x", 1) != 1 || read(p[0], &c, 1) != 1 || c != 'x')
			return 1;
	}
	close(sv[0]);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 1;
	snprintf(line, sizeof(line), "round trips: %d\nsum: %lu\n", i, sum);
	say(line);
	return 0;
}
