/*
 * procfiles.c: a program that reads files of the kernel's live state and prints them, for
 * replay_procfiles.sh: /proc/loadavg with open and read, /proc/self/stat with fopen and
 * fgets, /proc/uptime with openat and read, /proc/meminfo's first line with fopen and fread;
 * given a file of a cgroup file system (argv[1]), its first line with open and read just
 * before /proc/meminfo's (as libuv reads a memory limit: the replay must not take the
 * /proc/meminfo read for it).
 * Their content differs between any two runs (the last pid, times, free memory), so a replay
 * prints what was recorded only if it returns the recorded bytes (recorder/README.md,
 * "Kernel-state files").
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[4096];
	ssize_t n;
	size_t k;
	FILE *f;
	int fd;

	fd = open("/proc/loadavg", O_RDONLY);
	if (fd < 0)
		return 77;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return 1;
	buf[n] = '\0';
	printf("loadavg: %s", buf);

	f = fopen("/proc/self/stat", "r");
	if (!f || !fgets(buf, sizeof(buf), f))
		return 1;
	fclose(f);
	printf("stat: %s", buf);

	fd = openat(AT_FDCWD, "/proc/uptime", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return 1;
	buf[n] = '\0';
	printf("uptime: %s", buf);

	if (argc > 1) {
		fd = open(argv[1], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return 1;
		n = read(fd, buf, 64);
		close(fd);
		if (n < 0)
			return 1;
		buf[n] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		printf("cgroup: %s\n", buf);
	}

	f = fopen("/proc/meminfo", "r");
	if (!f)
		return 1;
	k = fread(buf, 1, 200, f);
	fclose(f);
	buf[k] = '\0';
	printf("meminfo: %s\n", buf);
	return 0;
}
