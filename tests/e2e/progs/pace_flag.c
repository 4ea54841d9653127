/*
 * pace_flag.c: a process that sleeps in a readiness wait until its timeout, then reads a
 * flag another process set meanwhile in memory they share, as PostgreSQL's background
 * writer sleeps 200 ms and then reads whether the startup process has ended recovery.  The
 * parent forks the waiter (epoll_wait on an empty set, 300 ms: it times out), then the
 * setter (it reads the clock 5000 times, then sets the flag), and prints whether the waiter
 * saw the flag (its exit status); the waiter's next event says so too (a pid read if it saw
 * the flag, a clock read if not), so a replay that reads it otherwise diverges.  Nothing
 * recorded orders the flag; the recorded wait lasted its timeout.
 * Used by tests/e2e/replay_pace.sh.
 */
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	int *flag = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t w, s;
	int st = 0;

	if (flag == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	*flag = 0;
	if ((w = fork()) == 0) {
		struct epoll_event ev;
		int ep = epoll_create1(0);

		if (ep < 0 || epoll_wait(ep, &ev, 1, 300) != 0)
			_exit(3);
		/* (its next event tells what it saw: a pid read, or a clock read) */
		if (__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
			(void)getppid();
			_exit(1);
		}
		(void)time(NULL);
		_exit(2);
	}
	if ((s = fork()) == 0) {
		for (int i = 0; i < 5000; i++) /* (work of its own first: clock reads) */
			(void)time(NULL);
		__atomic_store_n(flag, 1, __ATOMIC_RELEASE);
		_exit(0);
	}
	if (w < 0 || s < 0 || waitpid(w, &st, 0) != w || waitpid(s, NULL, 0) != s) {
		perror("fork");
		return 1;
	}
	printf("the waiter saw the flag: %s\n",
	       WEXITSTATUS(st) == 1 ? "yes" : WEXITSTATUS(st) == 2 ? "no" : "failed");
	return 0;
}
