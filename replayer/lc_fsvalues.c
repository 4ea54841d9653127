/*
 * lc_fsvalues.c: the LC's side of recorder/fsvalues.c: statfs, statvfs and their f and 64
 * forms return what the recorded process got (an INPUT event of call statfs or statvfs), not
 * what the file system under the replay says (overlayfs, when isolated).  A trace of an
 * older recorder has no such events: the real call answers.
 */
#undef _FILE_OFFSET_BITS
#include <errno.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>

#include "lc.h"

/* The recorded answer into buf (size bytes): the result, errno when it failed; 1 when given,
 * 0 when the trace has none (the caller makes the real call). */
static int fs_value(uint32_t call, const char *what, void *buf, size_t size, int *r)
{
	const struct lc_ev *ev = lc_peek();

	if (!ev || ev->kind != TRACE_EV_INPUT || ev->call != call)
		return 0;
	ev = lc_expect(TRACE_EV_INPUT, -1, what);
	*r = (int)ev->result;
	if (ev->result < 0) {
		int e = ev->err;

		lc_commit();
		errno = e;
		return 1;
	}
	if (buf) {
		size_t k = ev->data_len < size ? ev->data_len : size;

		memcpy(buf, lc.data + ev->data_off, k);
		if (k < size)
			memset((char *)buf + k, 0, size - k);
	}
	lc_commit();
	return 1;
}

#define FS_GIVE(call, what, buf, realcall) \
	int r_; \
	if (!lc_on() || !fs_value(call, what, buf, sizeof(*(buf)), &r_)) \
		return realcall; \
	return r_

LC_EXPORT int statfs(const char *path, struct statfs *buf)
{
	FS_GIVE(TRACE_CALL_STATFS, "statfs", buf, IP_REAL(statfs)(path, buf));
}

LC_EXPORT int statfs64(const char *path, struct statfs64 *buf)
{
	FS_GIVE(TRACE_CALL_STATFS, "statfs64", buf, IP_REAL(statfs64)(path, buf));
}

LC_EXPORT int fstatfs(int fd, struct statfs *buf)
{
	FS_GIVE(TRACE_CALL_STATFS, "fstatfs", buf, IP_REAL(fstatfs)(fd, buf));
}

LC_EXPORT int fstatfs64(int fd, struct statfs64 *buf)
{
	FS_GIVE(TRACE_CALL_STATFS, "fstatfs64", buf, IP_REAL(fstatfs64)(fd, buf));
}

LC_EXPORT int statvfs(const char *path, struct statvfs *buf)
{
	FS_GIVE(TRACE_CALL_STATVFS, "statvfs", buf, IP_REAL(statvfs)(path, buf));
}

LC_EXPORT int statvfs64(const char *path, struct statvfs64 *buf)
{
	FS_GIVE(TRACE_CALL_STATVFS, "statvfs64", buf, IP_REAL(statvfs64)(path, buf));
}

LC_EXPORT int fstatvfs(int fd, struct statvfs *buf)
{
	FS_GIVE(TRACE_CALL_STATVFS, "fstatvfs", buf, IP_REAL(fstatvfs)(fd, buf));
}

LC_EXPORT int fstatvfs64(int fd, struct statvfs64 *buf)
{
	FS_GIVE(TRACE_CALL_STATVFS, "fstatvfs64", buf, IP_REAL(fstatvfs64)(fd, buf));
}
