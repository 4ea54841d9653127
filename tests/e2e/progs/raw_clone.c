/*
 * raw_clone.c: forks with the raw system call, as vsftpd does for its session processes
 * (syscall(__NR_clone, flags | SIGCHLD, 0)), or with clone3 ("clone3" argument): the child
 * answers three requests of its parent over a socketpair, the parent prints the answers and
 * how the child ended.  The child is a forked child for both preloads (interpose/sandbox.c,
 * ip_clone_is_fork): it gets its own trace, and it must not write into its parent's.
 * "clone3bad": clone3 with argument pointers the kernel cannot read (unmapped, NULL+1, the
 * struct running off the end of a page): each must fail with EFAULT, as without a preload,
 * which has to read the struct to tell a fork from a thread; prints what each call gave.
 * Usage: raw_clone [clone|clone3|clone3bad]
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long raw_fork(int use3)
{
	/* the head of struct clone_args (linux/sched.h): flags, pidfd, child_tid, parent_tid,
	 * exit_signal, stack, stack_size, tls */
	uint64_t ca[8];

	if (!use3)
		return syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
	memset(ca, 0, sizeof(ca));
	ca[4] = SIGCHLD;
	return syscall(SYS_clone3, ca, sizeof(ca));
}

/* clone3 with pointers the kernel faults on: each call's result and errno */
static int bad_clone3(void)
{
	long pg = sysconf(_SC_PAGESIZE), r;
	char *two = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	                 -1, 0);
	void *bad[3];
	int i;

	if (two == MAP_FAILED)
		return 1;
	/* a readable page followed by an unmapped one: the struct's head readable, its tail not */
	munmap(two + pg, (size_t)pg);
	memset(two, 0, (size_t)pg);
	bad[0] = two + pg;          /* unmapped */
	bad[1] = (void *)1;         /* never mapped */
	bad[2] = two + pg - 16;     /* the first 16 bytes readable, the rest not */
	for (i = 0; i < 3; i++) {
		errno = 0;
		r = syscall(SYS_clone3, bad[i], (size_t)64);
		if (r == 0)
			_exit(9); /* a child: it should not exist */
		if (r < 0 && errno == ENOSYS)
			return 77;
		printf("clone3 bad pointer %d: %ld %s\n", i, r, strerror(errno));
	}
	return 0;
}

int main(int argc, char **argv)
{
	int use3 = argc > 1 && strcmp(argv[1], "clone3") == 0, sv[2], i, st;
	char buf[64];
	ssize_t n;
	long pid;

	if (argc > 1 && strcmp(argv[1], "clone3bad") == 0)
		return bad_clone3();
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 1;
	pid = raw_fork(use3);
	if (pid < 0) {
		if (use3 && errno == ENOSYS)
			return 77;
		perror("clone");
		return 1;
	}
	if (pid == 0) {
		close(sv[0]);
		while ((n = read(sv[1], buf, sizeof(buf) - 1)) > 0) {
			buf[n] = 0;
			n = snprintf(buf + n, sizeof(buf) - (size_t)n, " answered");
			if (write(sv[1], buf, strlen(buf)) < 0)
				_exit(2);
		}
		_exit(n == 0 ? 7 : 3);
	}
	close(sv[1]);
	for (i = 0; i < 3; i++) {
		n = snprintf(buf, sizeof(buf), "request %d", i);
		if (write(sv[0], buf, (size_t)n) != n)
			return 1;
		n = read(sv[0], buf, sizeof(buf) - 1);
		if (n <= 0)
			return 1;
		buf[n] = 0;
		printf("%s\n", buf);
	}
	close(sv[0]);
	if (waitpid((pid_t)pid, &st, 0) != (pid_t)pid)
		return 1;
	printf("child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}
