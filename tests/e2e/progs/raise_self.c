/*
 * raise_self.c: a handler of a signal the process sends itself runs before the sending call
 * returns (raise, pthread_kill on its own thread, kill to its own pid), and one blocked
 * when sent runs before the sigprocmask or pthread_sigmask that unblocks it returns, as
 * POSIX says and programs count on (CPython's test_signal), and so does one sent by
 * syscall(SYS_tgkill): the counts printed right after each call are 1, 2, 3, then 3 while
 * blocked, 4 and 5 once unblocked, 6, recorded and replayed (recorder/signals.c; the handler ran only after the process's next event
 * before).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile sig_atomic_t got;

static void on_usr1(int sig)
{
	(void)sig;
	got++;
}

int main(void)
{
	int a, b, c, d, e, f, g;
	pid_t pid, tid;
	sigset_t usr1;

	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);
	a = got;
	pthread_kill(pthread_self(), SIGUSR1);
	b = got;
	kill(getpid(), SIGUSR1);
	c = got;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	kill(getpid(), SIGUSR1);
	d = got;
	sigprocmask(SIG_UNBLOCK, &usr1, NULL);
	e = got;
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	raise(SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	f = got;
	pid = getpid();
	tid = gettid();
	syscall(SYS_tgkill, pid, tid, SIGUSR1);
	g = got;
	printf("handled after raise %d, pthread_kill %d, kill %d, blocked %d, sigprocmask %d, "
	       "pthread_sigmask %d, syscall %d\n", a, b, c, d, e, f, g);
	return 0;
}
