/*
 * e2e_calls.c: a two-process program that makes every call the recorder intercepts, and
 * reports, one line per call, the event the recorder must log for it (the specification the
 * trace is checked against by check_trace.c).
 *
 *   e2e_calls REPORTDIR K            the root ("calls"), forks "calls.1"
 *   e2e_calls REPORTDIR K exec ...   "calls.1" after its exec (segment 1), state in argv
 *
 * K is the recorder's --hash-every: the program mirrors the running CRC-32C of every channel
 * direction and says on which events the hash must appear.  Channel ids are predicted too:
 * each new channel end takes the next number, and a forked child continues the numbering.
 *
 * Report line: KIND CALL FD CHANNEL RESULT ERRNO [a=AUX,..] [f=FLAGS] [n=LEN] [h=HASH]
 *              [v=HEX] [ino=N] [pino=N] [epl=ADDR] [epp=ADDR]
 * Stdout gets a deterministic summary, compared between a bare and a recorded run.  The
 * reports go through stdio on regular files, which the recorder leaves alone.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "encore.h"
#include "trace.h"

#define MAXCH 64

static FILE *rep;
static unsigned K;
/* Sizes the compiler cannot see: built with _FORTIFY_SOURCE, the calls using them become
 * __recv_chk, __read_chk, __recvfrom_chk and __poll_chk, which the recorder must catch. */
static volatile size_t runtime_len = 256;
static volatile nfds_t runtime_one = 1;
static uint32_t hashv[MAXCH][2];
static uint64_t since[MAXCH][2];
static int next_ch;

static void die(const char *what)
{
	fprintf(stderr, "e2e_calls: %s: %s\n", what, strerror(errno));
	exit(99);
}

static void rep_open(const char *dir, const char *name, const char *mode)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s.report", dir, name);
	rep = fopen(path, mode);
	if (!rep)
		die(path);
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

/* One report line; `extra` holds the optional tokens. */
static void R(const char *kind, const char *call, int fd, int ch, long res, int err,
              const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static void R(const char *kind, const char *call, int fd, int ch, long res, int err,
              const char *fmt, ...)
{
	va_list ap;

	fprintf(rep, "%s %s %d %d %ld %d", kind, call, fd, ch, res, res < 0 ? err : 0);
	if (fmt && *fmt) {
		fputc(' ', rep);
		va_start(ap, fmt);
		vfprintf(rep, fmt, ap);
		va_end(ap);
	}
	fputc('\n', rep);
}

/* A call that moved bytes: dir 0 out, 1 in.  input: the peer is outside the session. */
static void D(const char *call, int fd, int ch, int dir, ssize_t r, int err, size_t asked,
              const void *bytes, unsigned flags, int peek, int input)
{
	char tok[8192] = "", *p = tok;

	p += sprintf(p, "n=%zu", asked);
	if (flags)
		p += sprintf(p, " f=%u", flags);
	if (r > 0 && !peek) {
		hashv[ch][dir] = trace_hash(hashv[ch][dir], bytes, (size_t)r);
		if (++since[ch][dir] >= K) {
			since[ch][dir] = 0;
			p += sprintf(p, " h=%08x", hashv[ch][dir]);
		}
	}
	if (input && r > 0) {
		p += sprintf(p, " v=");
		hex(p, bytes, (size_t)r);
	}
	R(input ? "input" : dir ? "recv" : "send", call, fd, ch, r, err, "%s", tok);
}

static uint64_t ino(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

static const char *addr(int fd, int peer, char *out)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	if ((peer ? getpeername(fd, (struct sockaddr *)&a, &len)
	          : getsockname(fd, (struct sockaddr *)&a, &len)) != 0)
		return "?";
	sprintf(out, "%s:%u", inet_ntoa(a.sin_addr), ntohs(a.sin_port));
	return out;
}

/* The exec'd image of calls.1: argv = prog dir K exec FD CH NEXT H0 H1 S0 S1 */
/* noinline: the call-site checks (fn=) name this function and child(). */
__attribute__((noinline)) static int exec_stage(char **argv)
{
	int fd = atoi(argv[4]), ch = atoi(argv[5]);
	char buf[64];
	ssize_t r;

	next_ch = atoi(argv[6]);
	hashv[ch][0] = (uint32_t)strtoul(argv[7], NULL, 16);
	hashv[ch][1] = (uint32_t)strtoul(argv[8], NULL, 16);
	since[ch][0] = strtoull(argv[9], NULL, 10);
	since[ch][1] = strtoull(argv[10], NULL, 10);
	rep_open(argv[1], "calls.1", "a");

	r = getppid();
	R("pid", "getppid", -1, 0, r, 0, "fn=exec_stage");
	r = send(fd, "from-new-image", 14, 0);
	D("send", fd, ch, 0, r, errno, 14, "from-new-image", 0, 0, 0);
	r = recv(fd, buf, sizeof(buf), 0);
	D("recv", fd, ch, 1, r, errno, sizeof(buf), buf, 0, 0, 0);
	R("exit", "exit", -1, 0, 7, 0, NULL);
	fclose(rep);
	_exit(7);
}

__attribute__((noinline)) static void child(const char *dir, char *self, int sv1, int p0, int p1, int sv0, int lfd,
                  int q0, int q1, int port, int ch_sv1, int ch_p0)
{
	char buf[64], a1[64], a2[64], args[6][32];
	struct sockaddr_in sa;
	struct iovec iov[3];
	struct msghdr mh;
	int tcp, ch_tcp;
	ssize_t r;

	rep_open(dir, "calls.1", "w");
	/* Inherited: stdin 1, sv0 2, sv1 3, p0 4, p1 5, q0 6, q1 7, lfd 8. */
	r = close(sv0);
	R("close", "close", sv0, 2, r, errno, NULL);
	r = close(p1);
	R("close", "close", p1, 5, r, errno, NULL);
	r = close(lfd);
	R("close", "close", lfd, 8, r, errno, NULL);
	r = close(q0);
	R("close", "close", q0, 6, r, errno, NULL);
	r = close(q1);
	R("close", "close", q1, 7, r, errno, NULL);

	tcp = socket(AF_INET, SOCK_STREAM, 0);
	ch_tcp = ++next_ch;
	R("socket", "socket", tcp, ch_tcp, tcp, errno, "a=%d,%d fn=child", AF_INET, SOCK_STREAM);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)port);
	r = connect(tcp, (struct sockaddr *)&sa, sizeof(sa));
	R("connect", "connect", tcp, ch_tcp, r, errno, "epl=%s epp=%s", addr(tcp, 0, a1),
	  addr(tcp, 1, a2));

	r = recv(sv1, buf, sizeof(buf), 0);
	D("recv", sv1, ch_sv1, 1, r, errno, sizeof(buf), buf, 0, 0, 0);
	r = send(sv1, "pong1-peekme", 12, 0);
	D("send", sv1, ch_sv1, 0, r, errno, 12, "pong1-peekme", 0, 0, 0);
	r = read(p0, buf, sizeof(buf));
	D("read", p0, ch_p0, 1, r, errno, sizeof(buf), buf, 0, 0, 0);

	iov[0] = (struct iovec){ "ab", 2 };
	iov[1] = (struct iovec){ "cde", 3 };
	iov[2] = (struct iovec){ "f", 1 };
	r = writev(tcp, iov, 3);
	D("writev", tcp, ch_tcp, 0, r, errno, 6, "abcdef", 0, 0, 0);

	memset(&mh, 0, sizeof(mh));
	iov[0] = (struct iovec){ buf, 9 };
	mh.msg_iov = iov;
	mh.msg_iovlen = 1;
	r = recvmsg(tcp, &mh, MSG_WAITALL);
	D("recvmsg", tcp, ch_tcp, 1, r, errno, 9, buf, 0, 0, 0);

	r = sendto(sv1, "dgram?", 6, 0, NULL, 0);
	D("sendto", sv1, ch_sv1, 0, r, errno, 6, "dgram?", 0, 0, 0);

	r = recv(sv1, buf, sizeof(buf), 0);
	D("recv", sv1, ch_sv1, 1, r, errno, sizeof(buf), buf, 0, 0, 0);
	r = close(tcp);
	R("close", "close", tcp, ch_tcp, r, errno, NULL);

	/* Continue as a new image; sv1 survives the exec (no FD_CLOEXEC). */
	snprintf(args[0], 32, "%d", sv1);
	snprintf(args[1], 32, "%d", ch_sv1);
	snprintf(args[2], 32, "%d", next_ch);
	snprintf(args[3], 32, "%08x", hashv[ch_sv1][0]);
	snprintf(args[4], 32, "%08x", hashv[ch_sv1][1]);
	snprintf(args[5], 32, "%llu:%llu", (unsigned long long)since[ch_sv1][0],
	         (unsigned long long)since[ch_sv1][1]);
	{
		char s0[32], s1[32], kbuf[16], v[128];
		char *nargv[] = { self, (char *)dir, kbuf, "exec", args[0], args[1], args[2],
			          args[3], args[4], s0, s1, NULL };

		snprintf(kbuf, sizeof(kbuf), "%u", K);
		snprintf(s0, sizeof(s0), "%llu", (unsigned long long)since[ch_sv1][0]);
		snprintf(s1, sizeof(s1), "%llu", (unsigned long long)since[ch_sv1][1]);
		hex(v, "/proc/self/exe", 14);
		/* Reported first: on success execv does not return. */
		R("exec", "execve", -1, 0, 0, 0, "v=%s", v);
		fflush(rep);
		execv("/proc/self/exe", nargv);
		die("execv");
	}
}

int main(int argc, char **argv)
{
	int sv[2], p[2], q[2], lfd, acc, ep, ufd, d1, d2, d3, status, port;
	int ch_in, ch_sv0, ch_sv1, ch_p0, ch_p1, ch_q0, ch_q1, ch_l, ch_acc;
	char buf[256], v[1024], a1[64], a2[64];
	struct sockaddr_in sa;
	socklen_t slen;
	struct iovec iov[2];
	struct msghdr mh;
	struct pollfd pfd;
	struct epoll_event ee, got;
	struct timespec ts;
	struct timeval tv;
	fd_set rs;
	pid_t pid;
	ssize_t r;
	long t;

	if (argc < 3) {
		fprintf(stderr, "usage: e2e_calls REPORTDIR K\n");
		return 2;
	}
	K = (unsigned)atoi(argv[2]);
	if (argc >= 11 && strcmp(argv[3], "exec") == 0)
		return exec_stage(argv);
	rep_open(argv[1], "calls", "w");

	/* stdin: a pipe from outside the session, classified at first use, its bytes INPUT. */
	r = read(0, buf, sizeof(buf));
	ch_in = ++next_ch;
	R("pipe", "none", 0, ch_in, 0, 0, "a=%d ino=%llu", ch_in, (unsigned long long)ino(0));
	D("read", 0, ch_in, 1, r, errno, sizeof(buf), buf, 0, 0, 1);

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		die("socketpair");
	ch_sv0 = ++next_ch;
	ch_sv1 = ++next_ch;
	R("pipe", "socketpair", sv[0], ch_sv0, 0, 0, "a=%d,%d ino=%llu pino=%llu", ch_sv0, ch_sv1,
	  (unsigned long long)ino(sv[0]), (unsigned long long)ino(sv[1]));
	if (pipe(p) != 0)
		die("pipe");
	ch_p0 = ++next_ch;
	ch_p1 = ++next_ch;
	R("pipe", "pipe", p[0], ch_p0, 0, 0, "a=%d,%d ino=%llu", ch_p0, ch_p1,
	  (unsigned long long)ino(p[0]));
	if (pipe2(q, O_NONBLOCK | O_CLOEXEC) != 0)
		die("pipe2");
	ch_q0 = ++next_ch;
	ch_q1 = ++next_ch;
	R("pipe", "pipe2", q[0], ch_q0, 0, 0, "a=%d,%d ino=%llu", ch_q0, ch_q1,
	  (unsigned long long)ino(q[0]));

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	ch_l = ++next_ch;
	R("socket", "socket", lfd, ch_l, lfd, errno, "a=%d,%d fn=main", AF_INET, SOCK_STREAM);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	r = bind(lfd, (struct sockaddr *)&sa, sizeof(sa));
	R("bind", "bind", lfd, ch_l, r, errno, "epl=%s", addr(lfd, 0, a1));
	r = listen(lfd, 4);
	R("listen", "listen", lfd, ch_l, r, errno, "epl=%s", addr(lfd, 0, a1));
	slen = sizeof(sa);
	getsockname(lfd, (struct sockaddr *)&sa, &slen);
	port = ntohs(sa.sin_port);

	fflush(rep);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0)
		child(argv[1], argv[0], sv[1], p[0], p[1], sv[0], lfd, q[0], q[1], port, ch_sv1,
		      ch_p0);
	R("fork", "fork", -1, 0, pid, 0, "a=1");

	r = close(sv[1]);
	R("close", "close", sv[1], ch_sv1, r, errno, NULL);
	r = close(p[0]);
	R("close", "close", p[0], ch_p0, r, errno, NULL);
	acc = accept(lfd, NULL, NULL);
	ch_acc = ++next_ch;
	R("accept", "accept", acc, ch_acc, acc, errno, "a=%d epl=%s epp=%s", ch_l,
	  addr(acc, 0, a1), addr(acc, 1, a2));

	r = send(sv[0], "ping1", 5, 0);
	D("send", sv[0], ch_sv0, 0, r, errno, 5, "ping1", 0, 0, 0);
	r = recv(sv[0], buf, sizeof(buf), MSG_PEEK);
	D("recv", sv[0], ch_sv0, 1, r, errno, sizeof(buf), buf, TRACE_FL_PEEK, 1, 0);
	r = recv(sv[0], buf, runtime_len, 0);
	D("recv", sv[0], ch_sv0, 1, r, errno, sizeof(buf), buf, 0, 0, 0);
	printf("parent got '%.*s'\n", (int)r, buf);
	/* Nothing is in flight now: the child waits for the pipe. */
	r = recv(sv[0], buf, sizeof(buf), MSG_DONTWAIT);
	D("recv", sv[0], ch_sv0, 1, r, errno, sizeof(buf), buf, TRACE_FL_NONBLOCK, 0, 0);
	printf("nonblocking recv: %zd %s\n", r, r < 0 ? strerror(errno) : "");
	r = read(q[0], buf, runtime_len);
	D("read", q[0], ch_q0, 1, r, errno, sizeof(buf), buf, TRACE_FL_NONBLOCK, 0, 0);
	r = write(q[1], "x", 1);
	D("write", q[1], ch_q1, 0, r, errno, 1, "x", 0, 0, 0);
	r = read(q[0], buf, sizeof(buf));
	D("read", q[0], ch_q0, 1, r, errno, sizeof(buf), buf, 0, 0, 0);

	r = write(p[1], "pipe-msg", 8);
	D("write", p[1], ch_p1, 0, r, errno, 8, "pipe-msg", 0, 0, 0);

	iov[0] = (struct iovec){ buf, 3 };
	iov[1] = (struct iovec){ buf + 3, 3 };
	r = readv(acc, iov, 2);
	D("readv", acc, ch_acc, 1, r, errno, 6, buf, 0, 0, 0);
	printf("readv: '%.*s'\n", (int)r, buf);
	memset(&mh, 0, sizeof(mh));
	iov[0] = (struct iovec){ "hello-tcp", 9 };
	mh.msg_iov = iov;
	mh.msg_iovlen = 1;
	r = sendmsg(acc, &mh, 0);
	D("sendmsg", acc, ch_acc, 0, r, errno, 9, "hello-tcp", 0, 0, 0);

	/* Readiness: the child's sendto is on its way or there. */
	pfd.fd = sv[0];
	pfd.events = POLLIN;
	r = poll(&pfd, runtime_one, -1);
	hex(v, &(int16_t){ pfd.revents }, 2);
	/* a= the channels found readable (for the analyzer's readiness edges) */
	R("ready", "poll", -1, 0, r, errno, "v=%s a=%d", v, ch_sv0);
	FD_ZERO(&rs);
	FD_SET(sv[0], &rs);
	r = select(sv[0] + 1, &rs, NULL, NULL, NULL);
	{
		uint8_t sets[3 * 8] = { 0 };
		size_t k = ((size_t)sv[0] + 1 + 7) / 8;

		memcpy(sets, &rs, k);
		hex(v, sets, 3 * k);
	}
	R("ready", "select", -1, 0, r, errno, "v=%s a=%d", v, ch_sv0);
	ep = epoll_create1(EPOLL_CLOEXEC);
	ee.events = EPOLLIN;
	ee.data.u64 = 42;
	epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &ee);
	/* v= the events, then the descriptor registered with each one's data; a= its channel */
	r = epoll_wait(ep, &got, 1, -1);
	{
		uint8_t evfd[sizeof(got) + sizeof(int32_t)];
		int32_t fd32 = sv[0];

		memcpy(evfd, &got, sizeof(got));
		memcpy(evfd + sizeof(got), &fd32, sizeof(fd32));
		hex(v, evfd, sizeof(evfd));
		R("ready", "epoll_wait", -1, 0, r, errno, "v=%s a=%d", v, ch_sv0);
		r = epoll_pwait(ep, &got, 1, -1, NULL);
		memcpy(evfd, &got, sizeof(got));
		hex(v, evfd, sizeof(evfd));
		R("ready", "epoll_pwait", -1, 0, r, errno, "v=%s a=%d", v, ch_sv0);
	}
	close(ep); /* an epoll descriptor: ignored, no event */
	pfd.revents = 0;
	r = ppoll(&pfd, 1, NULL, NULL);
	hex(v, &(int16_t){ pfd.revents }, 2);
	R("ready", "ppoll", -1, 0, r, errno, "v=%s a=%d", v, ch_sv0);
	FD_ZERO(&rs);
	FD_SET(sv[0], &rs);
	r = pselect(sv[0] + 1, &rs, NULL, NULL, NULL, NULL);
	{
		uint8_t sets[3 * 8] = { 0 };
		size_t k = ((size_t)sv[0] + 1 + 7) / 8;

		memcpy(sets, &rs, k);
		hex(v, sets, 3 * k);
	}
	R("ready", "pselect", -1, 0, r, errno, "v=%s a=%d", v, ch_sv0);

	r = recvfrom(sv[0], buf, runtime_len, 0, NULL, NULL);
	D("recvfrom", sv[0], ch_sv0, 1, r, errno, sizeof(buf), buf, 0, 0, 0);
	printf("recvfrom: '%.*s'\n", (int)r, buf);

	d1 = dup(sv[0]);
	R("dup", "dup", sv[0], ch_sv0, d1, errno, "a=%d", d1);
	d2 = dup2(sv[0], 100);
	R("dup", "dup2", sv[0], ch_sv0, d2, errno, "a=%d", d2);
	d3 = fcntl(sv[0], F_DUPFD_CLOEXEC, 200);
	R("dup", "fcntl", sv[0], ch_sv0, d3, errno, "a=%d", d3);
	close(d1); /* not the last descriptor of the channel: no event */
	close(d2);
	close(d3);

	r = clock_gettime(CLOCK_REALTIME, &ts);
	hex(v, &ts, sizeof(ts));
	R("clock", "clock_gettime", -1, 0, r, errno, "a=%d v=%s", CLOCK_REALTIME, v);
	r = gettimeofday(&tv, NULL);
	hex(v, &tv, sizeof(tv));
	R("clock", "gettimeofday", -1, 0, r, errno, "v=%s", v);
	t = (long)time(NULL);
	R("clock", "time", -1, 0, t, 0, NULL);
	r = getrandom(buf, 16, 0);
	hex(v, buf, 16);
	R("random", "getrandom", -1, 0, r, errno, "v=%s", v);
	ufd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	r = read(ufd, buf, 8);
	hex(v, buf, 8);
	R("random", "read", ufd, 0, r, errno, "n=8 v=%s", v);
	close(ufd);
	R("pid", "getpid", -1, 0, getpid(), 0, NULL);
	R("pid", "getppid", -1, 0, getppid(), 0, NULL);
	encore_mark("phase", 2);
	hex(v, "phase", 5);
	R("mark", "encore_mark", -1, 0, 0, 0, "a=2 v=%s", v);

	r = send(sv[0], "go-exec", 7, 0);
	D("send", sv[0], ch_sv0, 0, r, errno, 7, "go-exec", 0, 0, 0);
	r = recv(sv[0], buf, sizeof(buf), 0);
	D("recv", sv[0], ch_sv0, 1, r, errno, sizeof(buf), buf, 0, 0, 0);
	printf("from the new image: '%.*s'\n", (int)r, buf);

	r = shutdown(acc, SHUT_WR);
	R("shutdown", "shutdown", acc, ch_acc, r, errno, "a=%d", SHUT_WR);
	r = close(acc);
	R("close", "close", acc, ch_acc, r, errno, NULL);
	r = close(sv[0]);
	R("close", "close", sv[0], ch_sv0, r, errno, NULL);
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	R("wait", "waitpid", -1, 0, pid, 0, "a=%d,%d", status, WIFEXITED(status) ? 1 : 2);
	printf("child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	R("exit", "exit", -1, 0, 0, 0, NULL);
	fclose(rep);
	return 0;
}
