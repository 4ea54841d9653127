/*
 * proc_pid.c: opens /proc/<its pid> (a directory: no event) and /proc/<its pid>/cmdline, the
 * pid taken from getpid, which replay gives back as recorded: the opens succeed in replay
 * too, under the live pid (replayer/lc_files.c; CPython's test_pidfd_send_signal opens
 * /proc/<getpid()> so).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	char path[64], buf[256];
	int d, f;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d", (int)getpid());
	d = open(path, O_RDONLY | O_DIRECTORY);
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)getpid());
	f = open(path, O_RDONLY);
	n = f >= 0 ? read(f, buf, sizeof(buf) - 1) : -1;
	buf[n > 0 ? n : 0] = '\0';
	printf("opened /proc/%d %s, cmdline %s %s\n", (int)getpid(), d >= 0 ? "ok" : "failed",
	       f >= 0 ? "ok" : "failed", strrchr(buf, '/') ? strrchr(buf, '/') + 1 : buf);
	return 0;
}
