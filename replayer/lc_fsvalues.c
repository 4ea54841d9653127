/*
 * lc_fsvalues.c: the LC's side of recorder/fsvalues.c: statfs, statvfs and their f and 64
 * forms return what the recorded process got (an INPUT event of call statfs or statvfs), not
 * what the file system under the replay says (overlayfs, when isolated).  A trace of an
 * older recorder has no such events: the real call answers.
 */
#undef _FILE_OFFSET_BITS
#include <sys/statfs.h>
#include <sys/statvfs.h>

#include "lc.h"

/* The recorded answer into buf, the rest of it cleared (lc_value_give); the real call when
 * the trace has none. */
#define FS_GIVE(call, what, buf, realcall) \
	const struct lc_ev *ev_; \
	if (!lc_on() || !(ev_ = lc_value_event(call, what))) \
		return realcall; \
	return (int)lc_value_give(ev_, ev_->result < 0, buf, sizeof(*(buf)), 1, what)

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
