/* halt_killed.c: a child ended by SIGTERM (its trace's last event its death), then a message
 * to a second child: a halt at the second child's receive has the first at its death, as
 * `encore inf` counts it (replay_halt_killed.sh). */
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	int ready[2], sv[2], st;
	char c;
	pid_t a, b;

	if (pipe(ready) != 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return 1;
	if ((a = fork()) == 0) {
		close(ready[0]);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (a < 0 || read(ready[0], &c, 1) != 1 || kill(a, SIGTERM) != 0 || waitpid(a, &st, 0) != a)
		return 1;
	printf("first child: %s\n", WIFSIGNALED(st) ? "killed" : "exited");
	fflush(stdout);
	if ((b = fork()) == 0) {
		close(sv[0]);
		if (read(sv[1], &c, 1) != 1)
			_exit(1);
		printf("second child got %c\n", c);
		_exit(0);
	}
	close(sv[1]);
	if (b < 0 || write(sv[0], "x", 1) != 1 || waitpid(b, &st, 0) != b)
		return 1;
	return 0;
}
