/*
 * init_signal.c: a process that sends itself SIGTERM, left at the default action, and says
 * it survived: run as the init of a PID namespace (unshare --pid --fork), where the kernel
 * ignores such a signal, for record_init_signal.sh.
 */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
int main(void)
{
	kill(getpid(), SIGTERM);
	printf("pid %d survived\n", (int)getpid());
	return 0;
}
