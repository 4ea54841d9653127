/*
 * fdclass.c: how a descriptor is judged, from what fstat(2) says of it.  The recorder
 * classifies a descriptor it did not see made at its first use (recorder/chan.c), and the
 * replayer must judge it the same way at the same point (replayer/lc.c), so the decision is
 * this one pure function; each side does its own fstat.  Also where each library puts its
 * own descriptors, and the shape names of calls.def.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "interpose.h"

int ip_fd_kind(mode_t mode, dev_t rdev)
{
	if (S_ISSOCK(mode))
		return IP_FD_SOCKET;
	if (S_ISFIFO(mode))
		return IP_FD_PIPE;
	if (!S_ISCHR(mode))
		return IP_FD_FILE;
	if (major(rdev) == 1) {
		unsigned mi = minor(rdev);

		if (mi == 8 || mi == 9)
			return IP_FD_RANDOM;
		if (mi == 3 || mi == 5 || mi == 7)
			return IP_FD_NULL;
	}
	return IP_FD_CHAR;
}

int ip_kernel_state_file(long f_type, mode_t mode)
{
	/* procfs, sysfs, cgroup v1 and v2 (linux/magic.h's values, spelled out: the header's
	 * set of names moves between kernel versions) */
	return S_ISREG(mode) && (f_type == 0x9fa0 || f_type == 0x62656572 || f_type == 0x27e0eb ||
	                         f_type == 0x63677270);
}

uint8_t ip_sock_chan_type(int domain, int type)
{
	type &= ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (domain == AF_INET || domain == AF_INET6)
		return type == SOCK_STREAM ? TRACE_CHAN_TCP :
		       type == SOCK_DGRAM ? TRACE_CHAN_UDP : TRACE_CHAN_OTHER;
	/* SOCK_SEQPACKET connects and accepts as a stream does: matched as one (its records
	 * replay as the receives that took them) */
	if (domain == AF_UNIX)
		return type == SOCK_STREAM || type == SOCK_SEQPACKET ? TRACE_CHAN_UNIX
		                                                     : TRACE_CHAN_OTHER;
	return TRACE_CHAN_OTHER;
}

const char *ip_shape_name(int shape)
{
	static const char *const names[IP_SHAPE_COUNT] = {
		"IRREGULAR", "BYTES_OUT", "BYTES_OUT_TO", "MSG_OUT", "IOV_OUT", "BYTES_IN",
		"BYTES_IN_FROM", "MSG_IN", "IOV_IN", "FREAD", "FGETS", "GETDELIM", "GETC",
		"FWRITE", "FPUTS", "PUTC", "VPRINTF", "KMOVE", "SIGNAL_WAIT", "WAIT", "EXIT",
		"VALUE_PID",
		"READY_POLL", "READY_SELECT", "READY_EPOLL", "DUP", "FCNTL", "VALUE_CLOCK",
		"SCANF",
	};

	return shape >= 0 && shape < IP_SHAPE_COUNT ? names[shape] : NULL;
}

int ip_pick_min_fd(void)
{
	struct rlimit rl;

	/* High, so that a program's dup2 onto small numbers never meets us, but below the soft
	 * limit, or the kernel refuses the descriptor. */
	if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl) != 0 ||
	    rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1100)
		return 1000;
	if (rl.rlim_cur > 64)
		return (int)rl.rlim_cur - 24;
	/* A small limit (`ulimit -n 16`) leaves no room below it that the program cannot reach:
	 * ours go at the limit itself, which ip_dup_high raises for the moment of the dup.  The
	 * recorder and the replay's controller then both leave every number the program can be
	 * given to it, however many descriptors each holds. */
	return (int)rl.rlim_cur;
}

int ip_dup_high(int fd, int min)
{
	struct rlimit saved, up;
	int e = errno, r;

	r = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, (long)min);
	if (r >= 0 || (errno != EINVAL && errno != EMFILE))
		goto out;
	/* min at or past the soft limit (ip_pick_min_fd under a small one): raised for the dup,
	 * the hard limit too where we may (a privileged process), and put back at once; a
	 * descriptor above the limit stays valid.  Other threads may see the raised limit for
	 * that moment (getrlimit), or lose a setrlimit of theirs made in it. */
	r = -1;
	if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &saved) != 0 ||
	    saved.rlim_cur == RLIM_INFINITY)
		goto out;
	up = saved;
	if (up.rlim_cur < (rlim_t)min + 16)
		up.rlim_cur = (rlim_t)min + 16;
	if (up.rlim_max < up.rlim_cur && up.rlim_max > (rlim_t)min)
		up.rlim_cur = up.rlim_max; /* room below the hard limit: no privilege needed */
	if (up.rlim_max < up.rlim_cur)
		up.rlim_max = up.rlim_cur;
	if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &up, NULL) == 0) {
		r = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, (long)min);
		syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &saved, NULL);
	}
out:
	errno = e;
	return r;
}
