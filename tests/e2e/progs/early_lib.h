/* early_lib.h: what early_lib.c's constructor read (tests/e2e/progs/early_main.c). */
#ifndef EARLY_LIB_H
#define EARLY_LIB_H
#include <sys/types.h>
#include <time.h>

pid_t early_lib_pid(void);
time_t early_lib_time(void);
time_t early_lib_tv_sec(void);
/* 48 random bytes: 16 from getrandom, 16 from getentropy, 16 from syscall(SYS_getrandom) */
const unsigned char *early_lib_random(void);
#endif
