/*
 * early_main.c: prints whether the pid and the wall clock a library's constructor read
 * (early_lib.c, before the preload started) agree with what the program reads now: the
 * same pid, and no time before the constructor's (OpenSSL reseeds when either moves); then
 * the random bytes the constructor got and random bytes got now, in hexadecimal.
 * Recorded and replayed, the output must be the same (replayer/README.md, ENCORE_REPLAY's
 * rpid= and t0=; recorder/README.md, randomness before the recorder started).
 */
#include <stdio.h>
#include <sys/random.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "early_lib.h"

int main(void)
{
	struct timeval tv;
	time_t now = time(NULL);
	unsigned char now_rand[16];
	const unsigned char *r = early_lib_random();

	gettimeofday(&tv, NULL);
	printf("pid %s\n", getpid() == early_lib_pid() ? "same" : "changed");
	printf("time %s\n", now >= early_lib_time() ? "on" : "went back");
	printf("gettimeofday %s\n", tv.tv_sec >= early_lib_tv_sec() ? "on" : "went back");
	printf("early random ");
	for (int i = 0; i < 48; i++)
		printf("%02x", r[i]);
	if (getrandom(now_rand, sizeof(now_rand), 0) != (ssize_t)sizeof(now_rand))
		return 1;
	printf("\nlater random ");
	for (size_t i = 0; i < sizeof(now_rand); i++)
		printf("%02x", now_rand[i]);
	printf("\n");
	return 0;
}
