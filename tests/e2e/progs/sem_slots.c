/*
 * sem_slots.c: processes that pick a free slot in shared memory under a spinlock (plain
 * loads and stores, which nothing records) and then drain that slot's process-shared
 * semaphore (sem_trywait until EAGAIN), as PostgreSQL's auxiliary processes take a free
 * PGPROC and reset its semaphore.  Slot 0's semaphore holds 1, slot 1's is drained already
 * (a process before used it).  Child A (forked first) reads one byte from stdin before it
 * picks; child B picks at once, after a run of clock reads.  `sem_slots --feed FILE` (run
 * outside the recording, its output piped into the recorded program's stdin) writes that
 * byte only once B has picked, so the recorded run is always: B takes slot 0 (one success,
 * then EAGAIN), A slot 1 (EAGAIN).  In replay A's byte comes at once from the trace, and A
 * usually picks first: B's recorded success then meets an empty semaphore.  The parent
 * prints how many times each child took its semaphore (their exit statuses).
 * Used by tests/e2e/replay_sem_slots.sh.
 * Usage: sem_slots FILE | sem_slots --feed FILE
 */
#include <fcntl.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shared_area.h"

struct slot {
	sem_t sem;
	int owner; /* 0 free, else the child's letter */
};

struct area {
	int lock;   /* the spinlock */
	int b_took; /* B has its slot (read by --feed) */
	struct slot slot[2];
};

static struct slot *take(struct area *a, int who)
{
	struct slot *s = NULL;

	while (__atomic_exchange_n(&a->lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
	for (int i = 0; i < 2 && !s; i++)
		if (a->slot[i].owner == 0)
			s = &a->slot[i];
	if (s)
		s->owner = who;
	__atomic_store_n(&a->lock, 0, __ATOMIC_RELEASE);
	return s;
}

/* The child's life: its slot, drained; the successes are its exit status. */
static int child(struct area *a, int who)
{
	struct slot *s;
	int n = 0;
	char c;

	if (who == 'A') {
		if (read(0, &c, 1) < 0)
			return 100;
	} else {
		for (int i = 0; i < 3000; i++)
			(void)time(NULL);
	}
	if (!(s = take(a, who)))
		return 101;
	if (who == 'B')
		__atomic_store_n(&a->b_took, 1, __ATOMIC_RELEASE);
	while (sem_trywait(&s->sem) == 0)
		n++;
	return n;
}

static int feed(const char *path)
{
	const struct area *a = NULL;

	for (long i = 0; i < 100000000L; i++) {
		if (!a)
			a = shared_area_peek(path, sizeof(*a));
		if (a && __atomic_load_n(&a->b_took, __ATOMIC_ACQUIRE)) {
			(void)write(1, "x", 1);
			return 0;
		}
		sched_yield();
	}
	fprintf(stderr, "sem_slots --feed: B never took its slot in %s\n", path);
	return 1;
}

int main(int argc, char **argv)
{
	struct area *a;
	pid_t pa, pb;
	int sa = 0, sb = 0;

	if (argc == 3 && strcmp(argv[1], "--feed") == 0)
		return feed(argv[2]);
	if (argc != 2) {
		fprintf(stderr, "usage: sem_slots FILE | sem_slots --feed FILE\n");
		return 2;
	}
	/* (--feed reads only a counter that starts at 0: a file still empty is fine) */
	if (!(a = shared_area_create(argv[1], sizeof(*a))))
		return 1;
	memset(a, 0, sizeof(*a));
	if (sem_init(&a->slot[0].sem, 1, 1) != 0 || sem_init(&a->slot[1].sem, 1, 0) != 0) {
		perror("sem_init");
		return 1;
	}
	if ((pa = fork()) == 0)
		_exit(child(a, 'A'));
	if ((pb = fork()) == 0)
		_exit(child(a, 'B'));
	if (pa < 0 || pb < 0 || waitpid(pa, &sa, 0) != pa || waitpid(pb, &sb, 0) != pb) {
		perror("fork");
		return 1;
	}
	printf("A drained %d\nB drained %d\n", WEXITSTATUS(sa), WEXITSTATUS(sb));
	return 0;
}
