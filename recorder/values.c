/*
 * values.c: the machine's and the process's state as libc reads it past the other
 * interposers, recorded so that a replay (later, or on another machine) gets what the
 * recorded process got.
 *
 * glibc's getloadavg opens and reads /proc/loadavg with libc-internal calls no interposer
 * sees (files.c makes a kernel-state file external input only when the program opens it);
 * sysinfo, getrusage, times, uname and sched_getaffinity are system calls; clock reads the
 * process's CPU clock inside libc, past clock_gettime's interposer; gethostname asks uname;
 * sysconf's processor and memory counts and get_nprocs read /sys and /proc inside libc
 * (get_nprocs is logged as the sysconf whose answer it is).
 * Each is an INPUT event without channel (fd -1) of its own call (110-119), result and errno
 * as the call returned them, data = what it filled in (schemas/trace-format.md, "Machine
 * values"); replayer/lc_values.c gives it back.  CPython's regrtest prints the load average
 * on every line, os.cpu_count sizes thread pools, resource.getrusage and os.times measure.
 *
 * None is a hot path (a clock-like read at most: clock, times); nothing is allocated.
 * sysconf is an event only for the names whose answer is the machine's state
 * (rec_sysconf_logged, the same test on both sides); the program's allocator as a library
 * of its own passes through (jemalloc counts the processors at its start).
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/times.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "rec.h"

#define RA() __builtin_return_address(0)

/* (rec.h) */
void rec_log_machine(uint32_t call, long r, int e, int failed, const void *out, size_t n,
                        uint32_t naux, int64_t a0, void *ra)
{
	struct trace_event ev;

	rec_event_init(&ev, TRACE_EV_INPUT, call, -1);
	ev.result = r;
	ev.err = failed ? e : 0;
	if (out && n && !failed) {
		ev.data = out;
		ev.data_len = (uint32_t)n;
	}
	ev.naux = naux;
	ev.aux[0] = a0;
	rec_log(&ev, ra);
}

/* The body of every wrapper: the real call, then, when the recorder may log, the event.
 * `failed` and `n` (the bytes of `out` to keep) are expressions of r_. */
#define VALUE_CALL(T, realcall, call, failed, out, n, naux, a0) \
	T r_ = realcall; \
	int e_ = errno; \
	if (!rec_enter()) \
		return r_; \
	rec_log_machine(call, (long)r_, e_, (failed), (out), (failed) ? 0 : (n), naux, a0, RA()); \
	rec_leave(); \
	errno = e_; \
	return r_

REC_EXPORT int getloadavg(double *loadavg, int nelem)
{
	VALUE_CALL(int, IP_REAL(getloadavg)(loadavg, nelem), TRACE_CALL_GETLOADAVG, r_ < 0, loadavg,
	           (size_t)r_ * sizeof(double), 0, 0);
}

REC_EXPORT int sysinfo(struct sysinfo *info)
{
	VALUE_CALL(int, IP_REAL(sysinfo)(info), TRACE_CALL_SYSINFO, r_ < 0, info, sizeof(*info), 0, 0);
}

REC_EXPORT int getrusage(__rusage_who_t who, struct rusage *usage)
{
	VALUE_CALL(int, IP_REAL(getrusage)(who, usage), TRACE_CALL_GETRUSAGE, r_ < 0, usage,
	           sizeof(*usage), 1, who);
}

/* times(NULL) is allowed (Linux): only the result then */
REC_EXPORT clock_t times(struct tms *buf)
{
	VALUE_CALL(clock_t, IP_REAL(times)(buf), TRACE_CALL_TIMES, r_ == (clock_t)-1, buf,
	           buf ? sizeof(*buf) : 0, 0, 0);
}

REC_EXPORT clock_t clock(void)
{
	VALUE_CALL(clock_t, IP_REAL(clock)(), TRACE_CALL_CLOCK, 0, NULL, 0, 0, 0);
}

REC_EXPORT int uname(struct utsname *buf)
{
	VALUE_CALL(int, IP_REAL(uname)(buf), TRACE_CALL_UNAME, r_ < 0, buf, sizeof(*buf), 0, 0);
}

/* gethostname: data = the bytes the call wrote, the NUL included when it fits in len */
static size_t hostname_len(const char *name, size_t len)
{
	size_t n = strnlen(name, len);

	return n < len ? n + 1 : n;
}

REC_EXPORT int gethostname(char *name, size_t len)
{
	VALUE_CALL(int, IP_REAL(gethostname)(name, len), TRACE_CALL_GETHOSTNAME, r_ < 0, name,
	           hostname_len(name, len), 0, 0);
}

REC_EXPORT int __gethostname_chk(char *name, size_t len, size_t buflen)
{
	VALUE_CALL(int, IP_REAL(__gethostname_chk)(name, len, buflen), TRACE_CALL_GETHOSTNAME,
	           r_ < 0, name, hostname_len(name, len), 0, 0);
}

REC_EXPORT long sysconf(int name)
{
	long r = IP_REAL(sysconf)(name);
	int e = errno;

	if (!ip_sysconf_is_value(name) || rec_from_alloc(RA()) || !rec_enter())
		return r;
	/* sysconf's -1 without errno changed is "no limit", not a failure: errno is kept */
	rec_log_machine(TRACE_CALL_SYSCONF, r, e, r < 0, NULL, 0, 1, name, RA());
	rec_leave();
	errno = e;
	return r;
}

/* get_nprocs, get_nprocs_conf: logged as the sysconf whose answer they are */
static int nprocs(int conf, int r, int e, void *ra)
{
	if (rec_from_alloc(ra) || !rec_enter())
		return r;
	rec_log_machine(TRACE_CALL_SYSCONF, r, e, 0, NULL, 0, 1,
	            conf ? _SC_NPROCESSORS_CONF : _SC_NPROCESSORS_ONLN, ra);
	rec_leave();
	errno = e;
	return r;
}

REC_EXPORT int get_nprocs(void)
{
	int r = IP_REAL(get_nprocs)();

	return nprocs(0, r, errno, RA());
}

REC_EXPORT int get_nprocs_conf(void)
{
	int r = IP_REAL(get_nprocs_conf)();

	return nprocs(1, r, errno, RA());
}

/* data = the mask, size bytes (glibc clears what the kernel did not write); aux[0] = pid */
REC_EXPORT int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *mask)
{
	int r = IP_REAL(sched_getaffinity)(pid, size, mask);
	int e = errno;

	if (rec_from_alloc(RA()) || !rec_enter())
		return r;
	rec_log_machine(TRACE_CALL_SCHED_GETAFFINITY, r, e, r < 0, mask,
	            size > UINT32_MAX / 2 ? 0 : size, 1, pid, RA());
	rec_leave();
	errno = e;
	return r;
}
