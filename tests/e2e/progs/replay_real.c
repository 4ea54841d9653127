/*
 * replay_real.c: what real programs do that the replayer once got wrong, one mode each.
 *
 *   replay_real files DIR   read /dev/urandom (as a language runtime seeds its hash), then a
 *                           regular file on the same descriptor number, then /dev/urandom
 *                           again on it: the file's bytes are the file's, not random ones
 *   replay_real sigpipe     a child writes into a pipe until its reader closes it and dies
 *                           of SIGPIPE (`yes | head -n 1`); the parent says how it died
 *   replay_real yes         write lines to stdout until the reader goes (SIGPIPE)
 *   replay_real setown      fcntl(F_SETOWN, getpid()) and O_ASYNC on a socket (nginx's
 *                           channel to its workers): the recorded pid is this process, and
 *                           SIGIO comes when the child writes
 *   replay_real crash FILE  a pid and a clock read, then abort() if FILE (a regular file: not
 *                           recorded) says "crash": a replay after FILE changed ends early
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int files(const char *dir)
{
	char path[4096], buf[256];
	unsigned char rnd[8];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/f.txt", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, "the file's own bytes\n", 21) != 21 || close(fd) != 0)
		return 1;
	fd = open("/dev/urandom", O_RDONLY);
	if (fd < 0 || read(fd, rnd, 4) != 4)
		return 1;
	close(fd);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return 1;
	buf[n] = '\0';
	printf("fd %d: %s", fd, buf);
	fd = open("/dev/urandom", O_RDONLY);
	if (fd < 0 || read(fd, rnd, sizeof(rnd)) != (ssize_t)sizeof(rnd))
		return 1;
	close(fd);
	printf("fd %d: random", fd);
	for (size_t i = 0; i < sizeof(rnd); i++)
		printf(" %02x", rnd[i]);
	printf("\n");
	return 0;
}

static int sigpipe(void)
{
	static char chunk[4096];
	int p[2], st;
	pid_t c;

	if (pipe(p) != 0)
		return 1;
	c = fork();
	if (c == 0) {
		signal(SIGPIPE, SIG_DFL);
		close(p[0]);
		memset(chunk, 'y', sizeof(chunk));
		for (;;)
			if (write(p[1], chunk, sizeof(chunk)) < 0)
				_exit(3); /* not reached: SIGPIPE */
	}
	close(p[1]);
	if (read(p[0], chunk, sizeof(chunk)) != (ssize_t)sizeof(chunk))
		return 1;
	close(p[0]);
	if (waitpid(c, &st, 0) != c)
		return 1;
	if (WIFSIGNALED(st))
		printf("writer killed by signal %d\n", WTERMSIG(st));
	else
		printf("writer exited with %d\n", WEXITSTATUS(st));
	return 0;
}

static int yes(void)
{
	static char chunk[4096];

	for (size_t i = 0; i + 1 < sizeof(chunk); i += 2)
		memcpy(chunk + i, "y\n", 2);
	for (;;)
		if (write(1, chunk, sizeof(chunk)) < 0)
			return 3;
}

static volatile sig_atomic_t got_io;

static void on_io(int sig)
{
	(void)sig;
	got_io = 1;
}

static int setown(void)
{
	int sv[2], r, st;
	char b;
	pid_t c;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 1;
	signal(SIGIO, on_io);
	r = fcntl(sv[0], F_SETOWN, getpid());
	printf("F_SETOWN(getpid()) = %d%s%s\n", r, r ? ": " : "", r ? strerror(errno) : "");
	printf("F_GETOWN is getpid(): %s\n", fcntl(sv[0], F_GETOWN) == getpid() ? "yes" : "no");
	if (fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_ASYNC) != 0)
		return 1;
	c = fork();
	if (c == 0) {
		close(sv[0]);
		if (write(sv[1], "x", 1) != 1)
			_exit(1);
		_exit(0);
	}
	close(sv[1]);
	/* the byte arrives while nobody waits in a read (Linux sends no SIGIO to a socket whose
	 * reader is blocked on it): wait for the writer first */
	if (waitpid(c, &st, 0) != c)
		return 1;
	for (int i = 0; i < 500 && !got_io; i++) {
		struct timespec ts = { 0, 10000000 };

		nanosleep(&ts, NULL);
	}
	if (read(sv[0], &b, 1) != 1)
		return 1;
	printf("SIGIO: %s\n", got_io ? "yes" : "no");
	return 0;
}

static int crash(const char *path)
{
	char buf[16] = "";
	FILE *f = fopen(path, "r");
	struct timespec ts;

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
	}
	printf("pid %d\n", (int)getpid());
	clock_gettime(CLOCK_REALTIME, &ts);
	fflush(stdout);
	if (strncmp(buf, "crash", 5) == 0)
		abort();
	clock_gettime(CLOCK_REALTIME, &ts);
	printf("no crash\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "files") == 0)
		return files(argv[2]);
	if (argc > 1 && strcmp(argv[1], "sigpipe") == 0)
		return sigpipe();
	if (argc > 1 && strcmp(argv[1], "setown") == 0)
		return setown();
	if (argc > 1 && strcmp(argv[1], "yes") == 0)
		return yes();
	if (argc > 2 && strcmp(argv[1], "crash") == 0)
		return crash(argv[2]);
	fprintf(stderr, "usage: replay_real files DIR | sigpipe | yes | setown | crash FILE\n");
	return 2;
}
