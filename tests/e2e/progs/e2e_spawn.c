/* e2e_spawn.c: a forked child (spawn.1) runs two commands with system(), whose children the
 * recorder sees start without a fork it intercepted (see record_spawn.sh). */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

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
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
