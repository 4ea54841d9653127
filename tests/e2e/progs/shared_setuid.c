/* shared_setuid.c: workers that change user, then read one task pipe they share (a server's
 * workers dropping to nobody, exim's deliveries).  Replay gives each reader its recorded
 * bytes through a staging file of the user who replays, which a worker that is nobody now may
 * not open: the GD opens it for them (replayer/lc_chan.c, share_open_gd).  Needs root. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define WORKERS 2
#define TASKS 6

int main(void)
{
	int task[2], done[2], st;
	pid_t w[WORKERS];
	char line[64];

	if (pipe(task) != 0 || pipe(done) != 0)
		return perror("pipe"), 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < WORKERS; i++) {
		if ((w[i] = fork()) == 0) {
			char t;

			close(task[1]);
			close(done[0]);
			if (setgid(65534) != 0 || setuid(65534) != 0)
				return perror("setuid"), 1;
			/* one byte per task: which worker gets which is the kernel's choice */
			while (read(task[0], &t, 1) == 1) {
				int n = snprintf(line, sizeof(line), "worker %d: task %c\n", i, t);

				if (write(done[1], line, (size_t)n) != n)
					return 1;
			}
			return 0;
		}
	}
	close(task[0]);
	close(done[1]);
	for (int k = 0; k < TASKS; k++) {
		char t = (char)('a' + k);

		if (write(task[1], &t, 1) != 1)
			return 1;
	}
	close(task[1]);
	for (ssize_t n; (n = read(done[0], line, sizeof(line) - 1)) > 0;) {
		line[n] = '\0';
		fputs(line, stdout);
	}
	for (int i = 0; i < WORKERS; i++)
		if (waitpid(w[i], &st, 0) != w[i] || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return fprintf(stderr, "worker %d failed\n", i), 1;
	printf("tasks done\n");
	return 0;
}
