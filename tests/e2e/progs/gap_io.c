/*
 * gap_io.c: calls that reach the kernel without the usual interposers (recorder/io_more.c).
 *
 *   gap_io random     syscall(SYS_getrandom) and getentropy bytes printed in hex (OpenSSL 3
 *                     seeds itself so); raw pass-through of other numbers, errno included
 *   gap_io move DIR   a file sent with sendfile over a socketpair to a child, which splices
 *                     it from the socket into a pipe of its own (a receive and a send in one
 *                     call), reads the pipe and prints what it got; it answers with vmsplice
 *                     through a pipe to the parent; copy_file_range between regular files
 *                     (unlogged)
 *   gap_io tcp DIR    a file sent with sendfile over TCP to a forked client
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static void hex(const char *what, const unsigned char *p, size_t n)
{
	printf("%s:", what);
	for (size_t i = 0; i < n; i++)
		printf("%02x", p[i]);
	printf("\n");
}

static int do_random(void)
{
	unsigned char b[32];
	long r;

	r = syscall(SYS_getrandom, b, sizeof(b), 0);
	printf("getrandom syscall: %ld\n", r);
	hex("bytes", b, r > 0 ? (size_t)r : 0);
	r = syscall(SYS_getrandom, b, 8, 1 /* GRND_NONBLOCK */);
	hex("more", b, r > 0 ? (size_t)r : 0);
	/* getentropy: OpenSSL 3's seed where glibc has it */
	if (getentropy(b, 16) == 0)
		hex("entropy", b, 16);
	/* other numbers pass through untouched, errno included */
	errno = 0;
	r = syscall(SYS_close, -1);
	printf("close(-1): %ld %s\n", r, errno == EBADF ? "EBADF" : "other errno");
	errno = 0;
	r = syscall(SYS_getrandom, NULL, 8, 0);
	printf("getrandom(NULL): %ld %s\n", r, errno == EFAULT ? "EFAULT" : "other errno");
	/* a bad path pointer: the kernel's EFAULT, not a fault in the wrapper (which looks for
	 * the name before an O_CREAT open or a rename to tell whether the call creates it) */
	errno = 0;
	r = open((const char *)1, O_CREAT | O_WRONLY, 0600);
	printf("open(bad path, O_CREAT): %ld %s\n", r, errno == EFAULT ? "EFAULT" : "other errno");
	errno = 0;
	r = rename("/nonexistent-encore-test-name", (const char *)1);
	printf("rename(to a bad path): %ld %s\n", r, errno == EFAULT || errno == ENOENT ? "refused" :
	       "other errno");
	/* (in replay getpid() gives the recorded pid and the raw call the live one) */
	r = syscall(SYS_getpid) > 0 && syscall(SYS_gettid) == syscall(SYS_getpid);
	printf("getpid agrees: %ld\n", r);
	return 0;
}

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static size_t read_all(int fd, char *buf, size_t cap)
{
	size_t got = 0;
	ssize_t r;

	while (got < cap && (r = read(fd, buf + got, cap - got)) > 0)
		got += (size_t)r;
	return got;
}

static int do_move(const char *dir)
{
	char path[4096], copy[4096], buf[8192];
	int sv[2], back[2], f, st;
	size_t len, i;
	pid_t pid;
	off_t off = 0;
	ssize_t r;

	snprintf(path, sizeof(path), "%s/gap_io.src", dir);
	snprintf(copy, sizeof(copy), "%s/gap_io.copy", dir);
	f = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (f < 0)
		die("open");
	len = 0;
	for (i = 0; i < 100; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "line %zu of the file\n", i);
	if (write(f, buf, len) != (ssize_t)len)
		die("write");
	/* copy_file_range between regular files: not logged */
	{
		int g = open(copy, O_RDWR | O_CREAT | O_TRUNC, 0600);
		loff_t a = 0, b = 0;

		if (g < 0)
			die("open copy");
		r = copy_file_range(f, &a, g, &b, len, 0);
		printf("copy_file_range: %zd\n", r);
		close(g);
	}
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) || pipe(back))
		die("socketpair");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		int p[2];
		size_t got = 0;
		unsigned sum = 0;
		struct iovec v;
		char ans[64];

		close(sv[0]);
		close(back[0]);
		if (pipe(p))
			die("pipe");
		while (got < len) {
			r = splice(sv[1], NULL, p[1], NULL, len - got < 4096 ? len - got : 4096, 0);
			if (r <= 0)
				die("splice");
			if (read_all(p[0], buf + got, (size_t)r) != (size_t)r)
				die("read pipe");
			got += (size_t)r;
		}
		for (i = 0; i < got; i++)
			sum = sum * 31 + (unsigned char)buf[i];
		printf("child: %zu bytes, sum %08x, last line: %.*s", got, sum, 22,
		       buf + got - 22);
		snprintf(ans, sizeof(ans), "thanks for %zu bytes\n", got);
		v.iov_base = ans;
		v.iov_len = strlen(ans);
		if (vmsplice(back[1], &v, 1, 0) != (ssize_t)v.iov_len)
			die("vmsplice");
		fflush(stdout);
		_exit(0);
	}
	close(sv[1]);
	close(back[1]);
	while ((size_t)off < len) {
		r = sendfile(sv[0], f, &off, len - (size_t)off < 1000 ? len - (size_t)off : 1000);
		if (r <= 0)
			die("sendfile");
	}
	r = (ssize_t)read_all(back[0], buf, sizeof(buf) - 1);
	buf[r] = 0;
	printf("parent: sent %lld bytes, answer: %s", (long long)off, buf);
	waitpid(pid, &st, 0);
	printf("child status %d\n", WEXITSTATUS(st));
	close(f);
	return 0;
}

/* TCP: a forked client connects to the parent, which sends it a file with sendfile. */
static int do_tcp(const char *dir)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	char path[4096], buf[8192];
	int l, c, f, st;
	size_t len = 0, got = 0;
	unsigned sum = 0;
	off_t off = 0;
	pid_t pid;
	ssize_t r;

	snprintf(path, sizeof(path), "%s/gap_io.tcp", dir);
	f = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	for (int i = 0; i < 400; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%04d\n", i);
	if (f < 0 || write(f, buf, len) != (ssize_t)len)
		die("file");
	l = socket(AF_INET, SOCK_STREAM, 0);
	st = 1; /* replay binds the recorded port again, which this run's close left in TIME_WAIT */
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &st, sizeof(st));
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &alen))
		die("listen");
	pid = fork();
	if (pid == 0) {
		close(l);
		c = socket(AF_INET, SOCK_STREAM, 0);
		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)))
			die("connect");
		while ((r = read(c, buf + got, sizeof(buf) - got)) > 0)
			got += (size_t)r;
		for (size_t i = 0; i < got; i++)
			sum = sum * 31 + (unsigned char)buf[i];
		printf("tcp child: %zu bytes, sum %08x\n", got, sum);
		_exit(0);
	}
	c = accept(l, NULL, NULL);
	if (c < 0)
		die("accept");
	while ((size_t)off < len)
		if (sendfile(c, f, &off, 700) <= 0)
			die("sendfile");
	close(c);
	waitpid(pid, &st, 0);
	printf("tcp parent: sent %lld bytes, child status %d\n", (long long)off, WEXITSTATUS(st));
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && strcmp(argv[1], "random") == 0)
		return do_random();
	if (argc >= 3 && strcmp(argv[1], "move") == 0)
		return do_move(argv[2]);
	if (argc >= 3 && strcmp(argv[1], "tcp") == 0)
		return do_tcp(argv[2]);
	fprintf(stderr, "usage: gap_io random | move DIR | tcp DIR\n");
	return 2;
}
