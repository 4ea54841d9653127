/*
 * e2e_ext.c: peers outside the session.  The root ("ext") talks to helpers it starts with a
 * raw fork syscall and that use only raw syscalls: the recorder never sees them, exactly like
 * a process on another machine or one started without encore.  What the root receives from
 * them must be logged as INPUT with the bytes; what it receives from its recorded child
 * ("ext.1") over TCP must be a plain receive (order and size only).
 *
 *   1. unrecorded TCP client -> recorded server (accept; decided at the first data);
 *   2. recorded client -> unrecorded TCP server (connect);
 *   3. unrecorded client -> recorded Unix socket server (SO_PEERCRED pid not registered);
 *   4. recorded child ext.1 -> the same TCP listener (registered port: not INPUT);
 *   5. recorded child ext.2 -> a listener on [::1] (IPv6, not INPUT);
 *   6. a Unix connection within the root: the accepted end names the connecting end's inode.
 * Report format: tests/e2e/check_trace.c.
 *
 *   e2e_ext REPORTDIR
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace.h"

static FILE *rep;

/* waitpid(pid, status, 0), reported as its WAIT event (schemas/trace-format.md, kind 23):
 * the child, its status and si_code. */
static void wait_report(pid_t pid, int *status)
{
	pid_t r = waitpid(pid, status, 0);

	fprintf(rep, "wait waitpid -1 0 %d 0 a=%d,%d\n", (int)r, *status,
	        WIFEXITED(*status) ? 1 : WCOREDUMP(*status) ? 3 : 2);
}
static int next_ch;

static void rep_open(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s.report", dir, name);
	if (!(rep = fopen(path, "w"))) {
		perror(path);
		exit(99);
	}
	setvbuf(rep, NULL, _IOLBF, 0);
}

static void hex(char *out, const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
	out[2 * n] = '\0';
}

/* K = 1: every data event carries the hash of its direction so far (fresh channels here). */
static void data(const char *kind, const char *call, int fd, int ch, ssize_t r, size_t n,
                 const void *b, int with_value)
{
	char v[256] = "";

	if (with_value && r > 0) {
		strcpy(v, " v=");
		hex(v + 3, b, (size_t)r);
	}
	if (r > 0)
		fprintf(rep, "%s %s %d %d %zd 0 n=%zu h=%08x%s\n", kind, call, fd, ch, r, n,
		        trace_hash(0, b, (size_t)r), v);
	else
		fprintf(rep, "%s %s %d %d %zd %d n=%zu\n", kind, call, fd, ch, r, r < 0 ? errno : 0, n);
}

/* A process the recorder does not see: raw fork, raw syscalls only, raw exit. */
static pid_t raw_fork(void)
{
	return (pid_t)syscall(SYS_fork);
}

static void raw_exit(int code)
{
	syscall(SYS_exit_group, code);
	for (;;)
		;
}

static void raw_client(const struct sockaddr *sa, socklen_t len, int domain, const char *msg)
{
	int fd = (int)syscall(SYS_socket, domain, SOCK_STREAM, 0);

	if (fd < 0 || syscall(SYS_connect, fd, sa, len) != 0)
		raw_exit(1);
	syscall(SYS_write, fd, msg, strlen(msg));
	syscall(SYS_close, fd);
	raw_exit(0);
}

static int lfd_tcp(struct sockaddr_in *sa)
{
	socklen_t len = sizeof(*sa);
	int fd = (int)syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (syscall(SYS_bind, fd, sa, sizeof(*sa)) || syscall(SYS_listen, fd, 1) ||
	    syscall(SYS_getsockname, fd, sa, &len))
		return -1;
	return fd;
}

static const char *addr6(int fd, int peer, char *out)
{
	struct sockaddr_in6 a;
	socklen_t len = sizeof(a);
	char ip[INET6_ADDRSTRLEN];

	if ((peer ? getpeername(fd, (struct sockaddr *)&a, &len)
	          : getsockname(fd, (struct sockaddr *)&a, &len)) != 0 ||
	    !inet_ntop(AF_INET6, &a.sin6_addr, ip, sizeof(ip)))
		return "?";
	sprintf(out, "[%s]:%u", ip, ntohs(a.sin6_port));
	return out;
}

/* 5. TCP over IPv6 loopback between the root and a recorded child (ext.2): a plain receive,
 * and endpoints in IPv6 form.  Where ::1 is unusable both runs say so and stop here. */
static void ipv6(const char *dir)
{
	struct sockaddr_in6 sa;
	socklen_t slen = sizeof(sa);
	char buf[64], a1[80], a2[80];
	int lfd, c, ch_l, ch, status;
	pid_t pid;
	ssize_t r;

	lfd = socket(AF_INET6, SOCK_STREAM, 0);
	ch_l = ++next_ch;
	fprintf(rep, "socket socket %d %d %d %d a=%d,%d\n", lfd, lfd >= 0 ? ch_l : 0, lfd,
	        lfd < 0 ? errno : 0, AF_INET6, SOCK_STREAM);
	memset(&sa, 0, sizeof(sa));
	sa.sin6_family = AF_INET6;
	sa.sin6_addr = in6addr_loopback;
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		printf("no IPv6 loopback here\n");
		fprintf(rep, "bind bind %d %d -1 %d\n", lfd, ch_l, errno);
		return;
	}
	fprintf(rep, "bind bind %d %d 0 0 epl=%s\n", lfd, ch_l, addr6(lfd, 0, a1));
	r = listen(lfd, 1);
	fprintf(rep, "listen listen %d %d %zd 0\n", lfd, ch_l, r);
	getsockname(lfd, (struct sockaddr *)&sa, &slen);
	fflush(rep);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		fclose(rep);
		rep_open(dir, "ext.2");
		r = close(lfd);
		fprintf(rep, "close close %d %d %zd 0\n", lfd, ch_l, r);
		c = socket(AF_INET6, SOCK_STREAM, 0);
		ch = ++next_ch;
		fprintf(rep, "socket socket %d %d %d 0 a=%d,%d\n", c, ch, c, AF_INET6, SOCK_STREAM);
		r = connect(c, (struct sockaddr *)&sa, sizeof(sa));
		fprintf(rep, "connect connect %d %d %zd 0 epl=%s epp=%s\n", c, ch, r, addr6(c, 0, a1),
		        addr6(c, 1, a2));
		r = send(c, "inside-v6", 9, 0);
		data("send", "send", c, ch, r, 9, "inside-v6", 0);
		fprintf(rep, "exit exit -1 0 0 0\n");
		fclose(rep);
		exit(0);
	}
	fprintf(rep, "fork fork -1 0 %d 0 a=2\n", pid);
	c = accept(lfd, NULL, NULL);
	ch = ++next_ch;
	fprintf(rep, "accept accept %d %d %d 0 a=%d epl=%s epp=%s\n", c, ch, c, ch_l,
	        addr6(c, 0, a1), addr6(c, 1, a2));
	r = recv(c, buf, sizeof(buf), MSG_WAITALL);
	data("recv", "recv", c, ch, r, sizeof(buf), buf, 0);
	printf("over IPv6: '%.*s'\n", (int)r, buf);
	wait_report(pid, &status);
}

/* Does this kernel answer sock_diag queries for Unix sockets?  (Asked with raw system
 * calls, so that the recorder does not see the question.) */
static int unix_diag_works(int fd)
{
	struct {
		struct nlmsghdr nlh;
		struct unix_diag_req r;
	} req;
	char resp[1024];
	struct sockaddr_nl nl;
	struct stat st;
	long n;
	int s = (int)syscall(SYS_socket, AF_NETLINK, SOCK_DGRAM, NETLINK_SOCK_DIAG);

	if (s < 0 || fstat(fd, &st) != 0)
		return 0;
	memset(&req, 0, sizeof(req));
	req.nlh.nlmsg_len = sizeof(req);
	req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.nlh.nlmsg_flags = NLM_F_REQUEST;
	req.r.sdiag_family = AF_UNIX;
	req.r.udiag_states = ~0u;
	req.r.udiag_ino = (unsigned)st.st_ino;
	req.r.udiag_show = UDIAG_SHOW_PEER;
	req.r.udiag_cookie[0] = req.r.udiag_cookie[1] = ~0u;
	memset(&nl, 0, sizeof(nl));
	nl.nl_family = AF_NETLINK;
	n = syscall(SYS_sendto, s, &req, sizeof(req), 0, &nl, sizeof(nl));
	if (n == (long)sizeof(req))
		n = syscall(SYS_recvfrom, s, resp, sizeof(resp), 0, NULL, NULL);
	syscall(SYS_close, s);
	return n > 0 && ((struct nlmsghdr *)(void *)resp)->nlmsg_type == SOCK_DIAG_BY_FAMILY;
}

static unsigned long long inode(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 ? (unsigned long long)st.st_ino : 0;
}

/* 6. A Unix stream connection within the root: the accepting end's endpoint names the
 * connecting end's inode (peer_inode, from sock_diag), which pairs connect and accept.
 * Kernels without unix_diag leave peer_inode 0: then both runs report 0. */
static void unix_self(void)
{
	struct sockaddr_un su;
	socklen_t len;
	char name[64];
	int l, c, a, ch_l, ch_c, ch_a, r;
	unsigned long long ic, ia;

	memset(&su, 0, sizeof(su));
	su.sun_family = AF_UNIX;
	snprintf(name, sizeof(name), "encore-e2e-self-%d", (int)syscall(SYS_getpid));
	memcpy(su.sun_path + 1, name, strlen(name));
	len = (socklen_t)(sizeof(sa_family_t) + 1 + strlen(name));
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	ch_l = ++next_ch;
	fprintf(rep, "socket socket %d %d %d 0 a=%d,%d\n", l, ch_l, l, AF_UNIX, SOCK_STREAM);
	r = bind(l, (struct sockaddr *)&su, len);
	fprintf(rep, "bind bind %d %d %d 0\n", l, ch_l, r);
	r = listen(l, 1);
	fprintf(rep, "listen listen %d %d %d 0\n", l, ch_l, r);
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	ch_c = ++next_ch;
	fprintf(rep, "socket socket %d %d %d 0 a=%d,%d\n", c, ch_c, c, AF_UNIX, SOCK_STREAM);
	r = connect(c, (struct sockaddr *)&su, len);
	a = accept(l, NULL, NULL);
	ch_a = ++next_ch;
	ic = inode(c);
	ia = inode(a);
	if (!unix_diag_works(c))
		ia = ic = 0; /* the recorder cannot know either */
	/* At connect the server's end has no inode yet (it gets one when accepted): only the
	 * accepting end can name its peer. */
	(void)ia;
	fprintf(rep, "connect connect %d %d %d 0 ino=%llu pino=0\n", c, ch_c, r, inode(c));
	fprintf(rep, "accept accept %d %d %d 0 a=%d ino=%llu pino=%llu\n", a, ch_a, a, ch_l,
	        inode(a), ic);
	close(a);
	fprintf(rep, "close close %d %d 0 0\n", a, ch_a);
	close(c);
	fprintf(rep, "close close %d %d 0 0\n", c, ch_c);
	close(l);
	fprintf(rep, "close close %d %d 0 0\n", l, ch_l);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa, sa2;
	struct sockaddr_un su;
	socklen_t slen = sizeof(sa);
	int lfd, c, ufd, fd, status, ch_l, ch;
	char buf[64], path[200];
	pid_t pid;
	ssize_t r;

	if (argc != 2)
		return 2;
	rep_open(argv[1], "ext");

	/* 1. An unrecorded client connects to our (recorded) listener. */
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	ch_l = ++next_ch;
	fprintf(rep, "socket socket %d %d %d 0 a=%d,%d\n", lfd, ch_l, lfd, AF_INET, SOCK_STREAM);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	r = bind(lfd, (struct sockaddr *)&sa, sizeof(sa));
	fprintf(rep, "bind bind %d %d %zd 0\n", lfd, ch_l, r);
	r = listen(lfd, 4);
	fprintf(rep, "listen listen %d %d %zd 0\n", lfd, ch_l, r);
	getsockname(lfd, (struct sockaddr *)&sa, &slen);
	fflush(rep);
	if ((pid = raw_fork()) == 0)
		raw_client((struct sockaddr *)&sa, sizeof(sa), AF_INET, "outside-tcp");
	c = accept(lfd, NULL, NULL);
	ch = ++next_ch;
	fprintf(rep, "accept accept %d %d %d 0 a=%d\n", c, ch, c, ch_l);
	r = recv(c, buf, sizeof(buf), MSG_WAITALL);
	data("input", "recv", c, ch, r, sizeof(buf), buf, 1);
	wait_report(pid, &status);
	r = close(c);
	fprintf(rep, "close close %d %d %zd 0\n", c, ch, r);

	/* 2. We connect to an unrecorded server. */
	fd = lfd_tcp(&sa2);
	if (fd < 0)
		return 99;
	fflush(rep);
	if ((pid = raw_fork()) == 0) {
		int a = (int)syscall(SYS_accept, fd, NULL, NULL);

		syscall(SYS_write, a, "outside-server", 14);
		syscall(SYS_close, a);
		raw_exit(0);
	}
	syscall(SYS_close, fd); /* made by a raw call: unknown to the recorder, no event */
	c = socket(AF_INET, SOCK_STREAM, 0);
	ch = ++next_ch;
	fprintf(rep, "socket socket %d %d %d 0 a=%d,%d\n", c, ch, c, AF_INET, SOCK_STREAM);
	r = connect(c, (struct sockaddr *)&sa2, sizeof(sa2));
	fprintf(rep, "connect connect %d %d %zd 0\n", c, ch, r);
	r = recv(c, buf, sizeof(buf), MSG_WAITALL);
	data("input", "recv", c, ch, r, sizeof(buf), buf, 1);
	wait_report(pid, &status);
	r = close(c);
	fprintf(rep, "close close %d %d %zd 0\n", c, ch, r);

	/* 3. An unrecorded client on a Unix socket. */
	memset(&su, 0, sizeof(su));
	su.sun_family = AF_UNIX;
	/* Abstract name: nothing on disk to clean up, no path length limit to meet. */
	status = getpid();
	fprintf(rep, "pid getpid -1 0 %d 0\n", status);
	snprintf(path, sizeof(path), "encore-e2e-ext-%d", status);
	memcpy(su.sun_path + 1, path, strlen(path));
	ufd = socket(AF_UNIX, SOCK_STREAM, 0);
	ch_l = ++next_ch;
	fprintf(rep, "socket socket %d %d %d 0 a=%d,%d\n", ufd, ch_l, ufd, AF_UNIX, SOCK_STREAM);
	r = bind(ufd, (struct sockaddr *)&su, (socklen_t)(sizeof(sa_family_t) + 1 + strlen(path)));
	fprintf(rep, "bind bind %d %d %zd 0\n", ufd, ch_l, r);
	r = listen(ufd, 1);
	fprintf(rep, "listen listen %d %d %zd 0\n", ufd, ch_l, r);
	fflush(rep);
	if ((pid = raw_fork()) == 0)
		raw_client((struct sockaddr *)&su,
		           (socklen_t)(sizeof(sa_family_t) + 1 + strlen(path)), AF_UNIX,
		           "outside-unix");
	c = accept(ufd, NULL, NULL);
	ch = ++next_ch;
	fprintf(rep, "accept accept %d %d %d 0 a=%d\n", c, ch, c, ch_l);
	r = recv(c, buf, sizeof(buf), MSG_WAITALL);
	data("input", "recv", c, ch, r, sizeof(buf), buf, 1);
	wait_report(pid, &status);
	r = close(c);
	fprintf(rep, "close close %d %d %zd 0\n", c, ch, r);
	r = close(ufd);
	fprintf(rep, "close close %d %d %zd 0\n", ufd, ch_l, r);

	/* 4. A recorded child connects to the first listener: its bytes are not INPUT. */
	fflush(rep);
	pid = fork();
	if (pid == 0) {
		fclose(rep);
		rep_open(argv[1], "ext.1");
		r = close(lfd);
		fprintf(rep, "close close %d 1 %zd 0\n", lfd, r);
		c = socket(AF_INET, SOCK_STREAM, 0);
		ch = ++next_ch;
		fprintf(rep, "socket socket %d %d %d 0 a=%d,%d\n", c, ch, c, AF_INET, SOCK_STREAM);
		r = connect(c, (struct sockaddr *)&sa, sizeof(sa));
		fprintf(rep, "connect connect %d %d %zd 0\n", c, ch, r);
		r = send(c, "inside-tcp", 10, 0);
		data("send", "send", c, ch, r, 10, "inside-tcp", 0);
		r = close(c);
		fprintf(rep, "close close %d %d %zd 0\n", c, ch, r);
		fprintf(rep, "exit exit -1 0 0 0\n");
		fclose(rep);
		exit(0);
	}
	fprintf(rep, "fork fork -1 0 %d 0 a=1\n", pid);
	c = accept(lfd, NULL, NULL);
	ch = ++next_ch;
	fprintf(rep, "accept accept %d %d %d 0 a=1\n", c, ch, c);
	r = recv(c, buf, sizeof(buf), MSG_WAITALL);
	data("recv", "recv", c, ch, r, sizeof(buf), buf, 0);
	printf("from the recorded child: '%.*s'\n", (int)r, buf);
	wait_report(pid, &status);
	ipv6(argv[1]);
	unix_self();
	fprintf(rep, "exit exit -1 0 0 0\n");
	fclose(rep);
	return 0;
}
