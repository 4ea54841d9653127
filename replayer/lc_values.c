/*
 * lc_values.c: the LC's side of recorder/values.c: getloadavg, sysinfo, getrusage, times,
 * clock, uname, gethostname, sysconf (the processor and memory counts), get_nprocs and
 * sched_getaffinity return what the recorded process got (schemas/trace-format.md,
 * "Machine values"), not this machine's state now: CPython's regrtest prints the load
 * average, a thread pool sized from the processors counted makes as many threads as
 * recorded.
 *
 * The next recorded event must be an INPUT of the call; when it is not (a trace of a
 * recorder before these calls were interposed, or a call the recorder could not log: from
 * a signal handler that interrupted it), the real call answers, as it did then, and a
 * process that really went elsewhere diverges at its next event.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h> /* getloadavg */
#include <string.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/times.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lc.h"

/* The next recorded event when it is an INPUT of `call`; NULL otherwise (above). */
const struct lc_ev *lc_value_event(uint32_t call, const char *what)
{
	const struct lc_ev *ev = lc_peek();

	if (!ev || ev->kind != TRACE_EV_INPUT || ev->call != call)
		return NULL;
	return lc_expect(TRACE_EV_INPUT, -1, what);
}

/* Give back the recorded value: the result (errno when it failed), and into out the
 * recorded bytes, n at most (the rest of n cleared when clear is set); a value the program
 * asks more of than was recorded where the call succeeded is a divergence. */
long lc_value_give(const struct lc_ev *ev, int failed, void *out, size_t n, int clear,
                 const char *what)
{
	long r = (long)ev->result;

	if (failed) {
		lc_commit();
		errno = ev->err;
		return r;
	}
	if (out && n) {
		size_t k = ev->data_len < n ? ev->data_len : n;

		if (k < n && !clear)
			lc_diverge("%s: %u bytes recorded, the process asks for %zu", what,
			           ev->data_len, n);
		memcpy(out, lc.data + ev->data_off, k);
		if (k < n)
			memset((uint8_t *)out + k, 0, n - k);
	}
	lc_commit();
	return r;
}

LC_EXPORT int getloadavg(double *loadavg, int nelem)
{
	const struct lc_ev *ev;

	if (!lc_on() || !(ev = lc_value_event(TRACE_CALL_GETLOADAVG, "getloadavg")))
		return IP_REAL(getloadavg)(loadavg, nelem);
	if (ev->result > nelem)
		lc_diverge("getloadavg: %ld samples recorded, the process asks for %d",
		           (long)ev->result, nelem);
	return (int)lc_value_give(ev, ev->result < 0, loadavg,
	                 ev->result > 0 ? (size_t)ev->result * sizeof(double) : 0, 0, "getloadavg");
}

LC_EXPORT int sysinfo(struct sysinfo *info)
{
	const struct lc_ev *ev;

	if (!lc_on() || !(ev = lc_value_event(TRACE_CALL_SYSINFO, "sysinfo")))
		return IP_REAL(sysinfo)(info);
	return (int)lc_value_give(ev, ev->result < 0, info, sizeof(*info), 0, "sysinfo");
}

LC_EXPORT int getrusage(__rusage_who_t who, struct rusage *usage)
{
	const struct lc_ev *ev;

	if (!lc_on() || !(ev = lc_value_event(TRACE_CALL_GETRUSAGE, "getrusage")))
		return IP_REAL(getrusage)(who, usage);
	return (int)lc_value_give(ev, ev->result < 0, usage, sizeof(*usage), 0, "getrusage");
}

LC_EXPORT clock_t times(struct tms *buf)
{
	const struct lc_ev *ev;

	if (!lc_on() || !(ev = lc_value_event(TRACE_CALL_TIMES, "times")))
		return IP_REAL(times)(buf);
	/* a buffer the recorded call had not (times(NULL)) is given zeros */
	return (clock_t)lc_value_give(ev, ev->result == -1, buf, buf ? sizeof(*buf) : 0, 1, "times");
}

LC_EXPORT clock_t clock(void)
{
	const struct lc_ev *ev;

	if (!lc_on() || !(ev = lc_value_event(TRACE_CALL_CLOCK, "clock")))
		return IP_REAL(clock)();
	return (clock_t)lc_value_give(ev, 0, NULL, 0, 0, "clock");
}

LC_EXPORT int uname(struct utsname *buf)
{
	const struct lc_ev *ev;

	if (!lc_on() || !(ev = lc_value_event(TRACE_CALL_UNAME, "uname")))
		return IP_REAL(uname)(buf);
	return (int)lc_value_give(ev, ev->result < 0, buf, sizeof(*buf), 0, "uname");
}

/* the recorded bytes (the NUL included when it fitted), as many as len holds */
static int hostname(const struct lc_ev *ev, char *name, size_t len)
{
	size_t k = ev->data_len < len ? ev->data_len : len;

	if (ev->result >= 0 && k)
		memcpy(name, lc.data + ev->data_off, k);
	return (int)lc_value_give(ev, ev->result < 0, NULL, 0, 0, "gethostname");
}

LC_EXPORT int gethostname(char *name, size_t len)
{
	const struct lc_ev *ev;

	if (!lc_on() || !(ev = lc_value_event(TRACE_CALL_GETHOSTNAME, "gethostname")))
		return IP_REAL(gethostname)(name, len);
	return hostname(ev, name, len);
}

LC_EXPORT int __gethostname_chk(char *name, size_t len, size_t buflen)
{
	const struct lc_ev *ev;

	/* a buffer smaller than len: the real one ends the process, as it did when recorded */
	if (buflen < len || !lc_on() || !(ev = lc_value_event(TRACE_CALL_GETHOSTNAME, "gethostname")))
		return IP_REAL(__gethostname_chk)(name, len, buflen);
	return hostname(ev, name, len);
}

LC_EXPORT long sysconf(int name)
{
	const struct lc_ev *ev;

	if (!ip_sysconf_is_value(name) || !lc_on() || lc_from_alloc(__builtin_return_address(0)) ||
	    !(ev = lc_value_event(TRACE_CALL_SYSCONF, "sysconf")))
		return IP_REAL(sysconf)(name);
	if (ev->naux < 1 || ev->aux[0] != name)
		lc_diverge("sysconf: recorded for name %lld, the process asks for %d",
		           ev->naux ? (long long)ev->aux[0] : -1LL, name);
	return lc_value_give(ev, ev->result < 0, NULL, 0, 0, "sysconf");
}

/* get_nprocs, get_nprocs_conf: the sysconf event of the count they give (recorder/values.c) */
static const struct lc_ev *nprocs_event(int conf, const void *ra)
{
	const struct lc_ev *ev;
	int name = conf ? _SC_NPROCESSORS_CONF : _SC_NPROCESSORS_ONLN;

	if (!lc_on() || lc_from_alloc(ra) || !(ev = lc_value_event(TRACE_CALL_SYSCONF, "get_nprocs")))
		return NULL;
	if (ev->naux < 1 || ev->aux[0] != name)
		lc_diverge("%s: recorded for sysconf name %lld, the process asks for %d",
		           conf ? "get_nprocs_conf" : "get_nprocs",
		           ev->naux ? (long long)ev->aux[0] : -1LL, name);
	return ev;
}

LC_EXPORT int get_nprocs(void)
{
	const struct lc_ev *ev = nprocs_event(0, __builtin_return_address(0));

	return ev ? (int)lc_value_give(ev, 0, NULL, 0, 0, "get_nprocs") : IP_REAL(get_nprocs)();
}

LC_EXPORT int get_nprocs_conf(void)
{
	const struct lc_ev *ev = nprocs_event(1, __builtin_return_address(0));

	return ev ? (int)lc_value_give(ev, 0, NULL, 0, 0, "get_nprocs_conf") : IP_REAL(get_nprocs_conf)();
}

LC_EXPORT int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *mask)
{
	const struct lc_ev *ev;

	if (!lc_on() || lc_from_alloc(__builtin_return_address(0)) ||
	    !(ev = lc_value_event(TRACE_CALL_SCHED_GETAFFINITY, "sched_getaffinity")))
		return IP_REAL(sched_getaffinity)(pid, size, mask);
	return (int)lc_value_give(ev, ev->result < 0, mask, size, 1, "sched_getaffinity");
}
