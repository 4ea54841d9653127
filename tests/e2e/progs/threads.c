/*
 * threads.c: multi-threaded programs whose output depends on how their threads were
 * scheduled, for the thread tests (replayer/README.md, "Threads").  Every mode prints what
 * its threads did in the order they did it, so a replay that does not follow the recorded
 * interleaving prints something else.
 *
 *   threads pool CLIENTS REQUESTS WORKERS   a thread-pool server: forked clients send
 *            requests on socketpairs; the main thread reads them (poll) into a queue behind a
 *            mutex and a condition variable; workers take them and reply on the shared
 *            connections, each reply naming the worker and its rank; clients check theirs
 *   threads sem PRODUCERS CONSUMERS ITEMS   producers and consumers on a bounded buffer of
 *            semaphores (empty, full) and a mutex
 *   threads fork THREADS                    each thread forks a child that answers on a pipe
 *   threads accept DIR CLIENTS WORKERS      one thread blocks in accept on a Unix socket and
 *            hands connections to workers through a queue, while they serve the clients
 *   threads race N                          two threads increment a plain shared counter
 *            without a lock; its value decides how many writes follow (a data race that
 *            replay cannot reproduce: a divergence or stall report, never a hang)
 *   threads eventfd N                       a thread waits on an eventfd (poll, read) that the
 *            main thread increments N times: what each read gets depends on scheduling
 *   threads futex THREADS ROUNDS            threads pass a baton round a ring through raw
 *            futexes (syscall(SYS_futex), FUTEX_WAIT/FUTEX_WAKE, private and shared forms),
 *            one word per hand-over, printing what each wait returned and how many threads
 *            each wake woke (which depends on whether the waiter slept yet); every thread
 *            first calls pthread_once, whose init prints which thread ran it
 *   threads sleepsig                        a thread locks, counts and sleeps (usleep) in a
 *            loop with SIGUSR1 blocked, while the main thread waits in a read until a forked
 *            child's SIGUSR1 interrupts it; then it stops the sleeper and prints the count
 *            (the handler ran in the main thread: a replay must not run it in the sleeper)
 *   threads owned THREADS ROUNDS            owned mutexes (recorder/sync.c): each thread takes
 *            its own mutex many times (no events) and now and then a shared one (transfers)
 *            and tries it; one thread uses a heap mutex the next reuses at the same address
 *            without an init; at the end each takes its own mutex again and blocks for ever in
 *            a read (acquisitions after its last event, as memcached's workers at exit), and
 *            the main thread takes every worker's mutex and prints what was counted under it
 *   threads stall FILE                      a thread writes a line if FILE exists, else spins
 *            for ever outside interposed calls (the test removes FILE before the replay: the
 *            other thread's turn never comes, the stall report must name the spinning one)
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define REQ 16
#define REP 48

__attribute__((noreturn)) static void die(const char *what)
{
	perror(what);
	exit(2);
}

static void put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void put(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (write(1, buf, (size_t)n) != n)
		die("write");
}

static int full_read(int fd, char *b, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, b + got, n - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return got ? -1 : 0;
		got += (size_t)r;
	}
	return 1;
}

/* --- the queue: a mutex and a condition variable -------------------------------------------- */

#define QMAX 1024
static pthread_mutex_t qm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qc = PTHREAD_COND_INITIALIZER;
static struct item {
	int fd;
	char req[REQ];
} queue[QMAX];
static int qhead, qtail, qdone, rank;

static void q_push(int fd, const char *req)
{
	pthread_mutex_lock(&qm);
	queue[qtail % QMAX].fd = fd;
	memcpy(queue[qtail % QMAX].req, req, REQ);
	qtail++;
	pthread_cond_signal(&qc);
	pthread_mutex_unlock(&qm);
}

/* 0 when the queue is closed and empty. */
static int q_pop(struct item *it, int *my_rank)
{
	pthread_mutex_lock(&qm);
	while (qhead == qtail && !qdone)
		pthread_cond_wait(&qc, &qm);
	if (qhead == qtail) {
		pthread_mutex_unlock(&qm);
		return 0;
	}
	*it = queue[qhead++ % QMAX];
	*my_rank = ++rank;
	pthread_mutex_unlock(&qm);
	return 1;
}

static void q_close(void)
{
	pthread_mutex_lock(&qm);
	qdone = 1;
	pthread_cond_broadcast(&qc);
	pthread_mutex_unlock(&qm);
}

/* A worker replies on the request's connection; the reply names it and its rank. */
static void *worker(void *arg)
{
	long id = (long)arg;
	struct item it;
	int r, served = 0;

	while (q_pop(&it, &r)) {
		char rep[REP];

		memset(rep, 0, sizeof(rep));
		snprintf(rep, sizeof(rep), "%.15s by w%ld #%d", it.req, id, r);
		if (write(it.fd, rep, REP) != REP)
			die("reply");
		put("w%ld served %.15s as #%d\n", id, it.req, r);
		served++;
	}
	/* the TID differs from run to run: replay gives back the recorded one */
	put("w%ld done after %d (tid %d)\n", id, served, (int)gettid());
	return NULL;
}

__attribute__((noreturn)) static void client(int c, int fd, int nreq)
{
	for (int i = 0; i < nreq; i++) {
		char req[REQ], rep[REP];

		memset(req, 0, sizeof(req));
		snprintf(req, sizeof(req), "c%u:r%u", (unsigned)c % 1000u, (unsigned)i % 100000u);
		if (write(fd, req, REQ) != REQ)
			die("request");
		if (full_read(fd, rep, REP) != 1 || strncmp(rep, req, strlen(req)) != 0)
			exit(3);
	}
	exit(0);
}

static int pool(int nc, int nreq, int nw)
{
	struct pollfd pf[64];
	pthread_t w[64];
	int open_fds = nc;

	if (nc > 64 || nw > 64)
		return 2;
	for (int c = 0; c < nc; c++) {
		int sv[2];

		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
			die("socketpair");
		switch (fork()) {
		case -1:
			die("fork");
		case 0:
			close(sv[0]);
			client(c, sv[1], nreq);
		}
		close(sv[1]);
		pf[c].fd = sv[0];
		pf[c].events = POLLIN;
	}
	for (long i = 0; i < nw; i++)
		if (pthread_create(&w[i], NULL, worker, (void *)i) != 0)
			die("pthread_create");
	while (open_fds > 0) {
		if (poll(pf, (nfds_t)nc, -1) < 0)
			die("poll");
		for (int c = 0; c < nc; c++) {
			char req[REQ];

			if (pf[c].fd < 0 || !(pf[c].revents & (POLLIN | POLLHUP)))
				continue;
			if (full_read(pf[c].fd, req, REQ) != 1) {
				pf[c].fd = -1; /* the worker may still reply: closed at the end */
				open_fds--;
				continue;
			}
			q_push(pf[c].fd, req);
		}
	}
	q_close();
	for (int i = 0; i < nw; i++)
		pthread_join(w[i], NULL);
	for (int c = 0; c < nc; c++) {
		int st;

		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			die("a client failed");
	}
	put("served %d\n", rank);
	return 0;
}

/* --- semaphores ----------------------------------------------------------------------------- */

#define SLOTS 4
static sem_t s_empty, s_full;
static pthread_mutex_t sm = PTHREAD_MUTEX_INITIALIZER;
static int buf[SLOTS], bin, bout, items_per;

static void *producer(void *arg)
{
	long id = (long)arg;

	for (int i = 0; i < items_per; i++) {
		sem_wait(&s_empty);
		pthread_mutex_lock(&sm);
		buf[bin++ % SLOTS] = (int)id * 1000 + i;
		pthread_mutex_unlock(&sm);
		sem_post(&s_full);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	long id = (long)arg;

	for (;;) {
		int v;

		sem_wait(&s_full);
		pthread_mutex_lock(&sm);
		v = buf[bout++ % SLOTS];
		pthread_mutex_unlock(&sm);
		sem_post(&s_empty);
		if (v < 0)
			break;
		put("consumer %ld got %d\n", id, v);
	}
	return NULL;
}

static int sems(int np, int nc, int n)
{
	pthread_t p[16], c[16];

	if (np > 16 || nc > 16)
		return 2;
	items_per = n;
	sem_init(&s_empty, 0, SLOTS);
	sem_init(&s_full, 0, 0);
	for (long i = 0; i < nc; i++)
		pthread_create(&c[i], NULL, consumer, (void *)i);
	for (long i = 0; i < np; i++)
		pthread_create(&p[i], NULL, producer, (void *)i);
	for (int i = 0; i < np; i++)
		pthread_join(p[i], NULL);
	for (int i = 0; i < nc; i++) { /* one end mark per consumer */
		sem_wait(&s_empty);
		pthread_mutex_lock(&sm);
		buf[bin++ % SLOTS] = -1;
		pthread_mutex_unlock(&sm);
		sem_post(&s_full);
	}
	for (int i = 0; i < nc; i++)
		pthread_join(c[i], NULL);
	put("done\n");
	return 0;
}

/* --- threads that fork ---------------------------------------------------------------------- */

static pthread_mutex_t fm = PTHREAD_MUTEX_INITIALIZER;
static int forked;

static void *forker(void *arg)
{
	long id = (long)arg;
	int p[2], st, n;
	char b[64];
	pid_t pid;

	if (pipe(p) != 0)
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(p[0]);
		n = snprintf(b, sizeof(b), "child of thread %ld", id);
		if (write(p[1], b, (size_t)n) != n)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	n = (int)read(p[0], b, sizeof(b) - 1);
	close(p[0]);
	if (n <= 0 || waitpid(pid, &st, 0) != pid)
		die("child");
	b[n] = 0;
	pthread_mutex_lock(&fm);
	forked++;
	put("thread %ld: %s (%d so far)\n", id, b, forked);
	pthread_mutex_unlock(&fm);
	return NULL;
}

static int forks(int n)
{
	pthread_t t[16];

	if (n > 16)
		return 2;
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, forker, (void *)i);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	put("%d forked\n", forked);
	return 0;
}

/* --- a thread blocked in accept while the others serve -------------------------------------- */

static int lfd, to_accept;

static void *acceptor(void *arg)
{
	(void)arg;
	for (int i = 0; i < to_accept; i++) {
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0)
			die("accept");
		put("accepted connection %d\n", i);
		/* each connection is one queue item; the request is read by the worker */
		{
			char what[REQ] = "conn";

			q_push(fd, what);
		}
	}
	return NULL;
}

/* Served connections stay open until the end: a descriptor number freed while the acceptor
 * blocks in accept is a limit of the replay (replayer/README.md, "Threads"). */
static int served_fds[64], nserved;

static void *server_worker(void *arg)
{
	long id = (long)arg;
	struct item it;
	int r;

	while (q_pop(&it, &r)) {
		char req[REQ], rep[REP];

		while (full_read(it.fd, req, REQ) == 1) {
			memset(rep, 0, sizeof(rep));
			snprintf(rep, sizeof(rep), "%.15s by w%ld", req, id);
			if (write(it.fd, rep, REP) != REP)
				die("reply");
			put("w%ld: %.15s\n", id, req);
		}
		pthread_mutex_lock(&qm);
		served_fds[nserved++] = it.fd;
		pthread_mutex_unlock(&qm);
	}
	return NULL;
}

static int accepts(const char *dir, int nc, int nw)
{
	struct sockaddr_un sa;
	pthread_t a, w[16];

	if (nw > 16 || nc > 64)
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", dir);
	unlink(sa.sun_path);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 16) != 0)
		die("listen");
	to_accept = nc;
	/* the clients first: a fork while the acceptor blocks would copy a descriptor table the
	 * replay cannot promise (replayer/README.md, "Threads") */
	for (int c = 0; c < nc; c++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			int fd = socket(AF_UNIX, SOCK_STREAM, 0);

			close(lfd);
			if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
				_exit(4);
			client(c, fd, 3);
		}
	}
	for (long i = 0; i < nw; i++)
		pthread_create(&w[i], NULL, server_worker, (void *)i);
	pthread_create(&a, NULL, acceptor, NULL);
	pthread_join(a, NULL);
	for (int c = 0; c < nc; c++) {
		int st;

		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			die("a client failed");
	}
	q_close();
	for (int i = 0; i < nw; i++)
		pthread_join(w[i], NULL);
	for (int i = 0; i < nserved; i++)
		close(served_fds[i]);
	unlink(sa.sun_path);
	put("served %d connections\n", rank);
	return 0;
}

/* --- a data race ---------------------------------------------------------------------------- */

static volatile long counter;
static long race_n;

static void *racer(void *arg)
{
	(void)arg;
	for (long i = 0; i < race_n; i++)
		counter = counter + 1; /* a plain load and store: updates get lost */
	return NULL;
}

static int race(long n)
{
	pthread_t a, b;

	race_n = n;
	pthread_create(&a, NULL, racer, NULL);
	pthread_create(&b, NULL, racer, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	/* the racy value decides how many writes follow */
	for (long i = 0; i < counter % 97; i++)
		put("x");
	put("\ncounter %ld\n", counter);
	return 0;
}

/* --- an eventfd between two threads -------------------------------------------------------- */

static int efd;
static long efd_total;

static void *efd_reader(void *arg)
{
	long got = 0;

	(void)arg;
	while (got < efd_total) {
		struct pollfd p = { efd, POLLIN, 0 };
		uint64_t v;

		if (poll(&p, 1, -1) < 0)
			die("poll");
		if (read(efd, &v, sizeof(v)) != (ssize_t)sizeof(v))
			continue; /* EAGAIN: another read took it */
		got += (long)v;
		put("reader got %llu (%ld so far)\n", (unsigned long long)v, got);
	}
	return NULL;
}

static int evfd(long n)
{
	pthread_t t;

	efd = eventfd(0, EFD_NONBLOCK);
	if (efd < 0)
		die("eventfd");
	efd_total = n;
	pthread_create(&t, NULL, efd_reader, NULL);
	for (long i = 0; i < n; i++) {
		uint64_t one = 1;

		if (write(efd, &one, sizeof(one)) != (ssize_t)sizeof(one))
			die("write");
		put("main wrote %ld\n", i);
	}
	pthread_join(t, NULL);
	close(efd);
	put("done\n");
	return 0;
}

/* --- raw futexes and pthread_once ----------------------------------------------------------- */

#define FX_MAX 8
#define FX_ROUNDS 64
static uint32_t fx_word[FX_MAX][FX_ROUNDS]; /* written once each: 0, then 1 */
static int fx_threads, fx_rounds;
static pthread_once_t fx_once = PTHREAD_ONCE_INIT;
static __thread int fx_me;

static void fx_init(void)
{
	put("once: init ran in thread %d\n", fx_me);
}

/* Wait until the word is 1: the first wait is made whatever the word is (so that the calls
 * made do not depend on a plain read), then while it is 0. */
static void fx_wait(int t, int r)
{
	int op = (r & 1) ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE;
	long w;

	do {
		w = syscall(SYS_futex, &fx_word[t][r], op, 0, NULL, NULL, 0);
		put("t%d r%d: wait %ld%s\n", t, r, w, w < 0 && errno == EAGAIN ? " (EAGAIN)" : "");
	} while (__atomic_load_n(&fx_word[t][r], __ATOMIC_ACQUIRE) == 0);
}

static void fx_wake(int t, int r)
{
	int op = (r & 1) ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE;
	long n;

	__atomic_store_n(&fx_word[t][r], 1, __ATOMIC_RELEASE);
	n = syscall(SYS_futex, &fx_word[t][r], op, 1, NULL, NULL, 0);
	put("wake t%d r%d: woke %ld\n", t, r, n);
}

static void *fx_thread(void *arg)
{
	int t = (int)(long)arg;

	fx_me = t;
	pthread_once(&fx_once, fx_init);
	for (int r = 0; r < fx_rounds; r++) {
		fx_wait(t, r);
		/* hand over to the next thread of the ring (the last to the first, next round) */
		if (t + 1 < fx_threads)
			fx_wake(t + 1, r);
		else if (r + 1 < fx_rounds)
			fx_wake(0, r + 1);
	}
	return NULL;
}

static int futexes(int n, int rounds)
{
	pthread_t t[FX_MAX];

	if (n < 1 || n > FX_MAX || rounds < 1 || rounds > FX_ROUNDS)
		return 2;
	fx_threads = n;
	fx_rounds = rounds;
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, fx_thread, (void *)i);
	fx_me = -1;
	pthread_once(&fx_once, fx_init);
	fx_wake(0, 0);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	put("done\n");
	return 0;
}

/* --- a thread that never reaches its next event in replay --------------------------------- */

static volatile int never;

static void *spinner(void *arg)
{
	if (access((const char *)arg, F_OK) != 0) /* not an event: replay cannot know */
		while (!never)
			;
	put("spinner here\n");
	return NULL;
}

static int stall(const char *file)
{
	pthread_t t;

	pthread_create(&t, NULL, spinner, (void *)file);
	pthread_join(t, NULL);
	put("joined\n");
	return 0;
}

/* --- a signal for the main thread while another sleeps ------------------------------------- */

static pthread_mutex_t ss_m = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t ss_got;
static int ss_stop;
static long ss_loops;

static void ss_handler(int sig)
{
	ss_got = sig;
}

static void *ss_sleeper(void *arg)
{
	sigset_t s;

	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &s, NULL); /* the signal goes to the main thread */
	for (;;) {
		int stop;

		pthread_mutex_lock(&ss_m);
		stop = ss_stop;
		ss_loops++;
		pthread_mutex_unlock(&ss_m);
		if (stop)
			return NULL;
		usleep(200);
	}
}

static int sleepsig(void)
{
	struct sigaction sa;
	pthread_t t;
	pid_t child;
	int p[2], st;
	ssize_t r;
	char c;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = ss_handler; /* no SA_RESTART: the read ends with EINTR */
	if (sigaction(SIGUSR1, &sa, NULL) != 0 || pipe(p) != 0)
		die("setup");
	pthread_create(&t, NULL, ss_sleeper, NULL);
	child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		close(p[0]);
		usleep(20000);
		kill(getppid(), SIGUSR1);
		usleep(20000); /* the pipe stays open a while: the read ends by the signal */
		_exit(0);
	}
	close(p[1]);
	r = read(p[0], &c, 1);
	put("read returned %zd (%s), signal %d\n", r, r < 0 ? strerror(errno) : "-", (int)ss_got);
	pthread_mutex_lock(&ss_m);
	ss_stop = 1;
	pthread_mutex_unlock(&ss_m);
	pthread_join(t, NULL);
	waitpid(child, &st, 0);
	put("sleeper looped %ld times\n", ss_loops);
	return 0;
}

/* --- closelock: a thread closes a file while holding a lock another one waits for -----------
 * N passes: the holder takes the lock, tells the waiter (an atomic, no event), closes a file
 * it opened (a close that is no event but keeps its place among the threads' events in
 * replay: descriptor numbers) and lets go; the waiter takes the lock as soon as it may.  In
 * replay the holder's close must find its place before the waiter's acquire (a replay that
 * let the waiter's turn come first, blocking in the real lock, would wait for ever: see
 * bench/README.md, "memcached -t 4: unlocks as no events, tried"). */
static pthread_mutex_t cl_m = PTHREAD_MUTEX_INITIALIZER;
static atomic_int cl_holding;
static int cl_passes;
static long cl_sum;

static void *cl_waiter(void *arg)
{
	(void)arg;
	for (int i = 0; i < cl_passes; i++) {
		while (atomic_load(&cl_holding) < i + 1)
			;
		pthread_mutex_lock(&cl_m);
		cl_sum += i;
		pthread_mutex_unlock(&cl_m);
	}
	return NULL;
}

static int closelock(int passes)
{
	pthread_t t;

	cl_passes = passes;
	pthread_create(&t, NULL, cl_waiter, NULL);
	for (int i = 0; i < passes; i++) {
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			die("open");
		pthread_mutex_lock(&cl_m);
		atomic_store(&cl_holding, i + 1);
		for (volatile int k = 0; k < 20000; k++) /* the waiter gets to its lock meanwhile */
			;
		close(fd);
		pthread_mutex_unlock(&cl_m);
	}
	pthread_join(t, NULL);
	put("closelock: %d passes, sum %ld\n", passes, cl_sum);
	return 0;
}

/* --- shutwake: a thread shuts a connection down to wake another blocked sending on it --------
 * The sender writes 4 MiB into a socket nobody reads and blocks once the buffers are full;
 * the other thread, having seen the peer's queue fill (FIONREAD, no sleep), shuts the
 * sender's end down, which fails its send (EPIPE), as without a recorder.  (A recorded
 * shutdown that waited for the send in flight on its descriptor hung here.) */
static int sw_fd[2];
static char sw_buf[4 << 20];
static ssize_t sw_sent;
static int sw_err;

static void *sw_sender(void *arg)
{
	(void)arg;
	sw_sent = send(sw_fd[0], sw_buf, sizeof(sw_buf), MSG_NOSIGNAL);
	sw_err = sw_sent < 0 ? errno : 0;
	return NULL;
}

static int shutwake(void)
{
	pthread_t t;
	int queued = 0;

	alarm(60); /* (hung, it ends: the test says so) */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sw_fd) != 0)
		die("socketpair");
	pthread_create(&t, NULL, sw_sender, NULL);
	while (queued < 64 * 1024) /* the sender is in its send, the buffers filling */
		if (ioctl(sw_fd[1], FIONREAD, &queued) != 0)
			die("FIONREAD");
	shutdown(sw_fd[0], SHUT_RDWR);
	pthread_join(t, NULL);
	put("shutwake: the send ended (%s)\n", sw_sent < 0 ? strerror(sw_err) : "partial");
	return 0;
}

/* --- contend: more threads than CPUs on one mutex, and on the recorder's stream lock -------
 * T threads take one mutex N times each, note who got it, and read the clock (an event of
 * their own between two acquisitions): the threads outnumber the CPUs, so waiters for the
 * recorder's stream lock sleep on it and are woken by its release (recorder/core.c).  The
 * order of the acquisitions is the scheduler's; its hash is printed, which a replay must give
 * again, and the count, which a lost acquisition would change. */
static pthread_mutex_t ct_m = PTHREAD_MUTEX_INITIALIZER;
static unsigned char *ct_seq;
static long ct_n, ct_pos;

static void *ct_worker(void *arg)
{
	unsigned char id = (unsigned char)(uintptr_t)arg;
	struct timeval tv;

	for (long i = 0; i < ct_n; i++) {
		pthread_mutex_lock(&ct_m);
		ct_seq[ct_pos++] = id;
		pthread_mutex_unlock(&ct_m);
		gettimeofday(&tv, NULL);
	}
	return NULL;
}

static int contend(int threads, long n)
{
	pthread_t t[64];
	uint64_t h = 1469598103934665603ULL;

	if (threads < 1 || threads > 64 || n < 1)
		return 2;
	ct_n = n;
	ct_seq = calloc((size_t)threads * (size_t)n, 1);
	if (!ct_seq)
		die("calloc");
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, ct_worker, (void *)(uintptr_t)i);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	for (long i = 0; i < ct_pos; i++)
		h = (h ^ ct_seq[i]) * 1099511628211ULL;
	put("contend: %ld acquisitions, order %016llx\n", ct_pos, (unsigned long long)h);
	return ct_pos == threads * n ? 0 : 1;
}

/* --- owned: mutexes mostly taken again by the thread that took them last ------------------- */
#define OW_MAX 16
static pthread_mutex_t ow_own[OW_MAX], ow_shared = PTHREAD_MUTEX_INITIALIZER;
static long ow_count[OW_MAX], ow_rounds, ow_pos, ow_tries_won;
static unsigned char *ow_seq;
static atomic_int ow_finished;
static pthread_barrier_t ow_bar;
static int ow_block[2];
static struct ow_heap {
	pthread_mutex_t m;
	long v;
} *ow_heap;
static long ow_heap_sum;

static void *ow_worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	char c;

	for (long r = 0; r < ow_rounds; r++) {
		for (int k = 0; k < 3; k++) {
			pthread_mutex_lock(&ow_own[id]);
			ow_count[id] += k + 1;
			pthread_mutex_unlock(&ow_own[id]);
		}
		if (r % 4 == 0) {
			pthread_mutex_lock(&ow_shared);
			ow_seq[ow_pos++] = (unsigned char)('a' + id);
			pthread_mutex_unlock(&ow_shared);
		} else if (r % 4 == 2 && pthread_mutex_trylock(&ow_shared) == 0) {
			ow_seq[ow_pos++] = (unsigned char)('A' + id);
			ow_tries_won++;
			pthread_mutex_unlock(&ow_shared);
		}
	}
	/* a heap mutex made by thread 0, freed, and made again (most often at the same address)
	 * by thread 1, zeroed each time: no init the recorder sees */
	if (id == 0) {
		ow_heap = calloc(1, sizeof(*ow_heap));
		if (!ow_heap)
			die("calloc");
		for (int k = 0; k < 5; k++) {
			pthread_mutex_lock(&ow_heap->m);
			ow_heap->v += k;
			pthread_mutex_unlock(&ow_heap->m);
		}
		ow_heap_sum += ow_heap->v;
		free(ow_heap);
	}
	pthread_barrier_wait(&ow_bar);
	if (id == 1) {
		ow_heap = calloc(1, sizeof(*ow_heap));
		if (!ow_heap)
			die("calloc");
		for (int k = 0; k < 4; k++) {
			pthread_mutex_lock(&ow_heap->m);
			ow_heap->v += 10 * k;
			pthread_mutex_unlock(&ow_heap->m);
		}
		ow_heap_sum += ow_heap->v;
		free(ow_heap);
	}
	pthread_barrier_wait(&ow_bar);
	/* after its last event: acquisitions no event of its own counts */
	for (int k = 0; k < 3; k++) {
		pthread_mutex_lock(&ow_own[id]);
		ow_count[id] += 1000;
		pthread_mutex_unlock(&ow_own[id]);
	}
	atomic_fetch_add(&ow_finished, 1);
	if (read(ow_block[0], &c, 1) < 0) /* never returns: the process ends meanwhile */
		die("read");
	return NULL;
}

static int owned(int threads, long rounds)
{
	pthread_t t[OW_MAX];
	uint64_t h = 1469598103934665603ULL;

	if (threads < 2 || threads > OW_MAX || rounds < 1)
		return 2;
	ow_rounds = rounds;
	ow_seq = calloc((size_t)threads * (size_t)rounds, 1);
	if (!ow_seq || pipe(ow_block) != 0)
		die("setup");
	for (int i = 0; i < threads; i++)
		pthread_mutex_init(&ow_own[i], NULL);
	pthread_barrier_init(&ow_bar, NULL, (unsigned)threads);
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, ow_worker, (void *)(intptr_t)i);
	while (atomic_load(&ow_finished) < threads)
		sched_yield();
	for (int i = 0; i < threads; i++) {
		long v;

		pthread_mutex_lock(&ow_own[i]);
		v = ow_count[i];
		pthread_mutex_unlock(&ow_own[i]);
		put("owned: worker %d counted %ld\n", i, v);
	}
	pthread_mutex_lock(&ow_shared);
	for (long i = 0; i < ow_pos; i++)
		h = (h ^ ow_seq[i]) * 1099511628211ULL;
	put("owned: %ld shared acquisitions (%ld by trying), order %016llx, heap %ld\n", ow_pos,
	    ow_tries_won, (unsigned long long)h, ow_heap_sum);
	pthread_mutex_unlock(&ow_shared);
	exit(0); /* the workers are blocked in their reads */
}

/* --- fdnums: a thread opening files while another accepts -----------------------------------
 * One thread opens, reads one byte of and closes a file N times; another connects to the main
 * thread N times; the main thread accepts and prints the number each connection got, which
 * depends on where the other thread's opens fell (python's http.server opens the file it
 * serves in the request's thread while the main thread accepts).  A replay must hand the
 * numbers out in the same order (recorder/chan.c, FDNUM events). */
static const char *fn_file;
static struct sockaddr_un fn_sa;
static long fn_n;

static void *fn_opener(void *arg)
{
	char c;

	for (long i = 0; i < fn_n; i++) {
		int fd = open(fn_file, O_RDONLY | O_CLOEXEC);

		if (fd < 0 || read(fd, &c, 1) != 1)
			die("open");
		close(fd);
	}
	return arg;
}

static void *fn_client(void *arg)
{
	for (long i = 0; i < fn_n; i++) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		char c;

		/* (a reply before the next connect: one connection queued at most, as a client
		 * waiting for its answer does) */
		if (fd < 0 || connect(fd, (struct sockaddr *)&fn_sa, sizeof(fn_sa)) != 0 ||
		    write(fd, "x", 1) != 1 || read(fd, &c, 1) != 1)
			die("connect");
		close(fd);
	}
	return arg;
}

static int fdnums(const char *dir, const char *file, long n)
{
	pthread_t o, c;
	char line[64], c1;
	uint64_t h = 1469598103934665603ULL;
	int fn_lfd, seen[8] = { 0 };

	fn_file = file;
	fn_n = n;
	fn_sa.sun_family = AF_UNIX;
	snprintf(fn_sa.sun_path, sizeof(fn_sa.sun_path), "%s/fnsock", dir);
	unlink(fn_sa.sun_path);
	fn_lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fn_lfd < 0 || bind(fn_lfd, (struct sockaddr *)&fn_sa, sizeof(fn_sa)) != 0 || listen(fn_lfd, 64))
		die("listen");
	pthread_create(&o, NULL, fn_opener, NULL);
	pthread_create(&c, NULL, fn_client, NULL);
	for (long i = 0; i < n; i++) {
		int fd = accept4(fn_lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0 || read(fd, &c1, 1) != 1 || write(fd, "y", 1) != 1)
			die("accept");
		h = (h ^ (uint64_t)fd) * 1099511628211ULL;
		seen[fd < 8 ? fd : 7]++;
		close(fd);
	}
	pthread_join(o, NULL);
	pthread_join(c, NULL);
	close(fn_lfd);
	unlink(fn_sa.sun_path);
	snprintf(line, sizeof(line), "%d %d %d %d %d", seen[3], seen[4], seen[5], seen[6], seen[7]);
	put("fdnums: %ld accepts, by number 3-7+: %s, order %016llx\n", n, line,
	    (unsigned long long)h);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc == 5 && !strcmp(argv[1], "pool"))
		return pool(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "sem"))
		return sems(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "fork"))
		return forks(atoi(argv[2]));
	if (argc == 5 && !strcmp(argv[1], "accept"))
		return accepts(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "eventfd"))
		return evfd(atol(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "futex"))
		return futexes(atoi(argv[2]), atoi(argv[3]));
	if (argc == 2 && !strcmp(argv[1], "sleepsig"))
		return sleepsig();
	if (argc == 3 && !strcmp(argv[1], "stall"))
		return stall(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "shutwake"))
		return shutwake();
	if (argc == 3 && !strcmp(argv[1], "closelock"))
		return closelock(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "race"))
		return race(atol(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "fdnums"))
		return fdnums(argv[2], argv[0], atol(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "contend"))
		return contend(atoi(argv[2]), atol(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "owned"))
		return owned(atoi(argv[2]), atol(argv[3]));
	fprintf(stderr, "usage: threads pool|sem|fork|accept|race ...\n");
	return 2;
}
