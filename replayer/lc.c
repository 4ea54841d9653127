/*
 * lc.c: the local controller's process-wide machinery (Manabe & Imase section 2.2): the
 * real_* pointers and the guard, ENCORE_REPLAY, loading this process's trace, the control
 * connection to the GD and the status board, the event cursor (expect/commit), halting
 * before the target event, divergence reports, and the start of a forked child.
 *
 * Lifecycle of one process:
 *   constructor  resolve real_*; parse ENCORE_REPLAY; load NAME.trace whole; connect to the
 *                GD, say HELLO, get the slot and the target; register an on_exit handler
 *                (run after the program's atexit handlers, as the recorder's is, so the
 *                EXIT event is the last one here too).
 *   each call    the interposers (lc_chan.c, lc_proc.c, lc_nondet.c...) enforce the next event.
 *   fork         the child becomes PARENT.k: loads its own trace, connects anew.
 *   exit         EXIT is checked and consumed, DONE goes to the GD.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "lc.h"
#include "unwind.h"

struct lc_state lc = { .ctl = -1, .target = REP_NO_TARGET };
int32_t lc_fd[LC_FD_MAX];
struct lc_chan lc_chan[LC_CHAN_MAX];

static __thread int lc_depth __attribute__((tls_model("initial-exec")));
/* Across our own fork: the program's fork handlers (pthread_atfork) run inside it, and their
 * calls pass straight through, as they passed unrecorded inside the recorder's fork, which
 * holds its guard there; unlike the LC's own calls (lc_depth) they keep their descriptor
 * numbers (libuv makes a pipe in its child handler). */
static __thread int lc_forking __attribute__((tls_model("initial-exec")));

void lc_fork_pass(int on)
{
	lc_forking = on;
}
/* Before the GD gives us a slot (and when there is no GD), the board is a private dummy. */
static struct rep_slot dummy_slot;

/* --- raw system calls and the guard -------------------------------------------------------- */

long lc_sys_read(int fd, void *buf, size_t n)
{
	return syscall(SYS_read, fd, buf, n);
}

long lc_sys_write(int fd, const void *buf, size_t n)
{
	return syscall(SYS_write, fd, buf, n);
}

/* Around dlsym (interpose/resolve.c), which may call libc back: straight through. */
void ip_guard(int delta)
{
	lc_depth += delta;
}

int lc_internal(void)
{
	return lc_depth != 0;
}


int lc_on(void)
{
	if (__builtin_expect(lc.pos >= lc.nev, 0) && lc.killed && lc.active && !lc_depth)
		lc_run_free();
	return lc.active && !lc_depth && !lc_forking;
}

void lc_enter(void)
{
	lc_depth++;
}

void lc_leave(void)
{
	lc_depth--;
}

/* --- the control connection ---------------------------------------------------------------- */

static int ctl_send_flags(uint32_t type, int64_t a, int64_t b, uint32_t flags, const char *text)
{
	if (lc.ctl < 0)
		return -1;
	return rep_proto_send(lc.ctl, type, a, b, flags, text);
}

static int ctl_send(uint32_t type, int64_t a, int64_t b, const char *text)
{
	return ctl_send_flags(type, a, b, 0, text);
}

/* Block for the next message from the GD.  Without a GD (it died, or never was), a replayed
 * process has nobody to obey: it ends, so that nothing is left behind. */
static void ctl_recv(struct rep_msg *m)
{
	long r;

	do
		r = rep_proto_recv(lc.ctl, m, 0);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		syscall(SYS_exit_group, 111);
}

/* Move an LC descriptor to a high number, out of the program's way. */
static int move_high(int fd)
{
	int hi = ip_dup_high(fd, lc.min_fd);

	if (hi < 0 && fd < 3) /* a small hard limit: the lowest free past stdio (ip_dup_high) */
		hi = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 3L);
	if (hi < 0 || hi == fd)
		return fd;
	syscall(SYS_close, fd);
	return hi;
}

int lc_move_high(int fd)
{
	return move_high(fd);
}

static int ctl_connect(void)
{
	struct sockaddr_un sa;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/" REP_SUBDIR "/" REP_CTL,
	                     lc.dir) >= sizeof(sa.sun_path))
		return -1;
	for (int tries = 0;; tries++) {
		struct timespec ts = { 0, 1000000 };
		int e;

		fd = (int)syscall(SYS_socket, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -1;
		if (syscall(SYS_connect, fd, &sa, sizeof(sa)) == 0)
			return move_high(fd);
		e = errno;
		syscall(SYS_close, fd);
		/* a signal (the program's, or one a replayed peer sent), or the GD's backlog full
		 * while many processes start: again, for a second at most; without its GD the
		 * process would run unreplayed */
		if ((e != EINTR && e != EAGAIN && e != ECONNREFUSED) || tries >= 1000)
			return -1;
		if (e != EINTR)
			syscall(SYS_nanosleep, &ts, NULL);
	}
}

static void board_map(void)
{
	char path[4096 + 64];
	int fd;
	void *p;

	snprintf(path, sizeof(path), "%s/" REP_SUBDIR "/" REP_STATUS, lc.dir);
	fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	p = mmap(NULL, REP_SLOTS_MAX * sizeof(struct rep_slot), PROT_READ | PROT_WRITE, MAP_SHARED,
	         fd, 0);
	syscall(SYS_close, fd);
	if (p != MAP_FAILED)
		lc.slots = p;
}

/* A configuration the LC cannot follow, reported once the process is set up. */
static int lc_diverge_later;
static char lc_diverge_why[512];

/* HELLO, then CONFIG: our slot on the board and the state to halt at. */
static void ctl_hello_as(int spawned)
{
	struct rep_msg m;

	lc.slot = &dummy_slot;
	lc.ctl = ctl_connect();
	if (lc.ctl < 0)
		return;
	if (ctl_send_flags(REP_MSG_HELLO, (int64_t)syscall(SYS_getpid), 0, spawned ? 1u : 0u,
	                   lc.name) != 0)
		return;
	ctl_recv(&m);
	if (m.type == REP_MSG_NAME) {
		m.text[sizeof(m.text) - 1] = '\0';
		snprintf(lc.name, sizeof(lc.name), "%.127s", m.text);
		ctl_recv(&m);
	}
	while (m.type == REP_MSG_TRACE) { /* trace points on us, before CONFIG */
		m.text[sizeof(m.text) - 1] = '\0';
		if (m.a)
			lc_trace_add(m.flags, m.text);
		else
			lc_trace_del(m.flags);
		ctl_recv(&m);
	}
	if (m.type != REP_MSG_CONFIG)
		return;
	if (lc.slots && m.a >= 0 && m.a < REP_SLOTS_MAX) {
		lc.slot = &lc.slots[m.a];
		lc_signal_arm_fatal(); /* (the board says how the process ended) */
	}
	lc.target = (uint64_t)m.b;
	lc.online = (m.flags & REP_CF_ONLINE) != 0;
	lc.halt_check = lc.online || lc.target != REP_NO_TARGET || lc_ntraces();
	m.text[sizeof(m.text) - 1] = '\0';
	if (m.text[0]) {
		/* Our simple predicate: online, the halting condition; offline, its terms are
		 * shown at the halt. */
		char why[512];

		m.text[sizeof(m.text) - 1] = '\0';
		char *peers = strchr(m.text, '\x1e');

		if (peers)
			*peers++ = '\0';
		lc.counting = 1;
		if (lc_online_setup(m.text, peers ? peers : "", why, sizeof(why)) != 0 && lc.online) {
			lc.online = 0;
			lc.halt_check = 0;
			lc_diverge_later = 1;
			snprintf(lc_diverge_why, sizeof(lc_diverge_why), "%s", why);
		}
	}
	lc.slot->pid = (int32_t)syscall(SYS_getpid);
	lc.slot->index = lc.pos;
	lc.slot->state = REP_SLOT_RUNNING;
}

static void ctl_hello(void)
{
	ctl_hello_as(0);
}

/* --- loading the trace --------------------------------------------------------------------- */

/* The function names of the call-site stacks the events name (lc.site_funcs), for
 * in(FUNCTION) terms.  Returns 0, or -1 when out of memory. */
static int load_sites(struct trace_reader *r, const struct lc_ev *evs, uint64_t n)
{
	for (uint32_t i = 0; i < lc.nsites; i++)
		free(lc.site_funcs[i]);
	free(lc.site_funcs);
	lc.site_funcs = NULL;
	lc.nsites = 0;
	for (uint64_t k = 0; k < n; k++) {
		const struct trace_stack *st;
		uint32_t site = evs[k].site;
		size_t len = 1, pos = 0;
		char *buf;

		if (!site || site > 1u << 20 || (site < lc.nsites && lc.site_funcs[site]))
			continue;
		if (!(st = trace_reader_stack(r, site)))
			continue;
		if (site >= lc.nsites) {
			uint32_t nn = site + 64;
			char **ns = realloc(lc.site_funcs, nn * sizeof(*ns));

			if (!ns)
				return -1;
			memset(ns + lc.nsites, 0, (nn - lc.nsites) * sizeof(*ns));
			lc.site_funcs = ns;
			lc.nsites = nn;
		}
		for (uint32_t f = 0; f < st->nframes; f++)
			len += strlen(st->frames[f].function) + 1;
		if (!(buf = malloc(len)))
			return -1;
		for (uint32_t f = 0; f < st->nframes; f++) {
			size_t fl = strlen(st->frames[f].function);

			if (!fl)
				continue;
			memcpy(buf + pos, st->frames[f].function, fl + 1);
			pos += fl + 1;
		}
		buf[pos] = '\0';
		lc.site_funcs[site] = buf;
	}
	return 0;
}

/* The reason of a notrace.CODE.FILE note of the session (the recorder could not create FILE:
 * a full disk, a privilege drop...; schemas/trace-format.md, "Truncation"), or 0. */
static int notrace_note(const char *file)
{
	char path[4096 + 32];
	struct dirent *de;
	DIR *d;
	int code = 0;

	snprintf(path, sizeof(path), "%s/.encore-registry", lc.dir);
	if (!(d = opendir(path)))
		return 0;
	while (!code && (de = readdir(d))) {
		char *end;
		long c;

		if (strncmp(de->d_name, "notrace.", 8) != 0)
			continue;
		c = strtol(de->d_name + 8, &end, 10);
		if (end != de->d_name + 8 && *end == '.' && strcmp(end + 1, file) == 0 && c > 0)
			code = (int)c;
	}
	closedir(d);
	return code;
}

/* --- the recorded environment ------------------------------------------------------------- */

/* The program is given the environment it started with when recorded (replayer/README.md,
 * "Environment"): the strings of the image's environment record, in order, ENCORE_RECORD's
 * and LD_PRELOAD's recorded values included, in one mapping of ours (the program's heap
 * stays as recorded).  Our own variables (ENCORE_REPLAY, our LD_PRELOAD) stay in the
 * environment we started with (env_own), which a child libc starts behind the interposers'
 * back (system, popen) must get, the program's changes since carried over (lc_env_spawn). */
extern char **environ;
static char **env_recorded;
static char **env_own;
static uint32_t env_recorded_n;

static void env_keep(uint32_t envc, char *const *envp)
{
	size_t bytes = (envc + 1) * sizeof(char *), at;
	char **list;
	uint32_t i;

	for (i = 0; i < envc; i++)
		bytes += strlen(envp[i]) + 1;
	list = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (list == MAP_FAILED)
		return;
	at = (envc + 1) * sizeof(char *);
	for (i = 0; i < envc; i++) {
		size_t l = strlen(envp[i]) + 1;

		list[i] = (char *)list + at;
		memcpy(list[i], envp[i], l);
		at += l;
	}
	list[envc] = NULL;
	env_recorded = list;
	env_recorded_n = envc;
}

/* `encore replay --setenv NAME=VALUE`: the variables of ENCORE_REPLAY_SETENV (NAME=VALUE
 * lines, in our own environment) replace or join the recorded ones, to see where a program
 * depends on them.  A new list, in a mapping of its own. */
static void env_override(const char *spec)
{
	size_t bytes = strlen(spec) + 1, nlines = 1, at;
	uint32_t n = 0, i;
	char **list, *copy;
	const char *p;

	for (p = spec; *p; p++)
		nlines += *p == '\n';
	for (i = 0; i < env_recorded_n; i++)
		bytes += strlen(env_recorded[i]) + 1;
	at = (env_recorded_n + nlines + 1) * sizeof(char *);
	list = mmap(NULL, at + bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (list == MAP_FAILED)
		return;
	copy = (char *)list + at;
	memcpy(copy, spec, strlen(spec) + 1);
	for (i = 0; i < env_recorded_n; i++)
		list[n++] = env_recorded[i];
	for (char *line = copy, *next; line && *line; line = next) {
		size_t name;

		if ((next = strchr(line, '\n')))
			*next++ = '\0';
		name = strcspn(line, "=");
		if (!line[name] || name == 0)
			continue;
		for (i = 0; i < n; i++)
			if (strncmp(list[i], line, name + 1) == 0)
				break;
		list[i == n ? n++ : i] = line;
	}
	list[n] = NULL;
	env_recorded = list;
	env_recorded_n = n;
}

/* The recorder's library in a LD_PRELOAD list (the recorded value names it). */
static int is_recorder_lib(const char *entry, size_t len)
{
	static const char base[] = "libencore-record.so";
	const char *slash = memrchr(entry, '/', len);
	const char *b = slash ? slash + 1 : entry;

	return (size_t)(entry + len - b) >= sizeof(base) - 1 && memcmp(b, base, sizeof(base) - 1) == 0;
}

/* LD_PRELOAD for a new image: our library first, then the entries of `val` but the
 * recorder's and ours.  Returns the length written, or -1 when it does not fit. */
static int preload_value(const char *so, const char *val, char *out, size_t cap)
{
	size_t n = (size_t)snprintf(out, cap, "LD_PRELOAD=%s", so);

	if (n >= cap)
		return -1;
	while (val && *val) {
		size_t l = strcspn(val, ": ");

		if (l && !is_recorder_lib(val, l) && !(strlen(so) == l && memcmp(val, so, l) == 0)) {
			if (n + 1 + l >= cap)
				return -1;
			out[n++] = ':';
			memcpy(out + n, val, l);
			n += l;
			out[n] = '\0';
		}
		val += l;
		val += strspn(val, ": ");
	}
	return (int)n;
}

/* Read NAME.trace whole.  Runs at start (constructor, or a new child): the only place the LC
 * allocates.  Returns 0, or -1 with why[] filled. */
static int load_trace(char *why, size_t cap)
{
	struct trace_reader *r = NULL;
	struct trace_diag d;
	struct trace_event ev;
	char path[4096 + TRACE_NAME_MAX + 32], file[TRACE_NAME_MAX + 32];
	uint64_t n = 0, ncap = 0, dlen = 0, dcap = 0;
	struct lc_ev *evs = NULL;
	uint8_t *data = NULL;
	const struct trace_inherit *inh;
	size_t ninh, i;
	int rc;

	if (trace_file_name(lc.name, lc.seg, file, sizeof(file)) != 0) {
		snprintf(why, cap, "bad logical name '%s'", lc.name);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s", lc.dir, file);
	memset(&d, 0, sizeof(d));
	if (trace_reader_open(path, &r, &d) != 0) {
		int code = notrace_note(file);

		if (code)
			snprintf(why, cap, "process %.64s was not recorded: its trace %.160s could not be "
			         "created (%.60s; encore check names it): the replay cannot follow it",
			         lc.name, path, trace_stop_reason(code));
		else
			snprintf(why, cap, "no trace for process %s (%.200s: %.120s): it did not exist in "
			         "the recorded run", lc.name, path,
			         d.msg[0] ? d.msg : trace_strerror(d.code));
		return -1;
	}
	lc.rec_pid = trace_reader_process(r)->pid;
	lc.owned = (trace_reader_process(r)->flags & TRACE_PROC_OWNED_MUTEXES) != 0;
	lc.rec_t0 = (int64_t)trace_reader_process(r)->start_realtime_ns;
	while ((rc = trace_reader_next(r, &ev)) == 1) {
		struct lc_ev *e;

		if (n == ncap) {
			uint64_t nc = ncap ? ncap * 2 : 1024;
			struct lc_ev *ne = realloc(evs, nc * sizeof(*ne));

			if (!ne)
				goto nomem;
			evs = ne;
			ncap = nc;
		}
		if (ev.kind == TRACE_EV_INPUT && ev.channel && ev.channel < LC_CHAN_MAX)
			lc_chan[ev.channel].external = 1;
		/* a connection the recorder knew to be an outside one at its accept: the process may
		 * hand it on without receiving on it (vsftpd's passive data connections) */
		if (ev.kind == TRACE_EV_ACCEPT && ev.naux >= 2 && (ev.aux[1] & TRACE_ACCEPT_OUTSIDE) &&
		    ev.channel && ev.channel < LC_CHAN_MAX)
			lc_chan[ev.channel].external = 1;
		e = &evs[n++];
		memset(e, 0, sizeof(*e));
		e->kind = ev.kind;
		e->call = ev.call;
		e->flags = ev.flags;
		e->fd = ev.fd;
		e->channel = ev.channel;
		e->err = ev.err;
		e->result = ev.result;
		e->len = ev.len;
		e->hash = ev.hash;
		e->has_hash = ev.has_hash != 0;
		e->naux = ev.naux > TRACE_AUX_MAX ? TRACE_AUX_MAX : ev.naux;
		e->site = ev.site;
		e->thread = ev.thread;
		e->elided = ev.elided;
		lc.threaded |= ev.thread != 0;
		memcpy(e->aux, ev.aux, sizeof(e->aux));
		e->data_off = dlen;
		e->data_len = ev.data_len;
		if (ev.data_len) {
			if (dlen + ev.data_len > dcap) {
				uint64_t nc = dcap ? dcap * 2 : 65536;
				uint8_t *nd;

				while (nc < dlen + ev.data_len)
					nc *= 2;
				if (!(nd = realloc(data, nc)))
					goto nomem;
				data = nd;
				dcap = nc;
			}
			memcpy(data + dlen, ev.data, ev.data_len);
			dlen += ev.data_len;
		}
	}
	if (rc < 0 || trace_reader_damage(r, &d) != 0) {
		snprintf(why, cap, "trace %.200s is damaged: %.200s", path,
		         d.msg[0] ? d.msg : trace_strerror(rc < 0 ? rc : d.code));
		goto fail;
	}
	/* Channels inherited from the parent continue its byte counts (a forked child's table
	 * is a copy of the parent's already; a root's are the recorder's first-use ones). */
	ninh = trace_reader_inherited(r, &inh);
	for (i = 0; i < ninh && lc.seg == 0; i++)
		if (inh[i].channel < LC_CHAN_MAX) {
			lc_chan[inh[i].channel].bytes[0] = inh[i].sent;
			lc_chan[inh[i].channel].bytes[1] = inh[i].received;
		}
	/* A trace that ends without EXIT or SIGNAL, its writer never closed: SIGKILL. */
	lc.killed = !trace_reader_closed(r) &&
	            (n == 0 || (evs[n - 1].kind != TRACE_EV_EXIT && evs[n - 1].kind != TRACE_EV_SIGNAL &&
	                        evs[n - 1].kind != TRACE_EV_EXEC));
	/* The call-site stacks, for in(FUNCTION) terms. */
	if (load_sites(r, evs, n) != 0)
		goto nomem;
	if (lc.owned && lc_own_load(evs, n) != 0)
		goto nomem;
	/* Events are numbered across images, consecutively (as the analyzer numbers them): an
	 * image's first event follows the last one of the previous image, whatever its header
	 * says (lc.next_base, from ENCORE_REPLAY or a failed exec). */
	lc.base = lc.seg ? lc.next_base : 0;
	{
		uint32_t envc;
		char *const *envp;

		if (trace_reader_env(r, &envc, &envp))
			env_keep(envc, envp);
	}
	trace_reader_close(r);
	lc.ev = evs;
	lc.loads++;
	lc.nev = lc.base + n;
	lc.data = data;
	lc.pos = lc.base;
	lc_signal_arm_fatal();
	lc_share_preopen();
	return 0;
nomem:
	snprintf(why, cap, "out of memory loading %.200s", path);
fail:
	free(evs);
	free(data);
	trace_reader_close(r);
	return -1;
}

/* --- events -------------------------------------------------------------------------------- */

void lc_ev_describe(const struct lc_ev *ev, char *buf, size_t cap)
{
	const char *k = trace_kind_name(ev->kind), *c = trace_call_name(ev->call);

	switch (ev->kind) {
	case TRACE_EV_SEND:
	case TRACE_EV_RECV:
	case TRACE_EV_INPUT:
		if (ev->result < 0)
			snprintf(buf, cap, "%s (%s) on fd %d, channel %u, failing with errno %d", k, c,
			         ev->fd, ev->channel, ev->err);
		else
			snprintf(buf, cap, "%s (%s) of %lld bytes on fd %d, channel %u", k, c,
			         (long long)ev->result, ev->fd, ev->channel);
		break;
	case TRACE_EV_EXIT:
		snprintf(buf, cap, "exit with status %lld", (long long)ev->result);
		break;
	case TRACE_EV_SIGNAL:
		snprintf(buf, cap, "death by signal %lld", (long long)ev->result);
		break;
	default:
		if (ev->fd >= 0)
			snprintf(buf, cap, "%s (%s) on fd %d", k, c, ev->fd);
		else
			snprintf(buf, cap, "%s (%s)", k, c);
	}
}

/* Progress is a change of what the process waits for (bytes missing, another descriptor):
 * a loop that retries the same wait (a connect to a server that does not listen) says the
 * same again and again, and that is no progress to the stall detector (gd_stall.c). */
void lc_wait_state(uint32_t kind, int fd, uint32_t chan, uint64_t missing)
{
	struct rep_slot *s = lc.slot;
	uint32_t state = kind ? REP_SLOT_WAITING : REP_SLOT_RUNNING;

	if (s->state == state && s->wait_kind == kind && s->wait_fd == fd &&
	    s->wait_chan == chan && s->wait_len == missing)
		return;
	s->wait_kind = kind;
	s->wait_fd = fd;
	s->wait_chan = chan;
	s->wait_len = missing;
	s->progress++;
	s->state = state;
}

__attribute__((noreturn)) static void block_forever(uint32_t state)
{
	struct rep_msg m;

	lc.slot->state = state;
	if (lc.ctl < 0)
		syscall(SYS_exit_group, 111);
	for (;;)
		ctl_recv(&m); /* the GD ends us; on its death ctl_recv ends us */
}

static void backtrace_text(char *out, size_t cap);

/* The report names the process, thread and event, says what was expected and what came, and
 * ends with where the program made the call that diverged (its first frames, as a halt's
 * backtrace: where to look in the program's source). */
void lc_diverge(const char *fmt, ...)
{
	char text[REP_TEXT_MAX], bt[1200];
	va_list ap;
	int n;

	n = snprintf(text, sizeof(text), "process %s (pid %ld), event %llu: ", lc.name,
	             (long)syscall(SYS_getpid), (unsigned long long)lc.pos + 1);
	if (lc.threaded && lc_thread != LC_NO_THREAD)
		n = snprintf(text, sizeof(text), "process %s (pid %ld), thread %u, event %llu: ",
		             lc.name, (long)syscall(SYS_getpid), lc_thread,
		             (unsigned long long)lc.pos + 1);
	va_start(ap, fmt);
	vsnprintf(text + n, sizeof(text) - (size_t)n, fmt, ap);
	va_end(ap);
	lc_depth++;
	lc.active = 0;
	backtrace_text(bt, sizeof(bt));
	if (bt[0]) {
		size_t l = strlen(text);
		const char *p = bt;

		l += (size_t)snprintf(text + l, sizeof(text) - l, "\n  the call was made from:");
		while (*p && l + 8 < sizeof(text)) {
			const char *nl = strchr(p, '\n');
			size_t k = nl ? (size_t)(nl - p) : strlen(p);

			l += (size_t)snprintf(text + l, sizeof(text) - l, "\n    %.*s", (int)k, p);
			p += k + (nl ? 1 : 0);
		}
	}
	ctl_send(REP_MSG_DIVERGED, (int64_t)lc.pos + 1, 0, text);
	block_forever(REP_SLOT_DIVERGED);
}

/* The halting predicate names what this process lacks (lc_online_setup's why): said as the
 * user's error it is, not as a divergence, and without the stack of a call that has nothing
 * to do with it. */
static void lc_refuse_predicate(const char *why)
{
	char text[REP_TEXT_MAX];

	snprintf(text, sizeof(text), "process %s: %s; fix the predicate (encore inf names the "
	         "processes and their terms)", lc.name, why);
	lc_depth++;
	lc.active = 0;
	ctl_send_flags(REP_MSG_DIVERGED, (int64_t)lc.pos + 1, 0, REP_DIVERGED_PRED, text);
	block_forever(REP_SLOT_DIVERGED);
}

/* The program's stack at the halt, from the caller of the interposer outwards (libunwind,
 * local unwinding: the process unwinds itself). */
static void backtrace_text(char *out, size_t cap)
{
	unw_context_t uc;
	unw_cursor_t cur;
	Dl_info self, info;
	size_t pos = 0;
	int depth = 0;

	out[0] = '\0';
	if (!dladdr((void *)backtrace_text, &self))
		self.dli_fbase = NULL;
	if (!ip_unw.ok || ip_unw.getcontext(&uc) != 0 || ip_unw.init_local(&cur, &uc) != 0)
		return;
	while (ip_unw.step(&cur) > 0 && depth < 32 && pos + 200 < cap) {
		unw_word_t ip = 0, off = 0;
		char fn[160];
		const char *obj = "?";

		ip_unw.get_reg(&cur, UNW_REG_IP, &ip);
		if (dladdr((void *)ip, &info)) {
			if (self.dli_fbase && info.dli_fbase == self.dli_fbase)
				continue; /* the LC's own frames */
			if (info.dli_fname) {
				const char *slash = strrchr(info.dli_fname, '/');

				obj = slash ? slash + 1 : info.dli_fname;
			}
		}
		if (ip_unw.get_proc_name(&cur, fn, sizeof(fn), &off) != 0)
			snprintf(fn, sizeof(fn), "??");
		pos += (size_t)snprintf(out + pos, cap - pos, "#%d 0x%llx %s+0x%llx (%s)\n", depth,
		                        (unsigned long long)ip, fn, (unsigned long long)off, obj);
		depth++;
	}
}

/* Halt before the next event (Manabe & Imase 2.2: the LC stops its process when told; here
 * the state to stop at came with CONFIG or CONT).  Blocks until the GD says go on, with a new
 * target (offline) or floor (online). */
static void lc_halt(uint32_t reason)
{
	char bt[REP_TEXT_MAX - 64];
	struct rep_msg m;
	size_t n;

	lc_depth++;
	backtrace_text(bt, sizeof(bt) - 1024);
	/* then the values of our predicate's terms, after a record separator */
	n = strlen(bt);
	bt[n++] = '\x1e';
	lc_terms_text(bt + n, sizeof(bt) - n);
	lc.slot->state = REP_SLOT_HALTED;
	if (lc.ctl < 0 || ctl_send(REP_MSG_HALTED, (int64_t)lc.pos, reason, bt) != 0)
		syscall(SYS_exit_group, 111);
	for (;;) {
		ctl_recv(&m);
		if (m.type == REP_MSG_CONT)
			break;
		if (m.type == REP_MSG_TRACE) { /* a trace point set or removed at the halt */
			m.text[sizeof(m.text) - 1] = '\0';
			if (m.a)
				lc_trace_add(m.flags, m.text);
			else
				lc_trace_del(m.flags);
			continue;
		}
		if (m.type == REP_MSG_STAGE || m.type == REP_MSG_MODE) {
			/* the next step of a linked predicate, or a new halting mode from here: our
			 * simple predicate in it (the counters went on from the start) */
			char why[256];

			if (m.type == REP_MSG_MODE)
				lc.online = (m.flags & REP_CF_ONLINE) != 0;
			m.text[sizeof(m.text) - 1] = '\0';
			if (lc_online_stage(m.text, why, sizeof(why)) != 0) {
				lc_depth--;
				lc_refuse_predicate(why);
			}
			break;
		}
	}
	lc.target = (uint64_t)m.a;
	if (lc.target == REP_NO_TARGET && m.type != REP_MSG_MODE)
		lc.online = 0; /* run to the end, nothing more to check or ask (with MODE: a
		                  process without a disjunct runs free, halt markers still apply) */
	lc.halt_check = lc.online || lc.target != REP_NO_TARGET || lc_ntraces();
	lc.slot->state = REP_SLOT_RUNNING;
	lc_depth--;
}

/* Before the next event: the offline target, or (online) the floor and the simple predicate
 * (Manabe & Imase 3.2: an active process becomes passive when its predicate holds; a passive
 * one runs only as far as the GD asks). */
static void lc_maybe_halt(void)
{
	if (lc_ntraces())
		lc_trace_check();
	while (lc.halt_check) {
		if (!lc.online) {
			if (lc.pos != lc.target)
				return;
			lc_halt(REP_HALT_TARGET);
			continue;
		}
		if (lc.target == REP_NO_TARGET || lc.pos < lc.target)
			return;
		if (!lc_has_sp()) {
			lc_halt(REP_HALT_TARGET);
			continue;
		}
		if (!lc_sp_holds())
			return;
		lc_halt(REP_HALT_SP);
	}
}

void lc_halt_if_due(void)
{
	if (lc.halt_check && lc_on())
		lc_maybe_halt();
}

void lc_halt_marker(void)
{
	lc_halt(REP_HALT_MARKER);
}

int lc_ctl_fd(void)
{
	return lc.ctl;
}

int lc_ctl_stop(void)
{
	struct rep_msg m;
	long r = syscall(SYS_recvfrom, lc.ctl, &m, sizeof(m), MSG_DONTWAIT, NULL, NULL);

	if (r == 0)
		syscall(SYS_exit_group, 111); /* the GD is gone */
	return r >= (long)offsetof(struct rep_msg, text) && m.type == REP_MSG_STOP;
}

int lc_ctl_release(void)
{
	struct rep_msg m;
	long r = syscall(SYS_recvfrom, lc.ctl, &m, sizeof(m), MSG_DONTWAIT, NULL, NULL);

	if (r == 0)
		syscall(SYS_exit_group, 111); /* the GD is gone */
	return r >= (long)offsetof(struct rep_msg, text) && m.type == REP_MSG_RELEASE &&
	       (uint64_t)m.a == lc.pos;
}

void lc_traced(uint32_t id, int64_t value)
{
	lc_depth++;
	ctl_send_flags(REP_MSG_TRACED, (int64_t)lc.pos, value, id, NULL);
	lc_depth--;
}

void lc_connected(int port, uint64_t ev_index)
{
	lc_depth++;
	ctl_send(REP_MSG_CONNECTED, port, (int64_t)ev_index, NULL);
	lc_depth--;
}

int lc_accept_is_recorded(uint64_t k, long peer_pid, int peer_port)
{
	struct rep_msg m;

	if (lc.ctl < 0)
		return 1;
	lc_depth++;
	if (ctl_send_flags(REP_MSG_ACCEPTED, (int64_t)k, peer_pid, (uint32_t)peer_port, NULL) != 0)
		syscall(SYS_exit_group, 111);
	do
		ctl_recv(&m);
	while (m.type != REP_MSG_GO && m.type != REP_MSG_STOP);
	lc_depth--;
	return m.type == REP_MSG_GO;
}

int lc_dgram_recorded(uint64_t k)
{
	struct rep_msg m;

	if (lc.ctl < 0)
		return 0;
	lc_depth++;
	if (ctl_send(REP_MSG_DGRAM, (int64_t)k, 0, NULL) != 0)
		syscall(SYS_exit_group, 111);
	do
		ctl_recv(&m);
	while (m.type != REP_MSG_GO && m.type != REP_MSG_STOP);
	lc_depth--;
	return m.type == REP_MSG_GO;
}

void lc_request(uint64_t k)
{
	struct rep_msg m;

	while (lc.online) {
		lc_depth++;
		if (ctl_send(REP_MSG_REQ, (int64_t)k, 0, NULL) != 0)
			syscall(SYS_exit_group, 111);
		do
			ctl_recv(&m);
		while (m.type != REP_MSG_GO && m.type != REP_MSG_STOP);
		lc_depth--;
		if (m.type == REP_MSG_GO)
			return;
		lc_halt(REP_HALT_MARKER);
	}
}

/* The recorded process was killed (SIGKILL) after its last logged event; its last call may
 * have happened without being logged.  From here it runs free, enforcing nothing, until it is
 * killed as it was (by a peer, or by the GD once everything else has ended). */
void lc_run_free(void)
{
	lc.active = 0;
	lc.slot->state = REP_SLOT_DONE;
	ctl_send_flags(REP_MSG_DONE, (int64_t)lc.pos, 0, 2u, NULL);
	lc.done = 1;
}

/* The next event is a failed trylock of this thread's, and its call is not a trylock: the
 * recorded run tried more times than this one (lc_sync.c, "soft trylocks"), the attempt is
 * done at its turn as a no-op. */
static int soft_next(void)
{
	return __builtin_expect(lc.pos < lc.nev, 1) && !lc_trying &&
	       lc_try_failed(&lc.ev[lc.pos - lc.base]);
}

const struct lc_ev *lc_peek(void)
{
	for (;;) {
		lc_turn(); /* in a process with threads: wait until the next event is this thread's */
		if (__builtin_expect(lc.pos < lc.nev && lc.ev[lc.pos - lc.base].kind == TRACE_EV_HANDLER,
		                     0)) {
			uint64_t at = lc.pos;

			lc_signal_run(); /* a signal's handler ran here when recorded (lc_signals.c) */
			if (lc.pos != at)
				continue; /* the next may be another thread's: our turn again (lc_expect) */
		}
		if (!soft_next())
			break;
		if (lc.halt_check)
			lc_maybe_halt();
		lc_commit();
	}
	return lc.pos < lc.nev ? &lc.ev[lc.pos - lc.base] : NULL;
}

const struct lc_ev *lc_peek_now(void)
{
	const struct lc_ev *ev = lc.pos < lc.nev ? &lc.ev[lc.pos - lc.base] : NULL;

	if (ev && lc.threaded && ev->thread != (lc_thread == LC_NO_THREAD ? 0 : lc_thread))
		return NULL;
	return ev;
}

static int kind_ok(uint32_t have, uint32_t want)
{
	return have == want || (want == TRACE_EV_RECV && have == TRACE_EV_INPUT);
}

const struct lc_ev *lc_expect(uint32_t kind, int fd, const char *what)
{
	const struct lc_ev *ev;
	char desc[192];

again:
	lc_turn(); /* in a process with threads: wait until the next event is this thread's */
	if (__builtin_expect(lc.pos < lc.nev && (lc.ev[lc.pos - lc.base].kind == TRACE_EV_HANDLER ||
	                                         lc.ev[lc.pos - lc.base].kind == TRACE_EV_SIGNAL), 0)) {
		uint64_t at = lc.pos;

		lc_signal_run(); /* a signal's handler ran, or the process died of one, here when
		                    recorded (lc_signals.c) */
		if (lc.pos != at)
			goto again; /* the event after the run may be another thread's: our turn
			               again first (a handler run while blocked in a read, then the
			               other thread's events, then the read's EINTR) */
	}
	if (__builtin_expect(lc.halt_check, 0))
		lc_maybe_halt();
	if (__builtin_expect(lc.pos >= lc.nev, 0))
		lc_diverge("the recorded run ended here (after %llu events), but the process went "
		           "on and called %s%s%.0d", (unsigned long long)lc.nev, what,
		           fd >= 0 ? " on fd " : "", fd >= 0 ? fd : 0);
	ev = &lc.ev[lc.pos - lc.base];
	if (__builtin_expect(soft_next(), 0)) {
		lc_commit(); /* a failed trylock this run did not make (lc_sync.c) */
		goto again;
	}
	if (__builtin_expect(!kind_ok(ev->kind, kind) || (fd >= 0 && ev->fd != fd), 0)) {
		lc_ev_describe(ev, desc, sizeof(desc));
		if (fd >= 0)
			lc_diverge("expected %s, but the process called %s on fd %d", desc, what, fd);
		lc_diverge("expected %s, but the process called %s", desc, what);
	}
	return ev;
}

/* --- free code in its recorded place (threads) -------------------------------------------- */

/* What a thread computes between two of its events (its free code: loads and stores of memory
 * it shares with the other threads, atomics, reference counts) is ordered by no turn, and
 * where it runs relative to the other threads' free code can decide what the program does.
 * The trace says only that it ran between the thread's event and its next one, so the LC
 * places it by what the next one is (replayer/README.md, "Threads"):
 *
 * - Late, before a call that does not block (a close, a clock read, an unlock, a send...):
 *   the recorded thread did not sit in that call, so if the trace has other threads' events
 *   before it, the thread got there late (descheduled, or computing) and their free code ran
 *   before its own.  The thread is held at the end of its event until its next event's turn
 *   (BIND's dig: a worker dropped its reference to its UDP socket after the main thread had
 *   dropped its own, so the worker closed the socket; run at once, it dropped it first and
 *   left the close to the main thread).  Not after a call that wakes another thread (an
 *   eventfd write, a condition signal, a semaphore post, a futex wake): the waker goes on at
 *   once while the woken one wakes up (libuv's uv_async_send finishes with a store that the
 *   woken loop thread spins for).
 * - Early, otherwise (the next call may block: a poll, a receive, a lock, a wait): the thread
 *   runs on at once, and may have reached the call early and waited in it.  Its free code
 *   then runs before the next thread's event: the thread whose turn comes next waits until
 *   this one reaches an interposed call or a sleep (the gate), for GATE_MS at most (before,
 *   the woken thread often ran first: the scheduler favours a thread it wakes, and dig's
 *   loop thread reset libuv's pending flag before the main thread read it).
 *
 * Both are bounded: a hold ends when nothing has been committed for HOLD_IDLE_MS (the thread
 * whose turn it is may be spinning on a store the held thread's free code makes), a gate
 * after GATE_MS (the runner may compute long, or wait for another thread's progress outside
 * interposed calls). */
#define HOLD_SCAN 4096
#define HOLD_IDLE_MS 10
#define GATE_MS 2

static uint32_t gate; /* the runner's thread index + 1 (a futex word), 0: none */

static int64_t mono_ms(void)
{
	struct timespec t;

	IP_REAL(clock_gettime)(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static long futex_word(uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
	return IP_REAL(syscall)(SYS_futex, w, op, val, ts, NULL, 0);
}

/* A call that does not block: the thread was not waiting in it when recorded. */
static int holds_next(const struct lc_ev *ev)
{
	switch (ev->kind) {
	case TRACE_EV_CLOCK: case TRACE_EV_PID: case TRACE_EV_RANDOM: case TRACE_EV_CLOSE:
	case TRACE_EV_BIND: case TRACE_EV_LISTEN: case TRACE_EV_SHUTDOWN: case TRACE_EV_DUP:
	case TRACE_EV_PIPE: case TRACE_EV_KILL: case TRACE_EV_MARK: case TRACE_EV_TIMER:
	case TRACE_EV_SEND:
		return 1;
	case TRACE_EV_SOCKET:
		return ev->call != TRACE_CALL_NONE; /* (no call: classified at a later call's use) */
	case TRACE_EV_THREAD:
		return ev->call == TRACE_CALL_PTHREAD_CREATE;
	case TRACE_EV_SYNC:
		switch (ev->call) {
		case TRACE_CALL_MUTEX_UNLOCK: case TRACE_CALL_RWLOCK_UNLOCK:
		case TRACE_CALL_SPIN_UNLOCK: case TRACE_CALL_COND_SIGNAL:
		case TRACE_CALL_COND_BROADCAST: case TRACE_CALL_SEM_POST:
		case TRACE_CALL_FUTEX_WAKE: case TRACE_CALL_WRITE:
			return 1;
		default:
			return 0;
		}
	default:
		return 0;
	}
}

/* A call that wakes another thread. */
static int wakes(const struct lc_ev *ev)
{
	return ev->kind == TRACE_EV_SYNC &&
	       (ev->call == TRACE_CALL_WRITE || ev->call == TRACE_CALL_COND_SIGNAL ||
	        ev->call == TRACE_CALL_COND_BROADCAST || ev->call == TRACE_CALL_SEM_POST ||
	        ev->call == TRACE_CALL_FUTEX_WAKE);
}

/* After the calling thread's event `done` (lc.pos is past it): 1 to hold it until its next
 * event's turn, 0 to let it run on (the gate is set when another thread's event is next). */
static int place_free_code(const struct lc_ev *done)
{
	uint32_t me = lc_thread;
	uint64_t pos = lc.pos, i, end;

	if (me == LC_NO_THREAD || lc_depth || !lc.active || lc.done || pos >= lc.nev ||
	    lc.ev[pos - lc.base].thread == me)
		return 0;
	end = lc.nev - pos > HOLD_SCAN ? pos + HOLD_SCAN : lc.nev;
	for (i = pos + 1; i < end && lc.ev[i - lc.base].thread != me; i++)
		;
	if (i >= end)
		return 0; /* (no event of ours soon: the thread may be ending) */
	if (holds_next(&lc.ev[i - lc.base]) && !wakes(done))
		return 1;
	__atomic_store_n(&gate, me + 1, __ATOMIC_RELEASE);
	return 0;
}

/* The calling thread reached an interposed call: the gate it held opens. */
void lc_gate_open(void)
{
	if (__builtin_expect(__atomic_load_n(&gate, __ATOMIC_ACQUIRE) == lc_thread + 1, 0) &&
	    lc_thread != LC_NO_THREAD) {
		int e = errno;

		__atomic_store_n(&gate, 0, __ATOMIC_RELEASE);
		futex_word(&gate, FUTEX_WAKE_PRIVATE, INT_MAX, NULL);
		errno = e;
	}
}

/* Our turn came: first let the runner reach its next call (GATE_MS at most). */
static void gate_wait(void)
{
	uint32_t g = __atomic_load_n(&gate, __ATOMIC_ACQUIRE);
	struct timespec ts = { 0, 1000 * 1000 };
	int64_t t0;
	int e;

	if (__builtin_expect(!g, 1) || g == lc_thread + 1)
		return;
	e = errno;
	t0 = mono_ms();
	do
		futex_word(&gate, FUTEX_WAIT_PRIVATE, g, &ts);
	while ((g = __atomic_load_n(&gate, __ATOMIC_ACQUIRE)) && g != lc_thread + 1 &&
	       mono_ms() - t0 < GATE_MS);
	if (g && g != lc_thread + 1) {
		/* the runner computes long or waits outside interposed calls: the gate is over */
		__atomic_compare_exchange_n(&gate, &g, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	}
	errno = e;
}

void lc_turn_gated(void)
{
	lc_gate_open();
	lc_turn_wait();
	gate_wait();
}

static void hold_to_turn(void)
{
	uint32_t me = lc_thread, last;
	struct timespec ts = { 0, 2 * 1000 * 1000 };
	int64_t t0;
	int e = errno;

	last = __atomic_load_n(&lc.turn_seq, __ATOMIC_SEQ_CST);
	t0 = mono_ms();
	for (;;) {
		uint32_t seq = __atomic_load_n(&lc.turn_seq, __ATOMIC_SEQ_CST);
		uint64_t pos = __atomic_load_n(&lc.pos, __ATOMIC_ACQUIRE);

		if (pos >= lc.nev || lc.ev[pos - lc.base].thread == me || !lc.active)
			break;
		if (me != LC_NO_THREAD && __atomic_load_n(&lc.own_wanted, __ATOMIC_ACQUIRE) == me + 1)
			break; /* a transfer waits for an acquisition in our free code (lc_sync.c) */
		if (lc_mutexes_held > 0 && __atomic_load_n(&lc.mutex_waiters, __ATOMIC_ACQUIRE))
			break; /* a thread waits for a mutex, which may be one we hold: its release is
			          in our free code (owned mutexes: no event) */
		if (seq != last) {
			last = seq;
			t0 = mono_ms();
		} else if (mono_ms() - t0 >= HOLD_IDLE_MS) {
			break; /* nothing committed meanwhile: whoever has the turn may wait for us */
		}
		__atomic_fetch_add(&lc.turn_sleepers, 1, __ATOMIC_SEQ_CST);
		futex_word(&lc.turn_seq, FUTEX_WAIT_PRIVATE, seq, &ts);
		__atomic_fetch_sub(&lc.turn_sleepers, 1, __ATOMIC_SEQ_CST);
	}
	errno = e;
}

void lc_commit(void)
{
	const struct lc_ev *done = &lc.ev[lc.pos - lc.base];
	int hold = 0;

	if (lc.counting)
		lc_count(done);
	if (__builtin_expect(lc_soft_clocks, 0) && !lc_soft_keeps(done))
		lc_soft_clocks = 0; /* the lock's slow path is over (lc_sync.c) */
	if (__builtin_expect(done->elided != 0, 0))
		lc_own_committed(done);
	lc.pos++;
	lc.slot->index = lc.pos;
	if (__builtin_expect(lc.threaded, 0)) {
		hold = place_free_code(done);
		lc_turn_done();
	}
	/* a deferred handler ran at the end of this call, in this thread (lc_signals.c) */
	if (__builtin_expect(lc.pos < lc.nev && lc.ev[lc.pos - lc.base].kind == TRACE_EV_HANDLER, 0) &&
	    lc_peek_now())
		lc_signal_after();
	if (__builtin_expect(hold, 0))
		hold_to_turn();
}

/* --- descriptors --------------------------------------------------------------------------- */

/* What the descriptor is now (enum ip_fd_kind, judged as the recorder's classify() judges
 * it), -1 when it is not open. */
static int fd_kind(int fd)
{
	struct stat st;

	if (syscall(SYS_fstat, fd, &st) != 0)
		return -1;
	return ip_fd_kind(st.st_mode, st.st_rdev);
}

/* force: judge the descriptor as that kind instead of by fstat (0: by fstat). */
static int32_t fd_class(int fd, int force)
{
	const struct lc_ev *ev;
	int32_t v;
	int k;

	if (fd < 0 || fd >= LC_FD_MAX)
		return LC_FD_IGNORED;
	v = lc_fd[fd];
	if (v != LC_FD_UNKNOWN)
		return v;
	/* another thread may be classifying it at its turn: look once ours came */
	lc_turn();
	if ((v = lc_fd[fd]) != LC_FD_UNKNOWN)
		return v;
	/* The recorder classifies a descriptor at its first use by what it is (fstat): a socket
	 * or pipe it did not see made gets a SOCKET or PIPE event with no call, just before the
	 * event that used it; /dev/urandom reads become RANDOM events; anything else is left
	 * alone.  The LC looks at the descriptor too, not only at the next event: a regular file
	 * read on fd N is not a RANDOM event on fd N that follows it.  Standard input and output
	 * are whatever the replay is run with (a file where the recorded run had a terminal):
	 * there the recorded first-use event is taken whatever the descriptor is now. */
	k = force ? force : fd_kind(fd);
	ev = lc_peek();
	if (ev && ev->fd == fd && ev->call == TRACE_CALL_NONE &&
	    ((ev->kind == TRACE_EV_SOCKET && (k == IP_FD_SOCKET || k < 0 || fd <= 2)) ||
	     (ev->kind == TRACE_EV_PIPE &&
	      (k == IP_FD_PIPE || k == IP_FD_CHAR || k < 0 || fd <= 2)))) {
		/* (not open now: inherited from outside the session when recorded; its bytes are
		 * in the trace) */
		if (lc.halt_check) {
			lc_maybe_halt();
			if (ev != lc_peek())
				return fd_class(fd, force);
		}
		lc_fd[fd] = ev->channel ? (int32_t)ev->channel : LC_FD_IGNORED;
		lc_commit();
		return lc_fd[fd];
	}
	if (k < 0)
		return LC_FD_IGNORED; /* not open: the call fails anyway; look again next time */
	if (k == IP_FD_RANDOM)
		return lc_fd[fd] = LC_FD_RANDOM;
	return lc_fd[fd] = LC_FD_IGNORED;
}

int32_t lc_fd_class(int fd)
{
	return fd_class(fd, 0);
}

int32_t lc_fd_class_kernel(int fd)
{
	int32_t c;

	if (fd < 0 || fd >= LC_FD_MAX)
		return LC_FD_IGNORED;
	lc_fd[fd] = LC_FD_UNKNOWN;
	c = fd_class(fd, IP_FD_CHAR);
	if (c > 0 && c < LC_CHAN_MAX)
		lc_chan[c].kernel = 1;
	return c;
}

void lc_fd_forget(int fd)
{
	if (fd >= 0 && fd < LC_FD_MAX)
		lc_fd[fd] = LC_FD_UNKNOWN;
}

int lc_own_fd(int fd)
{
	return fd >= 0 && (fd == lc.ctl || lc_share_owns(fd));
}

void lc_own_fd_move(int fd)
{
	lc_share_move(fd); /* a staging file's (lc_chan.c) */
	if (fd >= 0 && fd == lc.ctl) {
		int hi = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, fd + 1);

		if (hi >= 0) {
			lc.ctl = hi;
			syscall(SYS_close, fd);
		}
	}
}

/* --- process life -------------------------------------------------------------------------- */

static void on_exit_handler(int status, void *arg)
{
	(void)arg;
	if (lc_on())
		lc_exit_event(status);
}

/* The recorder put in the EXIT event each channel's running hash of the bytes it sent, for
 * the channels whose last bytes no event's hash covered (recorder/core.c, exit_hashes): a
 * replay whose events all matched may still have sent other bytes (a data race decided
 * them, or uninitialised memory holding addresses), and a short run's whole output is in
 * that last stretch.  Every event matched, so this is a warning (the replay's summary), not
 * a divergence: the first channel that differs, and how many others. */
static void check_exit_hashes(const struct lc_ev *ev)
{
	const uint8_t *p = lc.data + ev->data_off;
	uint32_t i, first = 0, others = 0;
	char text[320], where[32] = "";
	int fd, at = -1;

	for (i = 0; i + 8 <= ev->data_len; i += 8) {
		uint32_t id = (uint32_t)p[i] | (uint32_t)p[i + 1] << 8 | (uint32_t)p[i + 2] << 16 |
		              (uint32_t)p[i + 3] << 24;
		uint32_t h = (uint32_t)p[i + 4] | (uint32_t)p[i + 5] << 8 |
		             (uint32_t)p[i + 6] << 16 | (uint32_t)p[i + 7] << 24;

		if (!id || id >= LC_CHAN_MAX || lc_chan[id].hash[0] == h)
			continue;
		if (first)
			others++;
		else
			first = id;
	}
	if (!first)
		return;
	for (fd = 0; fd < LC_FD_MAX && at < 0; fd++)
		if (lc_fd[fd] == (int32_t)first)
			at = fd;
	if (at >= 0)
		snprintf(where, sizeof(where), " (fd %d)", at);
	snprintf(text, sizeof(text), "every event matched, but the bytes it sent on channel %u%s "
	         "(%llu in all) are not the recorded ones%s%.0u%s: a data race, uninitialised "
	         "memory or an input encore does not see decided them", first, where,
	         (unsigned long long)lc_chan[first].bytes[0], others ? ", nor on " : "", others,
	         others ? " other channel(s)" : "");
	rep_proto_send(lc.ctl, REP_MSG_WARN, 0, 0, 0, text);
}

void lc_exit_event(int status)
{
	const struct lc_ev *ev;

	if (lc.done)
		return;
	ev = lc_expect(TRACE_EV_EXIT, -1, "exit");
	if (ev && ev->data_len)
		check_exit_hashes(ev);
	lc_commit();
	lc.done = 1;
	lc.active = 0;
	lc.slot->state = REP_SLOT_DONE;
	ctl_send_flags(REP_MSG_DONE, (int64_t)lc.pos, status,
	               lc.online && lc_has_sp() && lc_sp_holds() ? 1u : 0u, NULL);
}

/* Our name and pid in our own environment: an image started later from it (exec, and
 * glibc's system() and popen() children, lc_env_spawn_begin) knows it is not us, and whose
 * child it is.  With putenv the variable points at stamp_buf, where setenv would have taken
 * a copy from the program's heap, as the recorder does not (lc_alloc.h); a forked child
 * stamps its own name and pid there again (lc_child_start).  0, or -1 (too long). */
static char stamp_buf[IP_DIR_MAX + 256];

static int stamp_self(void)
{
	struct ip_rep_env e = { .pid = (int64_t)syscall(SYS_getpid), .seg = lc.seg, .dir = lc.dir };

	memcpy(e.name, lc.name, sizeof(e.name));
	memcpy(stamp_buf, REP_ENV "=", sizeof(REP_ENV));
	return ip_rep_env_encode(stamp_buf + sizeof(REP_ENV), sizeof(stamp_buf) - sizeof(REP_ENV),
	                         &e, NULL, NULL) == 0 ? 0 : -1;
}

/* In a new child (fork): become PARENT.k, with our own trace and our own connection.  The
 * descriptor and channel tables are the parent's, copied by fork: the child inherited its
 * channels with their byte counts and hashes. */
void lc_child_start(uint32_t k)
{
	char why[512];
	size_t n;

	lc_depth++;
	if (lc.ctl >= 0)
		syscall(SYS_close, lc.ctl);
	lc.ctl = -1;
	free(lc.ev);
	free(lc.data);
	lc.ev = NULL;
	lc.data = NULL;
	lc.nev = lc.pos = 0;
	lc.target = REP_NO_TARGET;
	/* the child's image 0: nothing done, no halt condition, no counters until CONFIG */
	lc.done = lc.online = lc.halt_check = lc.counting = 0;
	lc.seg = 0;
	lc.threaded = 0;
	lc_threads_fork_child();
	lc_online_reset();
	lc_pids_reset();
	n = strlen(lc.name);
	snprintf(lc.name + n, sizeof(lc.name) - n, ".%u", k);
	/* (in place: the parent's stamp, where our environment points, named the parent) */
	if (stamp_buf[0] && stamp_self() != 0)
		stamp_buf[sizeof(REP_ENV)] = '\0';
	if (load_trace(why, sizeof(why)) != 0) {
		ctl_hello();
		lc_depth--;
		lc_diverge("%s", why);
	}
	ctl_hello();
	lc_depth--;
	if (lc_diverge_later)
		lc_refuse_predicate(lc_diverge_why);
}

/* --- exec ---------------------------------------------------------------------------------- */

extern char **environ;

static const char *self_so(void)
{
	static char path[4096];
	Dl_info info;

	if (!path[0] && dladdr((void *)self_so, &info) && info.dli_fname && info.dli_fname[0] == '/')
		snprintf(path, sizeof(path), "%s", info.dli_fname);
	return path;
}

static int cloexec(int fd)
{
	long f = syscall(SYS_fcntl, fd, F_GETFD);

	return f < 0 || (f & FD_CLOEXEC);
}

/* Iterators over the state the new image keeps, for the encoder: the channels of the
 * descriptors not marked close-on-exec (one item per such descriptor, as the decoder takes
 * them), then those descriptors' classes.  *fd is the next descriptor to look at. */
static int next_kept(int *fd, int chans)
{
	while (*fd < LC_FD_MAX) {
		int32_t c = lc_fd[(*fd)++];

		if (chans ? c > 0 && c < LC_CHAN_MAX : c != LC_FD_UNKNOWN && c != LC_FD_IGNORED)
			if (!cloexec(*fd - 1))
				return *fd - 1;
	}
	return -1;
}

static int next_chan_item(void *ctx, uint64_t *v)
{
	int fd = next_kept(ctx, 1);
	const struct lc_chan *c;

	if (fd < 0)
		return 0;
	c = &lc_chan[lc_fd[fd]];
	v[0] = (uint64_t)lc_fd[fd];
	v[1] = c->bytes[0];
	v[2] = c->bytes[1];
	v[3] = c->hash[0];
	v[4] = c->hash[1];
	v[5] = c->external;
	return 1;
}

static int next_fd_item(void *ctx, uint64_t *v)
{
	int fd = next_kept(ctx, 0);

	if (fd < 0)
		return 0;
	v[0] = (uint64_t)fd;
	v[1] = (uint64_t)(int64_t)lc_fd[fd];
	return 1;
}

/* --setenv's list goes on to every new image, from our own environment (the program's is the
 * recorded one, without it) unless the program's list has it. */
static void env_carry_setenv(char **out, size_t *n, char *const envp[])
{
	for (size_t i = 0; envp && envp[i]; i++)
		if (strncmp(envp[i], LC_SETENV "=", sizeof(LC_SETENV)) == 0)
			return;
	for (char **e = env_own; e && *e; e++)
		if (strncmp(*e, LC_SETENV "=", sizeof(LC_SETENV)) == 0) {
			out[(*n)++] = *e;
			return;
		}
}

/* Built in static storage: exec may follow fork in a program that cannot allocate.  With
 * state: the channels and descriptors the new image keeps (exec); without: a new process
 * (posix_spawn), whose recorder classified its descriptors anew. */
static char **build_env(char *const envp[], const char *name, uint32_t seg, int state)
{
	static char buf[1 << 17], preload[8192], kids[16384];
	static char *out[4096];
	const char *so = self_so();
	size_t n = 0;
	int have_preload = 0, chi = state ? 0 : LC_FD_MAX, fdi = state ? 0 : LC_FD_MAX;
	struct ip_env_list ch = { next_chan_item, &chi, IP_REP_CH_FIELDS, 0 };
	struct ip_env_list fds = { next_fd_item, &fdi, IP_REP_FD_FIELDS, 2 };
	/* first: the index after the EXEC event */
	struct ip_rep_env e = { .seg = seg, .has_first = 1,
		                .first = state ? lc.pos + 1 : 0, .dir = lc.dir };

	lc_depth++;
	if (state) {
		int64_t c[4];

		e.rpid = lc.rec_pid; /* an exec keeps the pid */
		e.t0 = lc.rec_t0;    /* earlier than the new image's start: time never goes back */
		lc_counters(c, 0);
		memcpy(e.cnt, c, sizeof(c));
		e.has_cnt = 1;
		/* the children forked so far (the new image may wait for them) */
		if (lc_pids_text(kids, sizeof(kids)) > 0)
			e.kids_text = kids;
	}
	if (strlen(name) >= sizeof(e.name))
		goto fail;
	memcpy(e.name, name, strlen(name) + 1);
	memcpy(buf, REP_ENV "=", sizeof(REP_ENV));
	if (ip_rep_env_encode(buf + sizeof(REP_ENV), sizeof(buf) - sizeof(REP_ENV), &e, &ch, &fds))
		goto fail;
	out[n++] = buf;
	for (size_t i = 0; envp && envp[i] && n < sizeof(out) / sizeof(out[0]) - 2; i++) {
		if (strncmp(envp[i], REP_ENV "=", sizeof(REP_ENV)) == 0 ||
		    strncmp(envp[i], "ENCORE_RECORD=", 14) == 0)
			continue; /* (the recorder's, in the recorded environment the program got) */
		if (strncmp(envp[i], "LD_PRELOAD=", 11) == 0) {
			have_preload = 1;
			if (so[0] && preload_value(so, envp[i] + 11, preload, sizeof(preload)) > 0) {
				out[n++] = preload;
				continue;
			}
		}
		out[n++] = envp[i];
	}
	if (!have_preload && so[0]) {
		snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", so);
		out[n++] = preload;
	}
	env_carry_setenv(out, &n, envp);
	out[n] = NULL;
	lc_depth--;
	return out;
fail:
	lc_depth--;
	return NULL;
}

char **lc_exec_env(char *const envp[])
{
	char **env = build_env(envp, lc.name, lc.seg + 1, 1);

	lc_depth++;
	if (env)
		ctl_send(REP_MSG_EXEC, (int64_t)lc.pos, 0, NULL);
	lc_depth--;
	return env;
}

/* The environment of a child started by posix_spawn: PARENT.k, a new process. */
char **lc_spawn_env(char *const envp[], uint32_t k)
{
	char name[TRACE_NAME_MAX + 16];

	snprintf(name, sizeof(name), "%s.%u", lc.name, k);
	return build_env(envp, name, 0, 0);
}

/* For the length of a system() or popen(), whose child glibc starts from `environ` past our
 * interposers: the program's environment as it is now, our variables in place of the
 * recorder's (the child's LC then knows it is a new process, PARENT.sK).  Returns the
 * environment to put back (lc_env_spawn_end), or NULL when nothing was changed.  One at a
 * time: a second thread's waits. */
static int env_spawn_busy;

char **lc_env_spawn_begin(void)
{
	static char *out[4096], preload[8192];
	const char *so = self_so();
	char **cur = environ, *stamp = NULL;
	size_t n = 0;
	int have_preload = 0;

	if (!env_recorded || !env_own)
		return NULL;
	for (char **e = env_own; *e; e++)
		if (strncmp(*e, REP_ENV "=", sizeof(REP_ENV)) == 0)
			stamp = *e;
	while (__atomic_exchange_n(&env_spawn_busy, 1, __ATOMIC_ACQUIRE))
		IP_REAL(syscall)(SYS_sched_yield);
	if (stamp)
		out[n++] = stamp;
	for (size_t i = 0; cur && cur[i] && n < sizeof(out) / sizeof(out[0]) - 2; i++) {
		if (strncmp(cur[i], REP_ENV "=", sizeof(REP_ENV)) == 0 ||
		    strncmp(cur[i], "ENCORE_RECORD=", 14) == 0)
			continue;
		if (strncmp(cur[i], "LD_PRELOAD=", 11) == 0 && so[0] &&
		    preload_value(so, cur[i] + 11, preload, sizeof(preload)) > 0) {
			out[n++] = preload;
			have_preload = 1;
			continue;
		}
		out[n++] = cur[i];
	}
	if (!have_preload && so[0] && preload_value(so, "", preload, sizeof(preload)) > 0)
		out[n++] = preload;
	env_carry_setenv(out, &n, cur);
	out[n] = NULL;
	environ = out;
	return cur;
}

void lc_env_spawn_end(char **saved)
{
	if (!saved)
		return;
	/* (the program's own setenv from another thread meanwhile went into our list: kept) */
	if (environ == saved || environ != NULL)
		environ = saved;
	__atomic_store_n(&env_spawn_busy, 0, __ATOMIC_RELEASE);
}

void lc_exec_failed(void)
{
	char why[512];

	lc_depth++;
	free(lc.ev);
	free(lc.data);
	lc.ev = NULL;
	lc.data = NULL;
	lc.seg++;
	lc.next_base = lc.pos;
	if (load_trace(why, sizeof(why)) != 0) {
		lc_depth--;
		lc_diverge("exec failed, but it succeeded when recorded (%s)", why);
	}
	lc_depth--;
}

/* --- configuration ------------------------------------------------------------------------- */

/* ENCORE_REPLAY, decoded by interpose/env.c (the format is in interpose.h): the state the
 * new image continues (after exec: ch=, fd=, cnt=, kids=, first=) is applied here.  pid is
 * the process that last wrote the variable (0 from the GD): another value means an image
 * the LC did not see start (exec, system(), posix_spawn), which is not replayed yet. */
static int env_parse(const char *s, uint32_t *seg, long *pid)
{
	struct ip_rep_env e;
	uint64_t v[IP_REP_CH_FIELDS];
	const char *p;
	int r;

	*seg = 0;
	*pid = 0;
	if (ip_rep_env_decode(s, &e) != 0)
		return -1;
	memcpy(lc.name, e.name, sizeof(lc.name));
	snprintf(lc.dir, sizeof(lc.dir), "%s", e.dir);
	*seg = e.seg;
	*pid = (long)e.pid;
	if (e.has_first)
		lc.next_base = e.first;
	/* ID:SENT:RECEIVED:HASH_OUT:HASH_IN:EXTERNAL,... (channels kept across exec) */
	for (p = e.ch.p; (r = ip_env_list_next(&p, e.ch.p + e.ch.len, v, IP_REP_CH_FIELDS, 0)) > 0;) {
		if (v[0] < LC_CHAN_MAX) {
			lc_chan[v[0]].bytes[0] = v[1];
			lc_chan[v[0]].bytes[1] = v[2];
			lc_chan[v[0]].hash[0] = (uint32_t)v[3];
			lc_chan[v[0]].hash[1] = (uint32_t)v[4];
			lc_chan[v[0]].external = (uint8_t)v[5];
		}
	}
	if (r < 0)
		return -1;
	/* FD:CLASS,... (a channel id, or LC_FD_RANDOM) */
	for (p = e.fd.p; (r = ip_env_list_next(&p, e.fd.p + e.fd.len, v, IP_REP_FD_FIELDS, 2)) > 0;)
		if (v[0] < LC_FD_MAX)
			lc_fd[v[0]] = (int32_t)(int64_t)v[1];
	if (r < 0)
		return -1;
	if (e.kids.p)
		lc_pids_parse(e.kids.p, e.kids.p + e.kids.len);
	if (e.has_cnt)
		lc_counters(e.cnt, 1);
	return 0;
}

static int lc_started;

/* A library's constructor that ran before ours read the pid and the clock (libisc's seeds
 * OpenSSL's random generator, which keeps both, to reseed after a fork or when its seed has
 * aged): the recorded run's calls were not logged (the recorder had not started either) and
 * gave the recorded pid and a time before the trace's start, which later events give back
 * here; live values would make the replay look like a fork, and time go back.  So these
 * calls give the recorded pid and the trace's start. */
int lc_before(int64_t *rpid, int64_t *t0)
{
	static int64_t pid_v = -1, t0_v;
	const char *env;
	struct ip_rep_env e;

	if (lc_started || lc_depth)
		return 0;
	if (pid_v < 0) {
		/* (pid=: a value another process stamped, inherited through system(): not ours) */
		env = getenv(REP_ENV);
		pid_v = 0;
		if (env && ip_rep_env_decode(env, &e) == 0 &&
		    (e.pid == 0 || e.pid == (int64_t)syscall(SYS_getpid))) {
			pid_v = e.rpid;
			t0_v = e.t0;
		}
	}
	*rpid = pid_v;
	*t0 = t0_v;
	return pid_v > 0;
}

__attribute__((constructor)) static void lc_init(void)
{
	const char *env;
	char why[512];
	uint32_t seg = 0;
	long pid = 0;

	lc_started = 1;
	ip_resolve_all();
	lc.slot = &dummy_slot;
	env = getenv(REP_ENV);
	if (!env || !*env)
		return;
	lc_depth++;
	ip_unwind_load(); /* (for the backtraces of divergence reports and halts) */
	lc.min_fd = ip_pick_min_fd();
	if (env_parse(env, &seg, &pid) != 0)
		goto out;
	board_map();
	lc.seg = seg;
	if (pid != 0 && pid != (long)syscall(SYS_getpid)) {
		/* A child started behind the interposers' back (system(), popen(): glibc spawns
		 * them internally).  The recorder named it PARENT.sK; the GD counts them the same
		 * way and tells us. */
		lc.seg = 0;
		ctl_hello_as(1);
		if (load_trace(why, sizeof(why)) != 0) {
			lc_depth--;
			lc_diverge("%s", why);
		}
		goto started;
	}
	if (stamp_self() == 0)
		putenv(stamp_buf);
	if (load_trace(why, sizeof(why)) != 0) {
		ctl_hello();
		lc_depth--;
		lc_diverge("%s", why);
	}
	ctl_hello();
started:
	if (env_recorded) {
		/* from here on the program sees the environment it started with when recorded */
		const char *over = getenv(LC_SETENV);

		if (over && *over)
			env_override(over);
		env_own = environ;
		environ = env_recorded;
	}
	on_exit(on_exit_handler, NULL);
	lc_atfork_install();
	lc.active = 1;
	lc_early_done(); /* the randomness of constructors that ran before ours (lc_io_more.c) */
	if (lc_diverge_later) {
		lc_depth--;
		lc_refuse_predicate(lc_diverge_why);
	}
out:
	lc_depth--;
}
