/*
 * machine_values.c: prints the machine's and the process's state as libc reads it past the
 * file and clock interposers (getloadavg, sysinfo, getrusage, times, clock, uname,
 * gethostname, sysconf's processor and memory counts, get_nprocs, sched_getaffinity, and
 * getitimer, whose timer replay does not arm), after
 * some work of its own, so that the CPU times, the free memory and the clock ticks of two
 * runs differ: a replay prints what the recording printed only when it gives these values
 * back (recorder/values.c, replayer/lc_values.c).
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/times.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	double la[3] = { 0 };
	struct sysinfo si;
	struct rusage ru;
	struct tms tm;
	struct utsname u;
	char host[256];
	cpu_set_t set;
	struct itimerval it, now;
	volatile unsigned long x = 0;
	clock_t t;
	int n;

	/* CPU time of our own, a different amount in every run */
	for (unsigned long i = 0; i < 3000000; i++)
		x += i * i;
	n = getloadavg(la, 3);
	printf("getloadavg %d %.6f %.6f %.6f\n", n, la[0], la[1], la[2]);
	if (sysinfo(&si) == 0)
		printf("sysinfo uptime %ld freeram %lu procs %u\n", si.uptime, si.freeram,
		       (unsigned)si.procs);
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		printf("getrusage utime %ld.%06ld stime %ld.%06ld maxrss %ld minflt %ld\n",
		       (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec, (long)ru.ru_stime.tv_sec,
		       (long)ru.ru_stime.tv_usec, ru.ru_maxrss, ru.ru_minflt);
	t = times(&tm);
	printf("times %ld utime %ld stime %ld\n", (long)t, (long)tm.tms_utime, (long)tm.tms_stime);
	printf("clock %ld\n", (long)clock());
	if (uname(&u) == 0)
		printf("uname %s %s %s\n", u.sysname, u.nodename, u.release);
	if (gethostname(host, sizeof(host)) == 0)
		printf("gethostname %s\n", host);
	printf("sysconf nprocessors %ld/%ld avphys_pages %ld\n", sysconf(_SC_NPROCESSORS_ONLN),
	       sysconf(_SC_NPROCESSORS_CONF), sysconf(_SC_AVPHYS_PAGES));
	printf("get_nprocs %d/%d\n", get_nprocs(), get_nprocs_conf());
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		printf("sched_getaffinity %d\n", CPU_COUNT(&set));
	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = 100;
	setitimer(ITIMER_REAL, &it, NULL);
	for (unsigned long i = 0; i < 1000000; i++)
		x += i;
	if (getitimer(ITIMER_REAL, &now) == 0)
		printf("getitimer %ld.%06ld\n", (long)now.it_value.tv_sec, (long)now.it_value.tv_usec);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	return x == 1; /* (keeps the loop) */
}
