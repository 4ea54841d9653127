/*
 * spin_dl.c: a shared library the test program links, so loaded after the preload: it makes
 * a thread through dlsym(RTLD_NEXT, "pthread_create"), as jemalloc makes its background
 * thread, and looks a libc name up with RTLD_NEXT from here, for the program to check that
 * the preload's dlsym keeps RTLD_NEXT relative to the caller (interpose/dlnext.h).
 */
#include <dlfcn.h>
#include <pthread.h>

#include "spin_dl.h"

int spin_dl_create(pthread_t *t, void *(*fn)(void *), void *arg)
{
	int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

	create = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))
		dlsym(RTLD_NEXT, "pthread_create");
	if (!create)
		return -1;
	return create(t, NULL, fn, arg);
}

/* Not a tail call: dlsym looks RTLD_NEXT up after the object its return address is in. */
void *spin_dl_next(const char *name)
{
	void *volatile p = dlsym(RTLD_NEXT, name);

	return p;
}
