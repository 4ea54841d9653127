/*
 * fexecve.c: a process that re-executes through a descriptor (dropbear does so for each
 * connection): it forks, and the child runs /bin/echo with fexecve.  The recorder must take
 * it as an exec (the child's next image, CHILD@1), not as a new process started behind its
 * back (tests/e2e/replay_fexecve.sh).
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(void)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		char *argv[] = { "echo", "from", "fexecve", NULL };
		int fd = open("/bin/echo", O_RDONLY);

		if (fd < 0)
			_exit(126);
		fexecve(fd, argv, environ);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 1;
	printf("child %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
