/*
 * early_lib.c: a library whose constructor runs before the preload's (the program links it,
 * so the loader initialises it first), keeping the pid and the wall clock as OpenSSL's random
 * generator does when libisc seeds it there; early_main.c compares them later.
 */
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "early_lib.h"

static pid_t early_pid;
static time_t early_time;
static struct timeval early_tv;

__attribute__((constructor)) static void early_init(void)
{
	early_pid = getpid();
	early_time = time(NULL);
	gettimeofday(&early_tv, NULL);
}

pid_t early_lib_pid(void)
{
	return early_pid;
}

time_t early_lib_time(void)
{
	return early_time;
}

time_t early_lib_tv_sec(void)
{
	return early_tv.tv_sec;
}
