/*
 * early_lib.c: a library whose constructor runs before the preload's (the program links it,
 * so the loader initialises it first), keeping the pid and the wall clock as OpenSSL's random
 * generator does when libisc seeds it there, and random bytes got the three ways a seed is
 * (getrandom, getentropy, syscall(SYS_getrandom)); early_main.c compares and prints them.
 */
#include <stdlib.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "early_lib.h"

static pid_t early_pid;
static time_t early_time;
static struct timeval early_tv;
static unsigned char early_rand[48];

__attribute__((constructor)) static void early_init(void)
{
	unsigned char extra[16];

	early_pid = getpid();
	early_time = time(NULL);
	gettimeofday(&early_tv, NULL);
	if (getrandom(early_rand, 16, 0) != 16 || getentropy(early_rand + 16, 16) != 0 ||
	    syscall(SYS_getrandom, early_rand + 32, 16, 0) != 16)
		early_rand[0] ^= 1; /* (never: each call fills what it was asked for) */
	/* EARLY_MORE set: 16 bytes more than a run without it asks for (replay_early.sh) */
	if (getenv("EARLY_MORE") && getrandom(extra, sizeof(extra), 0) != sizeof(extra))
		early_rand[0] ^= 2;
}

const unsigned char *early_lib_random(void)
{
	return early_rand;
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
