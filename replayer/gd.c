/*
 * gd.c: the global debugger (Manabe & Imase section 2.2), the coordinating half of the
 * replayer, run inside `encore replay`: opening a replay, its control socket, the run loop.
 *
 * It checks the session (every trace whole, every executable the recorded one), makes the
 * control socket and the status board in DIR/.encore-replay/, starts the recorded roots with
 * the LC preloaded (gd_proc.c), answers each LC's messages (gd_msg.c: HELLO with its slot
 * and target, DONE, HALTED, DIVERGED...), and watches: the end of every process, the halt
 * (gd_halt.c: offline targets, the online protocol, halt markers, linked predicates), and
 * the board (gd_stall.c: no progress for stall_ms: who waits for what).  The GD is a
 * subreaper, so every replayed process ends up its child and is reaped here; rep_kill
 * (gd_proc.c) ends them all, whatever state they are in (replayer/README.md, "How a replay
 * ends").
 */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "gd_internal.h"

void rep__diag_set(struct trace_diag *d, int code, const char *file, const char *fmt, ...)
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

static void free_argv(struct gd_proc *p)
{
	for (uint32_t i = 0; p->argv && i < p->argc; i++)
		free(p->argv[i]);
	free(p->argv);
	p->argv = NULL;
	p->argc = 0;
	for (uint32_t i = 0; p->env && i < p->envc; i++)
		free(p->env[i]);
	free(p->env);
	p->env = NULL;
	p->envc = 0;
}

/* Read one trace through; fill p from its header.  Refuses damage. */
/* An image recorded with randomisation off (encore record --same-layout): the objects it
 * mapped, each path once per host, for an isolated replay to map them from their own file
 * system (gd_isolate.c, layout_bind).  0 or TRACE_ENOMEM. */
static int layout_objects(struct rep *r, struct trace_reader *rd)
{
	const struct trace_process *h = trace_reader_process(rd);
	const struct trace_file_input *f;
	struct trace_layout l;
	size_t n = trace_reader_files(rd, &f);

	if (!trace_reader_layout(rd, &l) || !(l.persona & TRACE_ADDR_NO_RANDOMIZE))
		return 0;
	r->same_layout = 1;
	for (size_t i = 0; i < n; i++) {
		const char *path = f[i].resolved && f[i].resolved[0] ? f[i].resolved : f[i].path;
		struct gd_layout_obj *o;
		size_t j;

		if ((f[i].kind != TRACE_FILE_EXE && f[i].kind != TRACE_FILE_LIB) || !path ||
		    path[0] != '/')
			continue;
		for (j = 0; j < r->nlayout_objs; j++)
			if (strcmp(r->layout_objs[j].path, path) == 0 &&
			    strcmp(r->layout_objs[j].host, h->host_id) == 0)
				break;
		if (j < r->nlayout_objs)
			continue;
		o = realloc(r->layout_objs, (r->nlayout_objs + 1) * sizeof(*o));
		if (!o)
			return TRACE_ENOMEM;
		r->layout_objs = o;
		o = &o[r->nlayout_objs];
		snprintf(o->host, sizeof(o->host), "%s", h->host_id);
		if (!(o->path = strdup(path)))
			return TRACE_ENOMEM;
		r->nlayout_objs++;
	}
	return 0;
}

static int check_trace(struct rep *r, const char *path, struct gd_proc *p,
                       struct trace_diag *d)
{
	char packed[4096 + 128];
	struct trace_reader *rd = NULL;
	struct trace_event ev;
	const struct trace_process *h;
	uint8_t bid[64];
	char want[160], have[160];
	int rc, n;

	{
		/* A recorder holds a shared lock on its trace from open to close: a process still
		 * being recorded (a recording still running, a background child of an ended one) has
		 * no end to replay to yet. */
		int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

		if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
			close(fd);
			rep__diag_set(d, TRACE_EINVAL, path, "is still being recorded (its process runs, "
			              "recorded): replay the session once its recording has ended");
			return TRACE_EINVAL;
		}
		if (fd >= 0)
			close(fd);
	}
	if ((rc = trace_reader_open(path, &rd, d)) != 0)
		return rc;
	h = trace_reader_process(rd);
	snprintf(p->name, sizeof(p->name), "%s", h->name);
	snprintf(p->parent, sizeof(p->parent), "%s", h->parent);
	snprintf(p->exe, sizeof(p->exe), "%s", h->exe);
	snprintf(p->cwd, sizeof(p->cwd), "%s", h->cwd);
	snprintf(p->host_id, sizeof(p->host_id), "%s", h->host_id);
	p->fork_index = h->fork_index;
	p->rec_pid = (long)h->pid;
	p->rec_t0 = (int64_t)h->start_realtime_ns;
	p->argc = h->argc;
	p->argv = calloc((size_t)h->argc + 1, sizeof(char *));
	for (uint32_t i = 0; p->argv && i < h->argc; i++)
		p->argv[i] = strdup(h->argv[i]);
	if (h->build_id_len) {
		/* a packed session runs the packed executable (gd_isolate.c) */
		int in_pack = rep__pack_object(r, h->host_id, h->exe, packed, sizeof(packed));

		n = rep_elf_build_id(in_pack ? packed : h->exe, bid, sizeof(bid));
		if (n < 0 && errno == ENOENT && !in_pack && h->segment > 0) {
			/* An image a recorded exec started from a file not there yet: the session
			 * may make it before that exec (make builds a program, then runs it), in
			 * replay too.  If it does not, the exec fails there, the divergence says so. */
			n = 0;
			goto checked;
		}
		if (n < 0) {
			rep__diag_set(d, TRACE_ENOENT, in_pack ? packed : h->exe,
			              in_pack ? "process %s: the packed executable cannot be read (%s): "
			              "pack the session again" : "process %s: the recorded executable cannot "
			              "be read (%s): restore it, pack the session on the machine that "
			              "recorded it (encore pack), or replay there", h->name, strerror(errno));
			rc = TRACE_ENOENT;
			goto out;
		}
		if ((uint32_t)n != h->build_id_len || memcmp(bid, h->build_id, (size_t)n) != 0) {
			hex(h->build_id, h->build_id_len, want, sizeof(want));
			hex(bid, n > 0 ? (size_t)n : 0, have, sizeof(have));
			rep__diag_set(d, TRACE_EINVAL, in_pack ? packed : h->exe,
			              "process %s: the executable changed since the recording (build-id %s, "
			              "recorded %s): replay needs the recorded binary; rebuild or restore it",
			              h->name, have[0] ? have : "none", want);
			rc = TRACE_EINVAL;
			goto out;
		}
	}
checked:
	p->nevents = 0;
	ev.kind = TRACE_EV_NONE;
	while ((rc = trace_reader_next(rd, &ev)) == 1)
		p->nevents++;
	p->killed_rec = rc == 0 && !trace_reader_closed(rd) && ev.kind != TRACE_EV_EXIT &&
	                ev.kind != TRACE_EV_SIGNAL;
	p->has_layout = trace_reader_layout(rd, &p->layout);
	{
		/* a root is started with it (gd_proc.c, child_exec) */
		uint32_t envc;
		char *const *envp;

		if (!p->env && trace_reader_env(rd, &envc, &envp) &&
		    (p->env = calloc((size_t)envc + 1, sizeof(char *)))) {
			for (uint32_t i = 0; i < envc; i++)
				if ((p->env[p->envc] = strdup(envp[i])))
					p->envc++;
		}
	}
	if (rc == 0 && (rc = rep__created_add(r, rd, h->host_id)) != 0)
		goto out;
	if ((rc = layout_objects(r, rd)) != 0)
		goto out;
	if (rc < 0) {
		rep__diag_set(d, rc, path, "cannot read the trace: %s", trace_strerror(rc));
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
		/* the dropped range, in the process's numbering (events of earlier images first) */
		const struct trace_process *tp = trace_reader_process(rd);
		uint64_t first = (tp ? tp->first_index : 0) + 1;

		rep__diag_set(d, TRACE_ECORRUPT, path,
		              "trace of process %s lost events %" PRIu64 "-%" PRIu64 " to the disk budget "
		              "(--max-bytes) and replay starts at event 1: record again without "
		              "--max-bytes to replay (analyze, dump and sql read the kept events)", p->name, first, first + trace_reader_dropped(rd) - 1);
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
		rep__diag_set(d, TRACE_EINVAL, NULL, "the path of libencore-replay.so must be absolute");
		return TRACE_EINVAL;
	}
	if (!(r = calloc(1, sizeof(*r))))
		return TRACE_ENOMEM;
	r->lfd = -1;
	r->cdir = -1;
	r->opt = *opt;
	if (!r->opt.stall_ms)
		r->opt.stall_ms = 10000;
	snprintf(r->lib, sizeof(r->lib), "%s", opt->lib);
	if (!realpath(dir, r->dir)) {
		rep__diag_set(d, TRACE_ENOENT, dir, "no such session directory: %s", strerror(errno));
		rc = TRACE_ENOENT;
		goto fail;
	}
	if ((rc = trace_session_open(r->dir, &s, d)) != 0)
		goto fail;
	if ((rc = rep__pack_load(r, d)) != 0)
		goto fail;
	r->nprocs = trace_session_count(s);
	if (!r->nprocs) {
		rep__diag_set(d, TRACE_ENOENT, r->dir, "no trace files in this directory: record with "
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
			if ((rc = check_trace(r, paths[f], f ? &seg : p, d)) != 0) {
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
	if (!opt->ignore_changed_files && (rc = rep__check_files(r, d)) != 0)
		goto fail;
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

static void clear_pipe_files(int cdir);

void rep_close(struct rep *r)
{
	if (!r)
		return;
	rep_kill(r);
	for (size_t i = 0; r->opt.roots_output && i < r->nprocs; i++) {
		char out[4096 + 512];

		if (rep_output_path(r, i, out, sizeof(out)) == 0)
			unlink(out);
	}
	for (size_t i = 0; i < r->nprocs; i++)
		free_proc(&r->procs[i], r->lp_n);
	rep__traces_free(r);
	for (size_t i = 0; i < r->npending; i++)
		close(r->pending[i]);
	for (size_t i = 0; i < r->nheld; i++)
		close(r->held[i].fd); /* connections held for an accept that never came */
	free(r->procs);
	for (size_t i = 0; i < r->nlayout_objs; i++)
		free(r->layout_objs[i].path);
	free(r->layout_objs);
	if (r->lfd >= 0)
		close(r->lfd);
	rep__iso_free(r); /* after rep_kill: the namespaces are gone, the scratch area removed */
	rep__created_free(r);
	if (r->cdir >= 0) {
		/* names only, inside the directory checked when it was made */
		int dfd = open(r->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		unlinkat(r->cdir, REP_CTL, 0);
		unlinkat(r->cdir, REP_STATUS, 0);
		clear_pipe_files(r->cdir);
		if (dfd >= 0) {
			unlinkat(dfd, REP_SUBDIR, AT_REMOVEDIR);
			close(dfd);
		}
		close(r->cdir); /* (its lock last: the next replay then makes the directory anew) */
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

/* DIR/.encore-replay: made 0700, or an existing one reused, only when it is a directory of
 * ours (never through a link: a link planted there would put the socket and the board
 * wherever it points).  Its descriptor in r->cdir; everything in it is made relative to
 * that descriptor (docs/security.md). */
/* The staging files of pipes several processes shared (replayer/lc_chan.c, "pipe.KEY.DIR"):
 * each replay starts without the last one's, and leaves none. */
static void clear_pipe_files(int cdir)
{
	int fd = openat(cdir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(dir)))
		if (strncmp(de->d_name, "pipe.", 5) == 0)
			unlinkat(cdir, de->d_name, 0);
	closedir(dir);
}

static int control_dir(struct rep *r, struct trace_diag *d)
{
	char path[4096 + 64];
	struct stat st;
	int dfd, fd = -1, e;

	snprintf(path, sizeof(path), "%s/" REP_SUBDIR, r->dir);
	dfd = open(r->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		rep__diag_set(d, TRACE_EIO, r->dir, "cannot open the session directory: %s",
		              strerror(errno));
		return TRACE_EIO;
	}
	if (mkdirat(dfd, REP_SUBDIR, 0700) != 0 && errno != EEXIST) {
		rep__diag_set(d, TRACE_EIO, path, "cannot create the replay directory: %s%s",
		              strerror(errno), errno == EROFS || errno == EACCES
		                                   ? " (replay from a copy of the session in a "
		                                     "directory you can write)"
		                                   : "");
		goto fail;
	}
	fd = openat(dfd, REP_SUBDIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		if (e == ELOOP || e == ENOTDIR)
			rep__diag_set(d, TRACE_EIO, path, "is a symbolic link or not a directory, not "
			              "the directory encore makes there: remove it and replay again");
		else
			rep__diag_set(d, TRACE_EIO, path, "cannot open the replay directory: %s",
			              strerror(e));
		goto fail;
	}
	if (fstat(fd, &st) != 0 || st.st_uid != geteuid()) {
		rep__diag_set(d, TRACE_EIO, path, "is not your directory (owner uid %lu): remove it "
		              "and replay again", (unsigned long)st.st_uid);
		goto fail;
	}
	if ((st.st_mode & 07777) != 0700 && fchmod(fd, 0700) != 0) {
		rep__diag_set(d, TRACE_EIO, path, "cannot make the replay directory private: %s",
		              strerror(errno));
		goto fail;
	}
	/* One replay of a session at a time: a second would take the first one's control socket
	 * and status board from under it, and both would fail.  Held while r->cdir is open. */
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno == EWOULDBLOCK)
			rep__diag_set(d, TRACE_EIO, r->dir, "is being replayed already (encore replay or "
			              "encore debug): wait until that one ends, or end it");
		else
			rep__diag_set(d, TRACE_EIO, path, "cannot lock the replay directory: %s",
			              strerror(errno));
		goto fail;
	}
	close(dfd);
	r->cdir = fd;
	clear_pipe_files(fd);
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	close(dfd);
	return TRACE_EIO;
}

/* The control socket, bound inside r->cdir: through /proc/self/fd (the checked directory
 * itself, whatever its path now names), or by its path where /proc is not mounted (the
 * directory is ours and closed to others, so the path cannot be redirected). */
static int control_socket(struct rep *r, const char *path, struct trace_diag *d)
{
	struct sockaddr_un sa;
	struct stat st;
	int fd;

	unlinkat(r->cdir, REP_CTL, 0);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		goto fail;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/" REP_CTL, r->cdir);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		if (errno != ENOENT)
			goto fail;
		if (strlen(path) >= sizeof(sa.sun_path)) /* checked by the caller */
			goto fail;
		memcpy(sa.sun_path, path, strlen(path) + 1);
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
			goto fail;
	}
	if (fchmodat(r->cdir, REP_CTL, 0600, 0) != 0 || listen(fd, 128) != 0)
		goto fail;
	if (fstatat(r->cdir, REP_CTL, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISSOCK(st.st_mode)) {
		errno = EEXIST;
		goto fail;
	}
	r->lfd = fd;
	return 0;
fail:
	rep__diag_set(d, TRACE_EIO, path, "cannot make the control socket: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
	return TRACE_EIO;
}

int rep__make_control(struct rep *r, struct trace_diag *d)
{
	char path[4096 + 64];
	int fd, rc;

	if ((size_t)snprintf(path, sizeof(path), "%s/" REP_SUBDIR "/" REP_CTL, r->dir) >=
	    sizeof(((struct sockaddr_un *)0)->sun_path)) {
		/* the LCs connect by this path */
		rep__diag_set(d, TRACE_EINVAL, r->dir, "the session directory's path is too long for a "
		              "Unix socket (%zu bytes at most): move or copy the session to a shorter "
		              "path (a symbolic link does not help: the path is resolved)",
		              sizeof(((struct sockaddr_un *)0)->sun_path) -
		                  sizeof("/" REP_SUBDIR "/" REP_CTL));
		return TRACE_EINVAL;
	}
	if ((rc = control_dir(r, d)) != 0)
		return rc;
	/* The board: one slot per process, written by the LCs with plain stores; the last slot
	 * is the one of processes the recording does not have. */
	if (r->nprocs > REP_SLOTS_MAX - 1) {
		rep__diag_set(d, TRACE_EINVAL, r->dir, "the session has %zu processes; replay follows "
		              "at most %d (README.md, Limits)", r->nprocs, REP_SLOTS_MAX - 1);
		return TRACE_EINVAL;
	}
	snprintf(path, sizeof(path), "%s/" REP_SUBDIR "/" REP_STATUS, r->dir);
	unlinkat(r->cdir, REP_STATUS, 0);
	fd = openat(r->cdir, REP_STATUS, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	/* Its blocks reserved, not only its size set: a mapping of a sparse file on a full file
	 * system (a session recorded until the disk filled) faults with SIGBUS at the first
	 * store, where this says why. */
	if (fd < 0 || (rc = posix_fallocate(fd, 0, REP_SLOTS_MAX * sizeof(struct rep_slot))) != 0) {
		int e = fd < 0 ? errno : rc;

		rep__diag_set(d, TRACE_EIO, path, "cannot create the status board: %s%s", strerror(e),
		              e == ENOSPC || e == EDQUOT ?
		                  " (the replay needs a little room in the session directory; free "
		                  "some, or copy the session elsewhere)" : "");
		if (fd >= 0) {
			close(fd);
			unlinkat(r->cdir, REP_STATUS, 0);
		}
		return TRACE_EIO;
	}
	r->board = mmap(NULL, REP_SLOTS_MAX * sizeof(struct rep_slot), PROT_READ | PROT_WRITE,
	                MAP_SHARED, fd, 0);
	close(fd);
	if (r->board == MAP_FAILED) {
		r->board = NULL;
		rep__diag_set(d, TRACE_EIO, path, "cannot map the status board: %s", strerror(errno));
		return TRACE_EIO;
	}
	/* The recorded pids, for the LCs' pid translation (getpid gives the recorded one). */
	for (size_t i = 0; i < r->nprocs && i < REP_SLOTS_MAX - 1; i++) {
		const struct gd_proc *p = &r->procs[i];
		struct ana_event ev;

		r->board[i].rec_pid = (int32_t)p->rec_pid;
		if (p->ana >= 0 && p->nevents &&
		    ana_event_get(r->ana, (size_t)p->ana, p->nevents, &ev) == 0 &&
		    ev.kind == TRACE_EV_SIGNAL && ev.result > 0 && ev.result < 65)
			r->board[i].fatal_sig = (int32_t)ev.result;
		else if (p->killed_rec)
			r->board[i].fatal_sig = SIGKILL; /* cut short: a sender's SIGKILL waits for its
			                                    end (lc_pids.c, kill_after_end) */
	}
	snprintf(path, sizeof(path), "%s/" REP_SUBDIR "/" REP_CTL, r->dir);
	return control_socket(r, path, d);
}

struct gd_proc *rep__by_name(struct rep *r, const char *name)
{
	for (size_t i = 0; i < r->nprocs; i++)
		if (strcmp(r->procs[i].name, name) == 0)
			return &r->procs[i];
	return NULL;
}

struct gd_proc *rep__by_pid(struct rep *r, long pid)
{
	for (size_t i = 0; i < r->nprocs; i++)
		if (r->procs[i].pid == pid)
			return &r->procs[i];
	return NULL;
}

void rep__note_change(struct rep *r)
{
	clock_gettime(CLOCK_MONOTONIC, &r->last_change);
}

/* One round of the loop: wait up to 50 ms for the control connections, take new LCs, handle
 * what each said (pending connections first: their HELLO binds them to a process).  0 to go
 * on, 1 with *outcome set, or a negative code.  *live: connections owned by a process. */
static int poll_round(struct rep *r, int *live, int *outcome)
{
	struct pollfd pf[1 + 256 + 1024];
	struct gd_proc *owner[1 + 256 + 1024];
	size_t n = 0, i;

	*outcome = -1;
	*live = 0;
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
		}
	if (poll(pf, n, 50) < 0 && errno != EINTR)
		return TRACE_EIO;
	if (pf[0].revents)
		rep__accept_peers(r);
	for (i = 1; i < n; i++) {
		struct gd_proc *p = owner[i];

		if (!pf[i].revents)
			continue;
		if (rep__handle(r, pf[i].fd, &p, outcome) < 0 || (p && !owner[i])) {
			/* drop from pending (closed, or now owned by a process) */
			for (size_t j = 0; j < r->npending; j++)
				if (r->pending[j] == pf[i].fd) {
					r->pending[j] = r->pending[--r->npending];
					break;
				}
		}
	}
	/* counted after the messages: a HELLO just read makes its connection live, and what its
	 * process sent after it (it may have ended and been reaped by now) is still to be read */
	for (i = 0; i < r->nprocs; i++)
		*live += r->procs[i].conn >= 0;
	return *outcome >= 0;
}

/* Processes killed when recorded, past the end of their trace, are killed now once every
 * other process has ended (if no peer of theirs did it already). */
static void kill_free_running(struct rep *r)
{
	int others = 0, free = 0;
	size_t i;

	for (i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];

		if (p->free_running && !p->reaped)
			free++;
		else if (p->started && !p->done && !p->gone && !p->reaped)
			others++;
	}
	if (free && !others && !r->npending)
		for (i = 0; i < r->nprocs; i++)
			if (r->procs[i].free_running && !r->procs[i].reaped && r->procs[i].pid > 0)
				kill((pid_t)r->procs[i].pid, SIGKILL);
}

/* The board has not moved for stall_ms. */
static int stalled(struct rep *r)
{
	uint64_t sum = rep__board_sum(r);
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (sum != r->last_progress) {
		r->last_progress = sum;
		r->last_change = now;
		return 0;
	}
	return (uint64_t)(now.tv_sec - r->last_change.tv_sec) * 1000 +
	       (uint64_t)((now.tv_nsec - r->last_change.tv_nsec) / 1000000) >= r->opt.stall_ms;
}

int rep_run(struct rep *r)
{
	if (!r->started)
		return TRACE_EINVAL;
	r->message[0] = '\0';
	for (;;) {
		int outcome, live, rc;

		if (r->opt.interrupted && *r->opt.interrupted)
			return REP_INTERRUPTED;
		if ((rc = poll_round(r, &live, &outcome)) < 0)
			return rc;
		rep__reap(r);
		if (rc > 0)
			return outcome;
		if (rep__all_halted(r)) {
			int o = r->mode == GD_OFFLINE ? REP_HALTED : rep__online_outcome(r);

			if (o != REP_HALTED || !r->lp_n || r->lp_stage + 1 >= r->lp_n)
				return o;
			if ((o = rep__lp_advance(r)) >= 0)
				return o;
			continue;
		}
		rep__release_ready(r);
		kill_free_running(r);
		if (!live && !r->npending && !rep__children_left()) {
			if (r->mode != GD_OFFLINE && rep__finish_check(r) == REP_END)
				return rep__online_outcome(r);
			return rep__finish_check(r);
		}
		if (stalled(r)) {
			rep__stall_report(r);
			return REP_STALLED;
		}
	}
}

/* p's last recorded event is its death by a signal (a SIGNAL event, which the process itself
 * never passes in replay: the kernel ends it there). */
static int dies_by_signal(struct rep *r, const struct gd_proc *p)
{
	struct ana_event ev;

	return p->ana >= 0 && p->nevents &&
	       ana_event_get(r->ana, (size_t)p->ana, p->nevents, &ev) == 0 &&
	       ev.kind == TRACE_EV_SIGNAL;
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
	else if (p->started && (p->gone || p->reaped) && info->index + 1 == p->nevents &&
	         (!p->reaped || WIFSIGNALED(p->wait_status)) && dies_by_signal(r, p))
		info->index = p->nevents; /* its recorded death too, as the analyzer counts it */
	info->nevents = p->nevents;
	info->wait_status = p->reaped ? p->wait_status : -1;
	info->state = !p->started ? REP_P_NOT_STARTED :
	              (p->done || p->gone || p->reaped) ? REP_P_EXITED :
	              p->halted ? REP_P_HALTED : REP_P_RUNNING;
	rep__describe_event(r, p, info->index, info->last, sizeof(info->last));
	rep__describe_event(r, p, info->index + 1, info->next, sizeof(info->next));
	if (p->halted && p->backtrace && !p->bt_resolved) {
		char *bt = rep__symbolize(p->pid, p->backtrace);

		if (bt) {
			free(p->backtrace);
			p->backtrace = bt;
		}
		p->bt_resolved = 1;
	}
	info->backtrace = p->halted ? p->backtrace : NULL;
	info->terms = p->halted && p->terms && p->terms[0] ? p->terms : NULL;
	return 0;
}
