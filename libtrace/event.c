/*
 * event.c: names of event kinds, calls and error codes; process metadata encoding; the
 * diagnostics helper.  Everything here is table lookups and small codecs shared by the
 * writer, the reader and the CLI.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"

static const char *const kind_names[] = {
	[TRACE_EV_NONE] = "none",       [TRACE_EV_SEND] = "send",
	[TRACE_EV_RECV] = "recv",       [TRACE_EV_SOCKET] = "socket",
	[TRACE_EV_BIND] = "bind",       [TRACE_EV_LISTEN] = "listen",
	[TRACE_EV_CONNECT] = "connect", [TRACE_EV_ACCEPT] = "accept",
	[TRACE_EV_SHUTDOWN] = "shutdown", [TRACE_EV_CLOSE] = "close",
	[TRACE_EV_PIPE] = "pipe",       [TRACE_EV_DUP] = "dup",
	[TRACE_EV_FORK] = "fork",       [TRACE_EV_EXEC] = "exec",
	[TRACE_EV_EXIT] = "exit",       [TRACE_EV_SIGNAL] = "signal",
	[TRACE_EV_READY] = "ready",     [TRACE_EV_CLOCK] = "clock",
	[TRACE_EV_RANDOM] = "random",   [TRACE_EV_INPUT] = "input",
	[TRACE_EV_MARK] = "mark",       [TRACE_EV_PID] = "pid",
	[TRACE_EV_THREAD] = "thread",   [TRACE_EV_WAIT] = "wait",
	[TRACE_EV_SYNC] = "sync",       [TRACE_EV_UNMASK] = "unmask",
	[TRACE_EV_ORDER] = "order",
	[TRACE_EV_HANDLER] = "handler", [TRACE_EV_KILL] = "kill",
	[TRACE_EV_TIMER] = "timer",    [TRACE_EV_SANDBOX] = "sandbox",
	[TRACE_EV_PASS] = "pass",       [TRACE_EV_FDNUM] = "fdnum",
};

const char *trace_kind_name(uint32_t kind)
{
	if (kind <= TRACE_EV_KIND_MAX && kind_names[kind])
		return kind_names[kind];
	return "unknown";
}

uint32_t trace_kind_from_name(const char *name)
{
	uint32_t k;

	for (k = 1; k <= TRACE_EV_KIND_MAX; k++)
		if (kind_names[k] && strcmp(kind_names[k], name) == 0)
			return k;
	return TRACE_EV_NONE;
}

static const char *const call_names[] = {
	"none", "send", "sendto", "sendmsg", "write", "writev", "recv", "recvfrom", "recvmsg",
	"read", "readv", "socket", "socketpair", "pipe", "pipe2", "bind", "listen", "connect",
	"accept", "accept4", "shutdown", "close", "dup", "dup2", "dup3", "fcntl", "fork",
	"execve", "exit", "poll", "ppoll", "select", "pselect", "epoll_wait", "epoll_pwait",
	"clock_gettime", "gettimeofday", "time", "getrandom", "getpid", "getppid",
	"pthread_create", "encore_mark", "signal", "syscall", "sendfile", "splice",
	"copy_file_range", "tee", "vmsplice", "stdio",
	"getentropy", "waitpid", "wait", "wait3", "wait4", "waitid",
	[TRACE_CALL_MUTEX_LOCK] = "pthread_mutex_lock",
	[TRACE_CALL_MUTEX_TRYLOCK] = "pthread_mutex_trylock",
	[TRACE_CALL_MUTEX_TIMEDLOCK] = "pthread_mutex_timedlock",
	[TRACE_CALL_MUTEX_UNLOCK] = "pthread_mutex_unlock",
	[TRACE_CALL_RWLOCK_RDLOCK] = "pthread_rwlock_rdlock",
	[TRACE_CALL_RWLOCK_TRYRDLOCK] = "pthread_rwlock_tryrdlock",
	[TRACE_CALL_RWLOCK_TIMEDRDLOCK] = "pthread_rwlock_timedrdlock",
	[TRACE_CALL_RWLOCK_WRLOCK] = "pthread_rwlock_wrlock",
	[TRACE_CALL_RWLOCK_TRYWRLOCK] = "pthread_rwlock_trywrlock",
	[TRACE_CALL_RWLOCK_TIMEDWRLOCK] = "pthread_rwlock_timedwrlock",
	[TRACE_CALL_RWLOCK_UNLOCK] = "pthread_rwlock_unlock",
	[TRACE_CALL_COND_WAIT] = "pthread_cond_wait",
	[TRACE_CALL_COND_TIMEDWAIT] = "pthread_cond_timedwait",
	[TRACE_CALL_COND_WAKE] = "cond_wake",
	[TRACE_CALL_COND_SIGNAL] = "pthread_cond_signal",
	[TRACE_CALL_COND_BROADCAST] = "pthread_cond_broadcast",
	[TRACE_CALL_SEM_WAIT] = "sem_wait",
	[TRACE_CALL_SEM_TRYWAIT] = "sem_trywait",
	[TRACE_CALL_SEM_TIMEDWAIT] = "sem_timedwait",
	[TRACE_CALL_SEM_POST] = "sem_post",
	[TRACE_CALL_BARRIER_ARRIVE] = "pthread_barrier_wait",
	[TRACE_CALL_BARRIER_LEAVE] = "barrier_leave",
	[TRACE_CALL_SPIN_LOCK] = "pthread_spin_lock",
	[TRACE_CALL_SPIN_TRYLOCK] = "pthread_spin_trylock",
	[TRACE_CALL_SPIN_UNLOCK] = "pthread_spin_unlock",
	[TRACE_CALL_THREAD_EXIT] = "thread_exit",
	[TRACE_CALL_PTHREAD_JOIN] = "pthread_join",
	[TRACE_CALL_GETTID] = "gettid",
	[TRACE_CALL_PTHREAD_ONCE] = "pthread_once",
	[TRACE_CALL_FUTEX_WAIT] = "futex_wait",
	[TRACE_CALL_FUTEX_WAKE] = "futex_wake",
	[TRACE_CALL_KILL] = "kill", [TRACE_CALL_TGKILL] = "tgkill",
	[TRACE_CALL_SIGQUEUE] = "sigqueue", [TRACE_CALL_ALARM] = "alarm",
	[TRACE_CALL_SETITIMER] = "setitimer", [TRACE_CALL_HANDLER] = "handler",
	[TRACE_CALL_SIGWAIT] = "sigwait", [TRACE_CALL_SIGWAITINFO] = "sigwaitinfo",
	[TRACE_CALL_SIGTIMEDWAIT] = "sigtimedwait", [TRACE_CALL_TIMERFD_CREATE] = "timerfd_create",
	[TRACE_CALL_TIMERFD_SETTIME] = "timerfd_settime",
	[TRACE_CALL_TIMERFD_GETTIME] = "timerfd_gettime", [TRACE_CALL_SIGNALFD] = "signalfd",
	[TRACE_CALL_TIMER_CREATE] = "timer_create", [TRACE_CALL_TIMER_SETTIME] = "timer_settime",
	[TRACE_CALL_TIMER_GETTIME] = "timer_gettime",
	[TRACE_CALL_TIMER_GETOVERRUN] = "timer_getoverrun",
	[TRACE_CALL_TIMER_DELETE] = "timer_delete",
	[TRACE_CALL_CLONE] = "clone", [TRACE_CALL_CLONE3] = "clone3",
	[TRACE_CALL_GETLOADAVG] = "getloadavg", "sysinfo", "getrusage", "times", "clock", "uname",
	"gethostname", "sysconf", "getitimer", "sched_getaffinity",
	[TRACE_CALL_PRCTL] = "prctl", [TRACE_CALL_SECCOMP] = "seccomp",
	[TRACE_CALL_OPEN] = "open",
	[TRACE_CALL_EARLY_RANDOM] = "early_random",
	[TRACE_CALL_GETSOCKOPT] = "getsockopt", "getifaddrs", "if_nameindex", "if_nametoindex",
	"if_indextoname", "statfs", "statvfs", "arc4random", "arc4random_buf",
	"epoll_create",
};

_Static_assert(sizeof(call_names) / sizeof(call_names[0]) == TRACE_CALL_MAX,
               "call_names must follow enum trace_call");

/* (numbers left free for other ranges have no name: "unknown") */
const char *trace_call_name(uint32_t call)
{
	return call < TRACE_CALL_MAX && call_names[call] ? call_names[call] : "unknown";
}

int trace_is_so_error_read(uint32_t kind, uint32_t call, uint32_t naux, const int64_t *aux)
{
	/* 4: SO_ERROR on Linux, spelt out as the trace format does */
	return kind == TRACE_EV_CONNECT && naux >= 2 && aux[0] == 4 &&
	       (call == TRACE_CALL_GETSOCKOPT || call == TRACE_CALL_CONNECT);
}

const char *trace_file_kind_name(uint32_t kind)
{
	switch (kind) {
	case TRACE_FILE_EXE: return "exe";
	case TRACE_FILE_LIB: return "lib";
	case TRACE_FILE_READ: return "file";
	}
	return "unknown";
}

const char *trace_path_op_name(uint32_t op)
{
	switch (op) {
	case TRACE_PATH_FILE: return "file";
	case TRACE_PATH_DIR: return "dir";
	case TRACE_PATH_LINK: return "link";
	case TRACE_PATH_REMOVED: return "removed";
	}
	return "unknown";
}

const char *trace_strerror(int code)
{
	switch (code) {
	case TRACE_OK: return "success";
	case TRACE_EIO: return "input/output error";
	case TRACE_ENOMEM: return "out of memory";
	case TRACE_EMAGIC: return "not an encore trace file";
	case TRACE_EVERSION: return "trace written by a newer encore";
	case TRACE_ECORRUPT: return "corrupt trace data";
	case TRACE_ETRUNCATED: return "trace file cut short";
	case TRACE_EINVAL: return "invalid argument";
	case TRACE_EFULL: return "disk budget exhausted";
	case TRACE_ENOENT: return "not found";
	case TRACE_EPARSE: return "predicate does not parse";
	}
	return "unknown error";
}

void fmt_diag(struct trace_diag *d, int code, const char *file, uint64_t offset,
              const char *fmt, ...)
{
	va_list ap;

	if (!d)
		return;
	d->code = code;
	d->offset = offset;
	snprintf(d->file, sizeof(d->file), "%s", file ? file : "");
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
}

/* --- metadata TLV ---------------------------------------------------------------------- */

static size_t put_tlv(uint8_t *buf, size_t at, uint64_t tag, const void *val, size_t len)
{
	uint8_t tmp[20];
	size_t n = put_varint(tmp, tag);

	n += put_varint(tmp + n, len);
	if (buf) {
		memcpy(buf + at, tmp, n);
		memcpy(buf + at + n, val, len);
	}
	return n + len;
}

static size_t put_tlv_str(uint8_t *buf, size_t at, uint64_t tag, const char *s)
{
	return put_tlv(buf, at, tag, s, strlen(s));
}

static size_t put_tlv_int(uint8_t *buf, size_t at, uint64_t tag, uint64_t v)
{
	uint8_t tmp[10];

	return put_tlv(buf, at, tag, tmp, put_varint(tmp, v));
}

size_t fmt_meta_encode(const struct trace_process *p, uint8_t *buf)
{
	size_t n = 0;
	uint32_t i;

	n += put_tlv_str(buf, n, META_NAME, p->name);
	n += put_tlv_str(buf, n, META_PARENT, p->parent);
	n += put_tlv_str(buf, n, META_HOST, p->host);
	n += put_tlv_str(buf, n, META_HOST_ID, p->host_id);
	n += put_tlv_str(buf, n, META_SESSION, p->session);
	n += put_tlv_int(buf, n, META_PID, zigzag(p->pid));
	n += put_tlv_int(buf, n, META_PPID, zigzag(p->ppid));
	n += put_tlv_int(buf, n, META_FORK_INDEX, p->fork_index);
	n += put_tlv_int(buf, n, META_SEGMENT, p->segment);
	n += put_tlv_int(buf, n, META_FIRST_INDEX, p->first_index);
	n += put_tlv_int(buf, n, META_START_REALTIME, p->start_realtime_ns);
	n += put_tlv_str(buf, n, META_EXE, p->exe);
	n += put_tlv_str(buf, n, META_CWD, p->cwd);
	n += put_tlv(buf, n, META_BUILD_ID, p->build_id,
	             p->build_id_len <= sizeof(p->build_id) ? p->build_id_len : 0);
	for (i = 0; i < p->argc && p->argv; i++)
		n += put_tlv_str(buf, n, META_ARG, p->argv[i] ? p->argv[i] : "");
	if (p->flags) /* (absent from older traces: 0) */
		n += put_tlv_int(buf, n, META_FLAGS, p->flags);
	return n;
}

static int get_str(char *dst, size_t cap, const uint8_t *v, uint64_t len)
{
	if (len >= cap || memchr(v, 0, len))
		return TRACE_ECORRUPT;
	memcpy(dst, v, len);
	dst[len] = '\0';
	return 0;
}

static int get_int(const uint8_t *v, uint64_t len, uint64_t *out)
{
	struct cursor c = { v, v + len, 0, 0 };

	*out = cur_varint(&c);
	return (c.short_read || c.bad || c.p != c.end) ? TRACE_ECORRUPT : 0;
}

int fmt_meta_decode(const uint8_t *buf, size_t len, struct trace_process *p)
{
	struct cursor c = { buf, buf + len, 0, 0 };
	size_t cap_args = 0;
	int rc = 0;

	memset(p, 0, sizeof(*p));
	while (c.p < c.end && rc == 0) {
		uint64_t tag = cur_varint(&c), vlen = cur_varint(&c), iv = 0;
		const uint8_t *v = cur_bytes(&c, vlen);

		if (c.short_read || c.bad)
			return TRACE_ECORRUPT;
		switch (tag) {
		case META_NAME: rc = get_str(p->name, sizeof(p->name), v, vlen); break;
		case META_PARENT: rc = get_str(p->parent, sizeof(p->parent), v, vlen); break;
		case META_HOST: rc = get_str(p->host, sizeof(p->host), v, vlen); break;
		case META_HOST_ID: rc = get_str(p->host_id, sizeof(p->host_id), v, vlen); break;
		case META_SESSION: rc = get_str(p->session, sizeof(p->session), v, vlen); break;
		case META_EXE: rc = get_str(p->exe, sizeof(p->exe), v, vlen); break;
		case META_CWD: rc = get_str(p->cwd, sizeof(p->cwd), v, vlen); break;
		case META_PID: rc = get_int(v, vlen, &iv); p->pid = unzigzag(iv); break;
		case META_PPID: rc = get_int(v, vlen, &iv); p->ppid = unzigzag(iv); break;
		case META_FORK_INDEX: rc = get_int(v, vlen, &p->fork_index); break;
		case META_SEGMENT:
			rc = get_int(v, vlen, &iv);
			if (iv > UINT32_MAX)
				rc = TRACE_ECORRUPT;
			p->segment = (uint32_t)iv;
			break;
		case META_FIRST_INDEX: rc = get_int(v, vlen, &p->first_index); break;
		case META_FLAGS:
			rc = get_int(v, vlen, &iv);
			if (iv > UINT32_MAX)
				rc = TRACE_ECORRUPT;
			p->flags = (uint32_t)iv;
			break;
		case META_START_REALTIME: rc = get_int(v, vlen, &p->start_realtime_ns); break;
		case META_BUILD_ID:
			if (vlen > sizeof(p->build_id))
				rc = TRACE_ECORRUPT;
			else {
				memcpy(p->build_id, v, vlen);
				p->build_id_len = (uint32_t)vlen;
			}
			break;
		case META_ARG:
			if (p->argc == cap_args) {
				char **nv;

				cap_args = cap_args ? cap_args * 2 : 8;
				nv = realloc(p->argv, cap_args * sizeof(*nv));
				if (!nv) {
					rc = TRACE_ENOMEM;
					break;
				}
				p->argv = nv;
			}
			if (memchr(v, 0, vlen)) {
				rc = TRACE_ECORRUPT;
				break;
			}
			p->argv[p->argc] = strndup((const char *)v, vlen);
			if (!p->argv[p->argc]) {
				rc = TRACE_ENOMEM;
				break;
			}
			p->argc++;
			break;
		default:
			break; /* a later version's field: skip it */
		}
	}
	if (rc == 0 && !p->name[0])
		rc = TRACE_ECORRUPT; /* every trace names its process */
	if (rc)
		fmt_meta_free(p);
	return rc;
}

void fmt_meta_free(struct trace_process *p)
{
	uint32_t i;

	for (i = 0; i < p->argc; i++)
		free(p->argv[i]);
	free(p->argv);
	p->argv = NULL;
	p->argc = 0;
}

/* Here, not in session.c, because the recorder names the files it writes and links only the
 * writer side of libtrace (libtrace/meson.build). */
int trace_file_name(const char *name, uint32_t segment, char *out, size_t cap)
{
	int n;

	if (!name[0] || strchr(name, '/') || strchr(name, '@'))
		return TRACE_EINVAL;
	n = segment ? snprintf(out, cap, "%s@%u.trace", name, segment)
	            : snprintf(out, cap, "%s.trace", name);
	return n < 0 || (size_t)n >= cap ? TRACE_EINVAL : 0;
}
