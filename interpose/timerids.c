/*
 * timerids.c: the POSIX timers that notify by SIGEV_THREAD, which both preload libraries
 * leave alone (recorder/README.md and replayer/README.md, "Signals"): such a timer runs a
 * function on a thread of glibc's, with no signal to pin down, and replay must arm it for the
 * function to run.  Each library keeps its own table of their ids (it compiles this file in
 * itself), to tell them apart in timer_settime and the others: a fixed table, lock-free; an
 * id that does not fit is treated as the other timers'.
 */
#include "interpose.h"

#define THREAD_TIMERS 64
static timer_t thread_timers[THREAD_TIMERS];
static int nthread_timers;

void ip_thread_timer_add(timer_t id)
{
	int i = __atomic_fetch_add(&nthread_timers, 1, __ATOMIC_ACQ_REL);

	if (i < THREAD_TIMERS)
		thread_timers[i] = id;
}

int ip_thread_timer(timer_t id)
{
	int n = __atomic_load_n(&nthread_timers, __ATOMIC_ACQUIRE);

	for (int i = 0; i < n && i < THREAD_TIMERS; i++)
		if (thread_timers[i] == id)
			return 1;
	return 0;
}
