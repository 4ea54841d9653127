/*
 * replay_wait.c: a parent that runs clients one after the other and waits for each, as a shell
 * does (`srv & c1; c2`), for the end-to-end tests of the wait events and of the edge from a
 * child's end to the wait that reaped it (analyzer/README.md).
 *
 *   replay_wait DIR NCLIENT
 *
 * The root ("w") forks a server ("w.1") listening on the Unix socket DIR/s, learns through a
 * pipe that it listens, then forks client k ("w.(k+1)"), which connects, sends "req k",
 * prints the answer and exits with status k; the root reaps it before forking the next, by
 * turns with waitpid(-1), wait, wait4(-1) and waitid(P_ALL), and prints which child it reaped
 * and its status.  The server answers NCLIENT clients and exits; the root reaps it last with
 * waitpid(-1) too, which may return the last client or the server first: in replay it must
 * return the recorded one.
 *
 *   replay_wait DIR srv NCLIENT   the server alone: prints "r" on a line once it listens
 *   replay_wait DIR cli K         client K alone
 *
 *   replay_wait DIR shell NCLIENT the same, driven by a shell: execs (W: replay_wait DIR)
 *       sh -c 'W srv N | { read x; W cli 1; ...; W cli N; }; true'
 *   (the root "sh" forks both sides of the pipe, sh.1 the server, sh.2 the clients, sh.2.k)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAXC 8

static void addr_of(const char *dir, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if ((size_t)snprintf(sa->sun_path, sizeof(sa->sun_path), "%s/s", dir) >=
	    sizeof(sa->sun_path))
		exit(2);
}

static void server(const char *dir, int n, int ready)
{
	struct sockaddr_un sa;
	int lfd = socket(AF_UNIX, SOCK_STREAM, 0);

	addr_of(dir, &sa);
	unlink(sa.sun_path);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 8) != 0)
		_exit(3);
	if (write(ready, "r\n", 2) != 2)
		_exit(3);
	close(ready);
	for (int i = 0; i < n; i++) {
		char buf[64], out[80];
		int fd = accept(lfd, NULL, NULL);
		ssize_t r;

		if (fd < 0)
			_exit(4);
		r = read(fd, buf, sizeof(buf) - 1);
		if (r <= 0)
			_exit(4);
		buf[r] = '\0';
		snprintf(out, sizeof(out), "ok %d: %s", i + 1, buf);
		if (write(fd, out, strlen(out)) < 0)
			_exit(4);
		close(fd);
	}
	close(lfd);
	_exit(0);
}

static void client(const char *dir, int k)
{
	struct sockaddr_un sa;
	char buf[96], req[16];
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	ssize_t r, got = 0;

	addr_of(dir, &sa);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		_exit(20);
	snprintf(req, sizeof(req), "req %d", k);
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		_exit(21);
	while ((r = read(fd, buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += r;
	buf[got] = '\0';
	printf("client %d got [%s]\n", k, buf);
	fflush(stdout);
	_exit(k);
}

/* Which child pid is: "server", "client K", or "?". */
static void name_of(pid_t pid, pid_t srv, const pid_t *cl, int n, char *out, size_t cap)
{
	snprintf(out, cap, "?");
	if (pid == srv)
		snprintf(out, cap, "server");
	for (int i = 0; i < n; i++)
		if (pid == cl[i])
			snprintf(out, cap, "client %d", i + 1);
}

int main(int argc, char **argv)
{
	pid_t srv, cl[MAXC], r;
	int p[2], n, st = 0;
	char c, who[32];

	if (argc == 4 && strcmp(argv[2], "srv") == 0)
		server(argv[1], atoi(argv[3]), 1);
	if (argc == 4 && strcmp(argv[2], "cli") == 0)
		client(argv[1], atoi(argv[3]));
	if (argc == 4 && strcmp(argv[2], "shell") == 0) {
		char self[1024], cmd[8192];
		ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
		size_t pos;

		n = atoi(argv[3]);
		if (len <= 0 || n < 1 || n > MAXC)
			return 2;
		self[len] = '\0';
		pos = (size_t)snprintf(cmd, sizeof(cmd), "%s %s srv %d | { read x", self, argv[1], n);
		for (int k = 1; k <= n && pos < sizeof(cmd); k++)
			pos += (size_t)snprintf(cmd + pos, sizeof(cmd) - pos, "; %s %s cli %d", self,
			                        argv[1], k);
		if (pos + 16 >= sizeof(cmd))
			return 2;
		snprintf(cmd + pos, sizeof(cmd) - pos, "; }; true");
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		return 127;
	}
	if (argc != 3 || (n = atoi(argv[2])) < 1 || n > MAXC)
		return 2;
	if (pipe(p) != 0)
		return 1;
	setvbuf(stdout, NULL, _IONBF, 0);
	if ((srv = fork()) == 0) {
		close(p[0]);
		server(argv[1], n, p[1]);
	}
	close(p[1]);
	if (srv < 0 || read(p[0], &c, 1) != 1)
		return 1;
	close(p[0]);
	for (int k = 1; k <= n; k++) {
		struct rusage ru;
		siginfo_t si;

		if ((cl[k - 1] = fork()) == 0)
			client(argv[1], k);
		switch (k % 4) {
		case 1:
			r = waitpid(-1, &st, 0);
			break;
		case 2:
			r = wait(&st);
			break;
		case 3:
			r = wait4(-1, &st, 0, &ru);
			break;
		default:
			memset(&si, 0, sizeof(si));
			r = waitid(P_ALL, 0, &si, WEXITED) == 0 ? si.si_pid : -1;
			st = si.si_code == CLD_EXITED ? si.si_status << 8 : -1;
		}
		if (r < 0)
			return 1;
		name_of(r, srv, cl, k, who, sizeof(who));
		printf("reaped %s, status %d\n", who, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
	while ((r = waitpid(-1, &st, 0)) > 0) {
		name_of(r, srv, cl, n, who, sizeof(who));
		printf("reaped %s, status %d\n", who, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
	return 0;
}
