/* spin_dl.h: the library of spin_dl.c (tests/e2e/progs/spin_lock.c uses it). */
#ifndef SPIN_DL_H
#define SPIN_DL_H
#include <pthread.h>

/* pthread_create found with dlsym(RTLD_NEXT) from the library: 0 or an error number. */
int spin_dl_create(pthread_t *t, void *(*fn)(void *), void *arg);
/* dlsym(RTLD_NEXT, name) called from the library. */
void *spin_dl_next(const char *name);
#endif
