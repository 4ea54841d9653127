/* unrecorded.c: programs that do what the recorder cannot record through (see
 * record_unrecorded.sh): each prints what it saw, so that the recorded run's output can be
 * compared with the bare run's.
 *
 *   privdrop        (root) setuid(65534), then fork a child that writes into a pipe
 *   seccomp MODE    install a filter that kills the process on the recorder's own calls
 *                   (pwrite64, process_vm_readv, fallocate, ftruncate, openat), through
 *                   prctl (MODE prctl) or syscall(SYS_seccomp) (MODE syscall), then keep
 *                   working: new call sites, a forked child, a pipe, output; exit status 3
 *   dup2            dup2 a pipe's write end onto every descriptor from 5 to 1023 (the
 *                   trace's included), write through some, read everything back, fork a
 *                   child that writes too, close them all with close_range
 *   exec PATH ARG.. execv PATH with PATH ARG... (a set-user-ID program)
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int child_writes(int wfd, const char *what)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		ssize_t n = write(wfd, what, strlen(what));

		_exit(n == (ssize_t)strlen(what) ? 0 : 1);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void read_print(int rfd, size_t n)
{
	char buf[256];
	size_t got = 0;

	while (got < n && got < sizeof(buf) - 1) {
		ssize_t r = read(rfd, buf + got, n - got);

		if (r <= 0)
			break;
		got += (size_t)r;
	}
	buf[got] = '\0';
	printf("read: %s\n", buf);
}

static int privdrop(void)
{
	int p[2], rc;

	if (pipe(p) != 0 || setuid(65534) != 0) {
		perror("setup");
		return 1;
	}
	rc = child_writes(p[1], "from the child");
	printf("child status %d\n", rc);
	read_print(p[0], 14);
	return 0;
}

#define KILL_ON(nr) \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)

static int seccomp_mode(const char *how)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		KILL_ON(SYS_pwrite64),
		KILL_ON(SYS_process_vm_readv),
		KILL_ON(SYS_fallocate),
		KILL_ON(SYS_ftruncate),
		KILL_ON(SYS_openat),
		/* the recorder's signal trampoline needs getpid: it cannot go on under this */
		KILL_ON(SYS_getpid),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	struct timespec ts;
	int p[2], rc, i;

	/* events before the filter: the last is the read of "before" */
	if (pipe(p) != 0 || write(p[1], "before", 6) != 6)
		return 1;
	read_print(p[0], 6);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		perror("no_new_privs");
		return 1;
	}
	if (strcmp(how, "syscall") == 0)
		rc = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
	else
		rc = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
	if (rc != 0) {
		perror("seccomp");
		return 1;
	}
	/* New call sites, clocks, a pipe, a child: each would make the recorder call what the
	 * filter forbids. */
	for (i = 0; i < 3; i++)
		clock_gettime(CLOCK_REALTIME, &ts);
	rc = child_writes(p[1], "sandboxed child");
	printf("child status %d\n", rc);
	read_print(p[0], 15);
	for (i = 0; i < 2000; i++)
		if (write(p[1], "0123456789abcdef0123456789abcdef", 32) != 32 ||
		    read(p[0], (char[32]){ 0 }, 32) != 32)
			return 1;
	printf("after the filter: %d round trips\n", i);
	return 3;
}

static int dup2_mode(void)
{
	int p[2], fd, open_fds = 0, rc;
	const char *seen = NULL;

	if (pipe(p) != 0 || p[0] != 3 || p[1] != 4) {
		fprintf(stderr, "pipe not at 3, 4\n");
		return 1;
	}
	for (fd = 5; fd <= 1023; fd++)
		if (dup2(p[1], fd) != fd) {
			fprintf(stderr, "dup2 onto %d: %s\n", fd, strerror(errno));
			return 1;
		}
	for (fd = 5; fd <= 1023; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			open_fds++;
	printf("open: %d\n", open_fds);
	/* the numbers the recorder had: they are the program's pipe now */
	for (fd = 998; fd <= 1010; fd++)
		if (write(fd, "x", 1) != 1)
			seen = "write failed";
	read_print(p[0], 13);
	rc = child_writes(1000, "child via 1000");
	printf("child status %d\n", rc);
	read_print(p[0], 14);
	if (close_range(5, 1023, 0) != 0)
		perror("close_range");
	for (fd = 5, open_fds = 0; fd <= 1023; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			open_fds++;
	printf("open after close_range: %d%s%s\n", open_fds, seen ? " " : "", seen ? seen : "");
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && strcmp(argv[1], "privdrop") == 0)
		return privdrop();
	if (argc >= 3 && strcmp(argv[1], "seccomp") == 0)
		return seccomp_mode(argv[2]);
	if (argc >= 2 && strcmp(argv[1], "dup2") == 0)
		return dup2_mode();
	if (argc >= 3 && strcmp(argv[1], "exec") == 0) {
		execv(argv[2], argv + 2);
		perror("exec");
		return 1;
	}
	fprintf(stderr, "usage: unrecorded privdrop|seccomp prctl|seccomp syscall|dup2|exec PATH ARG...\n");
	return 2;
}
