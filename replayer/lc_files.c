/*
 * lc_files.c: the file-opening calls in replay.  The recorder notes the regular files a
 * process opens for reading (recorder/files.c, schemas/trace-format.md "File inputs"); that
 * produces no event, so replay has nothing to feed here: each call goes straight to the real
 * one.  They are interposed on this side only because interpose/calls.def is one list for
 * both libraries (interpose/README.md).  Which file a replayed process reads is decided
 * before it starts: the GD refuses an unpacked session whose files changed
 * (replayer/gd_files.c).
 *
 * The exception is a file of the kernel's live state (/proc, /sys) opened for reading: the
 * recorder made it an outside channel's end at its open (recorder/files.c) and logged its
 * reads with their bytes.  Here the real file is opened (the open fails or not as it does
 * now), its PIPE event taken, then the descriptor is replaced by an empty memory file
 * (memfd) at the same number, never read: the reads return the recorded bytes (lc_chan.c,
 * lc_stdio.c) and move its offset as they moved the real one, so that a program's lseek
 * back after reading ahead (bash's read builtin) lands where it did, cheaply.
 *
 * A path under /proc/PID where PID is a recorded process's pid (which getpid gives back in
 * replay) is opened under that process's live pid (proc_path).
 */
/* open, openat and fopen must keep their own names (the build's _FILE_OFFSET_BITS=64 renames
 * them to their 64 forms, which are rows of their own). */
#undef _FILE_OFFSET_BITS
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lc.h"

/* fd was opened (path, flags): take the recorder's event if it made it a kernel-state input
 * (the same path test as recorder/files.c; its file-system test is in the trace: the event
 * is there or not).  Keeps errno. */
static int kernel_file(int fd, const char *path, int flags)
{
	int e;

	if (fd < 0 || !path || path[0] != '/' ||
	    (strncmp(path, "/proc/", 6) != 0 && strncmp(path, "/sys/", 5) != 0))
		return fd;
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_PATH | O_DIRECTORY)) || !lc_on())
		return fd;
	e = errno;
	/* The recorder's file-system test too: the next event may be another file's (cgroup
	 * files were once not kernel-state files: such a trace has no event for them). */
	{
		struct statfs sf;
		struct stat st;

		if (syscall(SYS_fstatfs, fd, &sf) != 0 || syscall(SYS_fstat, fd, &st) != 0 ||
		    !ip_kernel_state_file((long)sf.f_type, st.st_mode)) {
			errno = e;
			return fd;
		}
	}
	if (lc_fd_class_kernel(fd) > 0) {
		/* In its place, an empty memory file: its offset moves at no cost (a seq file's
		 * lseek regenerates its text up to the offset) and nothing reads the real one. */
		int cl = (int)syscall(SYS_fcntl, fd, F_GETFD);
		int m = (int)syscall(SYS_memfd_create, "encore-kernel-file", MFD_CLOEXEC);

		if (m >= 0) {
			syscall(SYS_dup3, m, fd, cl > 0 && (cl & FD_CLOEXEC) ? O_CLOEXEC : 0);
			IP_REAL(syscall)(SYS_close, m); /* ours: not the program's close */
		}
	}
	errno = e;
	return fd;
}

/* fopen's descriptor at its turn (FDNUM_OPEN): one moved to its recorded number is the
 * stream's from then on (glibc's FILE keeps it in _fileno). */
static FILE *fdnum_stream(int turn, FILE *f)
{
	int fd;

	if (!turn)
		return f;
	fd = lc_fdnum_taken(f ? fileno(f) : -1, "fopen");
	if (f && fd != fileno(f))
		f->_fileno = fd;
	return f;
}

/* A path under /proc/PID of a recorded pid (the program took it from getpid, which gives the
 * recorded one): the same path under the live pid of that process in replay, in buf; any
 * other path as it is.  CPython's test_pidfd_send_signal opens /proc/<getpid()>. */
static const char *proc_path(const char *path, char *buf, size_t cap)
{
	char copy[256];
	struct iovec here = { copy, sizeof(copy) - 1 }, there = { (void *)path, sizeof(copy) - 1 };
	const char *p;
	long rec = 0, n;
	pid_t live;
	int gone;

	if (!path || !lc_on())
		return path;
	/* the path is read through the kernel, which says EFAULT for a bad pointer (the real
	 * call's to report), where reading it here would fault; a read stops where the memory
	 * does, and a path without its end in what was read is left as it is */
	n = IP_REAL(syscall)(SYS_process_vm_readv, IP_REAL(syscall)(SYS_getpid), &here, 1L,
	                     &there, 1L, 0L);
	if (n < 7 || !memchr(copy, '\0', (size_t)n))
		return path;
	if (strncmp(copy, "/proc/", 6) != 0 || copy[6] < '1' || copy[6] > '9')
		return path;
	for (p = copy + 6; *p >= '0' && *p <= '9' && rec < (1L << 31); p++)
		rec = rec * 10 + (*p - '0');
	if ((*p != '/' && *p != '\0') || rec >= (1L << 31))
		return path;
	live = lc_pid_live((pid_t)rec, &gone);
	if (live <= 0 || live == (pid_t)rec ||
	    (size_t)snprintf(buf, cap, "/proc/%d%s", (int)live, p) >= cap)
		return path;
	return buf;
}

#define PROC_PATH(path) \
	char pb_[4096]; \
	const char *rp_ = proc_path(path, pb_, sizeof(pb_))

static FILE *kernel_stream(FILE *f, const char *path, const char *mode)
{
	if (f && mode && mode[0] == 'r' && !strchr(mode, '+'))
		kernel_file(fileno(f), path, O_RDONLY);
	return f;
}

/* With threads, an open that took a descriptor when recorded does so at its turn (lc_sync.c). */
#define FDNUM_OPEN(call)                                       \
	({                                                     \
		int t_ = lc_fdnum_turn(1, -1), r_ = (call);    \
		t_ ? lc_fdnum_taken(r_, "open") : r_;          \
	})

static int open_has_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

/* The mode argument of a variadic open, when the flags say there is one. */
#define OPEN_MODE(last, flags)                                        \
	({                                                            \
		mode_t m_ = 0;                                        \
		if (open_has_mode(flags)) {                           \
			va_list ap_;                                  \
			va_start(ap_, last);                          \
			m_ = va_arg(ap_, mode_t);                     \
			va_end(ap_);                                  \
		}                                                     \
		m_;                                                   \
	})

LC_EXPORT int open(const char *path, int flags, ...)
{
	PROC_PATH(path);
	return kernel_file(FDNUM_OPEN(IP_REAL(open)(rp_, flags, OPEN_MODE(flags, flags))), path, flags);
}

LC_EXPORT int open64(const char *path, int flags, ...)
{
	PROC_PATH(path);
	return kernel_file(FDNUM_OPEN(IP_REAL(open64)(rp_, flags, OPEN_MODE(flags, flags))), path, flags);
}

LC_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	PROC_PATH(path);
	return kernel_file(FDNUM_OPEN(IP_REAL(openat)(dirfd, rp_, flags, OPEN_MODE(flags, flags))), path, flags);
}

LC_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	PROC_PATH(path);
	return kernel_file(FDNUM_OPEN(IP_REAL(openat64)(dirfd, rp_, flags, OPEN_MODE(flags, flags))),
	                   path, flags);
}

LC_EXPORT int __open_2(const char *path, int flags)
{
	PROC_PATH(path);
	return kernel_file(FDNUM_OPEN(IP_REAL(__open_2)(rp_, flags)), path, flags);
}

LC_EXPORT int __open64_2(const char *path, int flags)
{
	PROC_PATH(path);
	return kernel_file(FDNUM_OPEN(IP_REAL(__open64_2)(rp_, flags)), path, flags);
}

LC_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	PROC_PATH(path);
	return kernel_file(FDNUM_OPEN(IP_REAL(__openat_2)(dirfd, rp_, flags)), path, flags);
}

LC_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	PROC_PATH(path);
	return kernel_file(FDNUM_OPEN(IP_REAL(__openat64_2)(dirfd, rp_, flags)), path, flags);
}

LC_EXPORT FILE *fopen(const char *path, const char *mode)
{
	int t = lc_fdnum_turn(1, -1);
	PROC_PATH(path);

	return kernel_stream(fdnum_stream(t, IP_REAL(fopen)(rp_, mode)), path, mode);
}

LC_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	int t = lc_fdnum_turn(1, -1);
	PROC_PATH(path);

	return kernel_stream(fdnum_stream(t, IP_REAL(fopen64)(rp_, mode)), path, mode);
}

/* The calls that create and remove names: the recorder noted them for the GD, which hid what
 * the recording created before the replay started (gd_created.c); here they are the real
 * calls, made in the replay's namespace. */
LC_EXPORT int creat(const char *path, mode_t mode)
{
	return FDNUM_OPEN(IP_REAL(creat)(path, mode));
}

LC_EXPORT int creat64(const char *path, mode_t mode)
{
	return FDNUM_OPEN(IP_REAL(creat64)(path, mode));
}

/* The recorder's file notes wait for the program's fstat (recorder/files.c); nothing here. */
LC_EXPORT int fstat(int fd, struct stat *st)
{
	return IP_REAL(fstat)(fd, st);
}

LC_EXPORT int fstat64(int fd, struct stat64 *st)
{
	return IP_REAL(fstat64)(fd, st);
}

/* The recorder makes a note waiting for fdopendir's descriptor there (recorder/files.c). */
LC_EXPORT DIR *fdopendir(int fd)
{
	return IP_REAL(fdopendir)(fd);
}

LC_EXPORT int mkdir(const char *path, mode_t mode)
{
	return IP_REAL(mkdir)(path, mode);
}

LC_EXPORT int mkdirat(int dirfd, const char *path, mode_t mode)
{
	return IP_REAL(mkdirat)(dirfd, path, mode);
}

LC_EXPORT int rename(const char *old, const char *path)
{
	return IP_REAL(rename)(old, path);
}

LC_EXPORT int renameat(int olddirfd, const char *old, int dirfd, const char *path)
{
	return IP_REAL(renameat)(olddirfd, old, dirfd, path);
}

LC_EXPORT int renameat2(int olddirfd, const char *old, int dirfd, const char *path,
                        unsigned int flags)
{
	return IP_REAL(renameat2)(olddirfd, old, dirfd, path, flags);
}

LC_EXPORT int link(const char *old, const char *path)
{
	return IP_REAL(link)(old, path);
}

LC_EXPORT int linkat(int olddirfd, const char *old, int dirfd, const char *path, int flags)
{
	return IP_REAL(linkat)(olddirfd, old, dirfd, path, flags);
}

LC_EXPORT int symlink(const char *old, const char *path)
{
	return IP_REAL(symlink)(old, path);
}

LC_EXPORT int symlinkat(const char *old, int dirfd, const char *path)
{
	return IP_REAL(symlinkat)(old, dirfd, path);
}

LC_EXPORT int unlink(const char *path)
{
	return IP_REAL(unlink)(path);
}

LC_EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
	return IP_REAL(unlinkat)(dirfd, path, flags);
}

LC_EXPORT int rmdir(const char *path)
{
	return IP_REAL(rmdir)(path);
}

LC_EXPORT int remove(const char *path)
{
	return IP_REAL(remove)(path);
}
