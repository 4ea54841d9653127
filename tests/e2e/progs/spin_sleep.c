/*
 * spin_sleep.c: a process that spins on a lock in shared memory and sleeps between tries
 * with select on no descriptor, as PostgreSQL's spinlocks back off (pg_usleep).  The parent
 * holds the lock and releases it after reading one byte from stdin; `spin_sleep --feed FILE`
 * (run outside the recording, its output piped into the recorded program's stdin) writes
 * that byte only once the child has slept three times, so the recorded child sleeps at least
 * three times.  In replay the byte comes at once from the trace and the lock is free sooner:
 * the child sleeps fewer times (or more, on a loaded machine).  The child then prints how it
 * ended (not how many times it slept).  Used by tests/e2e/replay_spin_sleep.sh.
 * Usage: spin_sleep FILE | spin_sleep --feed FILE
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared_area.h"

struct area {
	int lock;  /* 1 held */
	int slept; /* the child's sleeps so far (read by --feed) */
};

static int feed(const char *path)
{
	const struct area *a = NULL;

	for (long i = 0; i < 100000000L; i++) {
		if (!a)
			a = shared_area_peek(path, sizeof(*a));
		if (a && __atomic_load_n(&a->slept, __ATOMIC_ACQUIRE) >= 3) {
			(void)write(1, "x", 1);
			return 0;
		}
		sched_yield();
	}
	fprintf(stderr, "spin_sleep --feed: the child never slept 3 times in %s\n", path);
	return 1;
}

int main(int argc, char **argv)
{
	char c;
	struct area *a;
	pid_t p;
	int st = 0;

	if (argc == 3 && strcmp(argv[1], "--feed") == 0)
		return feed(argv[2]);
	if (argc != 2) {
		fprintf(stderr, "usage: spin_sleep FILE | spin_sleep --feed FILE\n");
		return 2;
	}
	/* (--feed reads only a counter that starts at 0: a file still empty is fine) */
	if (!(a = shared_area_create(argv[1], sizeof(*a))))
		return 1;
	a->lock = 1;
	if ((p = fork()) == 0) {
		while (__atomic_exchange_n(&a->lock, 1, __ATOMIC_ACQUIRE)) {
			struct timeval t = { 0, 1000 };

			select(0, NULL, NULL, NULL, &t);
			__atomic_fetch_add(&a->slept, 1, __ATOMIC_RELEASE);
		}
		printf("child: got the lock\n");
		_exit(0);
	}
	if (p < 0 || read(0, &c, 1) < 0) {
		perror("spin_sleep");
		return 1;
	}
	__atomic_store_n(&a->lock, 0, __ATOMIC_RELEASE);
	if (waitpid(p, &st, 0) != p) {
		perror("waitpid");
		return 1;
	}
	printf("parent: child exit %d\n", WEXITSTATUS(st));
	return 0;
}
