/*
 * fsvalues.c: what a file system says of itself (statfs, statvfs, their f and 64 forms),
 * recorded as a machine value (values.c): an INPUT event without channel of call statfs
 * (140) or statvfs (141), aux[0] = the descriptor (fstatfs, fstatvfs) or -1 (a path), data =
 * the structure the call filled in (schemas/trace-format.md, "Machine values").  Its kind
 * and room are the machine's, and an isolated replay runs the program on overlayfs: coreutils'
 * tail -f chooses inotify or polling by f_type (a replay that polled never reached its next
 * event), LMDB calls uname only on ext4 (knot diverged), `stat -f` printed another file
 * system.  replayer/lc_fsvalues.c gives the recorded values back.
 *
 * The recorder's own calls (files.c's fstatfs of a /proc file, under rec_enter) are not the
 * program's: they pass through uncounted.
 */
/* statfs and statfs64 are two symbols: without this, the headers would rename the first
 * (files.c says the same of open). */
#undef _FILE_OFFSET_BITS
#include <sys/statfs.h>
#include <sys/statvfs.h>

#include "rec.h"

#define RA() __builtin_return_address(0)

#define FS_CALL(call, fd, buf, realcall) \
	int r_ = realcall, e_ = errno; \
	if (rec_busy() || !rec_enter()) \
		return r_; \
	rec_log_machine(call, r_, e_, r_ < 0, buf, sizeof(*(buf)), 1, fd, RA()); \
	rec_leave(); \
	errno = e_; \
	return r_

REC_EXPORT int statfs(const char *path, struct statfs *buf)
{
	FS_CALL(TRACE_CALL_STATFS, -1, buf, IP_REAL(statfs)(path, buf));
}

REC_EXPORT int statfs64(const char *path, struct statfs64 *buf)
{
	FS_CALL(TRACE_CALL_STATFS, -1, buf, IP_REAL(statfs64)(path, buf));
}

REC_EXPORT int fstatfs(int fd, struct statfs *buf)
{
	FS_CALL(TRACE_CALL_STATFS, fd, buf, IP_REAL(fstatfs)(fd, buf));
}

REC_EXPORT int fstatfs64(int fd, struct statfs64 *buf)
{
	FS_CALL(TRACE_CALL_STATFS, fd, buf, IP_REAL(fstatfs64)(fd, buf));
}

REC_EXPORT int statvfs(const char *path, struct statvfs *buf)
{
	FS_CALL(TRACE_CALL_STATVFS, -1, buf, IP_REAL(statvfs)(path, buf));
}

REC_EXPORT int statvfs64(const char *path, struct statvfs64 *buf)
{
	FS_CALL(TRACE_CALL_STATVFS, -1, buf, IP_REAL(statvfs64)(path, buf));
}

REC_EXPORT int fstatvfs(int fd, struct statvfs *buf)
{
	FS_CALL(TRACE_CALL_STATVFS, fd, buf, IP_REAL(fstatvfs)(fd, buf));
}

REC_EXPORT int fstatvfs64(int fd, struct statvfs64 *buf)
{
	FS_CALL(TRACE_CALL_STATVFS, fd, buf, IP_REAL(fstatvfs64)(fd, buf));
}
