/* e2e_spawn.c: a forked child (spawn.1) runs two commands with system(), whose children the
 * recorder sees start without a fork it intercepted; then the root starts /bin/true with
 * posix_spawn, which it does see: that child is spawn.2 (see record_spawn.sh). */
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(void)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		if (system("exit 0") != 0 || system("exit 0") != 0)
			_exit(1);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	{
		char *argv[] = { "true", NULL };

		if (posix_spawn(&pid, "/bin/true", NULL, NULL, argv, environ) != 0)
			return 1;
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
