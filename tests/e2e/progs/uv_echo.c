/*
 * uv_echo.c: a libuv echo server that answers every request from libuv's thread pool, and its
 * client, for tests/e2e/record_libuv.sh.  The server's worker threads wake the loop through
 * libuv's async handle (an eventfd watched by the loop's epoll), the way real libuv programs
 * (Node.js) work; recording must leave that working, neither hanging nor spinning.
 *
 *   uv_echo server PORTFILE     listen on 127.0.0.1 (a free port, written to PORTFILE with a
 *                               temporary name and a rename), answer each line "REQ" with
 *                               "REQ HASH" computed by a uv_queue_work job; a line "quit"
 *                               ends the loop (exit 0)
 *   uv_echo client PORT N K     K connections, N requests on each (in flight on all K at
 *                               once), every answer checked; prints the answers, exit 0 when
 *                               all were right, 1 otherwise
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

/* The answer's hash: FNV-1a iterated, enough work to keep the pool busy for a moment. */
static uint32_t work_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	for (int round = 0; round < 2000; round++)
		for (size_t i = 0; i < n; i++)
			h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

/* --- server ------------------------------------------------------------------------------ */

struct conn {
	uv_tcp_t tcp;
	char buf[4096];
	size_t len;
	int pending;  /* jobs queued and not answered yet */
	int closing;
	int closed;   /* handle closed: freed when no job is pending */
};

struct job {
	uv_work_t work;
	struct conn *c;
	char line[256];
	char answer[300];
	size_t alen;
};

struct wr {
	uv_write_t req;
	char data[300];
};

static uv_loop_t *loop;
static uv_tcp_t server;
static int quitting;

static void on_closed(uv_handle_t *h)
{
	struct conn *c = h->data;

	if (c) {
		c->closed = 1;
		if (!c->pending)
			free(c); /* else the last job's completion frees it */
	}
}

static void conn_close(struct conn *c)
{
	if (!c->closing) {
		c->closing = 1;
		uv_close((uv_handle_t *)&c->tcp, on_closed);
	}
}

static void on_written(uv_write_t *req, int status)
{
	(void)status;
	free(req->data);
}

static void job_run(uv_work_t *w)
{
	struct job *j = w->data;
	size_t n = strlen(j->line);

	/* the workers read the clock as real pool jobs do (an interposed call on each thread) */
	(void)uv_hrtime();
	j->alen = (size_t)snprintf(j->answer, sizeof(j->answer), "%s %08x\n", j->line,
	                           work_hash(j->line, n));
}

static void job_done(uv_work_t *w, int status)
{
	struct job *j = w->data;
	struct conn *c = j->c;

	c->pending--;
	if (status == 0 && !c->closing) {
		struct wr *r = malloc(sizeof(*r));
		uv_buf_t b;

		if (r) {
			memcpy(r->data, j->answer, j->alen);
			b = uv_buf_init(r->data, (unsigned)j->alen);
			r->req.data = r;
			if (uv_write(&r->req, (uv_stream_t *)&c->tcp, &b, 1, on_written) != 0)
				free(r);
		}
	}
	free(j);
	if (c->closed && !c->pending)
		free(c);
}

static void on_alloc(uv_handle_t *h, size_t want, uv_buf_t *b)
{
	struct conn *c = h->data;

	(void)want;
	*b = uv_buf_init(c->buf + c->len, (unsigned)(sizeof(c->buf) - c->len));
}

static void quit_all(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, h->data ? on_closed : NULL);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct conn *c = s->data;
	char *nl;

	(void)b;
	if (n < 0) {
		conn_close(c);
		return;
	}
	c->len += (size_t)n;
	while ((nl = memchr(c->buf, '\n', c->len))) {
		size_t ll = (size_t)(nl - c->buf);
		struct job *j;

		if (ll == 4 && memcmp(c->buf, "quit", 4) == 0) {
			quitting = 1;
			uv_walk(loop, quit_all, NULL);
			return;
		}
		j = calloc(1, sizeof(*j));
		if (!j)
			abort();
		if (ll >= sizeof(j->line))
			ll = sizeof(j->line) - 1;
		memcpy(j->line, c->buf, ll);
		j->c = c;
		j->work.data = j;
		c->pending++;
		if (uv_queue_work(loop, &j->work, job_run, job_done) != 0)
			abort();
		memmove(c->buf, nl + 1, c->len - (size_t)(nl + 1 - c->buf));
		c->len -= (size_t)(nl + 1 - c->buf);
	}
	if (c->len == sizeof(c->buf))
		conn_close(c);
}

static void on_conn(uv_stream_t *srv, int status)
{
	struct conn *c;

	if (status < 0 || quitting)
		return;
	c = calloc(1, sizeof(*c));
	if (!c)
		abort();
	uv_tcp_init(loop, &c->tcp);
	c->tcp.data = c;
	if (uv_accept(srv, (uv_stream_t *)&c->tcp) != 0) {
		conn_close(c);
		return;
	}
	uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

static int serve(const char *portfile)
{
	struct sockaddr_in a;
	struct sockaddr_storage got;
	int len = sizeof(got);
	char tmp[4096];
	FILE *f;

	loop = uv_default_loop();
	uv_tcp_init(loop, &server);
	server.data = NULL;
	uv_ip4_addr("127.0.0.1", 0, &a);
	if (uv_tcp_bind(&server, (const struct sockaddr *)&a, 0) != 0 ||
	    uv_listen((uv_stream_t *)&server, 64, on_conn) != 0 ||
	    uv_tcp_getsockname(&server, (struct sockaddr *)&got, &len) != 0) {
		fprintf(stderr, "uv_echo: cannot listen\n");
		return 1;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", portfile);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%u\n", ntohs(((struct sockaddr_in *)&got)->sin_port)) < 0 ||
	    fclose(f) != 0 || rename(tmp, portfile) != 0) {
		perror(portfile);
		return 1;
	}
	uv_run(loop, UV_RUN_DEFAULT);
	return uv_loop_close(loop) == 0 ? 0 : 2;
}

/* --- client ------------------------------------------------------------------------------ */

static int read_line(int fd, char *out, size_t cap)
{
	size_t n = 0;

	while (n + 1 < cap) {
		ssize_t r = read(fd, out + n, 1);

		if (r <= 0)
			return -1;
		if (out[n++] == '\n')
			break;
	}
	out[n] = 0;
	return 0;
}

static int client(int port, int n, int k)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fds[64], bad = 0;
	char req[256], want[300], got[300];

	if (k < 1 || k > 64)
		return 2;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (int i = 0; i < k; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (fds[i] < 0 || connect(fds[i], (struct sockaddr *)&a, sizeof(a)) != 0) {
			perror("uv_echo client: connect");
			return 1;
		}
	}
	for (int r = 0; r < n; r++) {
		for (int i = 0; i < k; i++) {
			int l = snprintf(req, sizeof(req), "req-%d-%d\n", i, r);

			if (write(fds[i], req, (size_t)l) != l) {
				perror("uv_echo client: write");
				return 1;
			}
		}
		for (int i = 0; i < k; i++) {
			int l = snprintf(req, sizeof(req), "req-%d-%d", i, r);

			snprintf(want, sizeof(want), "%s %08x\n", req, work_hash(req, (size_t)l));
			if (read_line(fds[i], got, sizeof(got)) != 0) {
				fprintf(stderr, "uv_echo client: connection %d closed at request %d\n", i, r);
				return 1;
			}
			if (strcmp(got, want) != 0) {
				fprintf(stderr, "uv_echo client: wrong answer %s", got);
				bad++;
			}
			fputs(got, stdout);
		}
	}
	if (write(fds[0], "quit\n", 5) != 5)
		return 1;
	for (int i = 0; i < k; i++)
		close(fds[i]);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "server") == 0)
		return serve(argv[2]);
	if (argc == 5 && strcmp(argv[1], "client") == 0)
		return client(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	fprintf(stderr, "usage: uv_echo server PORTFILE | client PORT N K\n");
	return 2;
}
