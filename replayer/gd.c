/*
 * gd.c: the global debugger (Manabe & Imase section 2.2), the coordinating half of the
 * replayer, run inside `encore replay`.
 *
 * It checks the session (every trace whole, every executable the recorded one), makes the
 * control socket and the status board in DIR/.encore-replay/, starts the recorded roots with
 * the LC preloaded, answers each LC's HELLO with its slot and target state, and watches:
 * DONE and end of connection (a process ended), HALTED (a process reached its target),
 * DIVERGED (the trace was not followed), and the board (no progress for stall_ms: who waits
 * for what).  It is a subreaper, so every replayed process ends up its child and is reaped
 * here; rep_kill ends them all, whatever state they are in.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ana.h"
#include "interpose.h"
#include "proto.h"
#include "rep.h"

#define MSG_HDR offsetof(struct rep_msg, text)

struct gd_proc {
	char name[TRACE_NAME_MAX];
	char parent[TRACE_NAME_MAX];
	char exe[4096];
	char cwd[4096];
	char **argv;
	uint32_t argc;
	uint64_t nevents;
	uint64_t fork_index;    /* index of the FORK event in the parent, 0 for a root */
	int ana;                /* process number in the analyzer */
	uint64_t target;        /* REP_NO_TARGET: run to the end */
	long pid;
	long rec_pid;           /* its pid in the recorded run */
	int conn;               /* control connection, -1 when none */
	int started, halted, done, gone, reaped;
	int execing;            /* said EXEC: its connection ends, its new image says HELLO */
	uint32_t spawns;        /* children started inside libc so far (PARENT.sK) */
	uint64_t index;         /* last state reported */
	int wait_status;
	char *backtrace;
	char *terms;            /* at a halt: "TERM = VALUE" lines of its simple predicate */
	/* online protocol */
	char sp_text[1024];     /* its simple predicate, "" for a passive process */
	char peers[1024];       /* "PEER:c1,c2;..." channels per peer named by sent(P)/received(P) */
	uint64_t need;          /* the state it must reach: sends others asked for */
	uint32_t reason;        /* of the last halt: enum rep_halt_reason */
	int sp_at_end;          /* DONE said its predicate holds in its final state */
	int free_running;       /* DONE said: killed here when recorded, runs free until killed */
	int killed_rec;         /* its trace ends without exit, never closed: SIGKILL */
	uint64_t req_k;         /* markers: a receive answered GO, not known to be done */
	struct gd_proc *req_q;  /* ... its sender */
	uint64_t req_j;         /* ... and the sender's send event */
	uint64_t released;      /* 1 + the state whose readiness wait was released last */
	char **lp_sp;           /* linked predicate, online: its simple predicate in each step
	                           (NULL where it has none) */
	int lp_named;           /* named in some step: its LC keeps the counters from the start */
	int ports[64];          /* local TCP ports of its connects in this replay */
	size_t nports;
};

/* An accept whose peer cannot be told yet (its connect's port not reported yet). */
struct gd_accept {
	struct gd_proc *server;
	uint64_t k;
	int port;
};

enum gd_mode { GD_OFFLINE = 0, GD_ONLINE = 1, GD_MARKERS = 2 };

struct rep {
	char dir[4096];
	char lib[4096];
	struct rep_options opt;
	struct gd_proc *procs;
	size_t nprocs;
	struct ana_session *ana;
	int lfd;                /* listening control socket */
	struct rep_slot *board;
	long pgid;
	int started;
	int killed;
	char message[8192];
	/* connections not yet matched to a process (before HELLO) */
	int pending[256];
	size_t npending;
	uint64_t last_progress;
	struct timespec last_change;
	enum gd_mode mode;
	struct gd_proc *fired;  /* markers: the process whose simple predicate held first */
	struct gd_accept accepts[64];
	size_t naccepts;
	size_t lp_n;            /* linked predicate, online: its steps (0: not linked) */
	size_t lp_stage;        /* the step being detected */
};

static void diag_set(struct trace_diag *d, int code, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void diag_set(struct trace_diag *d, int code, const char *file, const char *fmt, ...)
{
	va_list ap;

	if (!d)
		return;
	memset(d, 0, sizeof(*d));
	d->code = code;
	d->sys_errno = errno;
	if (file)
		snprintf(d->file, sizeof(d->file), "%s", file);
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
}

static void hex(const uint8_t *b, size_t n, char *out, size_t cap)
{
	size_t i;

	out[0] = '\0';
	for (i = 0; i < n && 2 * i + 2 < cap; i++)
		snprintf(out + 2 * i, cap - 2 * i, "%02x", b[i]);
}

/* --- opening: the session, its damage, its binaries ---------------------------------------- */

static void free_argv(struct gd_proc *p)
{
	for (uint32_t i = 0; p->argv && i < p->argc; i++)
		free(p->argv[i]);
	free(p->argv);
	p->argv = NULL;
	p->argc = 0;
}

/* Read one trace through; fill p from its header.  Refuses damage. */
static int check_trace(const char *path, struct gd_proc *p, struct trace_diag *d)
{
	struct trace_reader *rd = NULL;
	struct trace_event ev;
	const struct trace_process *h;
	uint8_t bid[64];
	char want[160], have[160];
	int rc, n;

	if ((rc = trace_reader_open(path, &rd, d)) != 0)
		return rc;
	h = trace_reader_process(rd);
	snprintf(p->name, sizeof(p->name), "%s", h->name);
	snprintf(p->parent, sizeof(p->parent), "%s", h->parent);
	snprintf(p->exe, sizeof(p->exe), "%s", h->exe);
	snprintf(p->cwd, sizeof(p->cwd), "%s", h->cwd);
	p->fork_index = h->fork_index;
	p->rec_pid = (long)h->pid;
	p->argc = h->argc;
	p->argv = calloc((size_t)h->argc + 1, sizeof(char *));
	for (uint32_t i = 0; p->argv && i < h->argc; i++)
		p->argv[i] = strdup(h->argv[i]);
	if (h->build_id_len) {
		n = rep_elf_build_id(h->exe, bid, sizeof(bid));
		if (n < 0) {
			diag_set(d, TRACE_ENOENT, h->exe,
			         "process %s: the recorded executable cannot be read (%s): restore it, "
			         "or replay on the machine that recorded it", h->name, strerror(errno));
			rc = TRACE_ENOENT;
			goto out;
		}
		if ((uint32_t)n != h->build_id_len || memcmp(bid, h->build_id, (size_t)n) != 0) {
			hex(h->build_id, h->build_id_len, want, sizeof(want));
			hex(bid, n > 0 ? (size_t)n : 0, have, sizeof(have));
			diag_set(d, TRACE_EINVAL, h->exe,
			         "process %s: the executable changed since the recording (build-id %s, "
			         "recorded %s): replay needs the recorded binary; rebuild or restore it",
			         h->name, have[0] ? have : "none", want);
			rc = TRACE_EINVAL;
			goto out;
		}
	}
	p->nevents = 0;
	ev.kind = TRACE_EV_NONE;
	while ((rc = trace_reader_next(rd, &ev)) == 1)
		p->nevents++;
	p->killed_rec = rc == 0 && !trace_reader_closed(rd) && ev.kind != TRACE_EV_EXIT &&
	                ev.kind != TRACE_EV_SIGNAL;
	if (rc < 0) {
		diag_set(d, rc, path, "cannot read the trace: %s", trace_strerror(rc));
		goto out;
	}
	if ((rc = trace_reader_damage(rd, d)) != 0) {
		char msg[sizeof(d->msg)];

		snprintf(msg, sizeof(msg), "%s", d->msg);
		snprintf(d->msg, sizeof(d->msg),
		         "trace of process %.40s is damaged (%.80s): replay needs every event; the run "
		         "cannot be reproduced past the damage", p->name,
		         msg[0] ? msg : trace_strerror(rc));
		if (!d->file[0])
			snprintf(d->file, sizeof(d->file), "%s", path);
		goto out;
	}
	if (trace_reader_dropped(rd)) {
		diag_set(d, TRACE_ECORRUPT, path,
		         "trace of process %s lost its oldest events to the disk budget (--max-bytes): "
		         "it cannot be replayed from the start", p->name);
		rc = TRACE_ECORRUPT;
		goto out;
	}
	rc = 0;
out:
	trace_reader_close(rd);
	return rc;
}

int rep_open(const char *dir, const struct rep_options *opt, struct rep **out,
             struct trace_diag *d)
{
	struct trace_session *s = NULL;
	struct rep *r;
	int rc;

	*out = NULL;
	if (!opt || !opt->lib || opt->lib[0] != '/') {
		diag_set(d, TRACE_EINVAL, NULL, "the path of libencore-replay.so must be absolute");
		return TRACE_EINVAL;
	}
	if (!(r = calloc(1, sizeof(*r))))
		return TRACE_ENOMEM;
	r->lfd = -1;
	r->opt = *opt;
	if (!r->opt.stall_ms)
		r->opt.stall_ms = 10000;
	snprintf(r->lib, sizeof(r->lib), "%s", opt->lib);
	if (!realpath(dir, r->dir)) {
		diag_set(d, TRACE_ENOENT, dir, "no such session directory: %s", strerror(errno));
		rc = TRACE_ENOENT;
		goto fail;
	}
	if ((rc = trace_session_open(r->dir, &s, d)) != 0)
		goto fail;
	r->nprocs = trace_session_count(s);
	if (!r->nprocs) {
		diag_set(d, TRACE_ENOENT, r->dir, "no trace files in this directory: record with "
		         "`encore record -o DIR -- CMD` first");
		rc = TRACE_ENOENT;
		goto fail;
	}
	r->procs = calloc(r->nprocs, sizeof(*r->procs));
	if (!r->procs) {
		rc = TRACE_ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < r->nprocs; i++) {
		const char *const *paths;
		size_t nf = trace_session_files(s, i, &paths);
		struct gd_proc *p = &r->procs[i];
		uint64_t total = 0;

		p->conn = -1;
		p->target = REP_NO_TARGET;
		p->wait_status = -1;
		/* every image (segment) of the process: whole, and its executable the recorded one */
		for (size_t f = 0; f < nf; f++) {
			struct gd_proc seg;

			memset(&seg, 0, sizeof(seg));
			if ((rc = check_trace(paths[f], f ? &seg : p, d)) != 0) {
				free_argv(&seg);
				goto fail;
			}
			total += f ? seg.nevents : p->nevents;
			if (f)
				p->killed_rec = seg.killed_rec; /* the last image says how it ended */
			free_argv(&seg);
		}
		p->nevents = total;
	}
	trace_session_close(s);
	s = NULL;
	if ((rc = ana_load(r->dir, &r->ana, d)) != 0)
		goto fail;
	for (size_t i = 0; i < r->nprocs; i++)
		r->procs[i].ana = ana_proc_find(r->ana, r->procs[i].name);
	*out = r;
	return 0;
fail:
	trace_session_close(s);
	rep_close(r);
	return rc;
}

static void free_proc(struct gd_proc *p, size_t nsteps)
{
	for (size_t d = 0; p->lp_sp && d < nsteps; d++)
		free(p->lp_sp[d]);
	free(p->lp_sp);
	free_argv(p);
	free(p->backtrace);
	free(p->terms);
	if (p->conn >= 0)
		close(p->conn);
}

void rep_close(struct rep *r)
{
	char path[4096 + 64];

	if (!r)
		return;
	rep_kill(r);
	for (size_t i = 0; i < r->nprocs; i++)
		free_proc(&r->procs[i], r->lp_n);
	for (size_t i = 0; i < r->npending; i++)
		close(r->pending[i]);
	free(r->procs);
	if (r->lfd >= 0) {
		close(r->lfd);
		snprintf(path, sizeof(path), "%s/" REP_SUBDIR "/" REP_CTL, r->dir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/" REP_SUBDIR "/" REP_STATUS, r->dir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/" REP_SUBDIR, r->dir);
		rmdir(path);
	}
	if (r->board)
		munmap(r->board, REP_SLOTS_MAX * sizeof(struct rep_slot));
	ana_free(r->ana);
	free(r);
}

size_t rep_nprocs(const struct rep *r)
{
	return r->nprocs;
}

const char *rep_proc_name(const struct rep *r, size_t i)
{
	return i < r->nprocs ? r->procs[i].name : NULL;
}

uint64_t rep_proc_nevents(const struct rep *r, size_t i)
{
	return i < r->nprocs ? r->procs[i].nevents : 0;
}

struct ana_session *rep_analysis(struct rep *r)
{
	return r->ana;
}

const char *rep_message(const struct rep *r)
{
	return r->message;
}

int rep_set_target(struct rep *r, size_t i, uint64_t state)
{
	if (i >= r->nprocs || state > r->procs[i].nevents)
		return TRACE_EINVAL;
	r->procs[i].target = state;
	return 0;
}

/* --- starting ------------------------------------------------------------------------------ */

static int make_control(struct rep *r, struct trace_diag *d)
{
	char path[4096 + 64];
	struct sockaddr_un sa;
	int fd;

	snprintf(path, sizeof(path), "%s/" REP_SUBDIR, r->dir);
	if (mkdir(path, 0700) != 0 && errno != EEXIST) {
		diag_set(d, TRACE_EIO, path, "cannot create the replay directory: %s", strerror(errno));
		return TRACE_EIO;
	}
	/* The board: one slot per process, written by the LCs with plain stores. */
	snprintf(path, sizeof(path), "%s/" REP_SUBDIR "/" REP_STATUS, r->dir);
	unlink(path);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, REP_SLOTS_MAX * sizeof(struct rep_slot)) != 0) {
		diag_set(d, TRACE_EIO, path, "cannot create the status board: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return TRACE_EIO;
	}
	r->board = mmap(NULL, REP_SLOTS_MAX * sizeof(struct rep_slot), PROT_READ | PROT_WRITE,
	                MAP_SHARED, fd, 0);
	close(fd);
	if (r->board == MAP_FAILED) {
		r->board = NULL;
		diag_set(d, TRACE_EIO, path, "cannot map the status board: %s", strerror(errno));
		return TRACE_EIO;
	}
	/* The recorded pids, for the LCs' pid translation (getpid gives the recorded one). */
	for (size_t i = 0; i < r->nprocs && i < REP_SLOTS_MAX - 1; i++)
		r->board[i].rec_pid = (int32_t)r->procs[i].rec_pid;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/" REP_SUBDIR "/" REP_CTL,
	                     r->dir) >= sizeof(sa.sun_path)) {
		diag_set(d, TRACE_EINVAL, r->dir, "the session directory's path is too long for a "
		         "Unix socket (%zu bytes at most): move or link it to a shorter path",
		         sizeof(sa.sun_path) - sizeof("/" REP_SUBDIR "/" REP_CTL));
		return TRACE_EINVAL;
	}
	unlink(sa.sun_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    chmod(sa.sun_path, 0600) != 0 || listen(fd, 128) != 0) {
		diag_set(d, TRACE_EIO, sa.sun_path, "cannot make the control socket: %s",
		         strerror(errno));
		if (fd >= 0)
			close(fd);
		return TRACE_EIO;
	}
	r->lfd = fd;
	return 0;
}

extern char **environ;

/* In the forked child, before exec: environment, directory, group, death with the GD.  A
 * failure is reported through `err` (close-on-exec): what failed (1 chdir, 2 exec), errno. */
static void child_exec(struct rep *r, struct gd_proc *p, long pgid, int err)
{
	static char preload[8192], cfg[8192];
	const char *old = getenv("LD_PRELOAD");
	int what[2];

	setpgid(0, (pid_t)pgid);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	snprintf(preload, sizeof(preload), "%s%s%s", r->lib, old && *old ? ":" : "",
	         old ? old : "");
	setenv("LD_PRELOAD", preload, 1);
	{
		struct ip_rep_env e = { .dir = r->dir };

		snprintf(e.name, sizeof(e.name), "%s", p->name);
		if (ip_rep_env_encode(cfg, sizeof(cfg), &e, NULL, NULL) == 0)
			setenv(REP_ENV, cfg, 1);
	}
	unsetenv("ENCORE_RECORD");
	if (p->cwd[0] && chdir(p->cwd) != 0) {
		what[0] = 1;
		what[1] = errno;
	} else {
		execv(p->exe, p->argv && p->argc ? p->argv : (char *[]){ p->exe, NULL });
		what[0] = 2;
		what[1] = errno;
	}
	if (write(err, what, sizeof(what)) < 0)
		what[0] = 0;
	_exit(127);
}

int rep_start(struct rep *r, struct trace_diag *d)
{
	int rc;

	if ((rc = make_control(r, d)) != 0)
		return rc;
	/* Orphans of the replayed programs become our children: all are reaped here. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];
		pid_t pid;

		if (p->parent[0])
			continue;
		int err[2], what[2];
		ssize_t n;

		if (pipe2(err, O_CLOEXEC) != 0) {
			diag_set(d, TRACE_EIO, NULL, "pipe: %s", strerror(errno));
			return TRACE_EIO;
		}
		fflush(NULL);
		pid = fork();
		if (pid < 0) {
			diag_set(d, TRACE_EIO, NULL, "fork: %s", strerror(errno));
			close(err[0]);
			close(err[1]);
			return TRACE_EIO;
		}
		if (pid == 0) {
			close(err[0]);
			child_exec(r, p, r->pgid, err[1]);
		}
		close(err[1]);
		if (!r->pgid)
			r->pgid = pid;
		setpgid(pid, (pid_t)r->pgid);
		p->pid = pid;
		p->started = 1;
		r->started = 1;
		/* the exec happened (end of the pipe) or failed (its errno) */
		do
			n = read(err[0], what, sizeof(what));
		while (n < 0 && errno == EINTR);
		close(err[0]);
		if (n == (ssize_t)sizeof(what)) {
			errno = what[1];
			diag_set(d, TRACE_EIO, what[0] == 1 ? p->cwd : p->exe,
			         what[0] == 1 ? "process %s: cannot enter its recorded directory: %s" :
			                        "process %s: cannot run its recorded executable: %s",
			         p->name, strerror(what[1]));
			return TRACE_EIO;
		}
	}
	r->started = 1;
	clock_gettime(CLOCK_MONOTONIC, &r->last_change);
	return 0;
}

/* --- the loop ------------------------------------------------------------------------------ */

static struct gd_proc *by_name(struct rep *r, const char *name)
{
	for (size_t i = 0; i < r->nprocs; i++)
		if (strcmp(r->procs[i].name, name) == 0)
			return &r->procs[i];
	return NULL;
}

static struct gd_proc *by_pid(struct rep *r, long pid)
{
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].pid == pid)
			return &r->procs[i];
	return NULL;
}

static void send_full(int fd, uint32_t type, int64_t a, int64_t b, uint32_t flags,
                      const char *text)
{
	struct rep_msg m;
	size_t n = text ? strnlen(text, REP_TEXT_MAX - 1) : 0;

	memset(&m, 0, MSG_HDR + 1);
	m.type = type;
	m.a = a;
	m.b = b;
	m.flags = flags;
	m.len = (uint32_t)n;
	if (n)
		memcpy(m.text, text, n);
	m.text[n] = '\0';
	send(fd, &m, MSG_HDR + n + 1, MSG_NOSIGNAL);
}

static void send_msg(int fd, uint32_t type, int64_t a, int64_t b)
{
	send_full(fd, type, a, b, 0, NULL);
}

static void accept_peers(struct rep *r)
{
	for (;;) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		int fd = accept4(r->lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0)
			return;
		/* Only our own user's processes may join: the session is ours (0700), the socket
		 * 0600, and this closes the rest. */
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != getuid() ||
		    r->npending >= sizeof(r->pending) / sizeof(r->pending[0])) {
			close(fd);
			continue;
		}
		r->pending[r->npending++] = fd;
	}
}

static void note_change(struct rep *r)
{
	clock_gettime(CLOCK_MONOTONIC, &r->last_change);
}

/* --- the online protocol (Manabe & Imase 3.2, Appendix B; Miller & Choi 2.2) ---------------- */

static uint64_t cur_index(struct rep *r, struct gd_proc *p)
{
	if (p->halted || p->done || !r->board)
		return p->index;
	return r->board[p - r->procs].index;
}

/* The floor a process starts with: an active one 0 (it runs until its predicate holds), a
 * passive one what has been asked of it so far (0: it halts at once); with markers, a
 * process without a predicate never halts on its own. */
static uint64_t start_floor(struct rep *r, struct gd_proc *p)
{
	if (r->mode == GD_MARKERS)
		return p->sp_text[0] ? 0 : REP_NO_TARGET;
	return p->need;
}

/* A process not started that will not start while things stay as they are: its parent is
 * halted or ended before forking it, or will not start either (a grandchild). */
static int never_starts(struct rep *r, struct gd_proc *p, size_t depth)
{
	struct gd_proc *par;

	if (p->started || depth > r->nprocs)
		return 0;
	par = by_name(r, p->parent);
	if (!par)
		return 1;
	if (!par->started)
		return never_starts(r, par, depth + 1);
	return (par->halted || par->done || par->gone) &&
	       (cur_index(r, par) < p->fork_index || !p->fork_index);
}

/* Make q send its event j: a passive process is asked to run that far (a control message
 * "requesting message n", 3.2); one not forked yet needs its parent to reach the fork. */
static void pull(struct rep *r, struct gd_proc *q, uint64_t j)
{
	if (j > q->need)
		q->need = j;
	if (!q->started) {
		struct gd_proc *par = by_name(r, q->parent);

		if (par)
			pull(r, par, q->fork_index);
		return;
	}
	if (q->halted && q->index < q->need && q->conn >= 0) {
		q->halted = 0;
		send_msg(q->conn, REP_MSG_CONT, (int64_t)q->need, 0);
	}
}

/* The sender of receive event k of p, from the analyzer's matching. */
static struct gd_proc *sender_of(struct rep *r, struct gd_proc *p, uint64_t k, uint64_t *j)
{
	struct ana_event ev;

	if (p->ana < 0 || ana_event_get(r->ana, (size_t)p->ana, k, &ev) != 0 ||
	    ev.src_proc == ANA_NO_PROC)
		return NULL;
	*j = ev.src_index;
	return by_name(r, ana_proc_name(r->ana, ev.src_proc));
}

/* First event of p after `from` on channel ch of kind `kind`; 0 when none. */
static uint64_t find_event(struct rep *r, struct gd_proc *p, uint64_t from, uint64_t to,
                           uint32_t ch, uint32_t kind, struct ana_event *out)
{
	for (uint64_t i = from; i <= to && i <= p->nevents && p->ana >= 0; i++)
		if (ana_event_get(r->ana, (size_t)p->ana, i, out) == 0 && out->channel == ch &&
		    out->kind == kind)
			return i;
	return 0;
}

/* Connections are not messages, but an accept needs its client's connect and a connect its
 * server's listen: online, the peer is pulled that far like the sender of a message.  The
 * peer is found through the first bytes received on the channel (the analyzer's matching). */
static void pull_peer(struct rep *r, struct gd_proc *p, uint64_t k)
{
	struct ana_event ev, first, x;
	struct gd_proc *q;
	uint64_t i;

	if (p->ana < 0 || ana_event_get(r->ana, (size_t)p->ana, k, &ev) != 0 || !ev.channel)
		return;
	if (!(i = find_event(r, p, k + 1, p->nevents, ev.channel, TRACE_EV_RECV, &first)) ||
	    first.src_proc == ANA_NO_PROC)
		return;
	q = by_name(r, ana_proc_name(r->ana, first.src_proc));
	if (!q || q->ana < 0 || ana_event_get(r->ana, (size_t)q->ana, first.src_index, &x) != 0)
		return;
	if (ev.kind == TRACE_EV_ACCEPT) {
		i = find_event(r, q, 1, first.src_index, x.channel, TRACE_EV_CONNECT, &ev);
		if (i && cur_index(r, q) < i)
			pull(r, q, i);
	} else {
		i = find_event(r, q, 1, first.src_index, x.channel, TRACE_EV_ACCEPT, &ev);
		if (i > 1 && cur_index(r, q) < i - 1)
			pull(r, q, i - 1);
	}
}

static void on_request(struct rep *r, struct gd_proc *p, uint64_t k)
{
	struct ana_ref deps[16];
	struct ana_event ev;
	int64_t nd = 0;

	/* A connect needs its server to listen, and an accept the analyzer does not order after
	 * its connect its client to connect: found through the first bytes on the connection
	 * (pull_peer).  Everything else follows the analyzer's edges into the event: the send of a
	 * receive's last byte, the connect of an accept, the writers' releases before an end of
	 * file; none into a readiness result (an answer, nothing pulled). */
	if (p->ana >= 0 && ana_event_get(r->ana, (size_t)p->ana, k, &ev) == 0 &&
	    (ev.kind == TRACE_EV_CONNECT ||
	     (ev.kind == TRACE_EV_ACCEPT && ev.src_proc == ANA_NO_PROC))) {
		send_msg(p->conn, REP_MSG_GO, 0, 0);
		if (r->mode == GD_ONLINE)
			pull_peer(r, p, k);
		return;
	}
	if (p->ana >= 0 && (nd = ana_event_deps(r->ana, (size_t)p->ana, k, deps, 16)) < 0)
		nd = 0;
	if (nd > 16)
		nd = 16;
	if (r->mode == GD_MARKERS) {
		/* Halt markers: q halted before the event p's needs; the marker q sent when it
		 * halted is what p finds on the channel first: p halts. */
		p->req_q = NULL;
		for (int64_t i = 0; i < nd; i++) {
			struct gd_proc *q = by_name(r, ana_proc_name(r->ana, deps[i].proc));

			if (!q || q == p || cur_index(r, q) >= deps[i].index)
				continue;
			if (q->halted || q->done) {
				send_msg(p->conn, REP_MSG_STOP, 0, 0);
				return;
			}
			if (!p->req_q) {
				p->req_k = k;
				p->req_q = q;
				p->req_j = deps[i].index;
			}
		}
		send_msg(p->conn, REP_MSG_GO, 0, 0);
		return;
	}
	send_msg(p->conn, REP_MSG_GO, 0, 0);
	for (int64_t i = 0; i < nd; i++) {
		struct gd_proc *q = by_name(r, ana_proc_name(r->ana, deps[i].proc));

		if (q && q != p && cur_index(r, q) < deps[i].index)
			pull(r, q, deps[i].index);
	}
}

/* Markers: processes blocked reading what a now halted process will never send halt too. */
static void release_markers(struct rep *r, struct gd_proc *q)
{
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];

		if (p->req_q != q || p->halted || p->done || p->conn < 0)
			continue;
		if (cur_index(r, p) >= p->req_k || cur_index(r, q) >= p->req_j)
			continue; /* that receive is done, or its send was */
		p->req_q = NULL;
		send_msg(p->conn, REP_MSG_STOP, 0, 0);
	}
}

static void on_halted(struct rep *r, struct gd_proc *p)
{
	if (r->mode == GD_MARKERS) {
		if (p->reason == REP_HALT_SP && !r->fired)
			r->fired = p;
		release_markers(r, p);
		return;
	}
	/* Online CP: a request may have come while it was running to its own halt. */
	if (p->index < p->need && p->conn >= 0) {
		p->halted = 0;
		send_msg(p->conn, REP_MSG_CONT, (int64_t)p->need, 0);
	}
}

/* --- readiness waits ---------------------------------------------------------------------- */

/* An LC gives a recorded readiness result only once the data behind it has arrived (it waits,
 * the board says wait_kind READY).  The analyzer's cuts do not order a readiness result after
 * the send behind it, so at a halt that data may never come: when some process is halted and
 * every other one is halted, ended, waiting for readiness itself, or waiting for bytes from
 * one of those, no running process is left to send it, and each waiting LC is released to
 * give its recorded result at once.  (Online, where the analyzer orders a readiness result
 * after a send, on_request pulls that sender when the LC asks before waiting.)
 * Without a halt nothing is released: a wait that lasts is a stall, reported as such. */
static int ready_waiting(struct rep *r, struct gd_proc *p)
{
	struct rep_slot *s = &r->board[p - r->procs];

	return p->started && !p->halted && !p->done && !p->gone && p->conn >= 0 &&
	       s->state == REP_SLOT_WAITING && s->wait_kind == TRACE_EV_READY;
}

/* p cannot move by itself: halted, ended, never to be forked, waiting for readiness, or
 * waiting for bytes whose sender has not sent them and cannot move either. */
static int blocked(struct rep *r, struct gd_proc *p, size_t depth)
{
	struct rep_slot *s = &r->board[p - r->procs];

	if (p->execing || depth > r->nprocs)
		return 0;
	if (p->halted || p->done || p->gone)
		return 1;
	if (!p->started)
		return never_starts(r, p, 0);
	if (ready_waiting(r, p))
		return 1;
	if (p->conn >= 0 && s->state == REP_SLOT_WAITING && s->wait_kind == TRACE_EV_RECV) {
		uint64_t j = 0;
		struct gd_proc *q = sender_of(r, p, s->index + 1, &j);

		return q && q != p && cur_index(r, q) < j && blocked(r, q, depth + 1);
	}
	return 0;
}

static void release_ready(struct rep *r)
{
	size_t waiting = 0;
	int any_halted = 0;

	if (!r->board || r->npending)
		return;
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];

		if (!blocked(r, p, 0))
			return;
		any_halted |= p->halted;
		waiting += (size_t)ready_waiting(r, p);
	}
	if (!waiting || !any_halted)
		return;
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];
		uint64_t idx = r->board[i].index;

		if (!ready_waiting(r, p) || p->released == idx + 1)
			continue;
		p->released = idx + 1;
		send_msg(p->conn, REP_MSG_RELEASE, (int64_t)idx, 0);
	}
}

/* --- accept returns the recorded peer ------------------------------------------------------ */

/* The client of accept event k of the server: the process whose connect it took (the
 * analyzer's connect -> accept edge), else the sender of the first bytes the server received
 * on the accepted channel (from the analyzer's matching); NULL when unknown. */
static struct gd_proc *expected_client(struct rep *r, struct gd_proc *srv, uint64_t k)
{
	struct ana_event acc, ev;

	if (srv->ana < 0 || ana_event_get(r->ana, (size_t)srv->ana, k, &acc) != 0 || !acc.channel)
		return NULL;
	if (acc.src_proc != ANA_NO_PROC) /* the analyzer's connect -> accept edge */
		return by_name(r, ana_proc_name(r->ana, acc.src_proc));
	for (uint64_t i = k + 1; i <= srv->nevents; i++) {
		if (ana_event_get(r->ana, (size_t)srv->ana, i, &ev) != 0)
			break;
		if (ev.channel != acc.channel)
			continue;
		if (ev.kind == TRACE_EV_CLOSE)
			break;
		if (ev.kind == TRACE_EV_RECV && ev.src_proc != ANA_NO_PROC)
			return by_name(r, ana_proc_name(r->ana, ev.src_proc));
	}
	return NULL;
}

/* 1: the recorded peer; 0: another process (keep it for later); -1: cannot tell yet. */
static int accept_answer(struct rep *r, struct gd_proc *srv, uint64_t k, long pid, int port)
{
	struct gd_proc *c = expected_client(r, srv, k);

	if (!c)
		return 1;
	if (pid)
		return c->pid == pid;
	if (port) {
		for (size_t i = 0; i < c->nports; i++)
			if (c->ports[i] == port)
				return 1;
		for (size_t p = 0; p < r->nprocs; p++)
			for (size_t i = 0; i < r->procs[p].nports; i++)
				if (r->procs[p].ports[i] == port)
					return 0;
		return -1;
	}
	return 1;
}

static void on_accepted(struct rep *r, struct gd_proc *srv, uint64_t k, long pid, int port)
{
	int a = accept_answer(r, srv, k, pid, port);

	if (a < 0 && r->naccepts < sizeof(r->accepts) / sizeof(r->accepts[0])) {
		r->accepts[r->naccepts++] = (struct gd_accept){ srv, k, port };
		return;
	}
	send_msg(srv->conn, a == 0 ? REP_MSG_STOP : REP_MSG_GO, 0, 0);
}

static void on_connected(struct rep *r, struct gd_proc *p, int port)
{
	if (port && p->nports < sizeof(p->ports) / sizeof(p->ports[0]))
		p->ports[p->nports++] = port;
	for (size_t i = 0; i < r->naccepts;) {
		struct gd_accept *a = &r->accepts[i];
		int ans = accept_answer(r, a->server, a->k, 0, a->port);

		if (ans < 0) {
			i++;
			continue;
		}
		if (a->server->conn >= 0)
			send_msg(a->server->conn, ans == 0 ? REP_MSG_STOP : REP_MSG_GO, 0, 0);
		r->accepts[i] = r->accepts[--r->naccepts];
	}
}

/* One message from a connection; returns 0, or -1 when the connection ended. */
static int handle(struct rep *r, int fd, struct gd_proc **pp, int *outcome)
{
	struct rep_msg m;
	struct gd_proc *p = *pp;
	ssize_t n = recv(fd, &m, sizeof(m), MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n < (ssize_t)MSG_HDR) {
		if (p && p->conn == fd) {
			p->gone = !p->execing;
			p->conn = -1;
		}
		close(fd);
		note_change(r);
		return -1;
	}
	m.text[n - (ssize_t)MSG_HDR > 0 ? (size_t)(n - (ssize_t)MSG_HDR) - 1 : 0] = '\0';
	m.text[REP_TEXT_MAX - 1] = '\0';
	note_change(r);
	if (p && m.type != REP_MSG_EXEC && m.type != REP_MSG_HELLO && p->conn == fd)
		p->execing = 0; /* the exec failed: the same image goes on */
	switch (m.type) {
	case REP_MSG_HELLO:
		if (m.flags & 1) {
			/* a child of m.text started inside libc: the K-th is PARENT.sK */
			struct gd_proc *par = by_name(r, m.text);
			char name[TRACE_NAME_MAX + 16];
			uint32_t k = par ? ++par->spawns : 1;

			snprintf(name, sizeof(name), "%.100s.s%u", m.text, k);
			send_full(fd, REP_MSG_NAME, 0, 0, 0, name);
			snprintf(m.text, sizeof(m.text), "%s", name);
		}
		p = by_name(r, m.text);
		if (p && p->conn >= 0 && p->pid == (long)m.a &&
		    r->npending < sizeof(r->pending) / sizeof(r->pending[0])) {
			/* the same process after exec: its new image's LC replaces the old one, whose
			 * connection is closed when its end arrives */
			r->pending[r->npending++] = p->conn;
			p->conn = -1;
		}
		if (!p || p->conn >= 0) {
			/* A process the recording does not have: it will report its divergence. */
			send_msg(fd, REP_MSG_CONFIG, REP_SLOTS_MAX - 1, (int64_t)REP_NO_TARGET);
			return 0;
		}
		*pp = p;
		p->conn = fd;
		p->pid = (long)m.a;
		if (r->board)
			r->board[p - r->procs].pid = (int32_t)m.a; /* before CONFIG: for translation */
		p->started = 1;
		p->execing = 0;
		p->gone = 0;
		{
			char text[2100];

			snprintf(text, sizeof(text), "%s%s%s", p->sp_text,
			         p->peers[0] || p->lp_named ? "\x1e" : "", p->peers);
			if (r->mode == GD_OFFLINE)
				send_full(fd, REP_MSG_CONFIG, p - r->procs, (int64_t)p->target, 0, text);
		}
		if (r->mode != GD_OFFLINE)
		{
			char text[2100];

			snprintf(text, sizeof(text), "%s%s%s", p->sp_text,
			         p->peers[0] || p->lp_named ? "\x1e" : "", p->peers);
			send_full(fd, REP_MSG_CONFIG, p - r->procs, (int64_t)start_floor(r, p),
			          REP_CF_ONLINE, text);
		}
		break;
	case REP_MSG_REQ:
		if (p)
			on_request(r, p, (uint64_t)m.a);
		break;
	case REP_MSG_EXEC:
		if (p)
			p->execing = 1;
		break;
	case REP_MSG_CONNECTED:
		if (p)
			on_connected(r, p, (int)m.a);
		break;
	case REP_MSG_ACCEPTED:
		if (p)
			on_accepted(r, p, (uint64_t)m.a, (long)m.b, (int)m.flags);
		break;
	case REP_MSG_HALTED:
		if (!p)
			break;
		p->halted = 1;
		p->index = (uint64_t)m.a;
		p->reason = (uint32_t)m.b;
		free(p->backtrace);
		free(p->terms);
		{
			char *sep = strchr(m.text, '\x1e');

			p->terms = strdup(sep ? sep + 1 : "");
			if (sep)
				*sep = '\0';
		}
		p->backtrace = strdup(m.text);
		if (r->mode != GD_OFFLINE)
			on_halted(r, p);
		break;
	case REP_MSG_DIVERGED:
		snprintf(r->message, sizeof(r->message), "divergence: %s", m.text);
		*outcome = REP_DIVERGED;
		break;
	case REP_MSG_DONE:
		if (!p)
			break;
		p->done = 1;
		p->index = (uint64_t)m.a;
		p->sp_at_end = (m.flags & 1) != 0;
		p->free_running = (m.flags & 2) != 0;
		if (r->mode == GD_MARKERS && p->sp_at_end && !r->fired)
			r->fired = p;
		if (r->mode == GD_MARKERS)
			release_markers(r, p);
		break;
	}
	return 0;
}

static void reap(struct rep *r)
{
	int st;
	pid_t pid;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		struct gd_proc *p = by_pid(r, pid);

		if (p) {
			p->reaped = 1;
			p->wait_status = st;
		}
		note_change(r);
	}
}

static int children_left(void)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	return waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == 0;
}

static uint64_t board_sum(struct rep *r)
{
	uint64_t s = 0;

	for (size_t i = 0; i < r->nprocs && r->board; i++)
		s += r->board[i].index + r->board[i].progress;
	return s;
}

static const char *kind_name(uint32_t k)
{
	return trace_kind_name(k);
}

static void describe_event(struct rep *r, struct gd_proc *p, uint64_t k, char *buf, size_t cap)
{
	struct ana_event ev;
	const char *fn;

	if (k == 0 || k > p->nevents || p->ana < 0 || ana_event_get(r->ana, (size_t)p->ana, k, &ev)) {
		snprintf(buf, cap, "-");
		return;
	}
	fn = ana_site_function(r->ana, (size_t)p->ana, ev.site);
	if (ev.kind == TRACE_EV_SEND || ev.kind == TRACE_EV_RECV)
		snprintf(buf, cap, "#%llu %s %lld bytes, channel %u%s%s",
		         (unsigned long long)k, kind_name(ev.kind), (long long)ev.result, ev.channel,
		         fn[0] ? " in " : "", fn);
	else if (ev.kind == TRACE_EV_MARK)
		snprintf(buf, cap, "#%llu mark = %lld%s%s", (unsigned long long)k,
		         (long long)ev.result, fn[0] ? " in " : "", fn);
	else
		snprintf(buf, cap, "#%llu %s%s%s", (unsigned long long)k, kind_name(ev.kind),
		         fn[0] ? " in " : "", fn);
}

/* Who waits for what, from the board and the analyzer (the sender of an awaited receive). */
static void stall_report(struct rep *r)
{
	size_t pos;

	pos = (size_t)snprintf(r->message, sizeof(r->message),
	                       "no progress for %u ms; the replay is stuck:\n", r->opt.stall_ms);
	for (size_t i = 0; i < r->nprocs && pos < sizeof(r->message) - 256; i++) {
		struct gd_proc *p = &r->procs[i];
		struct rep_slot *s = r->board ? &r->board[i] : NULL;
		char next[160], from[200] = "";
		uint64_t idx = s ? s->index : p->index;

		if (!p->started) {
			pos += (size_t)snprintf(r->message + pos, sizeof(r->message) - pos,
			                        "  %s: not started (its parent has not forked it)\n",
			                        p->name);
			continue;
		}
		if (p->done || p->gone) {
			pos += (size_t)snprintf(r->message + pos, sizeof(r->message) - pos,
			                        "  %s: ended at state %llu\n", p->name,
			                        (unsigned long long)idx);
			continue;
		}
		if (s && s->state == REP_SLOT_WAITING && s->wait_kind == TRACE_EV_SIGNAL) {
			pos += (size_t)snprintf(r->message + pos, sizeof(r->message) - pos,
			                        "  %s (pid %ld) at state %llu of %llu: waiting for a signal "
			                        "(sigwait, sigsuspend or pause)\n", p->name, p->pid,
			                        (unsigned long long)idx, (unsigned long long)p->nevents);
			continue;
		}
		if (s && s->state == REP_SLOT_WAITING && s->wait_kind == TRACE_EV_EXIT) {
			/* in wait/waitpid, outside any event: for which child */
			struct gd_proc *c = NULL;

			for (size_t k = 0; k < r->nprocs && (int64_t)s->wait_len > 0; k++)
				if (r->procs[k].rec_pid == (long)(int64_t)s->wait_len)
					c = &r->procs[k];
			if (c)
				snprintf(from, sizeof(from), "%s (at state %llu%s)", c->name,
				         (unsigned long long)cur_index(r, c), c->halted ? ", halted" : "");
			pos += (size_t)snprintf(r->message + pos, sizeof(r->message) - pos,
			                        "  %s (pid %ld) at state %llu of %llu: waiting in wait() for "
			                        "%s to end\n", p->name, p->pid, (unsigned long long)idx,
			                        (unsigned long long)p->nevents, c ? from : "a child");
			continue;
		}
		describe_event(r, p, idx + 1, next, sizeof(next));
		if (s && s->state == REP_SLOT_WAITING && s->wait_kind == TRACE_EV_RECV && p->ana >= 0) {
			struct ana_event ev;

			if (ana_event_get(r->ana, (size_t)p->ana, idx + 1, &ev) == 0 &&
			    ev.src_proc != ANA_NO_PROC) {
				const char *src = ana_proc_name(r->ana, ev.src_proc);
				struct gd_proc *q = by_name(r, src);
				uint64_t qi = q && q->started ? r->board[q - r->procs].index : 0;

				snprintf(from, sizeof(from), ", from %s (its send, event #%llu; it is at "
				         "state %llu%s)", src, (unsigned long long)ev.src_index,
				         (unsigned long long)qi, q && q->halted ? ", halted" : "");
			}
		}
		if (s && s->state == REP_SLOT_WAITING && s->wait_kind == TRACE_EV_ACCEPT) {
			struct gd_proc *c = expected_client(r, p, idx + 1);
			struct ana_event ev;

			if (c && p->ana >= 0 && ana_event_get(r->ana, (size_t)p->ana, idx + 1, &ev) == 0 &&
			    ev.src_proc != ANA_NO_PROC)
				snprintf(from, sizeof(from), ", for the connect of %s (its event #%llu; it is "
				         "at state %llu%s)", c->name, (unsigned long long)ev.src_index,
				         (unsigned long long)cur_index(r, c), c->halted ? ", halted" : "");
			else if (c)
				snprintf(from, sizeof(from), ", for a connection from %s", c->name);
		}
		if (s && s->state == REP_SLOT_WAITING && s->wait_kind == TRACE_EV_READY) {
			/* the data behind a readiness result: the next receive on that channel */
			struct ana_event ev;
			uint64_t k = find_event(r, p, idx + 2, p->nevents, s->wait_chan, TRACE_EV_RECV, &ev);
			const char *src = k && ev.src_proc != ANA_NO_PROC ? ana_proc_name(r->ana, ev.src_proc) : NULL;
			struct gd_proc *q = src ? by_name(r, src) : NULL;

			if (q)
				snprintf(from, sizeof(from), ", for the data behind it on fd %d (channel %u), "
				         "from %s (its send, event #%llu; it is at state %llu%s)", s->wait_fd,
				         s->wait_chan, src, (unsigned long long)ev.src_index,
				         (unsigned long long)(q->started ? r->board[q - r->procs].index : 0),
				         q->halted ? ", halted" : "");
			else
				snprintf(from, sizeof(from), ", for the data behind it on fd %d (channel %u)",
				         s->wait_fd, s->wait_chan);
		}
		pos += (size_t)snprintf(r->message + pos, sizeof(r->message) - pos,
		                        "  %s (pid %ld) at state %llu of %llu: %s %s%s\n", p->name, p->pid,
		                        (unsigned long long)idx, (unsigned long long)p->nevents,
		                        s && s->state == REP_SLOT_WAITING ? "waiting to complete" :
		                        s && s->state == REP_SLOT_HALTED ? "halted before" :
		                                                           "running, next",
		                        next, from);
	}
}

/* Every process halted at its target, ended, or (target 0) never forked by a parent that is
 * halted or ended. */
static int all_halted_online(struct rep *r)
{
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];

		if (p->execing)
			return 0;
		if (p->halted || p->done || p->gone)
			continue;
		if (never_starts(r, p, 0))
			continue;
		return 0;
	}
	return 1;
}

/* Online halt reached: did every active process halt because its predicate holds? */
static int online_outcome(struct rep *r)
{
	if (r->mode == GD_MARKERS) {
		if (r->fired)
			return REP_HALTED;
		snprintf(r->message, sizeof(r->message),
		         "the predicate never held: every process halted or ended, no disjunct fired");
		return REP_FAILED;
	}
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];

		if (!p->sp_text[0])
			continue;
		if ((p->halted && p->reason == REP_HALT_SP) || (p->done && p->sp_at_end))
			continue;
		snprintf(r->message, sizeof(r->message),
		         "the predicate never holds: process %s %s before its simple predicate held "
		         "(%s)", p->name, p->done || p->gone ? "ended" : "stopped", p->sp_text);
		return REP_FAILED;
	}
	return REP_HALTED;
}

static int all_halted(struct rep *r)
{
	int any = 0;

	if (r->mode != GD_OFFLINE)
		return all_halted_online(r);

	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];

		if (p->target == REP_NO_TARGET || p->execing)
			return 0;
		any = 1;
		if (p->halted || p->done || p->gone)
			continue;
		if (!p->started && p->target == 0) {
			/* Not forked yet: it never will be if its parent halts before the fork.  If the
			 * fork is inside the cut, wait for the child to reach its state 0. */
			struct gd_proc *par = by_name(r, p->parent);

			/* (fork_index 0: started inside libc, by no event of the parent: it would
			 * come after the parent's state 0 anyway) */
			if (!par || par->target < p->fork_index ||
			    (!p->fork_index && (par->halted || par->done || par->gone)))
				continue;
		}
		return 0;
	}
	return any;
}

static int finish_check(struct rep *r)
{
	size_t pos = 0;
	int bad = 0;

	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];
		uint64_t idx = r->board && p->started ? r->board[i].index : p->index;
		struct ana_event ev;
		int signalled = 0;
		char how[160] = "";

		if (p->ana >= 0 && p->nevents &&
		    ana_event_get(r->ana, (size_t)p->ana, p->nevents, &ev) == 0 &&
		    ev.kind == TRACE_EV_SIGNAL)
			signalled = (int)ev.result > 0 ? (int)ev.result : -1;
		if (p->done && idx == p->nevents)
			continue;
		/* recorded death by a signal: now by that one (any when the record does not say) */
		if (p->started && signalled && idx + 1 >= p->nevents &&
		    (signalled < 0 || !p->reaped ||
		     (WIFSIGNALED(p->wait_status) && WTERMSIG(p->wait_status) == signalled)))
			continue;
		if (p->started && !p->done && p->reaped && idx == p->nevents)
			continue;
		/* killed by SIGKILL when recorded, and now: where the kill lands is not ordered by
		 * any event (the killer's kill is not one) */
		if (p->killed_rec && idx <= p->nevents && !p->done &&
		    ((p->reaped && WIFSIGNALED(p->wait_status) && WTERMSIG(p->wait_status) == SIGKILL) ||
		     (!p->reaped && p->gone)))
			continue;
		bad = 1;
		/* how it ended: the status reaped (a crash names its signal) */
		if (p->started && p->reaped && WIFSIGNALED(p->wait_status))
			snprintf(how, sizeof(how), ", killed by signal %d (%s)%s",
			         WTERMSIG(p->wait_status), strsignal(WTERMSIG(p->wait_status)),
			         WCOREDUMP(p->wait_status) ? ", core dumped" : "");
		else if (p->started && p->reaped && WIFEXITED(p->wait_status))
			snprintf(how, sizeof(how), ", exit status %d", WEXITSTATUS(p->wait_status));
		if (p->started && signalled > 0)
			snprintf(how + strlen(how), sizeof(how) - strlen(how),
			         "; the recorded run died of signal %d (%s)", signalled,
			         strsignal(signalled));
		if (pos < sizeof(r->message) - 400)
			pos += (size_t)snprintf(r->message + pos, sizeof(r->message) - pos,
			                        "%s%s %s at state %llu of %llu%s\n",
			                        pos ? "" : "the replay ended early:\n  ", p->name,
			                        p->started ? "ended" : "never started; its parent stopped",
			                        (unsigned long long)idx, (unsigned long long)p->nevents,
			                        how);
	}
	return bad ? REP_FAILED : REP_END;
}

/* --- linked predicates online (Miller & Choi 3.4, 3.6) ------------------------------------- */

/* The first state of q that is after the trigger (t, j) (its event happened after event j
 * of t, or q == t and it comes later), as the analyzer's linked predicates take it: a state
 * 0 trigger is before everything.  q->nevents + 1 when none. */
static uint64_t after_trigger(struct rep *r, struct gd_proc *t, uint64_t j, struct gd_proc *q)
{
	uint64_t lo = 1, hi = q->nevents + 1;

	if (j == 0)
		return q == t ? 1 : 0;
	if (q == t)
		return j + 1;
	if (t->ana < 0 || q->ana < 0)
		return 0;
	while (lo < hi) { /* happened-before is monotone along q's events */
		uint64_t mid = lo + (hi - lo) / 2;

		if (ana_hb(r->ana, (size_t)t->ana, j, (size_t)q->ana, mid) == 1)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Every process halted where step lp_stage holds (its Inf from the previous step's cut, the
 * conjunctive protocol): the processes of that step are the triggers.  Miller & Choi 3.6
 * pass the rest of the chain on in a predicate marker; here the GD gives each process of
 * the next step its simple predicate and a floor (its first state after every trigger, or
 * where it is), the others become passive where they are, and the protocol goes on from this
 * cut.  Returns -1 (go on), or REP_FAILED when the next step can never hold after these. */
static int lp_advance(struct rep *r)
{
	size_t d = ++r->lp_stage;
	uint64_t *floor = calloc(r->nprocs ? r->nprocs : 1, sizeof(*floor));

	if (!floor) {
		snprintf(r->message, sizeof(r->message), "out of memory");
		return REP_FAILED;
	}
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *q = &r->procs[i];
		uint64_t lb = 0;

		if (!q->lp_sp[d])
			continue;
		for (size_t k = 0; k < r->nprocs; k++) {
			struct gd_proc *t = &r->procs[k];
			uint64_t f;

			if (!t->lp_sp[d - 1])
				continue;
			f = after_trigger(r, t, cur_index(r, t), q);
			if (f > lb)
				lb = f;
		}
		if (lb > q->nevents) {
			snprintf(r->message, sizeof(r->message),
			         "the predicate never holds: step %zu of the linked predicate held, but "
			         "process %s has no state after it where step %zu (%s) could hold", d,
			         q->name, d + 1, q->lp_sp[d]);
			free(floor);
			return REP_FAILED;
		}
		floor[i] = q->started && cur_index(r, q) > lb ? cur_index(r, q) : lb;
	}
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];
		const char *sp = p->lp_sp[d] ? p->lp_sp[d] : "";
		int had = p->sp_text[0] != '\0';

		snprintf(p->sp_text, sizeof(p->sp_text), "%s", sp);
		p->sp_at_end = 0;
		if (sp[0]) {
			if (!p->started || p->done || p->gone) {
				pull(r, p, floor[i]); /* its parent forks it; CONFIG gives it the step */
				continue;
			}
			p->need = floor[i];
			if (p->halted && p->conn >= 0) {
				p->halted = 0;
				send_full(p->conn, REP_MSG_STAGE, (int64_t)floor[i], 0, 0, sp);
			}
		} else if (had && p->halted && p->conn >= 0) {
			/* passive from now on: it halts again at once, where it is */
			p->halted = 0;
			send_full(p->conn, REP_MSG_STAGE, (int64_t)p->index, 0, 0, "");
		}
	}
	free(floor);
	note_change(r);
	return -1;
}

int rep_run(struct rep *r)
{
	if (!r->started)
		return TRACE_EINVAL;
	r->message[0] = '\0';
	for (;;) {
		struct pollfd pf[1 + 256 + 1024];
		struct gd_proc *owner[1 + 256 + 1024];
		size_t n = 0, i;
		int outcome = -1, live = 0;
		struct timespec now;
		uint64_t sum;

		if (r->opt.interrupted && *r->opt.interrupted)
			return REP_INTERRUPTED;
		pf[n].fd = r->lfd;
		pf[n].events = POLLIN;
		owner[n++] = NULL;
		for (i = 0; i < r->npending; i++) {
			pf[n].fd = r->pending[i];
			pf[n].events = POLLIN;
			owner[n++] = NULL;
		}
		for (i = 0; i < r->nprocs && n < sizeof(pf) / sizeof(pf[0]); i++)
			if (r->procs[i].conn >= 0) {
				pf[n].fd = r->procs[i].conn;
				pf[n].events = POLLIN;
				owner[n++] = &r->procs[i];
				live++;
			}
		if (poll(pf, n, 50) < 0 && errno != EINTR)
			return TRACE_EIO;
		if (pf[0].revents)
			accept_peers(r);
		/* pending connections first: their HELLO binds them to a process */
		for (i = 1; i < n; i++) {
			struct gd_proc *p = owner[i];

			if (!pf[i].revents)
				continue;
			if (handle(r, pf[i].fd, &p, &outcome) < 0 || (p && !owner[i])) {
				/* drop from pending (closed, or now owned by a process) */
				for (size_t j = 0; j < r->npending; j++)
					if (r->pending[j] == pf[i].fd) {
						r->pending[j] = r->pending[--r->npending];
						break;
					}
			}
		}
		reap(r);
		if (outcome >= 0)
			return outcome;
		if (all_halted(r)) {
			int o = r->mode == GD_OFFLINE ? REP_HALTED : online_outcome(r);

			if (o != REP_HALTED || !r->lp_n || r->lp_stage + 1 >= r->lp_n)
				return o;
			if ((o = lp_advance(r)) >= 0)
				return o;
			continue;
		}
		release_ready(r);
		/* Processes killed when recorded, past the end of their trace, are killed now
		 * once every other process has ended (if no peer of theirs did it already). */
		{
			int others = 0, free = 0;

			for (i = 0; i < r->nprocs; i++) {
				struct gd_proc *p = &r->procs[i];

				if (p->free_running && !p->reaped)
					free++;
				else if (p->started && !p->done && !p->gone && !p->reaped)
					others++;
			}
			if (free && !others && !r->npending)
				for (i = 0; i < r->nprocs; i++)
					if (r->procs[i].free_running && !r->procs[i].reaped &&
					    r->procs[i].pid > 0)
						kill((pid_t)r->procs[i].pid, SIGKILL);
		}
		if (!live && !r->npending && !children_left()) {
			if (r->mode != GD_OFFLINE && finish_check(r) == REP_END)
				return online_outcome(r);
			return finish_check(r);
		}
		sum = board_sum(r);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (sum != r->last_progress) {
			r->last_progress = sum;
			r->last_change = now;
		} else if ((uint64_t)(now.tv_sec - r->last_change.tv_sec) * 1000 +
		               (uint64_t)((now.tv_nsec - r->last_change.tv_nsec) / 1000000) >=
		           r->opt.stall_ms) {
			stall_report(r);
			return REP_STALLED;
		}
	}
}

int rep_proc_info(struct rep *r, size_t i, struct rep_proc_info *info)
{
	struct gd_proc *p;

	if (i >= r->nprocs)
		return TRACE_EINVAL;
	p = &r->procs[i];
	memset(info, 0, sizeof(*info));
	info->name = p->name;
	info->pid = p->pid;
	info->index = r->board && p->started ? r->board[i].index : p->index;
	if (p->halted)
		info->index = p->index;
	info->nevents = p->nevents;
	info->wait_status = p->reaped ? p->wait_status : -1;
	info->state = !p->started ? REP_P_NOT_STARTED :
	              (p->done || p->gone || p->reaped) ? REP_P_EXITED :
	              p->halted ? REP_P_HALTED : REP_P_RUNNING;
	describe_event(r, p, info->index, info->last, sizeof(info->last));
	describe_event(r, p, info->index + 1, info->next, sizeof(info->next));
	info->backtrace = p->halted ? p->backtrace : NULL;
	info->terms = p->halted && p->terms && p->terms[0] ? p->terms : NULL;
	return 0;
}

/* The channels of process p whose other end is held by process `peer`, as "PEER:c1,c2,...",
 * appended to out.  From the analyzer's messages: a receive's sender holds the other end of
 * its channel, and so does the receiver of a send.  Returns 0, or -1 when p sends on a
 * channel whose other end no receive tells (then the live count could differ). */
static int peer_channels(struct rep *r, struct gd_proc *p, const char *peer, char *out,
                         size_t cap)
{
	size_t pos = strlen(out), n = ana_nprocs(r->ana);
	uint32_t chans[256];
	size_t nch = 0;
	int q = ana_proc_find(r->ana, peer);

	if (p->ana < 0 || q < 0)
		return 0;
	/* receives of p from q; and receives of q whose bytes p sent */
	for (size_t pi = 0; pi < n; pi++) {
		size_t ne = ana_nevents(r->ana, pi);

		if ((int)pi != p->ana && (int)pi != q)
			continue;
		for (uint64_t k = 1; k <= ne; k++) {
			struct ana_event ev, sv;
			uint32_t ch = 0;

			if (ana_event_get(r->ana, pi, k, &ev) != 0 || ev.kind != TRACE_EV_RECV ||
			    ev.src_proc == ANA_NO_PROC)
				continue;
			if ((int)pi == p->ana && (int)ev.src_proc == q)
				ch = ev.channel;
			else if ((int)pi == q && (int)ev.src_proc == p->ana &&
			         ana_event_get(r->ana, (size_t)p->ana, ev.src_index, &sv) == 0)
				ch = sv.channel;
			if (!ch)
				continue;
			size_t i;

			for (i = 0; i < nch && chans[i] != ch; i++)
				;
			if (i == nch && nch < sizeof(chans) / sizeof(chans[0]))
				chans[nch++] = ch;
		}
	}
	pos += (size_t)snprintf(out + pos, cap > pos ? cap - pos : 0, "%s%s:", pos ? ";" : "", peer);
	for (size_t i = 0; i < nch && pos < cap; i++)
		pos += (size_t)snprintf(out + pos, cap - pos, "%s%u", i ? "," : "", chans[i]);
	return pos < cap ? 0 : -1;
}

/* "PEER:" is already an entry of a peers list. */
static int has_peer(const char *list, const char *peer)
{
	size_t n = strlen(peer);

	for (const char *p = list; *p;) {
		if (strncmp(p, peer, n) == 0 && p[n] == ':')
			return 1;
		p = strchr(p, ';');
		if (!p)
			break;
		p++;
	}
	return 0;
}

int rep_set_online(struct rep *r, const char *text, struct trace_diag *d)
{
	struct trace_pred *pred = NULL;
	enum trace_pred_shape shape;
	size_t ncp = 0, ndp;
	int rc;

	if ((rc = trace_pred_parse(text, &pred, d)) != 0)
		return rc;
	shape = trace_pred_shape(pred);
	if (shape == TRACE_PRED_GENERAL) {
		diag_set(d, TRACE_EINVAL, NULL, "the online protocol halts at conjunctive predicates "
		         "(Manabe & Imase), disjunctive ones (halt markers, Miller & Choi 2.2) and "
		         "linked chains of conjunctive steps (Miller & Choi 3.6); this one mixes && "
		         "and || (a general predicate: finding its first state is NP-hard, Miller & "
		         "Choi 6): drop --online (and var. terms) and the analyzer searches for it");
		rc = TRACE_EINVAL;
		goto out;
	}
	ndp = shape == TRACE_PRED_LINKED ? trace_pred_ndp(pred) : 1;
	for (size_t s2 = 0; shape == TRACE_PRED_LINKED && s2 < ndp; s2++)
		if (trace_pred_ncp(pred, s2) != 1) {
			diag_set(d, TRACE_EINVAL, NULL, "online, each step of a linked predicate must be "
			         "conjunctive (one simple predicate, or several joined by &&); step %zu is "
			         "a disjunction (||): drop --online (and var. terms) and the analyzer "
			         "computes it", s2 + 1);
			rc = TRACE_EINVAL;
			goto out;
		}
	if (shape == TRACE_PRED_LINKED)
		for (size_t i = 0; i < r->nprocs; i++)
			if (!(r->procs[i].lp_sp = calloc(ndp, sizeof(char *)))) {
				rc = TRACE_ENOMEM;
				goto out;
			}
	r->lp_n = shape == TRACE_PRED_LINKED ? ndp : 0;
	for (size_t step = 0; step < ndp; step++) {
		ncp = trace_pred_ncp(pred, step);
		for (size_t c = 0; c < ncp; c++) {
			for (size_t k = 0; k < trace_pred_nsp(pred, step, c); k++) {
				const struct trace_pred_sp *sp = trace_pred_get_sp(pred, step, c, k);
				const struct trace_pred_term *const *terms;
				struct gd_proc *p = by_name(r, trace_pred_sp_proc(sp));
				size_t nt = trace_pred_sp_terms(sp, &terms);

				if (!p) {
					diag_set(d, TRACE_ENOENT, NULL, "the predicate names process '%s', which is "
					         "not in this session", trace_pred_sp_proc(sp));
					rc = TRACE_ENOENT;
					goto out;
				}
				for (size_t t = 0; t < nt; t++)
					if ((terms[t]->kind == TRACE_TERM_SENT_TO ||
					     terms[t]->kind == TRACE_TERM_RECEIVED_FROM) &&
					    !has_peer(p->peers, terms[t]->arg) &&
					    peer_channels(r, p, terms[t]->arg, p->peers, sizeof(p->peers)) != 0) {
						diag_set(d, TRACE_EINVAL, NULL, "process %s: too many channels to %s "
						         "for a live sent(P)/received(P)", p->name, terms[t]->arg);
						rc = TRACE_EINVAL;
						goto out;
					}
				if (r->lp_n) {
					char one[1024];

					trace_pred_sp_format(sp, one, sizeof(one));
					if (!(p->lp_sp[step] = strdup(one))) {
						rc = TRACE_ENOMEM;
						goto out;
					}
					p->lp_named = 1;
					if (step == 0)
						snprintf(p->sp_text, sizeof(p->sp_text), "%s", one);
					continue;
				}
				if (p->sp_text[0]) {
					/* two disjuncts on one process: its simple predicate is their `or` */
					char one[1024], both[1024];
					size_t skip = strlen(p->name) + 1;
					int w;

					trace_pred_sp_format(sp, one, sizeof(one));
					while (one[skip] == ' ')
						skip++;
					w = snprintf(both, sizeof(both), "%s: (%s) or (%s)", p->name,
					             p->sp_text + strlen(p->name) + 2, one + skip);
					if (w < 0 || (size_t)w >= sizeof(both) || shape != TRACE_PRED_DISJUNCTIVE) {
						diag_set(d, TRACE_EINVAL, NULL, "process %s: its simple predicates "
						         "cannot be combined for the online protocol", p->name);
						rc = TRACE_EINVAL;
						goto out;
					}
					snprintf(p->sp_text, sizeof(p->sp_text), "%s", both);
					continue;
				}
				trace_pred_sp_format(sp, p->sp_text, sizeof(p->sp_text));
			}
		}
	}
	r->mode = shape == TRACE_PRED_DISJUNCTIVE && ncp > 1 ? GD_MARKERS : GD_ONLINE;
	for (size_t i = 0; i < r->nprocs; i++)
		r->procs[i].target = REP_NO_TARGET;
	/* An active process must exist: its ancestors run at least to the forks that make it. */
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].sp_text[0])
			pull(r, &r->procs[i], 0);
	rc = 0;
out:
	trace_pred_free(pred);
	return rc;
}

int rep_step(struct rep *r, size_t i, struct trace_diag *d)
{
	size_t n = ana_nprocs(r->ana);
	uint64_t *cut;
	struct gd_proc *p;
	int rc;

	if (i >= r->nprocs)
		return TRACE_EINVAL;
	p = &r->procs[i];
	if (r->mode != GD_OFFLINE) {
		diag_set(d, TRACE_EINVAL, NULL, "single steps follow precomputed cuts: step after "
		         "--stop without --online, or after --cut");
		return TRACE_EINVAL;
	}
	if (p->ana < 0 || !(cut = calloc(n ? n : 1, sizeof(*cut))))
		return TRACE_ENOMEM;
	for (size_t k = 0; k < r->nprocs; k++) {
		struct gd_proc *q = &r->procs[k];

		if (q->ana >= 0)
			cut[q->ana] = q->done || q->gone ? q->nevents : q->started ? cur_index(r, q) : 0;
	}
	if (cut[p->ana] >= p->nevents || p->done || p->gone) {
		diag_set(d, TRACE_EINVAL, NULL, "process %s is at the end of its trace: nothing to "
		         "step", p->name);
		free(cut);
		return TRACE_EINVAL;
	}
	/* Section 5.1: one more event of p, and whatever that event needs (the sends of the
	 * receives it now includes): the least consistent cut above. */
	cut[p->ana]++;
	if ((rc = ana_close_down(r->ana, cut)) != 0) {
		free(cut);
		return rc;
	}
	for (size_t k = 0; k < r->nprocs; k++) {
		struct gd_proc *q = &r->procs[k];

		if (q->ana < 0)
			continue;
		q->target = cut[q->ana];
		if (q->halted && q->conn >= 0 && q->target != q->index) {
			q->halted = 0;
			send_msg(q->conn, REP_MSG_CONT, (int64_t)q->target, 0);
		}
	}
	free(cut);
	note_change(r);
	return 0;
}

int rep_set_terms(struct rep *r, const char *text, struct trace_diag *d)
{
	const struct trace_pred_sp *const *sps;
	struct trace_pred *pred = NULL;
	size_t n;
	int rc;

	if ((rc = trace_pred_parse(text, &pred, d)) != 0)
		return rc;
	n = trace_pred_all_sps(pred, &sps);
	for (size_t i = 0; i < n; i++) {
		struct gd_proc *p = by_name(r, trace_pred_sp_proc(sps[i]));

		if (p && !p->sp_text[0]) {
			const struct trace_pred_term *const *terms;
			size_t nt = trace_pred_sp_terms(sps[i], &terms);

			trace_pred_sp_format(sps[i], p->sp_text, sizeof(p->sp_text));
			for (size_t t = 0; t < nt; t++)
				if ((terms[t]->kind == TRACE_TERM_SENT_TO ||
				     terms[t]->kind == TRACE_TERM_RECEIVED_FROM) &&
				    !has_peer(p->peers, terms[t]->arg))
					peer_channels(r, p, terms[t]->arg, p->peers, sizeof(p->peers));
		}
	}
	trace_pred_free(pred);
	return 0;
}

const char *rep_fired(const struct rep *r)
{
	return r->fired ? r->fired->name : NULL;
}

int rep_continue(struct rep *r)
{
	r->mode = GD_OFFLINE;
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];

		p->target = REP_NO_TARGET;
		p->sp_text[0] = '\0';
		if (p->halted && p->conn >= 0) {
			p->halted = 0;
			send_msg(p->conn, REP_MSG_CONT, (int64_t)REP_NO_TARGET, 0);
		}
	}
	note_change(r);
	return 0;
}

void rep_kill(struct rep *r)
{
	if (!r || !r->started || r->killed)
		return;
	r->killed = 1;
	if (r->pgid > 0)
		kill(-(pid_t)r->pgid, SIGKILL);
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].pid > 0 && !r->procs[i].reaped)
			kill((pid_t)r->procs[i].pid, SIGKILL);
	/* Every replayed process is our descendant and, as a subreaper, we reap them all. */
	for (;;) {
		int st;
		pid_t pid = waitpid(-1, &st, 0);

		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		struct gd_proc *p = by_pid(r, pid);

		if (p) {
			p->reaped = 1;
			p->wait_status = st;
		} else {
			kill(pid, SIGKILL);
		}
		/* Processes that left our group (setsid) are found by pid above; any other live
		 * descendant is killed as it becomes reapable. */
		if (r->pgid > 0)
			kill(-(pid_t)r->pgid, SIGKILL);
		for (size_t i = 0; i < r->nprocs; i++)
			if (r->procs[i].pid > 0 && !r->procs[i].reaped && r->procs[i].started)
				kill((pid_t)r->procs[i].pid, SIGKILL);
	}
}
