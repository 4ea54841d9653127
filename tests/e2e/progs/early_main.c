/*
 * early_main.c: prints whether the pid and the wall clock a library's constructor read
 * (early_lib.c, before the preload started) agree with what the program reads now: the
 * same pid, and no time before the constructor's (OpenSSL reseeds when either moves).
 * Recorded and replayed, the output must be the same (replayer/README.md, ENCORE_REPLAY's
 * rpid= and t0=).
 */
#include <stdio.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "early_lib.h"

int main(void)
{
	struct timeval tv;
	time_t now = time(NULL);

	gettimeofday(&tv, NULL);
	printf("pid %s\n", getpid() == early_lib_pid() ? "same" : "changed");
	printf("time %s\n", now >= early_lib_time() ? "on" : "went back");
	printf("gettimeofday %s\n", tv.tv_sec >= early_lib_tv_sec() ? "on" : "went back");
	return 0;
}
